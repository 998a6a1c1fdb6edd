"""Careless and hostile input to the env API ends in a clear error or a correct result.

Property-based (hypothesis) over actions, seeds and constructor arguments: every call either
works or raises ValueError / TypeError / SceneError / Gymnasium's ResetNeeded, and a failing
call changes nothing.
"""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import push_envs  # noqa: F401
from push_envs.physics import SceneError
from push_envs.tasks import spec

FAST = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
OK_ERRORS = (ValueError, TypeError, SceneError, gym.error.ResetNeeded)


@pytest.fixture(scope="module")
def venv():
    env = gym.make_vec("PushBox-v0", num_envs=3)
    env.reset(seed=0)
    return env


def _snapshot(env):
    w = env.world
    return (w.state_hash(), env.env_arrays.obs.copy(), env.env_arrays.rng.copy(),
            env.task_arrays.goal.copy())


def _same(a, b):
    return a[0] == b[0] and all(np.array_equal(x, y) for x, y in zip(a[1:], b[1:], strict=True))


def test_spawn_region_outside_the_walls_is_refused():
    with pytest.raises(ValueError, match="spawn_region.*inside the scene's world bounds"):
        gym.make("PushBox-v0", spawn_region=(0, 0, 1000, 1000))


def test_vector_step_before_reset_is_refused():
    env = gym.make_vec("PushBox-v0", num_envs=2)
    with pytest.raises(gym.error.ResetNeeded):
        env.step(np.zeros((2, 2)))


@pytest.mark.parametrize("seed", [2**64, 2**64 + 7, -1, 1.5, "3", True])
def test_seeds_that_would_alias_or_are_not_ints_are_refused(seed):
    env = gym.make_vec("PushBox-v0", num_envs=2)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=seed)
    single = gym.make("PushBox-v0")
    with pytest.raises(ValueError, match="seed"):
        single.reset(seed=seed)


def test_largest_seeds_still_work_and_differ():
    env = gym.make_vec("PushBox-v0", num_envs=2)
    top = env.reset(seed=2**64 - 2)[0]
    low = env.reset(seed=0)[0]
    assert not np.array_equal(top, low)


@pytest.mark.parametrize("value", [np.inf, np.nan, 0.0, -1.0])
def test_success_distance_must_be_finite_and_positive(value):
    with pytest.raises(ValueError, match="success_distance"):
        gym.make("PushBox-v0", success_distance=value)


@pytest.mark.parametrize("options", [5, "reset_mask", [1, 2]])
def test_reset_options_must_be_a_dict(venv, options):
    with pytest.raises(ValueError, match="options must be None or a dict"):
        venv.reset(options=options)


def test_unknown_argument_lists_the_valid_ones():
    with pytest.raises(TypeError, match="unknown argument.*'bogus'.*valid arguments.*"
                                        "box_mass_range"):
        gym.make("PushBox-v0", bogus=1)


def test_a_scene_mapping_works_like_its_file():
    raw = yaml.safe_load(spec("PushBox-v0").scene_path().read_text())
    a = gym.make_vec("PushBox-v0", num_envs=2, scene=copy.deepcopy(raw))
    b = gym.make_vec("PushBox-v0", num_envs=2)
    assert np.array_equal(a.reset(seed=4)[0], b.reset(seed=4)[0])
    actions = np.random.default_rng(0).uniform(-1, 1, (20, 2, 2))
    assert all(np.array_equal(a.step(x)[0], b.step(x)[0]) for x in actions)


@pytest.mark.parametrize("scene", [[1, 2], 3.5, b"scene.yaml"])
def test_a_scene_that_is_neither_path_nor_mapping_is_a_scene_error(scene):
    with pytest.raises(SceneError, match="scene must be a YAML path or a scene mapping"):
        gym.make("PushBox-v0", scene=scene)


def test_a_scene_mapping_without_the_robot_names_it():
    raw = yaml.safe_load(spec("PushBox-v0").scene_path().read_text())
    raw["robot"][0]["name"] = "rover"
    with pytest.raises(SceneError, match="robot body 'robot' is missing"):
        gym.make("PushBox-v0", scene=raw)


_values = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5),
                    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=5))


@FAST
@given(actions=st.one_of(
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=0, max_size=8),
    st.lists(st.lists(st.floats(width=32), min_size=2, max_size=3), min_size=1, max_size=4)))
def test_any_action_steps_or_raises_and_a_bad_one_changes_nothing(venv, actions):
    before = _snapshot(venv)
    try:
        venv.step(np.asarray(actions, dtype=np.float64))
    except OK_ERRORS:
        assert _same(before, _snapshot(venv))


@FAST
@given(seed=st.one_of(st.integers(-2**70, 2**70), st.floats(), st.text(max_size=3),
                      st.booleans()))
def test_any_seed_resets_deterministically_or_raises(venv, seed):
    try:
        first = venv.reset(seed=seed)[0]
    except OK_ERRORS:
        return
    assert np.array_equal(first, venv.reset(seed=seed)[0])


@FAST
@given(name=st.sampled_from(["box_mass_range", "box_friction_range", "box_size_range",
                             "spawn_region", "success_distance", "wall_margin", "max_contacts",
                             "max_episode_steps", "robot", "obs_mode", "reward_type",
                             "autoreset_mode", "render_mode"]),
       value=_values)
def test_any_argument_value_builds_or_raises_a_clear_error(name, value):
    try:
        env = gym.make_vec("PushBox-v0", num_envs=1, **{name: value})
    except OK_ERRORS as err:
        assert name in str(err) or "scene" in str(err)
        return
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)


# ---------------------------------------------------------------- seeds (issue 33, round two)
def _rollout(env, obs, steps, actions):
    """Observations after each of ``steps`` fixed actions (env: single or batch)."""
    out = [np.array(obs)]
    for t in range(steps):
        out.append(np.array(env.step(actions[t])[0]))
    return out


@pytest.mark.parametrize("form", [list, tuple, lambda s: np.array(s, np.uint64)])
def test_a_per_env_seed_list_seeds_env_i_with_seed_i(form):
    seeds = [5, 900, 2**64 - 1]
    acts = np.random.default_rng(0).uniform(-1, 1, (4, 3, 2))
    venv = gym.make_vec("PushBox-v0", num_envs=3)
    batch = _rollout(venv, venv.reset(seed=form(seeds))[0], 4, acts)
    for i, s in enumerate(seeds):
        single = gym.make("PushBox-v0")
        alone = _rollout(single, single.reset(seed=s)[0], 4, acts[:, i])
        for t in range(5):
            assert np.array_equal(batch[t][i], alone[t]), (i, t)
    # The int form still means env i gets seed + i, as the list [s, s + 1, s + 2].
    assert np.array_equal(venv.reset(seed=7)[0], venv.reset(seed=[7, 8, 9])[0])


@pytest.mark.parametrize("seed", [[1, 2], [1, 2, 3, 4], [1, True, 2], [1, -1, 2],
                                  [1, 2**64, 3], [1, 2.0, 3], [1, "2", 3],
                                  np.array([[1, 2, 3]]), np.array([1.0, 2.0, 3.0]), []])
def test_bad_seed_lists_are_refused_and_change_nothing(venv, seed):
    before = _snapshot(venv)
    with pytest.raises(ValueError, match="seed"):
        venv.reset(seed=seed)
    assert _same(before, _snapshot(venv))


@pytest.mark.parametrize("np_int", [np.int64, np.uint64, np.int32])
def test_numpy_integer_seeds_act_as_python_ints(np_int):
    single = gym.make("PushBox-v0")
    assert np.array_equal(single.reset(seed=np_int(3))[0], single.reset(seed=3)[0])
    batch = gym.make_vec("PushBox-v0", num_envs=2)
    assert np.array_equal(batch.reset(seed=np_int(3))[0], batch.reset(seed=3)[0])


def test_a_refused_reset_option_leaves_the_seed_alone(venv):
    before = _snapshot(venv)
    with pytest.raises(ValueError, match="options"):
        venv.reset(seed=123, options="not a dict")
    assert _same(before, _snapshot(venv))


# ------------------------------------------------------------------------ max_episode_steps
@pytest.mark.parametrize("steps", [0, False, True, -3, 2.5, "10"])
def test_max_episode_steps_that_would_never_truncate_are_refused(steps):
    from push_envs.tasks.pushing.push_box import PushBoxEnv

    with pytest.raises(ValueError, match="max_episode_steps"):
        PushBoxEnv(max_episode_steps=steps)
    with pytest.raises(ValueError, match="max_episode_steps"):
        gym.make_vec("PushBox-v0", num_envs=1, max_episode_steps=steps)


def test_the_task_class_truncates_after_max_episode_steps():
    from push_envs.tasks.pushing.push_box import PushBoxEnv

    env = PushBoxEnv(max_episode_steps=2)
    env.reset(seed=0)
    assert not env.step(np.zeros(2))[3]
    assert env.step(np.zeros(2))[3]


# ----------------------------------------------------------------------------- action dtype
@pytest.mark.parametrize("action", [np.array([0.5 + 1j, 0.0]), np.array([True, False]),
                                    np.array(["0.5", "0.0"]), np.array([0.5, None], object)])
def test_actions_that_are_not_real_numbers_are_refused(action):
    single = gym.make("PushBox-v0")
    single.reset(seed=0)
    before = single.unwrapped.world.state_hash()
    with pytest.raises(ValueError, match=f"action.*{action.dtype}"):
        single.step(action)
    assert single.unwrapped.world.state_hash() == before
    batch = gym.make_vec("PushBox-v0", num_envs=2)
    batch.reset(seed=0)
    snap = _snapshot(batch)
    with pytest.raises(ValueError, match=f"actions.*{action.dtype}"):
        batch.step(np.stack([action, action]))
    assert _same(snap, _snapshot(batch))


def test_int_and_float32_actions_still_step():
    single = gym.make("PushBox-v0")
    single.reset(seed=0)
    single.step(np.array([1, 0]))
    single.step(np.array([0.5, 0.0], np.float32))


# ------------------------------------------------------------------------------------ lidar
@pytest.mark.parametrize("name_key", ["name", "type"])
def test_a_lidar_argument_naming_another_sensor_blames_the_argument(name_key):
    with pytest.raises(ValueError, match="lidar2d") as err:
        gym.make_vec("PushBox-v0", num_envs=1, lidar={name_key: "contact2d", "number": 8})
    assert not isinstance(err.value, SceneError)  # an argument error, not the scene file's
    assert str(err.value).startswith("lidar")
