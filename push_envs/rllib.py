"""Ray RLlib glue: the native batch as an RLlib env, one compiled world per EnvRunner.

>>> from push_envs.rllib import register, log_success
>>> name = register("PushBox-v0")                       # "push_envs/PushBox-v0"
>>> config = (PPOConfig().environment(name, env_config={"robot": "diff"})
...           .env_runners(num_env_runners=2, num_envs_per_env_runner=64,
...                        gym_env_vectorize_mode="vector_entry_point")
...           .callbacks(on_episode_end=log_success))

RLlib registers the creator as the ``vector_entry_point`` of a Gymnasium id and builds each
EnvRunner's env with ``gym.make_vec(..., vectorization_mode="vector_entry_point")``, so a
runner steps one batch of ``num_envs_per_env_runner`` envs (NEXT_STEP autoreset, what RLlib's
SingleAgentEnvRunner expects). These functions live in the package, not in a script, because
remote EnvRunners unpickle them by reference. ray is not imported here.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym


class StridedSeeds(gym.vector.VectorWrapper):
    """``reset(seed=s)`` seeds the batch with ``s * num_envs``.

    RLlib seeds runner k with ``seed + k`` and the batch seeds its env i with that ``+ i``, so
    without the stride env i of runner k and env i - 1 of runner k + 1 would replay the same
    stream; with it, runner k's envs take the seeds ``(seed + k) N`` to ``(seed + k) N + N - 1``,
    disjoint across runners. A per-env list of seeds is passed through as given (the caller
    chose every env's seed). Errors name the seed that was passed and the envs' seeds it
    stands for.
    """

    def reset(self, *, seed: int | list[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        # Imported here, not at the top: remote EnvRunners unpickle this module before
        # make_batch has set their threads (numba is imported with the env package).
        from .core.env import SEED_LIMIT
        from .core.env import is_int

        if seed is None or not is_int(seed):
            return self.env.reset(seed=seed, options=options)  # None, or a per-env list
        n = self.num_envs
        top = (SEED_LIMIT - n) // n  # the largest s with s * n + n - 1 < 2**64
        if not 0 <= seed <= top:
            raise ValueError(f"seed {seed!r}: a strided batch of {n} envs seeds its envs "
                             f"seed * {n} to seed * {n} + {n - 1} ({int(seed) * n} to "
                             f"{int(seed) * n + n - 1} here), which must lie in [0, 2**64); "
                             f"pass a seed in [0, {top}]")
        return self.env.reset(seed=int(seed) * n, options=options)


def make_batch(ctx: Any) -> gym.vector.VectorEnv:
    """Env creator for ``ray.tune.registry.register_env``: the native batch.

    ``ctx`` (RLlib's EnvContext, a dict) holds ``env_id``, ``num_envs`` (added by RLlib's
    vector entry point) and the task's constructor arguments. It runs in every EnvRunner
    process, so it is also where that process gets one torch thread and one numba thread.
    """
    import torch

    import push_envs  # noqa: F401  (registers the ids)
    from push_envs.core.env import is_int

    torch.set_num_threads(1)
    cfg = dict(ctx)
    if "env_id" not in cfg:
        raise ValueError("env_config must name the task: {'env_id': 'PushBox-v0', ...}")
    env_id = cfg.pop("env_id")
    num_envs = cfg.pop("num_envs", 1)
    # int() would turn 2.7 into 2 envs and True into 1; RLlib may pass an integral float.
    integral = isinstance(num_envs, float) and num_envs.is_integer()
    if not (is_int(num_envs) or integral) or num_envs < 1:
        raise ValueError(f"num_envs must be an int >= 1 (envs in the batch), got "
                         f"{num_envs!r}")
    num_envs = int(num_envs)
    cfg.setdefault("num_threads", 1)
    return StridedSeeds(gym.make_vec(env_id, num_envs=num_envs, **cfg))


def register(env_id: str) -> str:
    """Register ``env_id``'s native batch with RLlib as ``push_envs/<env_id>`` and return that
    name; pass ``env_config={"env_id": env_id, ...task arguments}``."""
    from ray.tune.registry import register_env

    name = f"push_envs/{env_id}"
    register_env(name, make_batch)
    return name


def log_success(*, episode: Any, metrics_logger: Any, **_: Any) -> None:
    """``on_episode_end`` callback: logs ``success`` (the last step's ``is_success``), which
    RLlib reports as ``result["env_runners"]["success"]`` (mean of the last 200 episodes)."""
    info = episode.get_infos(-1)
    metrics_logger.log_value("success", float(bool(info.get("is_success", False))),
                             reduce="mean", window=200)
