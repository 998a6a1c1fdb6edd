"""train/run_folder.py: a second run of train.py, bc.py or dagger.py goes to a fresh
folder (<seed>-2, -3, ...) and leaves the first run's files alone; --overwrite replaces the
first run only once the new one is under way."""

from __future__ import annotations

import json
import types
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from train_scripts import load_script  # noqa: E402

F = load_script("run_folder.py", "run_folder_script")


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def test_a_new_run_takes_a_fresh_folder_after_the_first(tmp_path: Path, capsys):
    base = tmp_path / "PushBox-v0" / "ppo" / "0"
    with F.RunDir(base) as run:
        assert run.path == base and base.is_dir()
        (base / "args.json").write_text("old")
    with F.RunDir(base) as run:
        assert run.path == base.with_name("0-2")
    assert str(base.with_name("0-2")) in capsys.readouterr().out  # says where it writes
    with F.RunDir(base) as run:
        assert run.path == base.with_name("0-3")


def test_overwrite_keeps_the_earlier_run_until_the_new_one_is_under_way(tmp_path: Path):
    base = tmp_path / "PushBox-v0" / "ppo" / "0"
    (base / "tb" / "ppo_1").mkdir(parents=True)
    (base / "final_model.zip").write_text("old model")
    (base / "agent.npz").write_text("old agent")
    before = _files(base)
    # A run that fails before it is under way (a bad setting, an interrupt): undone whole.
    for error in (ValueError("n_epoch: unknown"), KeyboardInterrupt()):
        with pytest.raises(type(error)), F.RunDir(base, overwrite=True) as run:
            assert run.path == base and not any(base.iterdir())  # a fresh folder
            assert _files(run.earlier) == before  # the earlier run, whole, aside
            (base / "args.json").write_text("new")
            raise error
        assert _files(base) == before
        assert sorted(p.name for p in base.parent.iterdir()) == ["0"]  # nothing left aside
    # Under way, then failing: the new run keeps what it wrote, the earlier one is gone.
    with pytest.raises(RuntimeError), F.RunDir(base, overwrite=True) as run:
        (base / "args.json").write_text("new")
        run.under_way()
        assert run.earlier is None
        raise RuntimeError("mid-training")
    assert _files(base) == {"args.json": b"new"}
    # Finished: only the new run's files (no model or agent of the earlier one beside them).
    with F.RunDir(base, overwrite=True):
        (base / "result.json").write_text("newer")
    assert _files(base) == {"result.json": b"newer"}
    assert sorted(p.name for p in base.parent.iterdir()) == ["0"]
    fresh = tmp_path / "PushBox-v0" / "sac" / "1"
    with F.RunDir(fresh, overwrite=True) as run:
        assert run.path == fresh and fresh.is_dir() and run.earlier is None


def test_a_run_that_fails_before_it_starts_leaves_no_folder(tmp_path: Path):
    base = tmp_path / "PushBox-v0" / "ppo" / "0"
    with pytest.raises(ValueError), F.RunDir(base):
        (base / "args.json").write_text("half")
        raise ValueError("refused")
    assert not base.exists()


_ARGV = ["--timesteps", "64", "--n-envs", "2", "--eval-episodes", "1", "--eval-envs", "1",
         "--eval-freq", "64", "--no-progress", "--hp", "warm_start=null", "--hp",
         "n_steps=32", "--hp", "batch_size=32", "--hp", "env_kwargs={max_episode_steps: 8}"]


def test_overwrite_with_a_bad_setting_keeps_the_earlier_run(tmp_path: Path, monkeypatch):
    T = load_script("train.py", "train_script_overwrite")
    T.main([*_ARGV, "--run-dir", str(tmp_path)])
    run = tmp_path / "PushBox-v0" / "ppo" / "0"
    before = _files(run)
    assert "final_model.zip" in before and "result.json" in before
    for hp, match in [("n_epoch=3", r"unknown hyperparameter 'n_epoch' \(did you mean "
                                    r"'n_epochs'\?\)"),
                      ("gamma=2", "gamma must be a finite number > 0 and <= 1, got 2"),
                      ("net_arch=[64]", "unknown hyperparameter 'net_arch'")]:
        with pytest.raises(ValueError, match=match):
            T.main([*_ARGV, "--run-dir", str(tmp_path), "--overwrite", "--hp", hp])
        assert _files(run) == before
    # Interrupted before the first update (here: as learning starts): the earlier run is back.
    monkeypatch.setattr(T.PPO, "learn", lambda *a, **k: (_ for _ in ()).throw(
        KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        T.main([*_ARGV, "--run-dir", str(tmp_path), "--overwrite"])
    assert _files(run) == before
    assert sorted(p.name for p in run.parent.iterdir()) == ["0"]


def test_train_twice_keeps_the_first_run(tmp_path: Path):
    T = load_script("train.py", "train_script_run_folder")
    argv = [*_ARGV, "--run-dir", str(tmp_path)]
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
    monkeypatch.setattr(D, "train", lambda args, t_command=None: (
        None, {"train_s": 0.0, "floor": 0.5, "to_floor": None}))
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
