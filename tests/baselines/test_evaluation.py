"""python -m push_envs.baselines evaluate: success and its Wilson interval on fresh episodes,
Push-T's four coverage figures, the CSV rows, the command line."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import push_envs  # noqa: F401  (registers the ids)
import push_envs.baselines as B
from push_envs.baselines import evaluation as E
from push_envs.datasets import rollout
from push_envs.experts import wilson


def constant_agent(folder: Path, env_id: str, robot: str, action: list[float],
                   **env_kwargs) -> Path:
    """An agent file whose every action is ``action`` (zero weights, the action as bias)."""
    venv = gym.make_vec(env_id, num_envs=1, robot=robot, **env_kwargs)
    n_obs = venv.single_observation_space.shape[0]
    venv.close()
    n_act = len(action)
    meta = {"env_id": env_id, "robot": robot, "env_kwargs": env_kwargs, "policy": "constant",
            "kind": "mlp", "output": "clip", "observation_dim": n_obs, "action_dim": n_act,
            "obs_norm": None, "layers": [{"activation": None}],
            "training": {"command": f"python -m train.train --env {env_id} --seed 2",
                         "seed": 2, "env_steps": 1234, "wall_clock_s": 5.5}}
    arrays = {"layer0.weight": np.zeros((n_act, n_obs), np.float32),
              "layer0.bias": np.asarray(action, np.float32),
              "action_low": -np.ones(n_act, np.float32),
              "action_high": np.ones(n_act, np.float32)}
    path = folder / f"{env_id}-{robot}.npz"
    B.write(path, meta, arrays)
    return path


def _reference(env_id: str, agent, episodes: int, num_envs: int, seed: int, **kwargs):
    venv = gym.make_vec(env_id, num_envs=num_envs, autoreset_mode=AutoresetMode.DISABLED,
                        num_threads=1, **{**agent.env_kwargs, **kwargs})
    eps = list(rollout(venv, agent, episodes, seed=seed))
    venv.close()
    return eps


def test_an_evaluation_row_is_what_the_episodes_did(tmp_path: Path):
    # Driving in wide circles: now and then the box is swept into the goal (1 of these 20
    # episodes when this was written); the row must count exactly what the episodes did.
    path = constant_agent(tmp_path, "PushBox-v0", "diff", [1.0, 0.4], max_episode_steps=200,
                          success_distance=0.5)
    agent = B.load_file(path)
    row = E.evaluate(agent, episodes=20, seed=777, num_envs=10, target=str(path))
    eps = _reference("PushBox-v0", agent, 20, 10, 777)
    wins = sum(e.success for e in eps)
    assert row["successes"] == wins and row["success"] == wins / 20
    assert (row["wilson_lo"], row["wilson_hi"]) == wilson(wins, 20)
    assert row["mean_length"] == pytest.approx(np.mean([len(e) for e in eps]))
    assert all(len(e) < 200 for e in eps if e.success)  # a success ends its episode
    assert (row["task"], row["robot"], row["policy"], row["seed"]) == \
        ("PushBox-v0", "diff", "constant", 2)
    assert (row["env_steps"], row["wall_clock_s"], row["eval_seed"]) == (1234, 5.5, 777)
    assert json.loads(row["env_kwargs"]) == {"max_episode_steps": 200, "robot": "diff",
                                             "success_distance": 0.5}
    assert row["command"] == "python -m train.train --env PushBox-v0 --seed 2"
    assert row["eval_command"] == (f"python -m push_envs.baselines evaluate {path} "
                                   f"--episodes 20 --seed 777")
    assert row["final_coverage"] == row["success_cov90"] == ""  # no coverage in PushBox
    assert row["final_fraction_inside"] == ""  # nor a fraction of objects inside
    assert set(row) == set(E.FIELDS)


def test_push_t_reports_final_and_max_coverage_and_both_thresholds(tmp_path: Path):
    assert E.has_coverage("PushT-v0") and not E.has_coverage("PushBox-v0")
    path = constant_agent(tmp_path, "PushT-v0", "omni", [0.6, 0.1], max_episode_steps=60)
    agent = B.load_file(path)
    row = E.evaluate(agent, episodes=6, seed=5, num_envs=6)  # one episode per env
    eps = _reference("PushT-v0", agent, 6, 6, 5, success="coverage",
                     coverage_threshold=0.95)
    final = [e.infos["coverage"][-1] for e in eps]
    best = [e.infos["coverage"].max() for e in eps]
    assert row["final_coverage"] == pytest.approx(np.mean(final))
    assert row["max_coverage"] == pytest.approx(np.mean(best))
    assert row["max_coverage"] >= row["final_coverage"] and max(best) > 0
    assert row["success_cov95"] == row["success"] == np.mean([e.success for e in eps])
    # Each env plays one episode, the same one until coverage first reaches 0.90: success at
    # 0.90 is the episodes whose highest coverage reached 0.90.
    assert row["success_cov90"] == np.mean([b >= 0.90 for b in best])
    assert row["success_cov90"] >= row["success_cov95"]
    assert (row["cov90_wilson_lo"], row["cov90_wilson_hi"]) == \
        wilson(round(6 * row["success_cov90"]), 6)
    assert row["eval_command"].startswith("python -m push_envs.baselines evaluate PushT-v0 "
                                          "--robot omni ")


class _Sweeper:
    """Sweep-v1's scripted sweeper in an agent's clothes (what evaluate reads of an agent)."""

    def __init__(self, **env_kwargs) -> None:
        from push_envs.experts import expert

        self.env_id, self.robot, self.policy, self.path = "Sweep-v1", "diff", "sweeper", None
        self.env_kwargs, self.meta = env_kwargs, {}
        venv = gym.make_vec("Sweep-v1", num_envs=1, **env_kwargs)
        self.observation_dim = venv.single_observation_space.shape[0]
        self.action_dim = venv.single_action_space.shape[0]
        venv.close()
        self.act = expert("Sweep-v1", "diff", env_kwargs)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return self.act(obs)


def test_sweep_reports_the_fraction_of_pucks_inside_at_the_end():
    # The sweeper cut short at 60 steps: some pucks are in by then, not all.
    kwargs = {"num_pucks": 4, "max_episode_steps": 60}
    row = E.evaluate(_Sweeper(**kwargs), episodes=8, seed=11, num_envs=4)
    final = [e.infos["fraction_inside"][-1]
             for e in _reference("Sweep-v1", _Sweeper(**kwargs), 8, 4, 11)]
    assert row["final_fraction_inside"] == pytest.approx(np.mean(final))
    assert 0 < row["final_fraction_inside"] < 1  # some episodes swept pucks in, not all
    assert set(final) <= {0.0, 0.25, 0.5, 0.75, 1.0}  # quarters of the 4 pucks
    assert "; inside at the end " in E.summary(row)
    assert row["final_coverage"] == ""


def test_an_agent_that_does_not_fit_its_task_is_refused(tmp_path: Path):
    path = constant_agent(tmp_path, "PushBox-v0", "diff", [0.0, 0.0])
    agent = B.load_file(path)
    agent.meta["env_kwargs"] = {"max_contacts": 7}  # more contact columns than it reads
    with pytest.raises(ValueError, match=r"does not fit PushBox-v0 .* it maps \d+ -> 2 "
                                         r"values, the env observes"):
        E.evaluate(agent, episodes=2, num_envs=2)
    with pytest.raises(ValueError, match="episodes must be an int >= 1"):
        E.play(agent, 0)


def test_an_agent_for_a_retired_id_is_refused_naming_its_successor(tmp_path: Path):
    # An agent file exported under PushMaze-v0 (retired when the joints of static pieces
    # moved its rollouts) is not played on v1 silently.
    agent = B.load_file(constant_agent(tmp_path, "PushMaze-v1", "diff", [0.0, 0.0]))
    meta = {k: v for k, v in agent.meta.items() if k not in ("format", "format_version")}
    path = tmp_path / "old.npz"
    B.write(path, {**meta, "env_id": "PushMaze-v0"}, {k: np.load(agent.path)[k] for k in
                                                      np.load(agent.path).files if k != "meta"})
    with pytest.raises(ValueError, match=r"is for PushMaze-v0, which is not a registered task "
                                         r"\('PushMaze-v0' was retired .*PushMaze-v1's, which "
                                         r"replaced it"):
        E.evaluate(B.load_file(path), episodes=2, num_envs=2)


def test_the_command_line_evaluates_and_appends_rows(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(B, "AGENTS_DIR", tmp_path / "agents")
    constant_agent(tmp_path / "agents", "PushBox-v0", "diff", [0.5, -0.5],
                   max_episode_steps=20)
    out = tmp_path / "rows.csv"
    assert E.main(["evaluate", "PushBox-v0", "--episodes", "3", "--num-envs", "3",
                   "--csv", str(out)]) == 0
    assert E.main(["evaluate", "all", "--episodes", "2", "--num-envs", "2", "--seed", "9",
                   "--csv", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "PushBox-v0 (diff, constant, seed 2): " in printed and "95 % Wilson" in printed
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["episodes"], r["eval_seed"]) for r in rows] == [("3", "100000"), ("2", "9")]
    assert list(rows[0]) == list(E.FIELDS)
    E.main(["list"])
    assert "PushBox-v0 (diff): constant, 1234 env steps" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        E.main(["evaluate", "Sweep-v1", "--episodes", "2"])
    assert exc.value.code == 2
    assert "no pretrained agent for Sweep-v1; agents exist for: PushBox-v0 (diff)" in \
        capsys.readouterr().err
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="are not an evaluation CSV's"):
        E.append_csv(other, {})
    assert other.read_text() == "a,b\n1,2\n"


def test_loading_and_evaluating_need_neither_torch_nor_sb3(tmp_path: Path):
    path = constant_agent(tmp_path, "PushBox-v0", "diff", [0.3, 0.3], max_episode_steps=10)
    code = (
        "import sys\n"
        "for name in ('torch', 'stable_baselines3'):\n"
        "    sys.modules[name] = None  # importing either now raises ImportError\n"
        "from push_envs.baselines.evaluation import main\n"
        f"main(['evaluate', {str(path)!r}, '--episodes', '2', '--num-envs', '2'])\n"
        "assert not any(m.split('.')[0] in ('torch', 'stable_baselines3') and sys.modules[m]\n"
        "               for m in sys.modules), 'torch or SB3 got imported'\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "SDL_VIDEODRIVER": "dummy"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "PushBox-v0 (diff, constant, seed 2): " in proc.stdout


def _crafted(path: Path, **meta_changes) -> Path:
    """An agent file with description changes write() would refuse (written directly)."""
    meta = {"format": "push_envs.agent", "format_version": 1, "env_id": "PushBox-v0",
            "robot": "diff", "env_kwargs": {}, "kind": "mlp", "output": "clip",
            "observation_dim": 4, "action_dim": 2, "obs_norm": None,
            "layers": [{"activation": None}], **meta_changes}
    np.savez(path, meta=np.array(json.dumps(meta)), **{
        "layer0.weight": np.zeros((2, 4), np.float32), "layer0.bias": np.zeros(2, np.float32),
        "action_low": -np.ones(2, np.float32), "action_high": np.ones(2, np.float32)})
    return path


def _cli_refuses(argv, match, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        E.main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    # one line (argparse's own flag errors print the usage line above it)
    lines = [line for line in err.strip().splitlines() if not line.startswith("usage:")]
    assert "Traceback" not in err and len(lines) == 1, err
    assert re.search(match, lines[0]), err


def test_the_command_line_refuses_bad_input_before_playing_an_episode(tmp_path, monkeypatch,
                                                                       capsys):
    monkeypatch.setattr(B, "AGENTS_DIR", tmp_path / "agents")
    good = constant_agent(tmp_path / "agents", "PushBox-v0", "diff", [0.5, -0.5],
                          max_episode_steps=20)

    def no_episode(*args, **kwargs):
        raise AssertionError("an episode was played")

    monkeypatch.setattr(E, "evaluate", no_episode)
    folder = tmp_path / "a folder.csv"
    folder.mkdir()
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    blocked = tmp_path / "file"
    blocked.write_text("")
    cases = [
        (["--csv", str(folder)], f"{folder}: is a folder"),
        (["--csv", str(other)], rf"{other}: its columns \['a', 'b'\] are not an evaluation"),
        (["--csv", str(blocked / "x" / "rows.csv")], "cannot create it"),
        (["--seed", "-1"], "--seed must be >= 0"),
        (["--episodes", "0"], "--episodes and --num-envs must be >= 1"),
    ]
    for extra, match in cases:
        _cli_refuses(["evaluate", str(good), *extra], match, capsys)
    assert other.read_text() == "a,b\n1,2\n"
    bad = [
        (_crafted(tmp_path / "task.npz", env_id="Nope-v0"), "for Nope-v0, which is not a "
                                                             "registered task"),
        (_crafted(tmp_path / "robot.npz", robot="tank"), r"meta\['robot'\] must be one of"),
        (_crafted(tmp_path / "num_envs.npz", env_kwargs={"num_envs": 7}),
         r"holds \['num_envs'\], which whoever runs"),
        (tmp_path / "missing.npz", f"no agent file {re.escape(str(tmp_path))}/missing.npz"),
    ]
    for path, match in bad:
        # the good file first: nothing is played before every target is checked
        _cli_refuses(["evaluate", str(good), str(path), "--episodes", "2"], match, capsys)


def test_numpy_integers_are_counts_and_seeds(tmp_path: Path):
    agent = B.load_file(constant_agent(tmp_path, "PushBox-v0", "diff", [0.2, 0.1],
                                       max_episode_steps=5))
    row = E.evaluate(agent, episodes=np.int64(4), seed=np.uint32(12), num_envs=np.int32(2))
    assert (row["episodes"], row["eval_seed"]) == (4, 12)
    assert type(row["episodes"]) is int and type(row["eval_seed"]) is int
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        E.evaluate(agent, episodes=2, seed=-1)
    with pytest.raises(ValueError, match="seed must leave room"):
        E.evaluate(agent, episodes=2, seed=2 ** 64 - 1, num_envs=2)
    with pytest.raises(ValueError, match="episodes must be an int >= 1, got 2.0"):
        E.evaluate(agent, episodes=2.0)
