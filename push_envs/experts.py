"""The scripted experts by task and robot: the lookup above the tasks.

Each task declares its experts in its TaskSpec (``experts = {"diff": "expert:expert"}``: a
robot name -> ``"module:factory"``, the module relative to the task's package unless it is
a full dotted path); the factory takes the TaskSpec instance, its arguments resolved, and
returns a batch policy that reads the observation by name. :func:`expert` finds it by id::

    policy = expert("PushMulti-v0", "diff", {"num_objects": 2})
    actions = policy(obs)          # (N, obs_dim) -> (N, 2R), in [-1, 1]
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from .scripted import BatchPolicy
from .tasks import REGISTRY, spec, spec_of


def available() -> list[tuple[str, str]]:
    """Every (task id, robot) that has a scripted expert, in registry order."""
    return [(s.id, robot) for s in map(spec_of, REGISTRY) for robot in s.experts]


def factory(task_class: Any, robot: str) -> Any:
    """The expert factory a TaskSpec class declares for ``robot`` (KeyError otherwise)."""
    try:
        target = task_class.experts[robot]
    except KeyError:
        have = ", ".join(f"{i} ({r})" for i, r in available())
        raise KeyError(f"no scripted expert for {task_class.id} with robot={robot!r}; scripted "
                       f"experts exist for: {have}. Use a trained model (.zip) instead") from None
    module, _, name = target.partition(":")
    if not module.startswith("push_envs.") and "." not in module:
        module = f"{task_class.__module__}.{module}"
    return getattr(importlib.import_module(module), name)


def expert(env_id: str, robot: str, env_kwargs: Mapping[str, Any] | None = None
           ) -> BatchPolicy:
    """The scripted batch policy of ``env_id`` driven by ``robot``, set for the task
    arguments in ``env_kwargs`` (those that change the observation's columns, e.g.
    ``num_objects``; the env's own arguments are ignored, except that an expert may refuse
    one it cannot act under with a KeyError naming it). KeyError naming the tasks that have
    one otherwise."""
    env_kwargs = dict(env_kwargs or {})
    cls = spec(env_id)
    make = factory(cls, robot)
    task = cls(cls.resolve_args({k: v for k, v in env_kwargs.items() if k in cls.arguments}))
    return make(task, env_kwargs)


__all__ = ["BatchPolicy", "available", "expert", "factory"]
