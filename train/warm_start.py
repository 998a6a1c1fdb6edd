"""Warm start: behaviour cloning of a task's scripted expert into a PPO policy, before PPO.

A yml entry (or ``--hp 'warm_start={episodes: 2000}'``) with a ``warm_start`` mapping makes
``train/train.py`` call :func:`pretrain` between building the model and ``learn``:

1. the scripted expert (``push_envs.experts.expert``) plays ``episodes`` episodes on a
   batch of the same task and arguments (its own seeds, seed + 30000 onward);
2. when the training env is a ``VecNormalize``, its observation statistics and its return
   statistics start from the demonstrations (the return statistic as VecNormalize keeps
   it: the running discounted sum of rewards, reset at episode ends), so the cloned policy
   sees exactly what PPO's will;
3. the actor's mean regresses the expert's actions (mean squared error) and the critic the
   demonstrations' discounted returns of the normalised rewards (0 after the last step),
   ``epochs`` passes of Adam at ``learning_rate``;
4. with ``dagger_rounds`` > 0, DAgger (Ross et al., 2011): the clone (its mean action) plays
   ``dagger_episodes`` episodes of its own (seeds seed + 40000 onward, fresh each round), the
   expert labels every state the clone visited (every ``dagger_stride``-th), those rows join
   the data set (observation statistics updated with them), and step 3 runs again on the
   whole set (``dagger_epochs`` passes, by default ``epochs``: a refit starts from the last
   fit, which already knows the older rows). With
   ``dagger_labels: shadow`` a fresh copy of the expert rides along the clone's episodes
   instead, called on every step of the batch as the clone plays (its action not taken), so
   an expert that keeps state (a plan, a mode) labels each state as it would have acted
   there after the clone's own trajectory so far; the default (``batch``) calls the expert
   once on all the visited states, which only a function of the observation answers right;
5. the policy's log standard deviation is set to ``log_std``: PPO starts from the clone with
   exploration noise small enough not to undo it;
6. with ``freeze_normalize``, the ``VecNormalize`` statistics stay as the warm start left
   them for the rest of the run (observations and returns): the clone reads its inputs as it
   was fitted to them.

Why DAgger: a clone fitted on the expert's states alone drifts off them, into states the
expert never visits, and compounds its errors there. Labelling the clone's own states teaches
it the way back. Measured on PushClutter-v0 (the router expert, 128 x 128 Tanh actor, 20
epochs a fit, seed 0): the clone's own play went 12 / 23 / 42 / 48 / 51 / 55 % over six
rounds, where the plain clone makes 6-7 %; PPO from it made 66-71 % over 3 seeds, against 41 %
from the plain clone (docs/history.md, eighth round).

The critic is fitted too because PPO's first updates weigh the actor's steps by advantages;
from a random critic those are noise, and the clone unlearns before the critic catches up.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env import VecNormalize

from push_envs.datasets import rollout
from push_envs.experts import expert

DEMO_SEED_OFFSET = 30_000  # the demonstrations' seeds: seed + 30_000 onward (fresh episodes)
DAGGER_SEED_OFFSET = 40_000  # the clone's DAgger episodes: seed + 40_000 + 1000 * round onward
DEFAULTS = {"episodes": 1000, "epochs": 10, "batch_size": 1024, "learning_rate": 1e-3,
            "log_std": -1.0, "num_envs": 100, "dagger_rounds": 0, "dagger_episodes": 1000,
            "expert": None, "dagger_labels": "batch", "dagger_epochs": None,
            "dagger_stride": 1, "freeze_normalize": False}


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
    if out["dagger_epochs"] is None:
        out["dagger_epochs"] = out["epochs"]
    for key in ("episodes", "epochs", "batch_size", "num_envs", "dagger_rounds",
                "dagger_episodes", "dagger_epochs", "dagger_stride"):
        v = out[key]
        least = 0 if key == "dagger_rounds" else 1
        if isinstance(v, bool) or not isinstance(v, int) or v < least:
            raise ValueError(f"{source}.{key} must be an int >= {least}, got {v!r}")
    lr = out["learning_rate"]
    if isinstance(lr, bool) or not (isinstance(lr, (int, float)) and math.isfinite(lr) and
                                    lr > 0):
        raise ValueError(f"{source}.learning_rate must be a finite number > 0, got "
                         f"{out['learning_rate']!r}")
    ls = out["log_std"]
    if not isinstance(ls, (int, float)) or isinstance(ls, bool) or not math.isfinite(ls):
        raise ValueError(f"{source}.log_std must be a finite number, got {ls!r}")
    if out["expert"] is not None and (not isinstance(out["expert"], str)
                                      or ":" not in out["expert"]):
        raise ValueError(f"{source}.expert must be a 'module:factory' string (the module "
                         f"relative to the task's package, as a TaskSpec's experts), got "
                         f"{out['expert']!r}")
    if not isinstance(out["freeze_normalize"], bool):
        raise ValueError(f"{source}.freeze_normalize must be true or false, got "
                         f"{out['freeze_normalize']!r}")
    if out["dagger_labels"] not in ("batch", "shadow"):
        raise ValueError(f"{source}.dagger_labels must be 'batch' or 'shadow', got "
                         f"{out['dagger_labels']!r}")
    return out


def teacher(env_id: str, robot: str, env_kwargs: dict[str, Any], ws: dict[str, Any],
            source: str = "warm_start") -> Any:
    """The scripted policy the clone learns from: ``ws["expert"]`` (``"module:factory"``)
    when set, e.g. an expert that acts in the order the observation and the reward follow,
    else the task's own expert for ``robot``. ValueError naming ``source`` when there is
    none."""
    try:
        if ws.get("expert") is None:
            return expert(env_id, robot, env_kwargs)
        return expert(env_id, robot, env_kwargs, factory_path=ws["expert"])
    except (KeyError, ImportError, AttributeError) as exc:
        raise ValueError(f"{source}: {exc.args[0] if exc.args else exc}") from None


def batch(env_id: str, env_kwargs: dict[str, Any], num_envs: int, episodes: int) -> Any:
    """A native batch of the task for :func:`play`: at most ``num_envs`` envs (no more than
    ``episodes``), no autoreset, one numba thread."""
    return gym.make_vec(env_id, num_envs=min(num_envs, episodes),
                        autoreset_mode=AutoresetMode.DISABLED, num_threads=1, **env_kwargs)


def play(venv: Any, policy: Any, episodes: int, seed: int, shadow: Any = None
         ) -> dict[str, np.ndarray]:
    """``episodes`` episodes of the batch policy ``policy`` on ``venv``, flattened: ``obs``
    (T, obs_dim), ``act`` (T, A), ``rew`` (T,), ``first`` (T,) marking each episode's first
    step, and ``success`` per episode. With a batch policy ``shadow``, it is called on every
    step's whole batch before ``policy`` (its actions not taken) and ``label`` (T, A) holds
    its action in each row of ``obs``."""
    obs, act, rew, first, success, label = [], [], [], [], [], []
    acting = policy
    if shadow is not None:
        pending: list[list[np.ndarray]] = [[] for _ in range(venv.num_envs)]

        def acting(o: np.ndarray) -> np.ndarray:
            for i, a in enumerate(np.asarray(shadow(o), np.float32)):
                pending[i].append(a)
            return policy(o)

    for ep in rollout(venv, acting, episodes, seed):
        n = len(ep.actions)
        if shadow is not None:
            # rollout yields an episode right after its last step: env ep.env's pending
            # labels are that episode's, one a step (the env's next episode starts afresh)
            rows = pending[ep.env]
            if len(rows) != n:
                raise RuntimeError(f"shadow labels: {len(rows)} for an episode of {n} steps")
            label.append(np.stack(rows))
            rows.clear()
        obs.append(ep.observations[:n])
        act.append(ep.actions)
        rew.append(ep.rewards)
        f = np.zeros(n, bool)
        f[0] = True
        first.append(f)
        success.append(bool(ep.infos["is_success"][-1]))
    return {"obs": np.concatenate(obs).astype(np.float32), "act": np.concatenate(act),
            "rew": np.concatenate(rew), "first": np.concatenate(first),
            "success": np.array(success),
            **({"label": np.concatenate(label)} if shadow is not None else {})}


def demonstrations(env_id: str, env_kwargs: dict[str, Any], ws: dict[str, Any], seed: int,
                   source: str = "warm_start") -> dict[str, Any]:
    """The scripted expert's ``ws["episodes"]`` episodes (:func:`settings`), flattened:
    ``obs`` (T, obs_dim), ``act`` (T, A), ``rew`` (T,), ``first`` (T,) marking each episode's
    first step, ``success`` per episode, ``seconds`` [s] it took, and the task (``env_id``,
    ``env_kwargs``) for DAgger's rounds. A task, robot or observation mode without a scripted
    expert raises ValueError naming ``source``, before any episode is played."""
    t0 = time.perf_counter()
    venv = batch(env_id, env_kwargs, ws["num_envs"], ws["episodes"])
    try:
        if venv.obs_mode != "state":
            raise ValueError(f"{source}: the scripted experts read the state observation; "
                             f"obs_mode={venv.obs_mode!r} has none to clone from")
        policy = teacher(env_id, venv.robot, env_kwargs, ws, source)
        out = play(venv, policy, ws["episodes"], seed + DEMO_SEED_OFFSET)
    finally:
        venv.close()
    return {**out, "seconds": time.perf_counter() - t0, "env_id": env_id,
            "env_kwargs": dict(env_kwargs)}


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


def _fit(model: PPO, opt: torch.optim.Optimizer, obs: np.ndarray, act: np.ndarray,
         target: np.ndarray, ws: dict[str, Any], gen: torch.Generator,
         epochs: int) -> tuple[float, float]:
    """``epochs`` passes of Adam (minibatches of ``ws["batch_size"]``): the actor's mean onto
    ``act`` and the critic onto ``target`` (mean squared errors, the critic's at half
    weight); the last pass's losses."""
    policy = model.policy
    x = torch.as_tensor(obs, dtype=torch.float32)
    a = torch.as_tensor(act, dtype=torch.float32)
    g = torch.as_tensor(target, dtype=torch.float32)
    n = len(x)
    actor_loss = critic_loss = float("nan")
    policy.set_training_mode(True)
    for _ in range(epochs):
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
    return actor_loss, critic_loss


def pretrain(model: PPO, env: VecEnv, demo: dict[str, Any], seed: int,
             ws: dict[str, Any], view: Callable[[np.ndarray], np.ndarray] | None = None
             ) -> dict[str, Any]:
    """Clone the demonstrations (:func:`demonstrations`) into ``model``'s policy (and
    ``env``'s normalisation) as the module docs describe, with the settings ``ws``
    (:func:`settings`), DAgger's rounds included; returns what it did: episodes, the expert's
    success rate, steps, the final losses, each DAgger round's clone success rate, the
    wall clock [s] of collecting and cloning, and its parts (``seconds_by_part``: the
    expert's episodes and labels, the clone's episodes, the fits).

    ``view``: what the policy sees of an observation (``env`` shows it so: the yml's
    ``sort_obs`` and ``hide_obs``, :class:`~push_envs.baselines.view.ObsView`); the clone
    learns from the same view, while the expert reads the whole observation."""
    t0 = time.perf_counter()
    see = view if view is not None else (lambda o: o)

    norm = env if isinstance(env, VecNormalize) else None
    if norm is not None and norm.norm_obs:
        norm.obs_rms.update(see(demo["obs"]).astype(np.float64))
    if norm is not None and norm.norm_reward:
        norm.ret_rms.update(_running_returns(demo["rew"], demo["first"], norm.gamma))
    space = model.action_space
    lo, hi = space.low, space.high

    def targets(rew: np.ndarray, first: np.ndarray) -> np.ndarray:
        if norm is not None and norm.norm_reward:
            rew = norm.normalize_reward(rew)
        return _returns_to_go(rew.astype(np.float64), first, model.gamma)

    # The return statistics stay the demonstrations' through DAgger, so a block's critic
    # targets and clipped labels are fixed when it joins (its episodes are whole); only the
    # observations are normalised again for each fit, as their statistics grow.
    data = {"obs": see(demo["obs"]), "act": np.clip(demo["act"], lo, hi),
            "target": targets(demo["rew"], demo["first"])}
    policy = model.policy
    params = [p for name, p in policy.named_parameters() if name != "log_std"]
    # fused: torch's one-kernel CPU Adam, the same algorithm as the per-tensor loop and ~4x
    # cheaper a step for these small nets (as the yml's PPO optimizer_kwargs)
    opt = torch.optim.Adam(params, lr=ws["learning_rate"], fused=True)
    gen = torch.Generator().manual_seed(seed)

    # Where the warm start's wall clock goes [s]: the expert (its episodes, then its labels
    # of the clone's states), the clone's own episodes, and the fits.
    spent = {"expert": float(demo["seconds"]), "clone_play": 0.0, "fit": 0.0}

    def fit(epochs: int) -> tuple[float, float]:
        t = time.perf_counter()
        obs = data["obs"]
        if norm is not None and norm.norm_obs:
            obs = norm.normalize_obs(obs)
        out = _fit(model, opt, obs, data["act"], data["target"], ws, gen, epochs)
        spent["fit"] += time.perf_counter() - t
        return out

    def clone(obs: np.ndarray) -> np.ndarray:
        obs = see(obs)
        x = norm.normalize_obs(obs) if norm is not None and norm.norm_obs else obs
        action, _ = policy.predict(x.astype(np.float32), deterministic=True)
        return action

    actor_loss, critic_loss = fit(ws["epochs"])
    rounds: list[float] = []
    if ws["dagger_rounds"]:
        venv = batch(demo["env_id"], demo["env_kwargs"], ws["num_envs"], ws["dagger_episodes"])
        try:
            shadow = ws["dagger_labels"] == "shadow"
            if not shadow:
                labeller = teacher(demo["env_id"], venv.robot, demo["env_kwargs"], ws)
            for r in range(ws["dagger_rounds"]):
                # shadow: a fresh expert each round, its state started with the round's batch
                rider = teacher(demo["env_id"], venv.robot, demo["env_kwargs"], ws) \
                    if shadow else None
                t = time.perf_counter()
                own = play(venv, clone, ws["dagger_episodes"],
                           seed + DAGGER_SEED_OFFSET + 1000 * r, shadow=rider)
                rounds.append(float(own["success"].mean()))
                t1 = time.perf_counter()
                spent["clone_play"] += t1 - t  # a shadow's labels count here, as they ride
                # every stride-th visited state joins (the critic's targets are the whole
                # episodes' returns): neighbouring states of a stuck episode teach little
                # and cost the expert's labels and the fits' passes alike
                keep = slice(None, None, ws["dagger_stride"])
                target = targets(own["rew"], own["first"])[keep]
                labels = own["label"][keep] if shadow else labeller(own["obs"][keep])
                spent["expert"] += time.perf_counter() - t1
                block = {"obs": see(own["obs"][keep]),
                         "act": np.clip(np.asarray(labels, np.float32), lo, hi),
                         "target": target}
                for k in data:
                    data[k] = np.concatenate([data[k], block[k]])
                if norm is not None and norm.norm_obs:
                    norm.obs_rms.update(block["obs"].astype(np.float64))
                actor_loss, critic_loss = fit(ws["dagger_epochs"])
        finally:
            venv.close()
    with torch.no_grad():
        policy.log_std.fill_(float(ws["log_std"]))
    if norm is not None and ws["freeze_normalize"]:
        # PPO's own states would move the statistics, and with them the inputs the clone was
        # fitted to (a clone has no other way to adapt to them than PPO's updates)
        norm.training = False
    return {"episodes": int(len(demo["success"])),
            "expert_success_rate": float(demo["success"].mean()),
            "steps": int(len(data["obs"])), "actor_mse": actor_loss, "critic_mse": critic_loss,
            "dagger_success_rates": rounds,
            "seconds": demo["seconds"] + time.perf_counter() - t0,
            "seconds_by_part": spent, **{k: ws[k] for k in DEFAULTS}}
