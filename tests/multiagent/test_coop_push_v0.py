"""The PettingZoo face of CoopPush-v0: PettingZoo's own API and seed tests, the agents'
observations as slices of the joint one, state(), and bad actions."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import parallel_api_test  # noqa: E402
from pettingzoo.test import parallel_seed_test  # noqa: E402

from push_envs.multiagent import coop_push_v0  # noqa: E402


def test_pettingzoo_parallel_api_test():
    parallel_api_test(coop_push_v0.parallel_env(max_episode_steps=120), num_cycles=300)


def test_pettingzoo_parallel_seed_test():
    parallel_seed_test(lambda: coop_push_v0.parallel_env(max_episode_steps=60), num_cycles=100)


def test_agents_see_their_slice_and_state_is_the_joint_observation():
    env = coop_push_v0.parallel_env()
    obs, infos = env.reset(seed=4)
    assert env.agents == ["robot_0", "robot_1"]
    state = env.state()
    assert state.shape == env.state_space.shape == (105,)
    w = env.env.world
    # Shared block first: the box's x, y; then each agent's own pose at column 13.
    for k, agent in enumerate(env.agents):
        o = obs[agent]
        assert o.shape == (13 + 46,) and env.observation_space(agent).contains(o)
        assert np.array_equal(o[:13], state[:13])
        np.testing.assert_allclose(o[13:15], w.state(f"r{k}")[0, :2], atol=1e-5)
    np.testing.assert_allclose(state[0:2], w.state("box")[0, :2], atol=1e-5)
    # The joint action is robot_0's pair then robot_1's.
    obs, rew, term, trunc, info = env.step({"robot_0": np.array([0.0, 0.0], np.float32),
                                            "robot_1": np.array([1.0, 0.0], np.float32)})
    assert rew["robot_0"] == rew["robot_1"]
    assert info["robot_0"]["contacts"] == info["robot_1"]["contacts"]
    moved0 = np.linalg.norm(obs["robot_0"][13:15] - state[13:15])
    moved1 = np.linalg.norm(obs["robot_1"][13:15] - state[13 + 46:15 + 46])
    assert moved0 < 1e-6 and 0.04 < moved1 <= 0.1 + 1e-6  # from rest, at most 0.1 s x 1 m/s


def test_episode_end_removes_both_agents():
    env = coop_push_v0.parallel_env(max_episode_steps=3)
    env.reset(seed=0)
    act = {a: np.zeros(2, np.float32) for a in env.agents}
    for _ in range(2):
        _, _, _, trunc, _ = env.step(act)
        assert not any(trunc.values())
    _, _, _, trunc, _ = env.step(act)
    assert all(trunc.values()) and env.agents == []
    with pytest.raises(ValueError, match="reset"):
        env.step(act)


@pytest.mark.parametrize(("actions", "match"), [
    ({"robot_0": np.zeros(2)}, "missing"),
    ({"robot_0": np.zeros(2), "robot_1": np.zeros(2), "robot_2": np.zeros(2)}, "unknown"),
    ({"robot_0": np.zeros(3), "robot_1": np.zeros(2)}, "robot_0.*shape"),
    ({"robot_0": np.array([np.nan, 0.0]), "robot_1": np.zeros(2)}, "finite"),
    ([0.0, 0.0, 0.0, 0.0], "dict"),
])
def test_bad_actions_are_refused(actions, match):
    env = coop_push_v0.parallel_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        env.step(actions)


def test_goal_mode_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="obs_mode"):
        coop_push_v0.parallel_env(obs_mode="goal")


def test_aec_form_steps_after_both_agents_act():
    env = coop_push_v0.env()
    env.reset(seed=1)
    for agent in env.agent_iter(max_iter=6):
        obs, rew, term, trunc, info = env.last()
        env.step(None if term or trunc else env.action_space(agent).sample())
    assert obs.shape == (59,)


def test_numpy_integer_seed_is_the_python_int():
    env = coop_push_v0.parallel_env()
    a, _ = env.reset(seed=np.int64(3))
    b, _ = env.reset(seed=3)
    assert all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("steps", [0, False, -1, 2.5])
def test_max_episode_steps_that_would_never_truncate_are_refused(steps):
    with pytest.raises(ValueError, match="max_episode_steps"):
        coop_push_v0.parallel_env(max_episode_steps=steps)


def test_complex_actions_are_refused():
    env = coop_push_v0.parallel_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="robot_0.*complex"):
        env.step({"robot_0": np.array([0.5 + 1j, 0.0]), "robot_1": np.zeros(2)})


def test_each_agent_observes_its_own_robots_lidar():
    n = 16
    env = coop_push_v0.parallel_env(lidar=dict(number=n))
    plain = coop_push_v0.parallel_env()
    joint_cols = env.env.observation_space.shape[0]  # 105, then r0's lidar, then r1's
    assert joint_cols == plain.env.observation_space.shape[0] + 2 * n
    assert env.env.core.sensor_fields == {"r0": ("lidar",), "r1": ("r1_lidar",)}
    w = env.env.world
    rmax = w.lidar_spec("r1").range_max
    obs, _ = env.reset(seed=4)
    for _ in range(2):
        state = env.state()
        assert state.shape == env.state_space.shape == (joint_cols,)
        for agent in env.agents:
            assert obs[agent].shape == (plain.observation_space(agent).shape[0] + n,)
            assert env.observation_space(agent).contains(obs[agent])
        # Each robot's own sensor, which sees the scene from where it stands.
        np.testing.assert_array_equal(obs["robot_0"][-n:], state[-2 * n:-n])
        np.testing.assert_array_equal(obs["robot_1"][-n:], state[-n:])
        np.testing.assert_allclose(obs["robot_0"][-n:], w.lidar("r0", 0) / rmax, atol=1e-6)
        np.testing.assert_allclose(obs["robot_1"][-n:], w.lidar("r1", 0) / rmax, atol=1e-6)
        assert not np.array_equal(obs["robot_0"][-n:], obs["robot_1"][-n:])
        obs, *_ = env.step({a: np.array([0.5, 0.3]) for a in env.agents})


def test_lidar_noise_of_robot_1_replays_with_the_seed():
    env = coop_push_v0.parallel_env(lidar=dict(number=8, noise=True, std=0.05))
    a = env.reset(seed=2)[0]["robot_1"]
    b = env.reset(seed=2)[0]["robot_1"]
    assert np.array_equal(a, b)
    c = env.reset(seed=3)[0]["robot_1"]
    assert not np.array_equal(a[-8:], c[-8:])
