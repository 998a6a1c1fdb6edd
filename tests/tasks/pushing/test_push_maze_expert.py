"""PushMaze-v1's expert planner (push_envs/tasks/pushing/push_maze/expert.py): the grid search
it runs per state, and its early stop."""

from __future__ import annotations

import math

import numpy as np
import pytest

from push_envs.tasks.pushing.push_maze.expert import _dijkstra

RES = 0.1  # [m] a cell


def _search(w, bad, start, centre=(0.0, 0.0), reach=-1.0):
    dist, parent = np.zeros(w.shape), np.zeros(w.shape, np.int64)
    _dijkstra(w, bad, start[0], start[1], RES, dist, parent, 0.0, 0.0, centre[0], centre[1],
              reach)
    return dist, parent


def test_free_grid_costs_are_octile_distances():
    # Unit weights, no obstacles: the least cost from (0, 0) to (i, j) is the octile distance
    # res * (max + (sqrt 2 - 1) min), and every cell's parent is one step nearer the start.
    w, bad = np.ones((12, 9)), np.zeros((12, 9))
    dist, parent = _search(w, bad, (0, 0))
    for i in range(12):
        for j in range(9):
            a, b = max(i, j), min(i, j)
            assert dist[i, j] == pytest.approx(RES * (a + (math.sqrt(2.0) - 1.0) * b), abs=1e-12)
    assert parent[0, 0] == -1
    k = parent[5, 3]
    assert dist[k // 9, k % 9] < dist[5, 3]


def test_a_search_that_starts_free_never_enters_an_obstacle():
    w, bad = np.ones((10, 10)), np.zeros((10, 10))
    bad[5, :] = 1.0  # a wall across the grid
    dist, _ = _search(w, bad, (1, 1))
    assert np.isinf(dist[5:, :]).all() and np.isfinite(dist[:5, :]).all()


@pytest.mark.parametrize("seed", range(6))
def test_the_early_stop_is_exact_on_the_cells_it_promises(seed):
    # Random weights and obstacle blobs: with a reach, every free cell within it, and every
    # cell on those cells' parent chains, has the full search's cost and parent, bit for bit.
    rng = np.random.default_rng(seed)
    nx, ny = 30, 25
    w = 1.0 + 3.0 * rng.random((nx, ny))
    bad = np.zeros((nx, ny))
    for _ in range(6):
        i, j = rng.integers(0, nx - 4), rng.integers(0, ny - 4)
        bad[i:i + rng.integers(1, 5), j:j + rng.integers(1, 5)] = rng.random() + 0.1
    free = np.argwhere(bad == 0.0)
    start = tuple(free[rng.integers(len(free))])
    centre = (rng.uniform(0.5, 2.5), rng.uniform(0.5, 2.0))
    reach = 0.6
    full_d, full_p = _search(w, bad, start)
    part_d, part_p = _search(w, bad, start, centre, reach)
    xs = (np.arange(nx) + 0.5) * RES
    ys = (np.arange(ny) + 0.5) * RES
    near = (np.hypot(xs[:, None] - centre[0], ys[None, :] - centre[1]) <= reach) & (bad == 0.0)
    checked = 0
    for i, j in np.argwhere(near):
        k = i * ny + j
        while k >= 0:
            a, b = divmod(k, ny)
            assert part_d[a, b] == full_d[a, b] and part_p[a, b] == full_p[a, b]
            checked += 1
            k = part_p[a, b]
    assert checked > 0


def test_the_early_stop_settles_fewer_cells_when_the_disc_is_near():
    # The start beside the disc, on a large open grid: the early stop leaves the far cells
    # unreached (INF), the full search reaches them all.
    w, bad = np.ones((60, 60)), np.zeros((60, 60))
    full_d, _ = _search(w, bad, (5, 5))
    part_d, _ = _search(w, bad, (5, 5), centre=(0.8, 0.8), reach=0.4)
    assert np.isfinite(full_d).all()
    assert np.isinf(part_d).sum() > 0.8 * part_d.size


def test_the_batch_planner_is_the_one_env_planner_bit_for_bit_on_any_thread_count():
    # States from the expert's own episodes and from random actions (recoveries, approaches,
    # pushes): act_batch over numba's threads answers exactly what act answers row by row.
    import gymnasium as gym
    import numba

    from push_envs.core import ObsIndex
    from push_envs.scripted import robot_pose
    from push_envs.scripted import state_batch
    from push_envs.scripted import world_points
    from push_envs.tasks import spec
    from push_envs.tasks.pushing.push_maze.expert import MazePlanner
    from push_envs.tasks.pushing.push_maze.expert import scene_map

    cls = spec("PushMaze-v1")
    task = cls(cls.resolve_args({}))
    plan = MazePlanner(**scene_map(task, None))
    ix = ObsIndex(task.observation(), task.args)
    venv = gym.make_vec("PushMaze-v1", num_envs=24, num_threads=1)
    rng = np.random.default_rng(3)
    rows = []
    obs, _ = venv.reset(seed=5)
    for _ in range(30):
        rows.append(obs.copy())
        obs, *_ = venv.step(rng.uniform(-1, 1, (24, 2)).astype(np.float32))
    venv.close()
    o = state_batch(np.concatenate(rows), ix.size)
    rx, ry, c, s = robot_pose(o, ix)
    th = np.arctan2(s, c)
    bth = th + np.arctan2(o[:, ix.object_heading_rel + 1], o[:, ix.object_heading_rel])
    bx, by = world_points(o, ix, ix.object_rel)
    pose = np.stack([rx, ry, th, bx, by, bth, o[:, ix.goal_xy], o[:, ix.goal_xy + 1]], axis=1)
    one = np.array([plan.act(*p)[:2] for p in pose])
    assert len(np.unique(pose[:, 6:8], axis=0)) > 3  # several goals, so several fields
    for threads in (1, numba.config.NUMBA_NUM_THREADS):
        plan.threads = threads
        before = numba.get_num_threads()
        np.testing.assert_array_equal(plan.act_batch(pose), one)
        assert numba.get_num_threads() == before  # the caller's count is put back
    assert np.abs(one).max() > 0.5  # it drives
