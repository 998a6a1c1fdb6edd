"""The SB3 training layer: hyperparameter loading and end-to-end smoke runs of the scripts."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3.common.vec_env import VecNormalize  # noqa: E402
from train_scripts import load_script  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


T = load_script("train.py", "train_script")


@pytest.fixture
def yml(tmp_path: Path) -> Path:
    path = tmp_path / "ppo.yml"
    path.write_text(
        "default:\n"
        "  n_envs: 8\n"
        "  n_timesteps: !!float 1e5\n"
        "  gamma: 0.99\n"
        "  policy_kwargs: {net_arch: [64, 64]}\n"
        "  env_kwargs: {robot: diff, reward_type: dense}\n"
        "PushBox-v0:\n"
        "  gamma: 0.98\n"
        "  env_kwargs: {robot: omni}\n"
        "Custom-v9:\n"
        "  n_envs: 2\n")
    return path


# ----------------------------------------------------------------------------- hyperparams
def test_default_merge_and_env_override(yml: Path):
    hp = T.load_hyperparams("ppo", "PushBox-v0", yml)
    assert hp["n_envs"] == 8 and hp["gamma"] == 0.98
    assert hp["env_kwargs"] == {"robot": "omni", "reward_type": "dense"}  # merged one level
    # A registered id without an entry gets the default; an id only in the file is accepted.
    assert T.load_hyperparams("ppo", "PushT-v0", yml)["gamma"] == 0.99
    assert T.load_hyperparams("ppo", "Custom-v9", yml)["n_envs"] == 2


def test_cli_overrides_yml(yml: Path):
    args = T.parse_args(["--env", "PushBox-v0", "--timesteps", "2e3", "--n-envs", "4",
                         "--robot", "acker", "--hp", "gamma=0.9", "--hp", "n_epochs=3",
                         "--hp", "env_kwargs={max_episode_steps: 9}"])
    hp = T.apply_overrides(T.load_hyperparams("ppo", args.env, yml), args)
    assert hp["n_timesteps"] == 2000 and hp["n_envs"] == 4
    assert hp["env_kwargs"] == {"robot": "acker", "reward_type": "dense", "max_episode_steps": 9}
    assert hp["gamma"] == 0.9 and hp["n_epochs"] == 3
    # Without flags the yml wins.
    hp = T.apply_overrides(T.load_hyperparams("ppo", "PushBox-v0", yml), T.parse_args([]))
    assert hp["n_timesteps"] == 100_000 and hp["env_kwargs"]["robot"] == "omni"


def test_per_robot_entries(tmp_path: Path):
    path = tmp_path / "ppo.yml"
    path.write_text("default:\n  n_envs: 8\n  learning_rate: 3.0e-4\n"
                    "PushBox-v0:\n  gamma: 0.98\n  env_kwargs: {robot: diff}\n"
                    "  robots:\n    omni: {n_envs: 256, learning_rate: 5.0e-4}\n"
                    "    acker: {n_timesteps: 3.0e+6}\n")
    diff = T.load_hyperparams("ppo", "PushBox-v0", path)  # the entry's own robot
    assert (diff["n_envs"], diff["learning_rate"], diff["gamma"]) == (8, 3e-4, 0.98)
    assert "robots" not in diff
    omni = T.load_hyperparams("ppo", "PushBox-v0", path, "omni")
    assert (omni["n_envs"], omni["learning_rate"], omni["gamma"]) == (256, 5e-4, 0.98)
    assert T.load_hyperparams("ppo", "PushBox-v0", path, "acker")["n_timesteps"] == 3e6
    # Through the CLI: --robot picks the entry, and is still the env's robot.
    args = T.parse_args(["--robot", "omni"])
    hp = T.apply_overrides(T.load_hyperparams("ppo", args.env, path, args.robot), args)
    assert hp["n_envs"] == 256 and hp["env_kwargs"]["robot"] == "omni"
    path.write_text("PushBox-v0:\n  robots: {tank: {n_envs: 2}}\n")
    with pytest.raises(ValueError, match=r"PushBox-v0\.robots must map drive names"):
        T.load_hyperparams("ppo", "PushBox-v0", path)


def test_a_file_without_a_default_keeps_the_shared_one(tmp_path: Path):
    # A scratch file of one entry: the shared default (VecNormalize, gamma 0.98, Tanh and
    # the fused Adam) still applies beneath it; only a file's own `default` replaces it.
    path = tmp_path / "ppo.yml"
    path.write_text("PushMulti-v0:\n  n_epochs: 5\n  gamma: 0.97\n")
    shared = T.load_hyperparams("ppo", "PushMulti-v0")
    hp = T.load_hyperparams("ppo", "PushMulti-v0", path)
    assert hp["normalize"] is True and shared["normalize"] is True
    assert (hp["n_epochs"], hp["gamma"]) == (5, 0.97)
    assert hp["policy_kwargs"]["activation_fn"] == "Tanh"
    assert hp["n_envs"] == 64 and "warm_start" not in hp  # the shared default's, not the task's
    path.write_text("default:\n  n_envs: 8\nPushMulti-v0:\n  n_epochs: 5\n")
    own = T.load_hyperparams("ppo", "PushMulti-v0", path)
    assert own == {"n_envs": 8, "n_epochs": 5}


def test_unknown_env_id_error_names_file_id_and_known_ids(yml: Path):
    with pytest.raises(ValueError) as err:
        T.load_hyperparams("ppo", "NoSuchEnv-v0", yml)
    msg = str(err.value)
    assert str(yml) in msg and "NoSuchEnv-v0" in msg
    assert "PushBox-v0" in msg and "WallSlide-v0" in msg and "Custom-v9" in msg


def test_shipped_files_load_for_every_env():
    import push_envs
    from push_envs.experts import expert

    for algo in T.ALGOS:
        for env_id in push_envs.ENV_IDS:
            hp = T.load_hyperparams(algo, env_id)
            kwargs = T.algo_kwargs(hp)
            assert "n_envs" not in kwargs and "env_kwargs" not in kwargs
            assert "warm_start" not in kwargs
            if "warm_start" in hp:  # valid settings, and the task has a scripted expert
                T.settings(hp["warm_start"])
                env_kwargs = hp.get("env_kwargs", {})  # an entry may leave them out
                expert(env_id, env_kwargs.get("robot", "diff"), env_kwargs)
    sac = T.algo_kwargs(T.load_hyperparams("sac", "PushBox-v0"))
    from stable_baselines3 import HerReplayBuffer
    from stable_baselines3.her.goal_selection_strategy import GoalSelectionStrategy

    assert sac["replay_buffer_class"] is HerReplayBuffer
    assert sac["replay_buffer_kwargs"] == {"n_sampled_goal": 4,
                                           "goal_selection_strategy": GoalSelectionStrategy.FUTURE}


def test_policy_kwargs_mapping():
    import torch.nn as nn

    assert T.policy_kwargs({"net_arch": [256, 256]}) == {"net_arch": [256, 256]}
    kw = T.policy_kwargs({"activation_fn": "Tanh", "log_std_init": -0.5})
    assert kw == {"activation_fn": nn.Tanh, "log_std_init": -0.5}
    assert T.policy_kwargs(None) == {}


@pytest.mark.parametrize(("value", "match"), [
    ("dict(net_arch=[64, 64])", "must be a YAML mapping"),
    ({"activation_fn": "os.system"}, r"activation_fn must be one of \['ELU', 'GELU'"),
    ([64, 64], "must be a YAML mapping"),
])
def test_policy_kwargs_rejects_strings_and_unknown_names(value, match):
    with pytest.raises(ValueError, match=match):
        T.policy_kwargs(value)


def test_cli_rejects_bad_choices(capsys):
    with pytest.raises(SystemExit):
        T.parse_args(["--algo", "dqn"])
    with pytest.raises(SystemExit):
        T.parse_args(["--robot", "tank"])
    assert T.parse_args(["--timesteps", "3e6"]).timesteps == 3e6


def test_normalize_kwargs():
    assert T.normalize_kwargs({"normalize": False}) is None
    assert T.normalize_kwargs({"normalize": True, "gamma": 0.98}) == {"gamma": 0.98}
    assert T.normalize_kwargs({"normalize": {"norm_reward": False}}) == {
        "norm_reward": False, "gamma": 0.99}
    with pytest.raises(ValueError, match="normalize must be"):
        T.normalize_kwargs({"normalize": "yes"})


# ------------------------------------------------------------------------------ smoke runs
def _run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
    out = subprocess.run([sys.executable, *cmd], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=timeout)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out


def test_ppo_smoke_then_enjoy_gif(tmp_path: Path):
    out = _run(["-m", "train.train", "--timesteps", "2048", "--n-envs", "8", "--eval-episodes",
                "4", "--eval-envs", "4", "--eval-freq", "1024", "--run-dir", str(tmp_path),
                "--no-progress", "--hp", "ent_coef=lin_0.02", "--hp", "stop_at_success=null",
                "--hp", "warm_start={episodes: 20, epochs: 2, num_envs: 10}"], 600)
    assert "final evaluation: success" in out.stdout
    run = tmp_path / "PushBox-v0" / "ppo" / "0"
    from stable_baselines3 import PPO

    assert PPO.load(run / "final_model.zip", device="cpu").ent_coef == 0.0  # decayed to 0
    for name in ("best_model.zip", "final_model.zip", "vecnormalize.pkl",
                 "best_vecnormalize.pkl", "args.json", "evaluations.npz", "result.json"):
        assert (run / name).exists(), name
    result = json.loads((run / "result.json").read_text())
    assert 0.0 <= result["success_rate"] <= 1.0 and result["env_steps"] >= 2048
    log = np.load(run / "evaluations.npz")
    assert "successes" in log and log["successes"].shape[1] == 4  # is_success reached EvalCallback
    # Each evaluation is in result.json with its wall clock, in the order played.
    # PushBox-v0's entry warm-starts: the clone's evaluation comes first, at 0 PPO steps.
    evals = result["evaluations"]
    assert [e["phase"] for e in evals] == ["clone"] + ["ppo"] * len(log["timesteps"])
    assert evals[0]["env_steps"] == 0
    assert evals[0]["success_rate"] == result["warm_start"]["clone"]["success_rate"]
    ppo = evals[1:]
    assert [e["env_steps"] for e in ppo] == log["timesteps"].tolist()
    np.testing.assert_allclose([e["success_rate"] for e in ppo], log["successes"].mean(1))
    walls = [e["wall_clock_s"] for e in evals]
    assert walls == sorted(walls) and 0 < walls[-1] < result["wall_clock_s"]
    assert result["floor"] == 0.8
    hits = [e for e in evals if e["success_rate"] >= 0.8]
    assert result["to_floor"] == ({**hits[0], "floor": 0.8} if hits else None)

    gif = tmp_path / "x.gif"
    _run(["-m", "train.enjoy", "--run", str(run), "--gif", str(gif), "--episodes", "1"], 300)
    from PIL import Image

    with Image.open(gif) as im:
        assert im.n_frames > 1

    png = tmp_path / "curve.png"
    _run(["-m", "train.plot", str(tmp_path / "PushBox-v0" / "ppo"), "--out", str(png)], 120)
    assert png.stat().st_size > 1000


def test_ppo_warm_start_smoke(tmp_path: Path):
    out = _run(["-m", "train.train", "--timesteps", "512", "--n-envs", "8", "--eval-episodes",
                "4", "--eval-envs", "4", "--run-dir", str(tmp_path), "--no-progress",
                "--hp", "n_steps=64", "--hp", "batch_size=128",
                "--hp", "env_kwargs={max_episode_steps: 40}",
                "--hp", "warm_start={episodes: 6, epochs: 2, num_envs: 3, dagger_rounds: 1, "
                "dagger_episodes: 3}", "--hp", "hide_obs=[robot_vel, robot_omega]"], 600)
    assert "warm start: " in out.stdout and "expert episodes" in out.stdout
    assert "and DAgger (the clone playing " in out.stdout
    result = json.loads((tmp_path / "PushBox-v0" / "ppo" / "0" / "result.json").read_text())
    ws = result["warm_start"]
    assert ws["episodes"] == 6 and ws["epochs"] == 2 and ws["steps"] > 6
    assert ws["dagger_rounds"] == 1 and len(ws["dagger_success_rates"]) == 1
    assert 0.0 <= ws["clone"]["success_rate"] <= 1.0 and ws["clone"]["episodes"] == 4
    # The saved normalisation never saw the hidden columns move; enjoy.py hides them too.
    from train.enjoy import load_run

    run = tmp_path / "PushBox-v0" / "ppo" / "0"
    model, venv, saved = load_run(run, "final")
    assert saved["hyperparams"]["hide_obs"] == ["robot_vel", "robot_omega"]
    venv.reset()
    assert isinstance(venv, VecNormalize) and not venv.get_original_obs()[:, 4:7].any()
    assert venv.get_original_obs()[:, :4].any()  # the rest is there
    np.testing.assert_array_equal(venv.obs_rms.mean[4:7], 0.0)
    venv.close()


def test_hide_obs_zeroes_the_named_fields_everywhere_the_policy_looks():
    hp = {"env_kwargs": {"max_episode_steps": 5}, "env_threads": 1, "normalize": False}
    plain = T.make_env("PushBox-v0", 4, 7, hp)
    hidden = T.make_env("PushBox-v0", 4, 7, {**hp, "hide_obs": ["robot_vel", "robot_omega",
                                                                  "contact_force"]})
    # robot_vel and robot_omega are columns 4-6; contact_force repeats per slot (M = 4).
    np.testing.assert_array_equal(hidden.view.hide, [4, 5, 6, 24, 30, 36, 42])
    keep = np.setdiff1d(np.arange(plain.observation_space.shape[0]), hidden.view.hide)
    a, b = plain.reset(), hidden.reset()
    np.testing.assert_array_equal(b[:, keep], a[:, keep])
    assert not b[:, hidden.view.hide].any()
    rng = np.random.default_rng(0)
    moved = False
    for _ in range(5):  # the 5th step truncates every episode: terminal observations
        act = rng.uniform(-1, 1, (4, 2)).astype(np.float32)
        plain.step_async(act)
        hidden.step_async(act)
        (a, _, _, ia), (b, _, done, ib) = plain.step_wait(), hidden.step_wait()
        np.testing.assert_array_equal(b[:, keep], a[:, keep])
        assert not b[:, hidden.view.hide].any()
        moved |= bool(np.abs(a[:, 4:6]).max() > 0.01)  # there was a velocity to hide
    assert done.all() and moved
    for x, y in zip(ia, ib, strict=True):
        np.testing.assert_array_equal(y["terminal_observation"][keep],
                                      x["terminal_observation"][keep])
        assert not y["terminal_observation"][hidden.view.hide].any()
    plain.close()
    hidden.close()


def test_sort_obs_orders_the_pucks_everywhere_the_policy_looks():
    hp = {"env_kwargs": {"max_episode_steps": 5, "num_pucks": 6}, "env_threads": 1,
          "normalize": False}
    plain = T.make_env("Sweep-v1", 4, 7, hp)
    view = T.make_env("Sweep-v1", 4, 7, {**hp, "sort_obs": {"by": "puck_rel",
                                                             "last": "puck_inside"}})
    start, width, count, key, size, last, toward = view.view.sorts[0]
    assert (width, count, key, size, last, toward) == (5, 6, 0, 2, 4, -1)
    assert start + 30 == plain.observation_space.shape[0]

    def check(raw: np.ndarray, seen: np.ndarray) -> None:
        np.testing.assert_array_equal(seen[..., :start], raw[..., :start])
        slots = seen[..., start:].reshape(*seen.shape[:-1], 6, 5)
        flag, dist = slots[..., 4], np.hypot(slots[..., 0], slots[..., 1])
        order = flag * 100.0 + dist  # the arena is 3 m: flagged slots last, then nearest
        assert (np.diff(order, axis=-1) >= 0).all()
        raw_slots = raw[..., start:].reshape(*raw.shape[:-1], 6, 5)
        np.testing.assert_array_equal(np.sort(slots.reshape(-1, 30), axis=-1),
                                      np.sort(raw_slots.reshape(-1, 30), axis=-1))

    check(plain.reset(), view.reset())
    for _ in range(5):  # the 5th step truncates every episode: terminal observations
        act = np.tile([[1.0, 0.4]], (4, 1)).astype(np.float32)
        plain.step_async(act)
        view.step_async(act)
        (a, _, _, ia), (b, _, done, ib) = plain.step_wait(), view.step_wait()
        check(a, b)
    assert done.all()
    for x, y in zip(ia, ib, strict=True):
        check(x["terminal_observation"], y["terminal_observation"])
    plain.close()
    view.close()


def test_bad_sort_obs_is_refused_before_anything_is_written(tmp_path: Path):
    with pytest.raises(ValueError, match=r"Sweep-v1.sort_obs.by: 'robot_xy' is not a repeated "
                                         r"observation field; repeated fields: "):
        T.main(["--env", "Sweep-v1", "--hp", "sort_obs={by: robot_xy}", "--no-progress",
                "--run-dir", str(tmp_path)])
    assert not any(tmp_path.iterdir())


def test_bad_hide_obs_is_refused_with_the_fields_listed(tmp_path: Path):
    with pytest.raises(ValueError, match=r"PushBox-v0.hide_obs: no observation fields "
                                         r"\['robot_speed'\]; fields: \['robot_xy', "):
        T.main(["--hp", "hide_obs=[robot_speed]", "--no-progress", "--run-dir",
                str(tmp_path)])
    with pytest.raises(ValueError, match=r"PushBox-v0 \(ppo\): hide_obs must be a list of "
                                         r"names, got 'robot_vel'"):
        T.main(["--hp", "hide_obs=robot_vel", "--no-progress", "--run-dir", str(tmp_path)])
    assert not any(tmp_path.iterdir())  # refused before anything was written


def test_warm_start_is_refused_for_sac_and_bad_settings(tmp_path: Path):
    with pytest.raises(ValueError, match=r"PushBox-v0.warm_start: behaviour cloning "
                                         r"warm-starts ppo only, not sac"):
        T.main(["--algo", "sac", "--hp", "warm_start={episodes: 2}", "--no-progress"])
    with pytest.raises(ValueError, match=r"PushBox-v0.warm_start: unknown keys \['epoch'\]"):
        T.main(["--hp", "warm_start={epoch: 2}", "--no-progress"])
    with pytest.raises(ValueError, match=r"PushBox-v0.warm_start: no scripted expert for "
                                         r"PushBox-v0 with robot='acker'"):
        T.main(["--robot", "acker", "--hp", "warm_start={episodes: 2}", "--no-progress",
                "--run-dir", str(tmp_path)])
    assert not any(tmp_path.iterdir())  # refused before anything was written
    with pytest.raises(ValueError, match=r"PushBox-v0.warm_start: the scripted experts read the "
                                         r"state observation; obs_mode='goal'"):
        T.main(["--hp", "env_kwargs={obs_mode: goal}", "--hp", "warm_start={episodes: 2}",
                "--no-progress", "--run-dir", str(tmp_path)])
    assert not any(tmp_path.iterdir())


def test_sac_her_smoke(tmp_path: Path):
    out = _run(["-m", "train.train", "--algo", "sac", "--timesteps", "300", "--n-envs", "2",
                "--eval-episodes", "2", "--eval-envs", "2", "--run-dir", str(tmp_path),
                "--no-progress", "--hp", "learning_starts=100", "--hp", "batch_size=32",
                "--hp", "buffer_size=1000", "--hp", "policy_kwargs={net_arch: [32, 32]}",
                "--hp", "env_kwargs={max_episode_steps: 40}", "--eval-freq", "150"], 240)
    assert "final evaluation: success" in out.stdout
    run = tmp_path / "PushBox-v0" / "sac" / "0"
    saved = json.loads((run / "args.json").read_text())
    assert saved["hyperparams"]["replay_buffer_class"] == "HerReplayBuffer"
    assert (run / "final_model.zip").exists() and (run / "evaluations.npz").exists()


def test_update_threads_switch_between_phases():
    import torch

    before = torch.get_num_threads()
    cb = T.UpdateThreads(collect=1, update=2)
    try:
        cb.on_rollout_end()
        assert torch.get_num_threads() == 2
        cb.on_rollout_start()
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_ent_coef_lin_decays_to_zero_over_the_steps():
    from types import SimpleNamespace

    from stable_baselines3.common.logger import Logger

    assert T.algo_kwargs({"ent_coef": "lin_0.01"})["ent_coef"] == 0.01
    assert T.algo_kwargs({"ent_coef": 0.005})["ent_coef"] == 0.005
    assert T.ent_coef_decay({"ent_coef": 0.01}) == [] and T.ent_coef_decay({}) == []
    [cb] = T.ent_coef_decay({"ent_coef": "lin_0.01"})
    model = SimpleNamespace(num_timesteps=0, _total_timesteps=1000, ent_coef=0.01,
                            logger=Logger(None, []))
    cb.init_callback(model)
    for done, want in ((250, 0.0075), (500, 0.005), (1000, 0.0), (1100, 0.0)):
        model.num_timesteps = done
        cb.on_rollout_end()
        assert model.ent_coef == pytest.approx(want, abs=1e-15)


@pytest.mark.parametrize("value, match", [("lin_x", r"ent_coef 'lin_x': lin_ must be followed "
                                                    r"by a number"),
                                          ("lin_-0.1", r"ent_coef 'lin_-0.1': the coefficient "
                                                       r"must be >= 0")])
def test_ent_coef_lin_refuses_bad_values(value: str, match: str):
    with pytest.raises(ValueError, match=match):
        T.algo_kwargs({"ent_coef": value})


def test_ent_coef_lin_is_refused_for_sac(tmp_path: Path):
    with pytest.raises(ValueError, match=r"PushBox-v0 \(sac\): ent_coef: lin_ decays PPO's "
                                         r"entropy bonus; sac takes a number or 'auto'"):
        T.main(["--algo", "sac", "--hp", "ent_coef=lin_0.01", "--no-progress", "--run-dir",
                str(tmp_path)])
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("hp, want", [({"min_std": 0.3}, [0.3, 1.5, 0.8]),
                                      ({"max_std": 0.6}, [0.1, 0.6, 0.6]),
                                      ({"min_std": 0.3, "max_std": 0.6}, [0.3, 0.6, 0.6]),
                                      ({"min_std": 0.5, "max_std": 0.5}, [0.5, 0.5, 0.5])])
def test_min_and_max_std_clamp_the_action_std_before_each_rollout(hp: dict, want: list):
    from types import SimpleNamespace

    import torch

    assert "min_std" not in T.algo_kwargs({**hp, "ent_coef": 0.0})
    assert "max_std" not in T.algo_kwargs({**hp, "ent_coef": 0.0})
    [cb] = T.std_clamp(hp)
    log_std = torch.nn.Parameter(torch.log(torch.tensor([0.1, 1.5, 0.8])))
    cb.init_callback(SimpleNamespace(policy=SimpleNamespace(log_std=log_std)))
    cb.on_rollout_start()
    np.testing.assert_allclose(log_std.detach().exp().numpy(), want, rtol=1e-6)
    assert log_std.requires_grad  # still trained: only its values outside are moved


def test_no_std_bounds_no_callback():
    assert T.std_clamp({}) == [] and T.std_clamp({"min_std": None, "max_std": None}) == []


@pytest.mark.parametrize("key", ["min_std", "max_std"])
@pytest.mark.parametrize("value", [0, -0.2, "0.3", True, float("nan"), float("inf")])
def test_std_bounds_refuse_anything_but_a_positive_number(key: str, value: object):
    with pytest.raises(ValueError, match=rf"{key} .*: must be a number > 0"):
        T.std_clamp({key: value})


def test_a_floor_above_the_ceiling_is_refused():
    with pytest.raises(ValueError, match=r"min_std 0.7 is above max_std 0.6"):
        T.std_clamp({"min_std": 0.7, "max_std": 0.6})


@pytest.mark.parametrize("argv, match", [
    (["--algo", "sac", "--hp", "min_std=0.3"],
     r"PushBox-v0.min_std: bounds PPO's state-independent action std; sac has none"),
    (["--hp", "use_sde=true", "--hp", "max_std=0.5"],
     r"PushBox-v0.max_std: .*; ppo with use_sde has none"),
    (["--hp", "min_std=-1"], r"min_std -1: must be a number > 0"),
    (["--hp", "min_std=0.9", "--hp", "max_std=0.5"], r"min_std 0.9 is above max_std 0.5"),
])
def test_std_bounds_are_refused_before_anything_is_written(tmp_path: Path, argv: list[str],
                                                           match: str):
    with pytest.raises(ValueError, match=match):
        T.main([*argv, "--no-progress", "--run-dir", str(tmp_path)])
    assert not any(tmp_path.iterdir())


def test_torch_threads_sleep_when_idle():
    # train.py sets it before torch loads, unless the user chose a policy.
    assert os.environ.get("OMP_WAIT_POLICY") == "PASSIVE" or "OMP_WAIT_POLICY" in T._USER_ENV


def test_a_tasks_entry_is_read_from_its_own_folder(tmp_path: Path, monkeypatch):
    from push_envs.tasks import spec

    folder = spec("PushBox-v0").folder()
    assert spec("PushBox-v0").hyperparams_path() == folder / "hyperparams.yml"
    hp = T.load_hyperparams("ppo", "PushBox-v0")
    assert (hp["n_timesteps"], hp["n_epochs"], hp["learning_rate"]) == (6e6, 2, 1e-3)
    assert hp["n_envs"] == 1024 and hp["gamma"] == 0.98  # its own, and the shared default's
    # a drive's robots entry overrides the task's entry key by key: omni keeps the shape and
    # the warm start (its own expert), acker drops the warm start (it has no expert)
    omni = T.load_hyperparams("ppo", "PushBox-v0", robot="omni")
    assert (omni["n_envs"], omni["n_steps"], omni["batch_size"], omni["n_epochs"]) == \
        (1024, 16, 2048, 2)
    assert (omni["learning_rate"], omni["n_timesteps"]) == ("lin_1e-3", 3e6)
    assert omni["stop_at_success"] is None and omni["warm_start"] == hp["warm_start"]
    acker = T.load_hyperparams("ppo", "PushBox-v0", robot="acker")
    assert acker["warm_start"] is None and acker["stop_at_success"] == 0.97
    assert acker["n_timesteps"] == 1.6e7
    # Another file in its place is what is read.
    own = tmp_path / "hp.yml"
    own.write_text("ppo:\n  n_timesteps: 1234\n")
    monkeypatch.setattr(spec("PushBox-v0"), "hyperparams", str(own))
    assert T.load_hyperparams("ppo", "PushBox-v0")["n_timesteps"] == 1234


# ------------------------------------------------------------------ the hyperparameter table
@pytest.mark.parametrize(("hp", "match"), [
    ("gamma=2", "gamma must be a finite number > 0 and <= 1, got 2"),
    ("gamma=0", "gamma must be a finite number > 0 and <= 1"),
    ("clip_range=-0.2", "clip_range must be a finite number > 0, got -0.2"),
    ("clip_range=lin_-1", "clip_range must be a finite number > 0, got -1.0"),
    ("n_epochs=0", "n_epochs must be an integer in"),
    ("n_epochs=2.5", "n_epochs must be an integer in"),
    ("ent_coef=.nan", "ent_coef must be a finite number >= 0, got nan"),
    ("ent_coef=-0.1", "ent_coef must be a finite number >= 0"),
    ("learning_rate=.inf", "learning_rate must be a finite number > 0, got inf"),
    ("learning_rate=lin_x", "learning_rate 'lin_x': lin_ must be followed by a number"),
    ("learning_rate=0", "learning_rate must be a finite number > 0"),
    ("batch_size=1", "batch_size .* must be >= 2"),
    ("batch_size=true", "batch_size must be an integer"),
    ("n_steps=-4", "n_steps must be an integer"),
    ("gae_lambda=1.5", "gae_lambda must be a finite number >= 0 and <= 1"),
    ("vf_coef=.nan", "vf_coef must be a finite number >= 0"),
    ("max_grad_norm=0", "max_grad_norm must be a finite number > 0"),
    ("target_kl=-1", "target_kl must be a finite number > 0"),
    ("n_envs=0", "n_envs must be an integer in"),
    ("n_timesteps=-5", "n_timesteps must be a number of env steps >= 1"),
    ("eval_freq=0", "eval_freq must be an integer >= 1"),
    ("normalize=yes please", "normalize must be a mapping"),
    ("normalize={clip_obs: -1}", r"normalize.clip_obs must be a finite number > 0"),
    ("policy_kwargs={log_std_init: .inf}", r"policy_kwargs.log_std_init must be a finite"),
    ("policy_kwargs={net_arch: [64, 0]}", r"policy_kwargs.net_arch\[1\] must be an integer"),
    ("policy_kwargs={activation_fn: Swish}", r"policy_kwargs.activation_fn must be one of"),
    ("policy_kwargs={net_arc: [64]}", r"policy_kwargs: unknown key 'net_arc' \(did you mean "
                                      r"'net_arch'\?\)"),
    ("env_kwargs={num_envs: 4}", r"env_kwargs holds \['num_envs'\], which the run sets"),
    ("n_epoch=3", r"unknown hyperparameter 'n_epoch' \(did you mean 'n_epochs'\?\); ppo takes"),
    ("seed=3", "'seed' is set by the run itself \\(--seed\\)"),
    ("buffer_size=100", "unknown hyperparameter 'buffer_size'"),  # SAC's, not PPO's
])
def test_each_hyperparameter_is_checked_before_anything_is_written(tmp_path: Path, hp, match):
    with pytest.raises(ValueError, match=rf"PushBox-v0 \(ppo\): .*{match}"):
        T.main(["--hp", hp, "--no-progress", "--run-dir", str(tmp_path)])
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(("hp", "match"), [
    ("tau=0", "tau must be a finite number > 0 and <= 1"),
    ("ent_coef=auto_-1", "ent_coef must be 'auto', 'auto_<initial value > 0>' or a number"),
    ("ent_coef=0", "ent_coef must be a finite number > 0"),
    ("train_freq=[4, hour]", r"train_freq\[1\] must be one of \['step', 'episode'\]"),
    ("gradient_steps=0", "gradient_steps must be an integer >= 1"),
    ("learning_starts=-1", "learning_starts must be an integer >= 0"),
    ("n_epochs=3", "unknown hyperparameter 'n_epochs'"),  # PPO's, not SAC's
])
def test_sac_keys_are_checked_too(tmp_path: Path, hp, match):
    with pytest.raises(ValueError, match=rf"PushBox-v0 \(sac\): .*{match}"):
        T.main(["--algo", "sac", "--hp", hp, "--no-progress", "--run-dir", str(tmp_path)])
    assert not any(tmp_path.iterdir())


def test_every_shipped_entry_passes_the_table():
    import push_envs

    R = load_script("residual.py")
    for algo in T.ALGOS:
        for env_id in push_envs.ENV_IDS:
            T.check(T.load_hyperparams(algo, env_id), algo, env_id)
    T.check(R.load_hyperparams("PushT-v0"), "residual", "PushT-v0")


@pytest.mark.parametrize(("argv", "match"), [
    (["--timesteps", "-5"], r"--timesteps must be >= 1, got -5"),
    (["--timesteps", "0.5"], r"--timesteps must be >= 1"),
    (["--eval-episodes", "-3"], r"--eval-episodes must be >= 1, got -3"),
    (["--eval-envs", "0"], r"--eval-envs must be >= 1"),
    (["--n-envs", "0"], r"--n-envs must be >= 1"),
    (["--eval-freq", "-1"], r"--eval-freq must be >= 1"),
    (["--seed", "-1"], r"--seed must be in \[0, 4294967295\]"),
    (["--threads", "0"], r"--threads must be >= 1"),
    (["--env-threads", "999"], r"--env-threads must be in \[1, "),
])
def test_counts_no_run_can_use_are_refused(tmp_path: Path, argv, match):
    with pytest.raises(ValueError, match=match):
        T.main([*argv, "--no-progress", "--run-dir", str(tmp_path)])
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(("argv", "match"), [
    (["--env", "CartPole-v1"], r"no task 'CartPole-v1' \(a Gymnasium env .*\); registered "
                               r"tasks: \['PushBox-v0'"),
    (["--hp", "gamma=2"], r"gamma must be a finite number > 0 and <= 1, got 2"),
    (["--hyperparams", "/nonexistent/ppo.yml"], r"/nonexistent/ppo.yml: cannot read it"),
])
def test_the_command_line_ends_bad_input_in_one_line(tmp_path: Path, argv, match):
    out = subprocess.run([sys.executable, "-m", "train.train", *argv, "--run-dir",
                          str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                         timeout=600)
    assert out.returncode == 2, out.stderr[-2000:]
    lines = out.stderr.strip().splitlines()
    assert "Traceback" not in out.stderr and len(lines) == 1, out.stderr
    assert re.search(rf"^train\.train: .*{match}", lines[0]), lines[0]
    assert not any(tmp_path.iterdir())


_GC_PROBE = """
import gc, sys
if sys.argv[1] == "off":
    gc.disable()
if sys.argv[2] == "module":
    import train.train
else:  # the command: run as __main__, stopping after its imports
    import runpy
    sys.argv = ["train.train", "--help"]
    try:
        runpy.run_module("train.train", run_name="__main__", alter_sys=True)
    except SystemExit:
        pass
print(gc.isenabled(), gc.get_freeze_count() > 100_000)
"""


@pytest.mark.parametrize("state, how, expected", [
    ("on", "module", "True False"),    # imported: the collector resumes, nothing is frozen
    ("off", "module", "False False"),  # a caller's disabled collector stays disabled
    ("on", "command", "True True"),    # the command freezes what its imports made
])
def test_the_imports_pause_the_collector_and_leave_it_as_it_was(state, how, expected):
    out = subprocess.run([sys.executable, "-c", _GC_PROBE, state, how], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == expected
