"""Single-env contract of every task: Gymnasium/SB3 checks, spaces, determinism, bad input."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from push_envs import ENV_IDS
from push_envs.physics import SceneError
from push_envs.tasks import REGISTRY
from push_envs.tasks import spec
from push_envs.tasks import spec_of
from push_envs.tasks.pushing.push_box.expert import push_box_action

ROBOTS = ("diff", "omni", "acker")
OBS_MODES = ("state", "goal")
COMBOS = [(i, r, o) for i in ENV_IDS for r in ROBOTS for o in OBS_MODES]


@pytest.mark.parametrize(("env_id", "robot", "obs_mode"), COMBOS)
def test_gymnasium_check_env(env_id, robot, obs_mode):
    env = gym.make(env_id, robot=robot, obs_mode=obs_mode)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


@pytest.mark.parametrize(("env_id", "robot", "obs_mode"), COMBOS)
def test_sb3_check_env(env_id, robot, obs_mode):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    env = gym.make(env_id, robot=robot, obs_mode=obs_mode)
    # Gymnasium 1.x wrappers no longer forward compute_reward, which SB3's goal-env check
    # calls on the env it is given: check goal variants unwrapped.
    sb3_checker.check_env(env.unwrapped if obs_mode == "goal" else env, warn=True)


@pytest.mark.parametrize(("env_id", "robot", "obs_mode"), COMBOS)
def test_observation_stays_in_space(env_id, robot, obs_mode):
    env = gym.make(env_id, robot=robot, obs_mode=obs_mode)
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(3)
    actions = rng.uniform(-1, 1, (10_000, *env.action_space.shape)).astype(np.float32)
    space = env.observation_space
    for a in actions:
        assert space.contains(obs), obs
        obs, _, term, trunc, _ = env.step(a)
        if term or trunc:
            obs, _ = env.reset()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_same_seed_same_trajectory(env_id):
    dim = gym.spec(env_id).make().action_space.shape[0]
    actions = np.random.default_rng(1).uniform(-1, 1, (400, dim)).astype(np.float32)

    def run():
        env = gym.make(env_id)
        out = [env.reset(seed=11)[0]]
        for a in actions:
            obs, r, term, trunc, _ = env.step(a)
            out.append(np.append(obs, [r, term, trunc]))
            if term or trunc:
                out.append(env.reset()[0])
        return np.concatenate(out)

    assert np.array_equal(run(), run())


def test_reset_seed_then_reset_continues_the_stream():
    env = gym.make("PushBox-v0")
    first = env.reset(seed=5)[0]
    second = env.reset()[0]
    env2 = gym.make("PushBox-v0")
    assert np.array_equal(env2.reset(seed=5)[0], first)
    assert np.array_equal(env2.reset()[0], second)
    assert not np.array_equal(first, second)


@pytest.mark.parametrize("module", REGISTRY)
def test_the_registry_agrees_with_each_taskspec(module):
    # Every fact of a task has one source, its TaskSpec: the registry, the env classes, the
    # docstring and the vector env's own truncation all read it.
    s = spec_of(module)
    entry = gym.spec(s.id)
    assert entry.max_episode_steps == s.max_episode_steps
    assert entry.entry_point == f"{module}:{s.env_class.__name__}"
    assert entry.vector_entry_point == f"{module}:{s.vector_class.__name__}"
    assert s.env_class.vector_class is s.vector_class and s.vector_class.task_class is s
    assert f"({s.max_episode_steps})" in s.env_class.__doc__  # the docstring's episode end
    assert "{" not in s.env_class.__doc__.split("## Version History")[0].replace("{x", "")
    for version in s.versions:
        assert f"* {version}" in s.env_class.__doc__
    venv = gym.make_vec(s.id, num_envs=1)
    assert venv.unwrapped.max_episode_steps == s.max_episode_steps
    venv.close()
    assert s.scene_path().parent == s.folder() and s.scene_path().exists()
    assert s.hyperparams_path() is None or s.hyperparams_path().exists()


def test_the_shipped_ids_are_the_registrys():
    assert ENV_IDS == tuple(spec_of(m).id for m in REGISTRY)
    assert len(set(ENV_IDS)) == len(ENV_IDS) == len(REGISTRY)


def test_truncates_at_max_episode_steps():
    env = gym.make("PushBox-v0", max_episode_steps=7)
    env.reset(seed=0)
    flags = [env.step(np.zeros(2, np.float32))[3] for _ in range(7)]
    assert flags == [False] * 6 + [True]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_action_raises(bad):
    env = gym.make("PushBox-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="finite"):
        env.step(np.array([bad, 0.0], np.float32))


def test_wrong_action_shape_raises():
    env = gym.make("PushBox-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.unwrapped.step(np.zeros(3, np.float32))


def test_out_of_range_action_is_clipped():
    a = gym.make("PushBox-v0")
    b = gym.make("PushBox-v0")
    a.reset(seed=2)
    b.reset(seed=2)
    for _ in range(5):
        oa = a.unwrapped.step(np.array([5.0, -9.0]))[0]
        ob = b.unwrapped.step(np.array([1.0, -1.0]))[0]
    assert np.array_equal(oa, ob)


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize(("kwarg", "value", "choices"), [
    ("robot", "tank", "diff"), ("obs_mode", "depth", "pixels"), ("reward_type", "x", "sparse")])
def test_bad_choice_lists_valid_ones(env_id, kwarg, value, choices):
    with pytest.raises(ValueError, match=choices):
        gym.make(env_id, **{kwarg: value})


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_unknown_argument_lists_the_valid_ones(env_id):
    with pytest.raises(TypeError, match=r"unknown argument\(s\) \['num_boxes'\].*max_contacts"):
        gym.make(env_id, num_boxes=3)


def test_bad_randomisation_range():
    with pytest.raises(ValueError, match="box_mass_range"):
        gym.make("PushBox-v0", box_mass_range=(-1.0, 2.0))


def test_scene_with_unknown_key_names_file_and_key(tmp_path):
    text = spec("PushBox-v0").scene_path().read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("    mass: 0.5\n", "    mas: 0.5\n"))
    with pytest.raises(SceneError) as err:
        gym.make("PushBox-v0", scene=str(bad))
    msg = str(err.value)
    assert "bad.yaml" in msg and "obstacle[0]" in msg and "mas" in msg and "mass" in msg


def test_unsatisfiable_spawn_is_an_error(tmp_path):
    text = spec("PushBox-v0").scene_path().read_text()
    big = tmp_path / "big.yaml"
    big.write_text(text.replace("{name: rectangle, length: 0.3, width: 0.3}",
                                "{name: rectangle, length: 5.0, width: 5.0}"))
    with pytest.raises(SceneError, match="big.yaml"):
        gym.make("PushBox-v0", scene=str(big))


@pytest.mark.parametrize("margin", [None, 0.0, 0.6])
def test_wall_margin_keeps_box_and_goal_off_the_walls(margin):
    # Bounding radius of the 0.3 m box is 0.15 * sqrt(2) = 0.2121 m; the arena is 4 m.
    env = gym.make_vec("PushBox-v0", num_envs=2000, wall_margin=margin)
    env.reset(seed=3)
    w, u = env.world, env
    m = 0.3 if margin is None else margin
    assert u.wall_margin == m
    lo, hi = 0.15 * np.sqrt(2) + m, 4.0 - 0.15 * np.sqrt(2) - m
    box, goal = w.pos[:, w.index("box")], u.task_arrays.goal[:, :2]
    for xy in (box, goal):
        assert xy.min() >= lo - 1e-12 and xy.max() <= hi + 1e-12
        # The draws fill the allowed square: the extremes come within 2 cm of its edges.
        assert xy.min() < lo + 0.02 and xy.max() > hi - 0.02
    env.close()


def test_wall_slide_box_keeps_off_the_end_walls():
    # Box 0.4 m along the wall (half 0.2 m) in a 5 m arena, 0.3 m margin: x in [0.5, 4.5].
    env = gym.make_vec("WallSlide-v0", num_envs=2000)
    env.reset(seed=4)
    x = env.world.pos[:, env.world.index("box"), 0]
    assert x.min() >= 0.5 - 1e-12 and x.max() <= 4.5 + 1e-12
    assert x.min() < 0.52 and x.max() > 4.48
    goal = env.task_arrays.goal[:, 0]
    assert goal.min() >= 0.2 - 1e-12 and goal.max() <= 4.8 + 1e-12
    assert np.all(np.abs(np.abs(goal - x) - 2.25) <= 0.75 + 1e-12)
    env.close()


@pytest.mark.parametrize("bad", [-0.1, float("nan"), "0.3", True])
def test_bad_wall_margin_raises(bad):
    with pytest.raises(ValueError, match="wall_margin"):
        gym.make("PushBox-v0", wall_margin=bad)


def test_wall_margin_too_big_for_the_arena_names_the_scene():
    with pytest.raises(SceneError, match="push_box/scene.yaml.*wall_margin"):
        gym.make("PushBox-v0", wall_margin=1.9)


def test_domain_randomisation_is_seeded():
    kw = dict(box_mass_range=(0.2, 0.8), box_friction_range=(0.3, 0.6),
              box_size_range=(0.8, 1.2))
    env = gym.make("PushBox-v0", **kw)
    w = env.unwrapped.world
    draws = []
    for seed in (0, 0, 1):
        env.reset(seed=seed)
        draws.append((w.mass("box")[0], w.epar[0, 1, 2], w.epar[0, 1, 3]))
    assert draws[0] == draws[1] != draws[2]
    m, mu, s = draws[2]
    assert 0.2 <= m <= 0.8 and 0.3 <= mu <= 0.6 and 0.8 <= s <= 1.2


def test_scripted_policy_pushes_boxes_home():
    env = gym.make("PushBox-v0")
    wins = 0
    touched = False
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        for _ in range(200):
            obs, _, term, trunc, info = env.step(push_box_action(obs))
            # The contact block reads real contacts: when the box is the robot's only contact,
            # slot 0's normal points from the box back at the robot (against the box's
            # direction, robot frame) and its point lies on the robot's rim (r = 0.15 m).
            if obs[21 + 6 * 4 + 3] > 0.5 and info["contacts"] == 1:
                touched = True
                assert obs[21] == 1.0
                assert obs[22] * obs[7] + obs[23] * obs[8] < 0.0
                assert abs(np.hypot(obs[25], obs[26]) - 0.15) < 2e-3
            if term or trunc:
                break
        wins += info["is_success"]
    assert touched
    assert wins >= 16, wins


def test_info_carries_health_and_reward_terms():
    env = gym.make("PushBox-v0")
    env.reset(seed=0)
    _, r, _, _, info = env.step(np.array([1.0, 0.0], np.float32))
    for key in ("is_success", "box_to_goal", "contacts", "max_penetration", "sweeps",
                "reward_robot_box", "reward_box_goal", "reward_success"):
        assert key in info
    terms = info["reward_robot_box"] + info["reward_box_goal"] + info["reward_success"]
    assert r == pytest.approx(terms - 0.01)


def test_sparse_reward_and_her_compute_reward():
    env = gym.make("PushBox-v0", obs_mode="goal", reward_type="sparse")
    obs, _ = env.reset(seed=0)
    _, r, _, _, _ = env.step(np.zeros(2, np.float32))
    assert r == -1.0
    ach = np.array([[1.0, 1.0], [2.0, 2.0]])
    des = np.array([[1.05, 1.0], [2.5, 2.0]])
    assert np.array_equal(env.unwrapped.compute_reward(ach, des, {}), [0.0, -1.0])
    assert obs["achieved_goal"].shape == (2,) and obs["desired_goal"].shape == (2,)


def test_wall_slide_starts_against_the_wall():
    env = gym.make("WallSlide-v0")
    for seed in range(5):
        env.reset(seed=seed)
        _, _, _, _, info = env.step(np.zeros(2, np.float32))
        assert info["touching_wall"]
        goal = env.unwrapped.core.task_arrays.goal[0]
        box = env.unwrapped.world.state("box")[0]
        assert 1.5 - 1e-9 <= abs(goal[0] - box[0]) <= 3.0 + 1e-9


def test_rgb_array_render_has_the_arena():
    env = gym.make("PushBox-v0", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    assert frame.std() > 5
