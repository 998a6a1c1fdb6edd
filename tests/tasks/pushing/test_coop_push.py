"""CoopPush-v0: the traction rule makes the box need both robots; the joint action; the
observation blocks; the scripted team."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from push_envs.core import ObsIndex
from push_envs.experts import expert
from push_envs.tasks.pushing.coop_push import CoopPush
from push_envs.tasks.pushing.coop_push import agent_columns
from push_envs.tasks.pushing.coop_push import layout

MU, G = 0.5, 9.81
TRACTION = MU * 1.0 * G  # one 1 kg robot [N]
BOX_FRICTION = MU * 1.5 * G  # the 1.5 kg box [N]
BOX = (2.5, 2.5)
FACE = 2.5 - 0.3  # the box's -x face [m]
IX = ObsIndex(layout(), CoopPush.resolve_args({}))  # the default layout's columns by name
COMMON = IX.r0_xy  # columns before robot 0's block
WIDTH = IX.r1_xy - IX.r0_xy  # one robot block, 4 contact slots


@pytest.fixture(scope="module")
def env():
    e = gym.make("CoopPush-v0")
    yield e
    e.close()


def _place(env, r0, r1):
    """Box at (2.5, 2.5) heading 0; robots at poses r0, r1 (x, y, theta)."""
    env.reset(seed=0)
    w = env.unwrapped.world
    w.set_state("box", [[*BOX, 0.0]])
    w.set_state("r0", [r0])
    w.set_state("r1", [r1])
    return w


def test_box_is_between_one_and_two_robots_traction(env):
    w = env.unwrapped.world
    assert w.traction("r0")[0] == pytest.approx(TRACTION)
    assert w.traction("r1")[0] == pytest.approx(TRACTION)
    assert w.mass("box")[0] == 1.5
    assert TRACTION < BOX_FRICTION <= 2 * TRACTION


def test_one_robot_alone_stalls_and_its_contact_reports_its_traction(env):
    # r0 drives at 1 m/s into the middle of the box's -x face for 50 steps; r1 sits far away.
    w = _place(env, [FACE - 0.15 - 0.05, 2.5, 0.0], [1.0, 4.5, 0.0])
    forces = []
    for _ in range(50):
        obs, _, _, _, info = env.step(np.array([1.0, 0.0, 0.0, 0.0], np.float32))
        forces += [c.force for c in w.contacts("r0", 0) if c.other == "box"]
    box = w.state("box")[0]
    assert box[0] == pytest.approx(BOX[0], abs=1e-9) and box[1] == pytest.approx(BOX[1], abs=1e-9)
    assert box[2] == pytest.approx(0.0, abs=1e-9)
    # It closed the 5 cm gap, then stalled against the face.
    assert w.state("r0")[0, 0] == pytest.approx(FACE - 0.15, abs=1e-5)
    # From the first touch on, the contact carries exactly the robot's traction mu m g.
    assert len(forces) >= 48
    np.testing.assert_allclose(forces, TRACTION, rtol=1e-12)
    # ... and robot 0's contact slot 0 reads it as force / traction = 1, from the box (+x).
    slot = obs[IX.r0_contact_on: IX.r0_contact_on + 6]
    assert slot[0] == 1.0 and slot[3] == pytest.approx(1.0, abs=1e-6)
    assert slot[1] == pytest.approx(-1.0, abs=1e-6)  # normal toward the robot: -x
    assert info["robots_on_box"] == 1 and info["contacts"] == 1 and info["contacts_r1"] == 0


def test_both_robots_pushing_move_the_box(env):
    w = _place(env, [FACE - 0.15 - 0.05, 2.34, 0.0], [FACE - 0.15 - 0.05, 2.66, 0.0])
    on_box = []
    for _ in range(10):
        obs, _, _, _, info = env.step(np.array([1.0, 0.0, 1.0, 0.0], np.float32))
        on_box.append((obs[IX.r0_touches_box], obs[IX.r1_touches_box], info["robots_on_box"]))
    box = w.state("box")[0]
    travel = w.state("r0")[0, 0] - (FACE - 0.15 - 0.05)
    # The box moved as far as the robots did after closing the 5 cm gap (about 0.9 m).
    assert box[0] - BOX[0] == pytest.approx(travel - 0.05, abs=3e-3)
    assert travel > 0.9
    assert abs(box[1] - BOX[1]) < 0.05 and abs(box[2]) < 0.05
    # The box wobbles by a few hundredths of a radian as the two pushes alternate in the
    # solve, so at a step's end one robot may sit a hair off the face; each touches it often,
    # and from the first touch on at least one does at every step.
    touches = np.array(on_box[1:])
    assert touches[:, 0].sum() >= 3 and touches[:, 1].sum() >= 3
    assert np.all(touches[:, 2] >= 1) and np.array_equal(touches[:, 2], touches[:, :2].sum(1))
    assert info["reward_box_goal"] != 0.0


def test_joint_action_drives_each_robot_with_its_own_columns(env):
    w = _place(env, [1.0, 1.0, 0.0], [1.0, 4.0, np.pi / 2])
    env.step(np.array([0.0, 0.0, 1.0, 0.0], np.float32))
    assert w.state("r0")[0, :2] == pytest.approx([1.0, 1.0])
    # r1 drives forward (+y, its heading) from rest; x stays.
    assert w.state("r1")[0, 0] == pytest.approx(1.0, abs=1e-9)
    assert 0.04 < w.state("r1")[0, 1] - 4.0 <= 0.1 + 1e-9
    assert env.action_space.shape == (4,)


@pytest.mark.parametrize("action", [np.zeros(2), np.zeros(5), np.array([0, 0, np.nan, 0])])
def test_bad_joint_actions_are_refused(env, action):
    env.reset(seed=0)
    with pytest.raises(ValueError, match="shape|finite"):
        env.unwrapped.step(action)


def test_agent_columns_split_the_joint_observation(env):
    args = env.unwrapped.core.task.args
    c0, c1 = agent_columns(args, 0), agent_columns(args, 1)
    n = env.observation_space.shape[0]
    assert (COMMON, WIDTH) == (13, 46) and n == COMMON + 2 * WIDTH == 105
    assert np.array_equal(c0, np.r_[0:COMMON, COMMON:COMMON + WIDTH])
    assert np.array_equal(c1, np.r_[0:COMMON, COMMON + WIDTH:n])


def test_scripted_team_pushes_the_box_home(env):
    pair = expert("CoopPush-v0", "diff")
    wins = 0
    for seed in range(10):
        obs, _ = env.reset(seed=seed)
        for _ in range(300):
            obs, _, term, trunc, info = env.step(pair(obs[None])[0])
            if term or trunc:
                break
        wins += info["is_success"]
    assert wins >= 9, wins


def test_scene_without_the_second_robot_is_refused(tmp_path):
    from push_envs.physics import SceneError
    from push_envs.tasks import spec

    text = spec("CoopPush-v0").scene_path().read_text()
    bad = tmp_path / "one.yaml"
    bad.write_text(text.replace("name: r1", "name: r9"))
    with pytest.raises(SceneError, match="one.yaml.*'r1'"):
        gym.make("CoopPush-v0", scene=str(bad))
