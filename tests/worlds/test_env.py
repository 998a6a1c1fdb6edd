"""push_envs/World-v0: any IR-SIM world file as a Gymnasium env (push_envs/worlds/env.py)."""

from __future__ import annotations

import copy
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode
from gymnasium.vector import SyncVectorEnv

import push_envs  # noqa: F401  (registers the ids)
from push_envs.physics.config import SceneError
from push_envs.worlds import WORLD_ENV_ID

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
ID = WORLD_ENV_ID


def _world(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "world.yaml"
    p.write_text(text)
    return p


STRAIGHT = """
world: {height: 10, width: 10, step_time: 0.1, collision_mode: contact}
robot:
  - name: agent
    kinematics: {name: diff}
    shape: {name: circle, radius: 0.2}
    state: [1, 5, 0]
    goal: [6, 5, 0]
    goal_threshold: 0.1
    vel_min: [-1, -1]
    vel_max: [1, 1]
"""


@pytest.mark.parametrize("name", ["crowd_rvo", "lidar_world", "push_box", "crowd_orca",
                                  "robot_omni_angular", "robot_acker"])
def test_check_env(name):
    env = gym.make(ID, world=str(CONFIGS / f"{name}.yaml"), max_episode_steps=50)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_progress_reward_is_the_distance_gained(tmp_path):
    # A diff robot heading at its goal 5 m ahead, driven at v: each step's reward is the
    # distance it gained, v x dt minus the drive's acceleration lag, summed to the start
    # distance less the threshold at arrival, plus the bonus.
    env = gym.make(ID, world=str(_world(tmp_path, STRAIGHT)), collision_penalty=0.5,
                   arrival_bonus=2.0)
    obs, _ = env.reset(seed=0)
    assert obs[7:9].tolist() == [6.0, 5.0]          # goal x, y
    assert obs[11] == pytest.approx(5.0)            # distance
    total, x0 = 0.0, obs[0]
    for _ in range(200):
        obs, r, term, trunc, info = env.step(np.array([1.0, 0.0], np.float32))
        total += r
        assert not info["collision"]
        if term:
            break
    assert term and not trunc and info["is_success"]
    gained = 5.0 - info["distance"]
    assert total == pytest.approx(gained + 2.0, abs=1e-9)
    assert obs[0] - x0 == pytest.approx(gained, abs=1e-6)  # straight along x
    assert info["distance"] <= 0.1


def test_collision_penalty(tmp_path):
    text = STRAIGHT + """
obstacle:
  - shape: {name: rectangle, length: 0.5, width: 4}
    state: [2.0, 5, 0]
    static: true
"""
    env = gym.make(ID, world=str(_world(tmp_path, text)), collision_penalty=0.5)
    env.reset(seed=0)
    hits = []
    for _ in range(30):
        _, r, _, _, info = env.step(np.array([1.0, 0.0], np.float32))
        hits.append(info["collision"])
        if info["collision"]:
            assert r == pytest.approx(info["progress"] - 0.5, abs=1e-12)
    assert any(hits) and hits[-1]
    # the wall holds the robot: it is stopped 0.45 m from the wall's face, at x = 1.55
    assert env.unwrapped.world.state("agent")[0, 0] == pytest.approx(1.55, abs=2e-3)


def _rollout(env, actions, seed):
    obs, _ = env.reset(seed=seed)
    out = [obs.copy()]
    for a in actions:
        obs, r, term, trunc, _ = env.step(a)
        out += [obs.copy(), np.asarray(r).copy(), np.asarray(term).copy(),
                np.asarray(trunc).copy()]
    return out


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_batch_equals_sync_vector_env_bit_for_bit(mode):
    # A random world (crowd_orca: a random distribution drawn per env at every reset),
    # short episodes so autoreset happens: the native batch equals Gymnasium's
    # SyncVectorEnv of single envs, bit for bit.
    world = str(CONFIGS / "crowd_orca.yaml")
    n = 3
    native = gym.make_vec(ID, num_envs=n, world=world, max_episode_steps=7,
                          autoreset_mode=mode)
    sync = SyncVectorEnv([lambda: gym.make(ID, world=world, max_episode_steps=7)
                          for _ in range(n)], autoreset_mode=mode)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-2, 2, (20, n, 2)).astype(np.float32)
    a, b = _rollout(native, actions, 11), _rollout(sync, actions, 11)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_copies_of_a_random_world_differ_and_reseed_alike():
    world = str(CONFIGS / "crowd_orca.yaml")
    venv = gym.make_vec(ID, num_envs=4, world=world)
    venv.reset(seed=5)
    w = venv.unwrapped.world if hasattr(venv, "unwrapped") else venv.world
    first = w.pos.copy()
    assert not np.array_equal(first[0], first[1])  # four different worlds
    venv.reset(seed=5)
    np.testing.assert_array_equal(w.pos, first)     # the same four again
    venv.reset()
    assert not np.array_equal(w.pos, first)         # a reset draws afresh


def test_other_objects_run_their_behaviours():
    env = gym.make(ID, world=str(CONFIGS / "crowd_rvo.yaml"))
    env.reset(seed=0)
    w = env.unwrapped.world
    others = [n for n in w.names if n != env.unwrapped.agent and n.startswith("robot")]
    start = {n: w.state(n)[0, :2].copy() for n in others}
    gap0 = {n: np.hypot(*(w.goal(n)[0, :2] - start[n])) for n in others}
    for _ in range(40):
        env.step(np.zeros(2, np.float32))
    for n in others:
        gap = np.hypot(*(w.goal(n)[0, :2] - w.state(n)[0, :2]))
        assert gap < gap0[n] - 1.0, n   # each moved at least 1 m toward its goal
    # the agent, given zero commands, held still
    assert np.allclose(w.state(env.unwrapped.agent)[0, :2], [9.0, 5.0], atol=1e-9)


def test_sensors_in_the_observation():
    env = gym.make(ID, world=str(CONFIGS / "lidar_world.yaml"))
    layout = env.unwrapped.core.obs_layout
    names = [b.name for b in layout.blocks]
    assert names[:2] == ["state", "goal"] and "fov" in names
    widths = {b.name: b.width for b in layout.blocks}
    assert sum(widths.values()) == env.observation_space.shape[0]
    obs, _ = env.reset(seed=0)
    w = env.unwrapped.world
    lid = [b for b in layout.blocks if b.name.startswith("lidar")]
    assert len(lid) == 2 and lid[0].width == 64  # lidar2d: 64 ranges
    # the fmcw block equals the world's own reading (ranges, then radial velocities)
    ranges, radial = w.lidar("robot_0", 0, "fmcw_lidar2d")
    blk = lid[1]
    n = len(ranges)
    assert lid[1].width == 2 * n  # fmcw_lidar2d: ranges and radial velocities
    np.testing.assert_array_equal(obs[blk.start:blk.start + n], ranges.astype(np.float32))
    np.testing.assert_array_equal(obs[blk.start + n:blk.start + 2 * n],
                                  radial.astype(np.float32))
    fov = [b for b in layout.blocks if b.name == "fov"][0]
    seen = w.fov_detected("robot_0")[0][layout.others]
    np.testing.assert_array_equal(obs[fov.start:fov.start + fov.width:3], seen)


def test_bad_input(tmp_path):
    world = str(CONFIGS / "robot_diff.yaml")
    env = gym.make(ID, world=world)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="NaN"):
        env.step(np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(3))
    with pytest.raises(SceneError, match="nobody"):
        gym.make(ID, world=world, agent="nobody")
    with pytest.raises(SceneError, match="no kinematics"):
        gym.make(ID, world=str(CONFIGS / "push_box.yaml"), agent="obstacle_2")
    with pytest.raises(ValueError, match="collision_penalty"):
        gym.make(ID, world=world, collision_penalty=float("nan"))
    with pytest.raises(ValueError, match="max_episode_steps"):
        gym.make_vec(ID, num_envs=2, world=world, max_episode_steps=0)
    with pytest.raises(SceneError, match="world.yaml"):
        gym.make(ID, world=str(_world(tmp_path, STRAIGHT.replace("goal:", "gaol:"))))


def test_a_copy_is_independent():
    env = gym.make(ID, world=str(CONFIGS / "robot_diff.yaml"))
    env.reset(seed=0)
    twin = copy.deepcopy(env)
    for _ in range(5):
        env.step(np.array([1.0, 0.0], np.float32))
    obs_a, *_ = twin.step(np.array([0.0, 0.0], np.float32))
    assert obs_a[0] == pytest.approx(1.0)


def test_train_cli_takes_a_world(tmp_path):
    # python -m train.train --env push_envs/World-v0 --world <file>: the recipe is
    # push_envs/worlds/hyperparams.yml's; a missing world or a --world given to a task is a
    # clean error naming the flag.
    pytest.importorskip("stable_baselines3")
    from train.train import main

    with pytest.raises(ValueError, match="--world: push_envs/World-v0 trains on"):
        main(["--env", ID, "--run-dir", str(tmp_path)])
    with pytest.raises(ValueError, match="no such world file"):
        main(["--env", ID, "--world", str(tmp_path / "nope.yaml"), "--run-dir", str(tmp_path)])
    with pytest.raises(ValueError, match="--world: PushBox-v0 is a task"):
        main(["--env", "PushBox-v0", "--world", str(CONFIGS / "robot_omni.yaml"),
              "--run-dir", str(tmp_path)])


@pytest.mark.slow
def test_train_cli_trains_on_a_world(tmp_path):
    pytest.importorskip("stable_baselines3")
    from train.train import main

    result = main(["--env", ID, "--world", str(CONFIGS / "robot_omni.yaml"), "--timesteps",
                   "4096", "--n-envs", "64", "--hp", "batch_size=1024", "--eval-episodes",
                   "4", "--eval-envs", "4",
                   "--run-dir", str(tmp_path), "--no-progress"])
    assert result["final"]["episodes"] == 4 and 0.0 <= result["success_rate"] <= 1.0
    run = tmp_path / "push_envs" / "World-v0" / "ppo" / "0"
    assert (run / "final_model.zip").is_file()


FAST_DISCS = """
world: {height: 4, width: 4, step_time: 0.1, collision_mode: contact}
robot:
  - {name: agent, kinematics: {name: omni}, shape: {name: circle, radius: 0.2}, mass: 1.0,
     state: [0.5, 2, 0], goal: [3.5, 2, 0], vel_min: [-1, -1], vel_max: [1, 1]}
obstacle:
""" + "".join(f"""  - shape: {{name: circle, radius: 0.001}}
    state: [{0.9 + 0.0021 * i:.4f}, 2, 0]
    mass: 0.001
""" for i in range(20)) + """  - shape: {name: linestring, vertices: [[1.2, 1], [1.2, 3]]}
    state: [0, 0, 0]
"""


def test_a_fast_body_compiles_continuous_collision_in_the_env_bit_for_bit(tmp_path,
                                                                         monkeypatch):
    """An env whose robot pushes 1 mm discs into a segment needs continuous collision: with
    it not compiled yet, the env's step is rolled back, compiled and taken again, and the
    episode equals one with it compiled from the start (single env and batch alike)."""
    from push_envs.physics import continuous

    world = str(_world(tmp_path, FAST_DISCS))
    action = np.array([1.0, 0.0], np.float32)
    runs = []
    for forget in (True, False):
        continuous.CCD.address  # noqa: B018  (compiled; the second run keeps it)
        if forget:
            monkeypatch.setattr(continuous.CCD, "_compiled", None)
        env = gym.make(ID, world=world)
        venv = gym.make_vec(ID, num_envs=2, world=world)
        obs = [env.reset(seed=3)[0]]
        vobs = [venv.reset(seed=3)[0]]
        for _ in range(10):
            obs.append(env.step(action)[0])
            vobs.append(venv.step(np.stack([action, action]))[0])
        assert continuous.CCD.ready
        xs = env.unwrapped.world.pos[0, 1:21, 0]
        assert np.all(xs <= 1.2 - 0.001 + 1e-6)  # none passed the segment
        runs.append((np.stack(obs).tobytes(), np.stack(vobs).tobytes()))
    assert runs[0] == runs[1]
