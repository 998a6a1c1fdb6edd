"""push_envs: 2D robot pushing tasks on a batch-first compiled contact engine.

Importing the package registers every task id with Gymnasium, each with a single-env
``entry_point`` and a native batched ``vector_entry_point``::

    gym.make("PushBox-v0")
    gym.make_vec("PushBox-v0", num_envs=4096)

A task is one folder of ``push_envs/tasks`` (see docs/adding_a_task.md) and one line of
:data:`push_envs.tasks.REGISTRY`; its id and episode length come from its TaskSpec. A sensor
is one module (``push_envs/sensors``, or your own: :class:`Sensor`, :func:`register_sensor`;
see docs/adding_a_sensor.md).
"""

from typing import Any

from gymnasium.envs.registration import register
from gymnasium.envs.registration import registry

# numba's cache must be configured before any kernel of any submodule is defined (importing
# any submodule runs this file first).
from . import _numba_cache  # noqa: F401  isort: skip
# Importing the sensors registers each (before any scene is read).
from .sensors import Sensor
from .sensors import register_sensor
from .tasks import REGISTRY
from .tasks import TASK_MODULES
from .tasks import spec_of
from .worlds import WORLD_ENV_ID


def __getattr__(name: str) -> Any:
    # __version__ is read from the installed metadata on first use, not at import: the
    # look-up walks sys.path's distributions (~6 ms of every process's start).
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version

        try:
            value = version("push_envs")
        except PackageNotFoundError:  # a checkout on sys.path, not installed
            value = "0.0.0+unknown"
        globals()["__version__"] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register_task(module: str) -> str:
    """Register the task declared in ``module`` (a task module, see :mod:`push_envs.tasks`)
    with both entry points; returns its id. An id already registered is left as it is."""
    spec = spec_of(module)
    if spec.id not in registry:
        register(id=spec.id, entry_point=f"{module}:{spec.env_class.__name__}",
                 vector_entry_point=f"{module}:{spec.vector_class.__name__}",
                 max_episode_steps=spec.max_episode_steps)
    TASK_MODULES.setdefault(spec.id, module)
    return spec.id


ENV_IDS: tuple[str, ...] = tuple(register_task(m) for m in REGISTRY)
"""The registered ids, in :data:`push_envs.tasks.REGISTRY` order."""

if WORLD_ENV_ID not in registry:
    # Any IR-SIM world file (world=...): not a task (no expert, agent or golden rollout).
    register(id=WORLD_ENV_ID, entry_point="push_envs.worlds.env:WorldEnv",
             vector_entry_point="push_envs.worlds.env:WorldVectorEnv")

__all__ = ["ENV_IDS", "WORLD_ENV_ID", "Sensor", "__version__", "register_sensor", "register_task"]
