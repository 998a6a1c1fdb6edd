"""train/bc.py: behaviour cloning on a recorded Minari dataset, evaluated on the batch."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("minari")
pytest.importorskip("torch")

from train_scripts import load_script  # noqa: E402

from push_envs.datasets import record  # noqa: E402
from push_envs.experts import expert  # noqa: E402

push_box_actions = expert("PushBox-v0", "diff")

B = load_script("bc.py", "bc_script")


def test_bc_fits_the_expert_and_reports_success(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "data"))
    record("PushBox-v0", "scripted", 16, "push_envs/PushBox-v0/bc-test-v0", num_envs=8,
           env_kwargs={"max_episode_steps": 60})
    result = B.main(["--dataset", "push_envs/PushBox-v0/bc-test-v0", "--epochs", "40",
                     "--batch-size", "128", "--eval-episodes", "8", "--eval-envs", "8",
                     "--run-dir", str(tmp_path / "runs")])
    run = tmp_path / "runs" / "PushBox-v0" / "bc" / "0"
    saved = json.loads((run / "result.json").read_text())
    assert saved["success_rate"] == result["success_rate"]
    assert 0.0 <= result["success_rate"] <= 1.0 and result["episodes"] == 8
    assert saved["env_kwargs"] == {"max_episode_steps": 60}
    assert result["dataset_episodes"] == 16 and result["samples"] > 16
    # The regression learned the expert: the loss fell well below the actions' variance.
    _, obs, act = B.load_dataset("push_envs/PushBox-v0/bc-test-v0")
    assert result["final_loss"] < 0.25 * float(act.var(0).mean())
    # policy.pt reloads to the same function, and it is close to the expert on its data.
    policy = B.load_bc(run / "policy.pt")
    pred = policy.act(obs)
    assert pred.shape == act.shape and np.abs(pred).max() <= 1.0
    assert np.mean((pred - push_box_actions(obs)) ** 2) == pytest.approx(
        result["final_loss"], rel=0.5, abs=0.02)


def test_bad_arguments_exit_with_the_flag_named():
    with pytest.raises(SystemExit, match="--epochs must be >= 1"):
        B.Args(dataset="x", epochs=0)
    with pytest.raises(SystemExit, match="--lr must be a float"):
        B.Args(dataset="x", lr="fast")
