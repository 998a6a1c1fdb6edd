"""train/export.py: a run folder's policy as a pretrained agent whose numpy actions are the
torch policy's, for PPO, SAC and the Push-T DAgger policy."""

from __future__ import annotations

import json
import pickle
from dataclasses import asdict
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("tyro")

from train_scripts import load_script  # noqa: E402

import push_envs.baselines as B  # noqa: E402
from push_envs.baselines.evaluation import EVAL_SEED  # noqa: E402

T = load_script("train.py")
X = load_script("export.py")
D = load_script("dagger.py")
W = load_script("warm_start.py")


def _observations(env_id: str, n: int = 16, steps: int = 12, seed: int = 3, **kwargs):
    """Observations of a short random rollout (other seeds than the exporter's check)."""
    venv = gym.make_vec(env_id, num_envs=n, **kwargs)
    obs, _ = venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rows = [obs]
    for _ in range(steps):
        obs, *_ = venv.step(rng.uniform(-1, 1, venv.action_space.shape).astype(np.float32))
        rows.append(obs)
    venv.close()
    return np.concatenate(rows)


def _sb3_reference(run: Path, which: str):
    """SB3's own deterministic action on the normalised observation, as train/enjoy.py and
    the final evaluation act."""
    saved = json.loads((run / "args.json").read_text())
    model = T.load_model(saved["args"]["algo"], run / f"{which}_model.zip")
    stats = run / ("best_vecnormalize.pkl" if which == "best" else "vecnormalize.pkl")
    vn = None
    if stats.exists():
        with stats.open("rb") as fh:
            vn = pickle.load(fh)
        vn.training = False
    return model, vn, saved


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    T.main(["--timesteps", "512", "--n-envs", "4", "--hp", "n_steps=64", "--hp",
            "batch_size=64", "--hp", "warm_start=null", "--hp", "hide_obs=[robot_vel]",
            "--hp", "policy_kwargs={net_arch: [32, 16], activation_fn: ELU}",
            "--hp", "env_kwargs={max_episode_steps: 20}", "--eval-episodes", "2",
            "--eval-envs", "2", "--eval-freq", "256", "--seed", "3", "--no-progress",
            "--update-threads", "1", "--run-dir", str(root)])
    return root / "PushBox-v0" / "ppo" / "3"


@pytest.mark.parametrize("which", ["final", "best"])
def test_a_ppo_agent_acts_as_the_sb3_model(ppo_run: Path, tmp_path: Path, which: str):
    out = tmp_path / f"{which}.npz"
    agent = X.export(ppo_run, which, out, note="tiny test run")
    model, vn, saved = _sb3_reference(ppo_run, which)
    obs = _observations("PushBox-v0", max_episode_steps=20)
    from push_envs.sb3 import make_vec_env

    probe = make_vec_env("PushBox-v0", n_envs=1, max_episode_steps=20)
    columns = T.hidden_columns(probe, ["robot_vel"])
    probe.close()
    assert len(columns) == 2
    np.testing.assert_array_equal(np.load(out)["hide_columns"], columns)
    hidden = obs.copy()
    hidden[:, columns] = 0.0
    expected = model.predict(vn.normalize_obs(hidden), deterministic=True)[0]
    act = B.load_file(out)(obs)
    np.testing.assert_allclose(act, expected, atol=1e-5)
    assert np.abs(act - model.predict(vn.normalize_obs(obs), deterministic=True)[0]).max() \
        > 1e-4  # the hidden columns matter: without hiding them the actions differ
    m = agent.meta
    assert (m["env_id"], m["robot"], m["policy"], m["kind"], m["output"]) == \
        ("PushBox-v0", "diff", "PPO", "mlp", "clip")
    assert [layer["activation"] for layer in m["layers"]] == ["elu", "elu", None]
    assert m["env_kwargs"] == {"max_episode_steps": 20, "robot": "diff"}
    assert m["hide_obs"] == ["robot_vel"] and m["configuration"] == "tiny test run"
    np.testing.assert_allclose(np.load(out)["obs_var"], vn.obs_rms.var)
    t = m["training"]
    assert t["seed"] == 3 and t["which"] == which and 0 < t["env_steps"] <= 512
    assert t["command"].startswith("python -m train.train --env PushBox-v0 --seed 3 "
                                   "--timesteps 512 --n-envs 4 ")
    assert "--hp 'hide_obs=[robot_vel]'" in t["command"] and "--run-dir" not in t["command"]
    assert t["wall_clock_s"] > 0 and m["exported_with"]["stable_baselines3"]
    assert out.stat().st_size < 64 * 1024  # weights and normalisation only


def test_the_command_line_writes_the_shipped_file_and_keeps_an_existing_one(
        ppo_run: Path, tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setattr(B, "AGENTS_DIR", tmp_path)
    agent = X.main([str(ppo_run)])
    assert agent.path == tmp_path / "PushBox-v0-diff.npz"
    assert B.available() == [("PushBox-v0", "diff")]
    assert "evaluate: python -m push_envs.baselines evaluate PushBox-v0 --robot diff" in \
        capsys.readouterr().out
    with pytest.raises(FileExistsError, match="exists; pass --overwrite to replace it"):
        X.main([str(ppo_run)])
    X.main([str(ppo_run), "--overwrite", "--which", "best"])
    assert B.load("PushBox-v0").meta["training"]["which"] == "best"
    with pytest.raises(ValueError, match="not a run folder"):
        X.main([str(tmp_path)])


def test_a_sorted_ppo_agent_sorts_as_in_training(tmp_path: Path):
    T.main(["--env", "Sweep-v1", "--timesteps", "256", "--n-envs", "4", "--hp", "n_steps=64",
            "--hp", "batch_size=64", "--hp", "sort_obs={by: puck_rel, last: puck_inside, "
                                             "toward: goal_minus_puck, standoff: 0.3}",
            "--hp", "policy_kwargs={net_arch: [16]}",
            "--hp", "env_kwargs={max_episode_steps: 20, num_pucks: 3}", "--eval-episodes", "2",
            "--eval-envs", "2", "--eval-freq", "10000", "--seed", "5", "--no-progress",
            "--update-threads", "1", "--run-dir", str(tmp_path)])
    run = tmp_path / "Sweep-v1" / "ppo" / "5"
    out = tmp_path / "sweep.npz"
    agent = X.export(run, "final", out)
    model, vn, _ = _sb3_reference(run, "final")
    obs = _observations("Sweep-v1", max_episode_steps=20, num_pucks=3)
    start = obs.shape[1] - 15
    np.testing.assert_array_equal(np.load(out)["sort_slots"], [[start, 5, 3, 0, 2, 4, 2]])
    np.testing.assert_array_equal(np.load(out)["sort_standoff"], [0.3])
    assert agent.meta["sort_obs"] == {"by": "puck_rel", "last": "puck_inside",
                                      "toward": "goal_minus_puck", "standoff": 0.3}
    seen = agent.view(obs)
    act = B.load_file(out)(obs)
    np.testing.assert_allclose(
        act, model.predict(vn.normalize_obs(seen), deterministic=True)[0], atol=1e-5)
    swapped = obs.copy()  # the task's first and last puck listed the other way round
    swapped[:, start:start + 5], swapped[:, start + 10:] = obs[:, start + 10:], \
        obs[:, start:start + 5]
    np.testing.assert_array_equal(B.load_file(out)(swapped), act)
    assert np.abs(model.predict(vn.normalize_obs(swapped), deterministic=True)[0]
                  - act).max() > 1e-4  # unsorted, the same network acts otherwise


def test_a_sac_agent_squashes_as_the_sb3_model(tmp_path: Path):
    T.main(["--algo", "sac", "--timesteps", "300", "--n-envs", "2", "--eval-episodes", "2",
            "--eval-envs", "2", "--eval-freq", "150", "--run-dir", str(tmp_path),
            "--no-progress", "--update-threads", "1",
            "--hp", "policy=MlpPolicy", "--hp", "replay_buffer_class=null",
            "--hp", "replay_buffer_kwargs=null", "--hp", "learning_starts=100",
            "--hp", "batch_size=32", "--hp", "buffer_size=1000",
            "--hp", "policy_kwargs={net_arch: [32, 32]}",
            "--hp", "env_kwargs={obs_mode: state, max_episode_steps: 30}"])
    run = tmp_path / "PushBox-v0" / "sac" / "0"
    agent = X.export(run, "final", tmp_path / "sac.npz")
    model, vn, _ = _sb3_reference(run, "final")
    assert vn is None and agent.meta["output"] == "squash"
    assert [layer["activation"] for layer in agent.meta["layers"]] == ["relu", "relu", None]
    obs = _observations("PushBox-v0", max_episode_steps=30)
    np.testing.assert_allclose(agent(obs), model.predict(obs, deterministic=True)[0],
                               atol=1e-5)


def test_goal_observations_are_refused(tmp_path: Path):
    T.main(["--algo", "sac", "--timesteps", "200", "--n-envs", "2", "--eval-episodes", "2",
            "--eval-envs", "2", "--eval-freq", "200", "--run-dir", str(tmp_path),
            "--no-progress", "--update-threads", "1",
            "--hp", "learning_starts=100", "--hp", "batch_size=32", "--hp", "buffer_size=1000",
            "--hp", "policy_kwargs={net_arch: [16]}",
            "--hp", "env_kwargs={max_episode_steps: 20}"])
    with pytest.raises(ValueError, match="only state observations"):
        X.export(tmp_path / "PushBox-v0" / "sac" / "0", "final", tmp_path / "x.npz")
    assert not (tmp_path / "x.npz").exists()


def test_a_dagger_agent_acts_as_the_torch_mixture(tmp_path: Path):
    args = D.Args(episodes=10, rounds=0, epochs=2, hidden=[32, 16], components=3,
                  num_envs=10, seed=4)
    policy, info = D.train(args)
    run = tmp_path / "PushT-v0" / "dagger" / "4"
    run.mkdir(parents=True)
    D.save(policy, run / "policy.pt", args)
    (run / "args.json").write_text(json.dumps(asdict(args)))
    (run / "result.json").write_text(json.dumps({**info, "coverage_success_rate": 0.0}))
    agent = X.export(run, out=tmp_path / "pusht.npz")
    obs = _observations("PushT-v0", robot="omni", success="coverage")
    np.testing.assert_allclose(B.load_file(tmp_path / "pusht.npz")(obs), policy(obs),
                               atol=1e-5)
    m = agent.meta
    assert (m["policy"], m["kind"], m["robot"], m["components"]) == \
        ("DAgger", "tee_mixture", "omni", 3)
    assert m["env_kwargs"] == {"robot": "omni", "success": "coverage"}
    assert m["training"]["env_steps"] == info["rounds"][-1]["samples"]
    assert m["training"]["command"] == ("python -m train.dagger --seed 4 --episodes 10 "
                                        "--rounds 0 --epochs 2 --components 3 --hidden 32 16 "
                                        "--num-envs 10")


def test_evaluation_seeds_are_no_training_seed():
    # Training draws env i's episodes from seed + offset + i; with seeds below 1000, at
    # most 1024 envs and 50 DAgger rounds, the largest stream is below the evaluation's.
    offsets = [0, T.EVAL_SEED_OFFSET, T.FINAL_SEED_OFFSET, W.DEMO_SEED_OFFSET,
               W.DAGGER_SEED_OFFSET + 1000 * 50, D.FINAL_SEED_OFFSET]
    assert max(offsets) + 1000 + 1024 <= EVAL_SEED


def _damaged(ppo_run: Path, tmp_path: Path, name: str, data: bytes) -> Path:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(ppo_run, run)
    (run / name).write_bytes(data)
    return run


@pytest.mark.parametrize(("name", "data", "match"), [
    ("args.json", b'{"args": {"algo": "ppo", "env', r"args.json: not readable JSON"),
    ("args.json", b"{}", r"args.json: no \['args', 'hyperparams'\]"),
    ("args.json", b"[1, 2]", r"args.json: holds list, not a mapping"),
    ("args.json", b'{"args": {}, "hyperparams": {}}', r"args.json: its args name no algo"),
    ("result.json", b'{"wall', r"result.json: not readable JSON"),
    ("vecnormalize.pkl", b"junk junk junk", r"vecnormalize.pkl: not readable VecNormalize "
                                             r"statistics \(UnpicklingError"),
    ("vecnormalize.pkl", pickle.dumps({"mean": 0}), r"vecnormalize.pkl: holds a dict, not "
                                                    r"VecNormalize"),
    ("final_model.zip", b"PK\x03\x04 not a zip", r"final_model.zip: the model does not load"),
])
def test_a_damaged_run_is_refused_naming_the_file(ppo_run: Path, tmp_path: Path, name, data,
                                                  match):
    run = _damaged(ppo_run, tmp_path, name, data)
    out = tmp_path / "agent.npz"
    with pytest.raises(ValueError, match=rf"{run}/{match}"):
        X.export(run, out=out)
    assert not out.exists()


def test_the_output_is_checked_before_the_run_is_loaded(ppo_run: Path, tmp_path: Path,
                                                       monkeypatch):
    folder = tmp_path / "agents"
    folder.mkdir()
    monkeypatch.setattr(X, "_sb3", lambda *a: pytest.fail("the run was loaded"))
    for overwrite in (False, True):
        with pytest.raises(IsADirectoryError, match=f"{folder}: is a folder; --out takes"):
            X.export(ppo_run, out=folder, overwrite=overwrite)
    existing = tmp_path / "agent.npz"
    existing.write_bytes(b"old")
    with pytest.raises(FileExistsError, match="exists; pass --overwrite"):
        X.export(ppo_run, out=existing)
    assert existing.read_bytes() == b"old"


def test_the_command_line_ends_a_damaged_run_in_one_line(ppo_run: Path, tmp_path: Path):
    import subprocess
    import sys

    run = _damaged(ppo_run, tmp_path, "args.json", b"{}")
    folder = tmp_path / "out"
    folder.mkdir()
    root = Path(__file__).resolve().parents[2]
    for argv, match in [([str(run)], "args.json: no ['args', 'hyperparams']"),
                        ([str(ppo_run), "--out", str(folder), "--overwrite"],
                         f"{folder}: is a folder")]:
        out = subprocess.run([sys.executable, "-m", "train.export", *argv],
                             capture_output=True, text=True, cwd=root, timeout=600)
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr[-2000:]
        assert len(lines) == 1 and lines[0].startswith("train.export: ") and match in lines[0]
