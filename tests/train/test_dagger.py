"""train/dagger.py: Push-T's mixture-density policy in the T's frame, trained by DAgger."""

from __future__ import annotations

import json
import math
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("tyro")

import torch  # noqa: E402
from train_scripts import load_script  # noqa: E402

from push_envs.core import obs_layout as L  # noqa: E402
from push_envs.experts import expert  # noqa: E402

push_t_actions = expert("PushT-v0", "omni")

D = load_script("dagger.py", "dagger_script")


@pytest.fixture(scope="module")
def scenes():
    """Observations of 64 PushT-v0 starts (omni), the layout's frame, and the layout."""
    venv = gym.make_vec("PushT-v0", num_envs=64, robot="omni")
    obs, _ = venv.reset(seed=3)
    # Some steps of random actions, so robot, T and goal are in general position.
    rng = np.random.default_rng(0)
    for _ in range(10):
        obs, *_ = venv.step(rng.uniform(-1, 1, (64, 2)).astype(np.float32))
    frame = D.TeeFrame(venv.observation_layout, venv.task.args)
    layout, args = venv.observation_layout, venv.task.args
    venv.close()
    return obs.astype(np.float64), frame, layout, args


def _moved(obs, layout, args, phi, tx, ty):
    """The same scenes rigidly moved: turned by phi [rad] about the origin, then shifted by
    (tx, ty) [m]. The world-frame columns move; the robot-frame ones do not."""
    o = obs.copy()
    c, s = math.cos(phi), math.sin(phi)
    for name, shift in (("robot_xy", True), ("robot_heading", False), ("goal_xy", True),
                        ("goal_heading", False)):
        k = L.offset(layout, args, name)
        x, y = obs[:, k].copy(), obs[:, k + 1].copy()
        o[:, k], o[:, k + 1] = c * x - s * y + tx * shift, s * x + c * y + ty * shift
    return o


def test_features_and_frame_actions_are_invariant_under_rigid_motion(scenes):
    obs, frame, layout, args = scenes
    moved = _moved(obs, layout, args, 2.1, -3.0, 0.7)
    np.testing.assert_allclose(frame.features(moved), frame.features(obs), atol=2e-5)
    # A body-frame action is the same push in both scenes, so in the T's frame too.
    act = np.random.default_rng(1).uniform(-1, 1, (len(obs), 2))
    np.testing.assert_allclose(frame.to_frame(moved, act), frame.to_frame(obs, act), atol=1e-6)
    # The premise: the expert is equivariant, so the same features get the same action.
    np.testing.assert_allclose(push_t_actions(moved), push_t_actions(obs), atol=1e-4)


def test_features_read_the_poses_from_the_named_columns(scenes):
    obs, frame, layout, args = scenes
    f = frame.features(obs)
    # Robot seen from the T: its distance to the T's origin is frame-free.
    k = L.offset(layout, args, "object_rel")
    np.testing.assert_allclose(np.hypot(f[:, 0], f[:, 1]), np.hypot(obs[:, k], obs[:, k + 1]),
                               rtol=1e-5)
    # The goal's distance to the T's origin is that of "goal minus object".
    k = L.offset(layout, args, "goal_minus_object")
    np.testing.assert_allclose(np.hypot(f[:, 2], f[:, 3]), np.hypot(obs[:, k], obs[:, k + 1]),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(f[:, 4:6], 10 * f[:, 2:4], rtol=1e-6)
    # Heading error from "goal heading relative to the object".
    k = L.offset(layout, args, "goal_heading_rel")
    np.testing.assert_allclose(f[:, 8], np.arctan2(obs[:, k + 1], obs[:, k]), atol=1e-5)
    np.testing.assert_allclose(np.hypot(f[:, 6], f[:, 7]), 1.0, atol=1e-6)


def test_frame_and_action_codes_round_trip(scenes):
    obs, frame, _, _ = scenes
    rng = np.random.default_rng(2)
    act = rng.uniform(-0.7, 0.7, (len(obs), 2))
    np.testing.assert_allclose(frame.from_frame(obs, frame.to_frame(obs, act)), act, atol=1e-6)
    # Speeds from the 1 mm/s floor to 1 m/s come back; the code's third number is log speed.
    speed = np.exp(rng.uniform(math.log(1e-3), 0.0, 50))
    ang = rng.uniform(-math.pi, math.pi, 50)
    v = np.stack([speed * np.cos(ang), speed * np.sin(ang)], 1)
    y = D.encode(v)
    np.testing.assert_allclose(y[:, 2], np.log(speed), rtol=1e-5)
    np.testing.assert_allclose(D.decode(y), v, rtol=1e-5, atol=1e-8)


def test_mixture_likelihood_and_mode():
    torch.manual_seed(0)
    net = D.MixturePolicy([8], 3, np.zeros(2), np.ones(2), act_dim=1)
    # Hand-set head: no dependence on the input; weights 0.2, 0.5, 0.3; means -1, 2, 5;
    # stds 1, 0.5, 2.
    with torch.no_grad():
        net.head.weight.zero_()
        net.head.bias.copy_(torch.tensor([math.log(0.2), -1.0, 0.0,
                                          math.log(0.5), 2.0, math.log(0.5),
                                          math.log(0.3), 5.0, math.log(2.0)]))
    x = torch.zeros(4, 2)
    np.testing.assert_allclose(net.mode(x).detach().numpy(), 2.0)  # the heaviest component's mean
    a = torch.tensor([[0.0], [1.5], [3.0], [7.0]])
    w, mu, sd = np.array([0.2, 0.5, 0.3]), np.array([-1.0, 2.0, 5.0]), np.array([1.0, 0.5, 2.0])
    # The loss drops the 1/sqrt(2 pi) factor: density x sqrt(2 pi).
    dens = (w * np.exp(-0.5 * ((a.numpy() - mu) / sd) ** 2) / sd).sum(1)
    assert float(net.nll(x, a).detach()) == pytest.approx(-np.log(dens).mean(), rel=1e-6)


def test_bad_arguments_exit_with_the_flag_named():
    with pytest.raises(SystemExit, match="--epochs must be >= 1"):
        D.Args(epochs=0)
    with pytest.raises(SystemExit, match="--rounds must be >= 0"):
        D.Args(rounds=-1)
    with pytest.raises(SystemExit, match="--minutes must be > 0"):
        D.Args(minutes=0.0)


def test_a_short_run_writes_its_results(tmp_path: Path):
    result = D.main(["--episodes", "20", "--rounds", "1", "--dagger-episodes", "10",
                     "--epochs", "2", "--hidden", "32", "32", "--eval-episodes", "4",
                     "--num-envs", "10", "--run-dir", str(tmp_path), "--gif",
                     str(tmp_path / "play.gif"), "--gif-episodes", "1"])
    run = tmp_path / "PushT-v0" / "dagger" / "0"
    saved = json.loads((run / "result.json").read_text())
    assert saved["coverage_success_rate"] == result["coverage_success_rate"]
    assert result["expert_success_rate"] == 1.0  # the scripted expert's 20 episodes
    assert [r["round"] for r in result["rounds"]] == [0, 1]
    assert result["rounds"][1]["samples"] > result["rounds"][0]["samples"]
    assert result["episodes"] == 4 and 0.0 <= result["final_coverage_mean"] <= 1.0
    assert json.loads((run / "args.json").read_text())["epochs"] == 2
    # round 1's own episodes are an evaluation: every env step played so far (the set's
    # samples: the expert's and the policy's), the seconds since the command started
    (ev,) = saved["evaluations"]
    assert ev["env_steps"] == result["rounds"][1]["samples"] and ev["phase"] == "dagger"
    assert 0.0 < ev["wall_clock_s"] < saved["train_s"] + 60.0
    assert saved["floor"] == 0.5
    assert saved["to_floor"] == ({**ev, "floor": 0.5} if ev["success_rate"] >= 0.5 else None)
    assert (run / "policy.pt").is_file()
    from PIL import Image

    with Image.open(tmp_path / "play.gif") as gif:  # one episode of at most 300 steps
        assert 2 <= gif.n_frames <= 301 and gif.size[0] > 100


def test_stop_at_floor_keeps_the_policy_that_reached_it(monkeypatch):
    args = D.Args(episodes=10, rounds=3, dagger_episodes=10, epochs=1, hidden=[16],
                  num_envs=10, stop_at_floor=True)
    monkeypatch.setitem(D.FLOORS, "PushT-v0", 0.0)  # any round is at this floor
    _, info = D.train(args, t_command=0.0)
    # stopped at round 1, its labels not fitted: the policy is round 0's, which played it
    assert [r["round"] for r in info["rounds"]] == [0]
    (ev,) = info["evaluations"]
    assert info["to_floor"] == {**ev, "floor": 0.0}
    assert ev["wall_clock_s"] > 0.0  # since t_command


def test_the_saved_policy_reloads_to_the_same_actions(tmp_path: Path):
    args = D.Args(episodes=10, rounds=0, epochs=1, hidden=[16], num_envs=10)
    policy, info = D.train(args)
    assert info["rounds"][0]["samples"] > 10
    D.save(policy, tmp_path / "policy.pt", args)
    loaded = D.load_policy(tmp_path / "policy.pt")
    venv = D.batch(8, 8)
    obs, _ = venv.reset(seed=5)
    venv.close()
    act = policy(obs)
    assert act.shape == (8, 2) and np.all(np.abs(act) <= 1.0)
    np.testing.assert_array_equal(loaded(obs), act)
