"""train.rollout_buffer: LeanRolloutBuffer draws SB3's minibatches, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

import torch  # noqa: E402
from gymnasium import spaces  # noqa: E402
from stable_baselines3.common.buffers import RolloutBuffer  # noqa: E402

from train.rollout_buffer import LeanRolloutBuffer  # noqa: E402

N_STEPS, N_ENVS = 12, 5


def filled(cls: type[RolloutBuffer], obs_space: spaces.Space, act_space: spaces.Space,
           seed: int = 0) -> RolloutBuffer:
    """A new buffer of ``cls`` filled by :func:`fill`."""
    return fill(cls(N_STEPS, obs_space, act_space, device="cpu", gamma=0.9, gae_lambda=0.8,
                    n_envs=N_ENVS), seed)


def fill(buf: RolloutBuffer, seed: int) -> RolloutBuffer:
    """``buf`` filled with random steps of ``seed``, then its returns and advantages."""
    n_steps, n_envs = buf.buffer_size, buf.n_envs
    obs_space, act_space = buf.observation_space, buf.action_space
    rng = np.random.default_rng(seed)
    for _ in range(n_steps):
        obs = rng.normal(size=(n_envs, *obs_space.shape)).astype(obs_space.dtype)
        if isinstance(act_space, spaces.Discrete):
            act = rng.integers(0, act_space.n, size=(n_envs, 1))
        else:
            act = rng.normal(size=(n_envs, *act_space.shape)).astype(np.float32)
        buf.add(obs, act, rng.normal(size=n_envs).astype(np.float32),
                (rng.random(n_envs) < 0.2).astype(np.float32),
                torch.from_numpy(rng.normal(size=(n_envs, 1)).astype(np.float32)),
                torch.from_numpy(rng.normal(size=n_envs).astype(np.float32)))
    buf.compute_returns_and_advantage(torch.zeros(n_envs, 1), np.zeros(n_envs, bool))
    return buf


def batches(buf: RolloutBuffer, batch_size: int | None, seed: int) -> list:
    """``buf``'s minibatches of one ``get``, its permutation drawn after seeding numpy's
    global generator (SB3 draws it from there)."""
    np.random.seed(seed)  # noqa: NPY002
    return list(buf.get(batch_size))


@pytest.mark.parametrize("obs_shape", [(7,), (3, 4)])
@pytest.mark.parametrize("act_space", [spaces.Box(-1, 1, (2,), np.float32), spaces.Discrete(4)])
@pytest.mark.parametrize("batch_size", [16, 7, None])
def test_minibatches_equal_sb3s_bit_for_bit(obs_shape, act_space, batch_size):
    obs_space = spaces.Box(-np.inf, np.inf, obs_shape, np.float32)
    sb3 = filled(RolloutBuffer, obs_space, act_space)
    lean = filled(LeanRolloutBuffer, obs_space, act_space)
    for epoch in range(2):  # the second epoch reuses the flat arrays and their views
        want = batches(sb3, batch_size, epoch)
        got = batches(lean, batch_size, epoch)
        assert len(got) == len(want) == -(-60 // (batch_size or 60))
        for g, w in zip(got, want, strict=True):
            for name, a, b in zip(g._fields, g, w, strict=True):
                assert a.dtype == b.dtype and a.shape == b.shape, name
                assert torch.equal(a, b), name
    # a minibatch is a copy: writing to it leaves the buffer as it was
    batch = batches(lean, batch_size, 5)[0]
    before = lean.observations.copy()
    batch.observations.fill_(123.0)
    np.testing.assert_array_equal(lean.observations, before)


def test_views_are_dropped_at_reset():
    obs_space = spaces.Box(-np.inf, np.inf, (3,), np.float32)
    act_space = spaces.Box(-1, 1, (1,), np.float32)
    lean = filled(LeanRolloutBuffer, obs_space, act_space, seed=1)
    first = batches(lean, 8, 0)[0].observations
    lean.reset()
    assert lean._views is None
    second = batches(fill(lean, seed=2), 8, 0)[0].observations  # new arrays, not old views
    sb3 = filled(RolloutBuffer, obs_space, act_space, seed=2)
    assert torch.equal(second, batches(sb3, 8, 0)[0].observations)
    assert not torch.equal(first, second)
