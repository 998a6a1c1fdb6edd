"""Every observation column of every task against the world state it describes.

The columns and their readers come from each task's declared layout
(``TaskSpec.observation()``), the same declaration that makes its docstring table and its
``observation_space`` bounds, so a task added to the registry is checked here as it is.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from push_envs import ENV_IDS
from push_envs.core import obs_layout as L


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("max_contacts", [1, 4])
def test_every_column_matches_the_world(env_id, max_contacts):
    n = 15  # the serial kernel, shared with the single envs (no prange compile for this test)
    env = gym.make_vec(env_id, num_envs=n, max_contacts=max_contacts)
    obs, _ = env.reset(seed=5)
    rng = np.random.default_rng(0)
    seen_contact = False
    for step in range(90):
        # Full speed ahead half of the time, so robots reach walls and objects.
        a = rng.uniform(-1, 1, (n, *env.single_action_space.shape))
        a[: n // 2, 0::2] = 1.0
        obs, *_ = env.step(a)
        seen_contact |= bool(np.any(env.world.ctn > 0))
        if step % 30 != 29:
            continue
        ctx = env.task.reading_context(env)
        o = obs.astype(np.float64)
        fields = L.columns(env.task.observation(), env.task.args)
        assert L.size(env.task.observation(), env.task.args) == o.shape[1]
        covered = np.zeros(o.shape[1], bool)
        for f, k, j in fields:
            assert f.expect is not None, f"{env_id}: field {f.name} has no reader"
            want = f.expect(ctx) if j is None else f.expect(ctx, j)
            np.testing.assert_allclose(o[:, k:k + f.size], want, atol=f.atol,
                                       err_msg=f"{env_id} field {f.name} slot {j}")
            covered[k:k + f.size] = True
        assert covered.all()
    assert seen_contact
    env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_space_bounds_and_docstring_come_from_the_layout(env_id):
    env = gym.make_vec(env_id, num_envs=2, max_contacts=3)
    lo, hi = L.bounds(env.task.observation(), env.task.args)
    space = env.single_observation_space
    # Finite bounds are used as declared (a size in [0, inf) keeps its 0).
    assert np.array_equal(space.low[np.isfinite(lo)], lo[np.isfinite(lo)])
    assert np.array_equal(space.high[np.isfinite(hi)], hi[np.isfinite(hi)])
    # Position columns are bounded by the scene's extent, not left infinite.
    assert np.isfinite(space.low).all() and np.isfinite(space.high).all()
    doc = type(env).__doc__
    assert L.table(env.task.observation()) in doc
    for f, _, _ in L.columns(env.task.observation(), {**env.task.args, "max_contacts": 1}):
        assert f.doc in doc
    # Columns after the contact slots are written with the slots' width: "21 + 6M" after the
    # single-object head, "7 + 6M + 10j" for the first per-object block of PushMulti.
    assert "+ 6M" in doc and "+ 6j" in doc
