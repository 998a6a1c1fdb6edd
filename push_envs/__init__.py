"""push_envs: 2D robot pushing tasks on a batch-first compiled contact engine.

Importing the package registers every task id with Gymnasium, each with a single-env
``entry_point`` and a native batched ``vector_entry_point``::

    gym.make("PushBox-v0")
    gym.make_vec("PushBox-v0", num_envs=4096)

A task is one module of ``push_envs.envs`` (see docs/adding_a_task.md); registering it is one
line of ``TASKS``: id -> (module, episode length). The module defines ``<Stem>Env`` and
``<Stem>VectorEnv`` for an id ``<Stem>-v<N>``.
"""

from gymnasium.envs.registration import register, registry

# numba's cache must be configured before any kernel of any submodule is defined (importing
# any submodule runs this file first).
from . import _numba_cache  # noqa: F401  isort: skip

TASKS = {
    "PushBox-v0": ("push_envs.envs.push_box", 200),
    "WallSlide-v0": ("push_envs.envs.wall_slide", 300),
    "PushT-v0": ("push_envs.envs.push_t", 300),
    "PushMulti-v0": ("push_envs.envs.push_multi", 500),
    "PushClutter-v0": ("push_envs.envs.push_clutter", 300),
    "Sweep-v0": ("push_envs.envs.sweep", 500),
    "CoopPush-v0": ("push_envs.envs.coop_push", 300),
    "PushMaze-v0": ("push_envs.envs.push_maze", 400),
}


def register_task(env_id: str, module: str, max_episode_steps: int) -> None:
    """Register ``env_id`` with both entry points of the task module ``module``."""
    if env_id in registry:
        return
    stem = env_id.split("-")[0]
    register(id=env_id, entry_point=f"{module}:{stem}Env",
             vector_entry_point=f"{module}:{stem}VectorEnv", max_episode_steps=max_episode_steps)


for _id, (_module, _steps) in TASKS.items():
    register_task(_id, _module, _steps)

__all__ = ["ENV_IDS", "TASKS", "register_task"]
ENV_IDS = tuple(TASKS)
