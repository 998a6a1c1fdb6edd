"""TorchRL over the native batch (push_envs.torchrl_env): a Collector's frames are the
batch's own DISABLED-autoreset rollout, bit for bit."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

pytest.importorskip("torchrl")
import torch  # noqa: E402
from tensordict.nn import TensorDictModule  # noqa: E402
from torchrl.collectors import Collector  # noqa: E402

from push_envs.experts import expert  # noqa: E402

push_box_actions = expert("PushBox-v0", "diff")
from push_envs.torchrl_env import make_torchrl_env  # noqa: E402

N, T, STEPS, SEED = 8, 250, 60, 3  # 8 envs x 250 steps = 2,000 frames a batch


class Scripted(torch.nn.Module):
    """The scripted expert as a torch module (deterministic, so both rollouts agree)."""

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.as_tensor(push_box_actions(obs.numpy()))


def _native_rollout(steps: int) -> dict[str, np.ndarray]:
    """What the collector should see: reset(seed) (the collector's first reset: the first
    episodes of the seed's stream), then step and reset the finished rows with reset_mask."""
    venv = gym.make_vec("PushBox-v0", num_envs=N, autoreset_mode=AutoresetMode.DISABLED,
                        max_episode_steps=STEPS)
    obs, info = venv.reset(seed=SEED)
    out: dict[str, list] = {k: [] for k in ("obs", "act", "next_obs", "rew", "term", "trunc",
                                            "success")}
    for _ in range(steps):
        act = push_box_actions(obs)
        nxt, rew, term, trunc, info = venv.step(act)
        for k, v in zip(out, (obs, act, nxt, rew, term, trunc, info["is_success"]),
                        strict=True):
            out[k].append(np.array(v))
        obs = nxt
        done = term | trunc
        if done.any():
            obs, _ = venv.reset(options={"reset_mask": done})
    return {k: np.stack(v, axis=1) for k, v in out.items()}  # (N, steps, ...)


def test_collector_frames_equal_the_native_rollout():
    env = make_torchrl_env("PushBox-v0", num_envs=N, seed=SEED, max_episode_steps=STEPS)
    assert tuple(env.batch_size) == (N,)
    policy = TensorDictModule(Scripted(), in_keys=["observation"], out_keys=["action"])
    collector = Collector(env, policy, frames_per_batch=N * T, total_frames=2 * N * T,
                          auto_register_policy_transforms=False)
    batches = list(collector)
    collector.shutdown()
    assert len(batches) == 2
    td = torch.cat(batches, dim=1)  # (N, 2T): the second batch continues the first
    assert td.batch_size == torch.Size([N, 2 * T])
    want = _native_rollout(2 * T)
    assert np.array_equal(td["observation"].numpy(), want["obs"])
    assert np.array_equal(td["action"].numpy(), want["act"])
    assert np.array_equal(td["next", "observation"].numpy(), want["next_obs"])
    assert np.array_equal(td["next", "reward"].numpy()[..., 0], want["rew"].astype(np.float32))
    assert np.array_equal(td["next", "terminated"].numpy()[..., 0], want["term"])
    assert np.array_equal(td["next", "truncated"].numpy()[..., 0], want["trunc"])
    assert np.array_equal(td["next", "is_success"].numpy(), want["success"])
    assert td["next", "is_success"].dtype == torch.bool
    # Episodes ended inside the batch (so the reset_mask path ran) and some were won.
    assert want["trunc"].any() and want["term"].any()
    # Reset rows carry is_success too (False: no episode starts won).
    assert not td["is_success"].numpy()[:, 0].any()


def test_info_keys_are_checked():
    with pytest.raises(ValueError, match=r"info_keys: \['nope'\] are not info keys"):
        make_torchrl_env("PushBox-v0", num_envs=2, info_keys=("nope",))


def _track_batches(monkeypatch):
    import push_envs.torchrl_env as T

    made = []
    real = T.gym.make_vec

    def make_vec(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(T.gym, "make_vec", make_vec)
    return made


def test_a_single_info_key_string_is_refused_before_a_batch_is_made(monkeypatch):
    made = _track_batches(monkeypatch)
    with pytest.raises(ValueError, match="info_keys"):
        make_torchrl_env("PushBox-v0", num_envs=2, info_keys="is_success")
    assert made == []


def test_a_refused_construction_closes_its_batch(monkeypatch):
    made = _track_batches(monkeypatch)
    with pytest.raises(ValueError, match="info_keys"):
        make_torchrl_env("PushBox-v0", num_envs=2, info_keys=("nope",))
    assert len(made) == 1 and made[0].closed


def test_the_first_episode_is_the_first_of_the_seeds_stream():
    """make_torchrl_env(seed=s): the first reset (a collector's, or the user's) starts each
    sub-env's first episode of reset(seed=s), not its second; a later reset continues."""
    venv = gym.make_vec("PushBox-v0", num_envs=4, autoreset_mode=AutoresetMode.DISABLED)
    first, _ = venv.reset(seed=11)
    second, _ = venv.reset()
    venv.close()
    env = make_torchrl_env("PushBox-v0", num_envs=4, seed=11)
    assert np.array_equal(env.reset()["observation"].numpy(), first)
    assert np.array_equal(env.reset()["observation"].numpy(), second)
    env.set_seed(11)  # an explicit reseed starts the stream again
    assert np.array_equal(env.reset()["observation"].numpy(), second)  # set_seed reset first
