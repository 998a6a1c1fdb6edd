"""train/run_folder.py: a second run of train.py, bc.py or dagger.py goes to a fresh
folder (<seed>-2, -3, ...) and leaves the first run's files alone, unless --overwrite."""

from __future__ import annotations

import json
import types
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from train_scripts import load_script  # noqa: E402

F = load_script("run_folder.py", "run_folder_script")


def test_fresh_run_dir_numbers_the_runs_after_the_first(tmp_path: Path, capsys):
    base = tmp_path / "PushBox-v0" / "ppo" / "0"
    assert F.fresh_run_dir(base) == base and base.is_dir()
    (base / "args.json").write_text("old")
    assert F.fresh_run_dir(base) == base.with_name("0-2")
    assert str(base.with_name("0-2")) in capsys.readouterr().out  # says where it writes
    assert F.fresh_run_dir(base) == base.with_name("0-3")
    # --overwrite: the old folder itself, emptied, so nothing of the earlier run is left
    # beside the new one's files (here an exported agent and a tensorboard log).
    (base / "agent.npz").write_text("old")
    (base / "tb" / "ppo_1").mkdir(parents=True)
    assert F.fresh_run_dir(base, overwrite=True) == base
    assert base.is_dir() and not any(base.iterdir())
    fresh = tmp_path / "PushBox-v0" / "sac" / "1"
    assert F.fresh_run_dir(fresh, overwrite=True) == fresh and fresh.is_dir()


def test_train_twice_keeps_the_first_run(tmp_path: Path):
    T = load_script("train.py", "train_script_run_folder")
    argv = ["--timesteps", "64", "--n-envs", "2", "--eval-episodes", "1", "--eval-envs", "1",
            "--eval-freq", "64", "--run-dir", str(tmp_path), "--no-progress",
            "--hp", "warm_start=null", "--hp", "n_steps=32", "--hp", "batch_size=32",
            "--hp", "env_kwargs={max_episode_steps: 8}"]
    T.main(argv)
    first = tmp_path / "PushBox-v0" / "ppo" / "0"
    saved = {p.name: p.read_bytes() for p in first.iterdir() if p.is_file()}
    assert "args.json" in saved and "final_model.zip" in saved
    T.main([*argv, "--seed", "0"])
    second = first.with_name("0-2")
    assert (second / "result.json").is_file() and (second / "final_model.zip").is_file()
    assert {p.name: p.read_bytes() for p in first.iterdir() if p.is_file()} == saved


def test_dagger_and_bc_take_a_fresh_folder(tmp_path: Path, monkeypatch):
    D = load_script("dagger.py", "dagger_script_run_folder")
    monkeypatch.setattr(D, "train", lambda args: (None, {"train_s": 0.0}))
    monkeypatch.setattr(D, "save", lambda policy, path, args: path.write_text("new"))
    monkeypatch.setattr(D, "evaluate", lambda *a: {
        "coverage_success_rate": 0.0, "final_coverage_mean": 0.0, "pose_success_rate": 0.0,
        "episodes": 0})
    old = tmp_path / "PushT-v0" / "dagger" / "0"
    old.mkdir(parents=True)
    (old / "policy.pt").write_text("old")
    D.main(["--run-dir", str(tmp_path)])
    assert (old / "policy.pt").read_text() == "old"
    assert (old.with_name("0-2") / "policy.pt").read_text() == "new"
    D.main(["--run-dir", str(tmp_path), "--overwrite"])
    assert (old / "policy.pt").read_text() == "new"

    import torch

    B = load_script("bc.py", "bc_script_run_folder")
    spec = types.SimpleNamespace(env_spec=types.SimpleNamespace(id="PushBox-v0", kwargs={}))
    ds = types.SimpleNamespace(spec=spec, total_episodes=1)
    monkeypatch.setattr(B, "load_dataset", lambda dataset, root: (ds, np.zeros((4, 3)),
                                                                  np.zeros((4, 2))))
    monkeypatch.setattr(B, "train_bc", lambda obs, act, args: (torch.nn.Linear(1, 1), [0.5]))
    monkeypatch.setattr(B, "evaluate", lambda *a: {"success_rate": 0.0, "episodes": 0,
                                                   "mean_return": 0.0})
    old = tmp_path / "PushBox-v0" / "bc" / "0"
    old.mkdir(parents=True)
    (old / "result.json").write_text("old")
    B.main(["--dataset", "push_envs/PushBox-v0/x-v0", "--run-dir", str(tmp_path)])
    assert (old / "result.json").read_text() == "old"
    assert json.loads((old.with_name("0-2") / "result.json").read_text())["final_loss"] == 0.5
