"""Warm start: behaviour cloning of a task's scripted expert into a PPO policy, before PPO.

A yml entry (or ``--hp 'warm_start={episodes: 2000}'``) with a ``warm_start`` mapping makes
``train/train.py`` call :func:`pretrain` between building the model and ``learn``:

1. the scripted expert (``push_envs.scripted.expert``) plays ``episodes`` episodes on a
   batch of the same task and arguments (its own seeds, seed + 30000 onward);
2. when the training env is a ``VecNormalize``, its observation statistics and its return
   statistics start from the demonstrations (the return statistic as VecNormalize keeps
   it: the running discounted sum of rewards, reset at episode ends), so the cloned policy
   sees exactly what PPO's will;
3. the actor's mean regresses the expert's actions (mean squared error) and the critic the
   demonstrations' discounted returns of the normalised rewards (0 after the last step),
   ``epochs`` passes of Adam at ``learning_rate``;
4. the policy's log standard deviation is set to ``log_std``: PPO starts from the clone with
   exploration noise small enough not to undo it.

The critic is fitted too because PPO's first updates weigh the actor's steps by advantages;
from a random critic those are noise, and the clone unlearns before the critic catches up.
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecEnv, VecNormalize

from push_envs.datasets import rollout
from push_envs.scripted import expert

DEMO_SEED_OFFSET = 30_000  # the demonstrations' seeds: seed + 30_000 onward (fresh episodes)
DEFAULTS = {"episodes": 1000, "epochs": 10, "batch_size": 1024, "learning_rate": 1e-3,
            "log_std": -1.0, "num_envs": 100}


def settings(value: Any, source: str = "warm_start") -> dict[str, Any]:
    """The warm-start settings from the yml's mapping, over :data:`DEFAULTS`; unknown keys
    and bad values raise ValueError naming the key."""
    if not isinstance(value, dict):
        raise ValueError(f"{source} must be a mapping such as {{episodes: 1000, epochs: 10}}, "
                         f"got {value!r}")
    unknown = sorted(set(value) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"{source}: unknown keys {unknown}; known: {sorted(DEFAULTS)}")
    out = {**DEFAULTS, **value}
    for key in ("episodes", "epochs", "batch_size", "num_envs"):
        v = out[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{source}.{key} must be an int >= 1, got {v!r}")
    lr = out["learning_rate"]
    if isinstance(lr, bool) or not (isinstance(lr, (int, float)) and lr > 0):
        raise ValueError(f"{source}.learning_rate must be > 0, got {out['learning_rate']!r}")
    if not isinstance(out["log_std"], (int, float)) or isinstance(out["log_std"], bool):
        raise ValueError(f"{source}.log_std must be a number, got {out['log_std']!r}")
    return out


def demonstrations(env_id: str, env_kwargs: dict[str, Any], ws: dict[str, Any], seed: int,
                   source: str = "warm_start") -> dict[str, Any]:
    """The scripted expert's ``ws["episodes"]`` episodes (:func:`settings`), flattened:
    ``obs`` (T, obs_dim), ``act`` (T, A), ``rew`` (T,), ``first`` (T,) marking each episode's
    first step, ``success`` per episode, and ``seconds`` [s] it took. A task, robot or
    observation mode without a scripted expert raises ValueError naming ``source``, before
    any episode is played."""
    t0 = time.perf_counter()
    venv = gym.make_vec(env_id, num_envs=min(ws["num_envs"], ws["episodes"]),
                        autoreset_mode=AutoresetMode.DISABLED, num_threads=1, **env_kwargs)
    try:
        if venv.obs_mode != "state":
            raise ValueError(f"{source}: the scripted experts read the state observation; "
                             f"obs_mode={venv.obs_mode!r} has none to clone from")
        try:
            policy = expert(env_id, venv.robot, env_kwargs)
        except KeyError as exc:
            raise ValueError(f"{source}: {exc.args[0]}") from None
        obs, act, rew, first, success = [], [], [], [], []
        for ep in rollout(venv, policy, ws["episodes"], seed + DEMO_SEED_OFFSET):
            n = len(ep.actions)
            obs.append(ep.observations[:n])
            act.append(ep.actions)
            rew.append(ep.rewards)
            f = np.zeros(n, bool)
            f[0] = True
            first.append(f)
            success.append(bool(ep.infos["is_success"][-1]))
    finally:
        venv.close()
    return {"obs": np.concatenate(obs).astype(np.float32), "act": np.concatenate(act),
            "rew": np.concatenate(rew), "first": np.concatenate(first),
            "success": np.array(success), "seconds": time.perf_counter() - t0}


def _running_returns(rew: np.ndarray, first: np.ndarray, gamma: float) -> np.ndarray:
    """VecNormalize's return statistic along the demonstrations: ret = ret * gamma + r,
    restarted at each episode's first step."""
    out = np.empty_like(rew)
    ret = 0.0
    for t in range(len(rew)):
        ret = (0.0 if first[t] else ret) * gamma + rew[t]
        out[t] = ret
    return out


def _returns_to_go(rew: np.ndarray, first: np.ndarray, gamma: float) -> np.ndarray:
    """Discounted return from each step to its episode's end (0 after the last step)."""
    out = np.empty_like(rew)
    g = 0.0
    for t in range(len(rew) - 1, -1, -1):
        g = rew[t] + gamma * g
        out[t] = g
        if first[t]:
            g = 0.0
    return out


def pretrain(model: PPO, env: VecEnv, demo: dict[str, Any], seed: int,
             ws: dict[str, Any]) -> dict[str, Any]:
    """Clone the demonstrations (:func:`demonstrations`) into ``model``'s policy (and
    ``env``'s normalisation) as the module docs describe, with the settings ``ws``
    (:func:`settings`); returns what it did: episodes, the expert's success rate, steps, the
    final losses and the wall clock [s] of collecting and cloning."""
    t0 = time.perf_counter()
    obs, rew = demo["obs"], demo["rew"]
    if isinstance(env, VecNormalize):
        if env.norm_obs:
            env.obs_rms.update(obs.astype(np.float64))
            obs = env.normalize_obs(obs)
        if env.norm_reward:
            env.ret_rms.update(_running_returns(rew, demo["first"], env.gamma))
            rew = env.normalize_reward(rew)
    target = _returns_to_go(rew.astype(np.float64), demo["first"], model.gamma)
    space = model.action_space
    act = np.clip(demo["act"], space.low, space.high)

    policy = model.policy
    params = [p for name, p in policy.named_parameters() if name != "log_std"]
    # fused: torch's one-kernel CPU Adam, the same algorithm as the per-tensor loop and ~4x
    # cheaper a step for these small nets (as the yml's PPO optimizer_kwargs)
    opt = torch.optim.Adam(params, lr=ws["learning_rate"], fused=True)
    x = torch.as_tensor(obs, dtype=torch.float32)
    a = torch.as_tensor(act, dtype=torch.float32)
    g = torch.as_tensor(target, dtype=torch.float32)
    gen = torch.Generator().manual_seed(seed)
    n = len(x)
    actor_loss = critic_loss = float("nan")
    policy.set_training_mode(True)
    for _ in range(ws["epochs"]):
        perm = torch.randperm(n, generator=gen)
        a_sum = c_sum = 0.0
        for i in range(0, n, ws["batch_size"]):
            idx = perm[i:i + ws["batch_size"]]
            mean = policy.get_distribution(x[idx]).distribution.mean
            value = policy.predict_values(x[idx]).flatten()
            la = ((mean - a[idx]) ** 2).mean()
            lc = ((value - g[idx]) ** 2).mean()
            opt.zero_grad()
            (la + 0.5 * lc).backward()
            opt.step()
            a_sum += float(la.detach()) * len(idx)
            c_sum += float(lc.detach()) * len(idx)
        actor_loss, critic_loss = a_sum / n, c_sum / n
    policy.set_training_mode(False)
    with torch.no_grad():
        policy.log_std.fill_(float(ws["log_std"]))
    return {"episodes": int(len(demo["success"])),
            "expert_success_rate": float(demo["success"].mean()),
            "steps": int(n), "actor_mse": actor_loss, "critic_mse": critic_loss,
            "seconds": demo["seconds"] + time.perf_counter() - t0,
            **{k: ws[k] for k in DEFAULTS}}
