"""push_envs/baselines/view.py: a policy's view of an observation (slots sorted, columns
hidden), its rows from a task's layout, and an agent that acts through it."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import push_envs.baselines as B
from push_envs.baselines import agent as A
from push_envs.baselines.view import ObsView
from push_envs.baselines.view import sort_rows
from push_envs.core import ObsIndex
from push_envs.tasks import spec

# Three slots of 4 columns after 2 head columns: (x, y) of the key, a flag, a payload.
OBS = np.array([9.0, 8.0,
                3.0, 4.0, 0.0, 1.0,    # slot 0: distance 5, outside
                0.0, 1.0, 1.0, 2.0,    # slot 1: distance 1, flagged
                1.0, 0.0, 0.0, 3.0])   # slot 2: distance 1, outside
ROW = (2, 4, 3, 0, 2, 2)  # start, width, count, key, key_size, last


def test_flagged_slots_go_last_and_the_others_nearest_first():
    out = ObsView(14, sorts=[ROW])(OBS)
    np.testing.assert_array_equal(out, [9, 8, 1, 0, 0, 3, 3, 4, 0, 1, 0, 1, 1, 2])
    assert OBS[2] == 3.0  # a copy: the observation itself is left alone


def test_without_a_flag_the_order_is_by_distance_and_ties_keep_the_tasks_order():
    out = ObsView(14, sorts=[(2, 4, 3, 0, 2, -1)])(OBS)
    # slots 1 and 2 are both 1 m away: slot 1 stays first (a stable sort)
    np.testing.assert_array_equal(out[2:], [0, 1, 1, 2, 1, 0, 0, 3, 3, 4, 0, 1])


def test_a_batch_is_sorted_row_by_row_then_hidden():
    batch = np.stack([OBS, OBS[[0, 1, 10, 11, 12, 13, 6, 7, 8, 9, 2, 3, 4, 5]]])
    out = ObsView(14, hide=[0, 5], sorts=[ROW])(batch)
    expected = ObsView(14, sorts=[ROW])(OBS)
    expected[[0, 5]] = 0.0
    np.testing.assert_array_equal(out, [expected, expected])


# Two slots of 5 columns after 1 head column: position (x, y), push direction (ux, uy), a flag.
# With standoff s, slot 0's push pose is (0, 1 + s), |1 + s| m away (it is pushed toward the
# robot, so the robot must go past it), and slot 1's is (1.2 - s, 0), |1.2 - s| m away.
PUSH = np.array([7.0,
                 0.0, 1.0, 0.0, -5.0, 0.0,
                 1.2, 0.0, 3.0, 0.0, 0.0])
PUSH_ROW = (1, 5, 2, 0, 2, 4, 2)  # start, width, count, key, key_size, last, toward


@pytest.mark.parametrize(("standoff", "first"), [(0.0, 0), (0.05, 0), (0.15, 1), (0.3, 1)])
def test_a_push_pose_sort_orders_by_the_point_behind_each_slot(standoff, first):
    out = ObsView(11, sorts=[PUSH_ROW], standoff=[standoff])(PUSH)
    np.testing.assert_array_equal(out[1:6], PUSH[1 + 5 * first:6 + 5 * first])
    np.testing.assert_array_equal(out[6:], PUSH[6 - 5 * first:11 - 5 * first])


def test_a_slot_without_a_push_direction_is_keyed_by_its_own_position():
    obs = PUSH.copy()
    obs[8:10] = 0.0  # slot 1: u = 0, keyed by |(1.2, 0)| = 1.2 < slot 0's 1.3 at s = 0.3
    np.testing.assert_array_equal(ObsView(11, sorts=[PUSH_ROW], standoff=[0.3])(obs)[1:6],
                                  obs[6:11])
    obs[6] = 1.4  # 1.4 > 1.3: slot 0 first again
    np.testing.assert_array_equal(ObsView(11, sorts=[PUSH_ROW], standoff=[0.3])(obs)[1:6],
                                  obs[1:6])


def test_a_view_of_six_integer_rows_reads_as_without_a_push_direction():
    old = ObsView(14, sorts=[ROW])
    np.testing.assert_array_equal(old.sorts, [[*ROW, -1]])
    np.testing.assert_array_equal(old.standoff, [0.0])


def test_an_empty_view_returns_the_observation_itself():
    view = ObsView(14)
    assert not view and view(OBS) is OBS


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"hide": [14]}, "hide_columns must be column numbers below 14"),
    ({"sorts": [(2, 4, 4, 0, 2, 2)]}, "4 slots of 4 columns from column 2 do not fit 14"),
    ({"sorts": [(2, 4, 3, 3, 2, 2)]}, "the key's 2 columns from offset 3 do not fit"),
    ({"sorts": [(2, 4, 3, 0, 2, 4)]}, "'last' must be -1 or an offset below 4"),
    ({"sorts": [(2.0, 4, 3, 0, 2, 2)]}, "sort_slots must be integer rows"),
    ({"sorts": [(2, 4, 3, 0, 2)]}, "sort_slots must be integer rows"),
    ({"sorts": [(2, 4, 3, 0, 2, 2, 3)]}, "'toward' must be -1 or the offset of 2 columns"),
    ({"sorts": [ROW], "standoff": [0.1, 0.2]}, "sort_standoff must be 1 finite lengths"),
    ({"sorts": [ROW], "standoff": [-0.1]}, "sort_standoff must be 1 finite lengths >= 0"),
    ({"sorts": [ROW], "standoff": [np.nan]}, "sort_standoff must be 1 finite lengths"),
    ({"sorts": [(*ROW, 0)]}, "sort_standoff is missing, and a sort_slots row keyed by its "
                             r"push pose \('toward' >= 0\) needs its standoff"),
])
def test_a_view_that_does_not_fit_the_observation_is_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ObsView(14, where="agent.npz", **kwargs)


def _sweep():
    cls = spec("Sweep-v1")
    task = cls(cls.resolve_args({"num_pucks": 5}))
    return task.observation(), task.args


def test_sort_rows_reads_the_block_from_the_tasks_layout():
    layout, args = _sweep()
    ix = ObsIndex(layout, args)
    row, standoff = sort_rows(layout, args, {"by": "puck_rel", "last": "puck_inside"})
    width = ix.slot("puck_rel", 1) - ix.slot("puck_rel", 0)
    assert width == 5
    np.testing.assert_array_equal(row, [[ix.puck_rel, 5, 5, 0, 2, 4, -1]])
    np.testing.assert_array_equal(standoff, [0.0])
    assert ix.puck_rel + 25 == ix.size  # the pucks are the observation's last block
    np.testing.assert_array_equal(sort_rows(layout, args, [{"by": "goal_minus_puck"}])[0],
                                  [[ix.puck_rel, 5, 5, 2, 2, -1, -1]])
    row, standoff = sort_rows(layout, args, {"by": "puck_rel", "last": "puck_inside",
                                             "toward": "goal_minus_puck", "standoff": 0.3})
    np.testing.assert_array_equal(row, [[ix.puck_rel, 5, 5, 0, 2, 4, 2]])
    np.testing.assert_array_equal(standoff, [0.3])


def test_a_push_pose_sort_puts_first_the_puck_the_reward_steers_the_robot_to():
    """Sweep-v1's dense reward pays the robot's progress toward the nearest push pose of a
    puck outside the circle (its bounding radius 0.25 m plus the puck's 0.05 m behind the
    puck): with that standoff, slot 0 of the view is that puck, step after step."""
    from push_envs.tasks.many.family import MEM

    layout, args = _sweep()
    row, standoff = sort_rows(layout, args, {"by": "puck_rel", "last": "puck_inside",
                                             "toward": "goal_minus_puck", "standoff": 0.3})
    ix = ObsIndex(layout, args)
    view = ObsView(ix.size, sorts=row, standoff=standoff)
    venv = gym.make_vec("Sweep-v1", num_envs=16, num_pucks=5)
    obs, _ = venv.reset(seed=11)
    rng = np.random.default_rng(2)
    checked = 0
    for _ in range(40):
        obs, *_ = venv.step(rng.uniform(-1, 1, (16, 2)).astype(np.float32))
        target = venv.task_arrays.mem[:, MEM.target].astype(int)
        slots = obs[:, ix.puck_rel:].reshape(16, 5, 5)
        first = view(obs)[:, ix.puck_rel:ix.puck_rel + 5]
        for e in np.flatnonzero(target >= 0):
            np.testing.assert_array_equal(first[e], slots[e, target[e]])
            checked += 1
    venv.close()
    assert checked > 500


@pytest.mark.parametrize(("entries", "match"), [
    ({"by": "robot_xy"}, r"sort_obs.by: 'robot_xy' is not a repeated observation field; "
                         r"repeated fields: \['contact_on', .*'puck_rel', 'goal_minus_puck', "
                         r"'puck_inside'\]"),
    ({"by": "puck_rel", "last": "puck_rel"}, r"sort_obs.last: 'puck_rel' is not a one-column "
                                             r"field of the block of 'puck_rel'"),
    ({"by": "puck_rel", "first": "puck_inside"}, "must be a mapping with the key 'by'"),
    ([], "must be a mapping"),
    ("puck_rel", "must be a mapping"),
    ([{"by": "puck_rel"}, {"by": "puck_inside"}], r"sort_obs\[1\]: the block of 'puck_inside' "
                                                  r"is sorted twice"),
    ({"by": "puck_rel", "toward": "puck_inside"}, r"sort_obs.toward: 'puck_inside' is not a "
                                                  r"2-column field of the block of 'puck_rel'"),
    ({"by": "puck_rel", "standoff": 0.3}, r"sort_obs.standoff: needs 'toward'"),
    ({"by": "puck_rel", "toward": "goal_minus_puck", "standoff": -0.1},
     r"sort_obs.standoff: must be a length >= 0 \[m\], got -0.1"),
    ({"by": "puck_rel", "toward": "goal_minus_puck", "standoff": "far"},
     r"sort_obs.standoff: must be a length >= 0 \[m\], got 'far'"),
])
def test_bad_sort_entries_name_the_key_and_the_fields(entries, match):
    layout, args = _sweep()
    with pytest.raises(ValueError, match=match):
        sort_rows(layout, args, entries)


def _sorted_parts(n_obs: int, row: np.ndarray) -> tuple[dict, dict]:
    rng = np.random.default_rng(0)
    meta = {"format": A.FORMAT, "format_version": A.FORMAT_VERSION, "env_id": "Sweep-v1",
            "robot": "diff", "kind": "mlp", "output": "clip", "observation_dim": n_obs,
            "action_dim": 2, "layers": [{"activation": "tanh"}, {"activation": None}],
            "obs_norm": None}
    arrays = {"layer0.weight": rng.normal(0, 0.3, (16, n_obs)), "layer0.bias": np.zeros(16),
              "layer1.weight": rng.normal(0, 0.3, (2, 16)), "layer1.bias": np.zeros(2),
              "action_low": -np.ones(2, np.float32), "action_high": np.ones(2, np.float32),
              "sort_slots": row}
    return meta, arrays


def _sorted_agent(n_obs: int, row: np.ndarray) -> B.Agent:
    return B.Agent(*_sorted_parts(n_obs, row))


def test_a_sorted_agent_acts_the_same_whatever_order_the_task_lists_its_pucks():
    layout, args = _sweep()
    ix = ObsIndex(layout, args)
    row, _ = sort_rows(layout, args, {"by": "puck_rel", "last": "puck_inside"})
    agent = _sorted_agent(ix.size, row)
    venv = gym.make_vec("Sweep-v1", num_envs=8, num_pucks=5)
    obs, _ = venv.reset(seed=4)
    for _ in range(5):
        obs, *_ = venv.step(np.tile([0.8, 0.3], (8, 1)).astype(np.float32))
    venv.close()
    act = agent(obs)
    rng = np.random.default_rng(1)
    for _ in range(3):
        perm = rng.permutation(5)
        shuffled = obs.copy()
        blocks = obs[:, ix.puck_rel:].reshape(8, 5, 5)
        shuffled[:, ix.puck_rel:] = blocks[:, perm].reshape(8, 25)
        np.testing.assert_array_equal(agent(shuffled), act)
    # and the order matters to its layers: unsorted, the same weights act otherwise
    plain = _sorted_agent(ix.size, np.zeros((0, 6), np.int64))
    assert np.abs(plain(shuffled) - act).max() > 1e-3


def test_an_agent_file_with_a_bad_sort_is_refused(tmp_path):
    layout, args = _sweep()
    ix = ObsIndex(layout, args)
    meta, arrays = _sorted_parts(ix.size, np.array([[ix.puck_rel, 5, 6, 0, 2, 4]]))
    with pytest.raises(ValueError, match="6 slots of 5 columns"):  # one slot past the end
        A.write(tmp_path / "bad.npz", meta, arrays)
    assert not (tmp_path / "bad.npz").exists()
