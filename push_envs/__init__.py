"""push_envs: 2D robot pushing tasks on a batch-first compiled contact engine.

Importing the package registers every task id with Gymnasium, each with a single-env
``entry_point`` and a native batched ``vector_entry_point``::

    gym.make("PushBox-v0")
    gym.make_vec("PushBox-v0", num_envs=4096)
"""

from gymnasium.envs.registration import register, registry

_TASKS = {
    "PushBox-v0": ("push_box", "PushBoxEnv", "PushBoxVectorEnv", 200),
    "WallSlide-v0": ("wall_slide", "WallSlideEnv", "WallSlideVectorEnv", 300),
    "PushT-v0": ("push_t", "PushTEnv", "PushTVectorEnv", 300),
}

for _id, (_mod, _env, _vec, _steps) in _TASKS.items():
    if _id not in registry:
        register(
            id=_id,
            entry_point=f"push_envs.envs.{_mod}:{_env}",
            vector_entry_point=f"push_envs.envs.{_mod}:{_vec}",
            max_episode_steps=_steps,
        )

__all__ = ["ENV_IDS"]
ENV_IDS = tuple(_TASKS)
