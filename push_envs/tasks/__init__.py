"""The shipped tasks: one folder each, grouped by family.

    pushing/     one robot pushes one object (family.py: the family's library)
        push_box/ wall_slide/ push_t/ push_maze/ coop_push/
    many/        one robot among several movable bodies (family.py)
        push_multi/ push_clutter/ sweep/

A task's folder holds its :class:`~push_envs.core.task.TaskSpec` and hooks
(``__init__.py``), its scene, its scripted expert and its baseline's hyperparameters.
Registering it is its line in :data:`REGISTRY`; everything else (the id, the episode length,
the entry points) is read from its TaskSpec.
"""

from __future__ import annotations

import importlib
from typing import Any

REGISTRY: tuple[str, ...] = (
    "push_envs.tasks.pushing.push_box",
    "push_envs.tasks.pushing.wall_slide",
    "push_envs.tasks.pushing.push_t",
    "push_envs.tasks.many.push_multi",
    "push_envs.tasks.many.push_clutter",
    "push_envs.tasks.many.sweep",
    "push_envs.tasks.pushing.coop_push",
    "push_envs.tasks.pushing.push_maze",
)
"""The modules of the shipped tasks, in the order the docs list them."""


def spec_of(module: str) -> Any:
    """The TaskSpec class a task module declares: the one whose env classes it made with
    :func:`~push_envs.core.env.task_envs`. Raises TypeError when there is not exactly one."""
    mod = importlib.import_module(module)
    specs = {v for v in vars(mod).values()
             if isinstance(v, type) and v.__dict__.get("env_class") is not None
             and v.__module__ == mod.__name__}
    if len(specs) != 1:
        raise TypeError(f"task module {module!r} must make the env classes of exactly one "
                        f"TaskSpec with task_envs(); found {sorted(s.__name__ for s in specs)}")
    return specs.pop()


TASK_MODULES: dict[str, str] = {}
"""Task id -> its module, for every task registered (:func:`push_envs.register_task`, which
registers the shipped ones at import)."""


def spec(env_id: str) -> Any:
    """The TaskSpec class of a task id: a shipped one (:data:`REGISTRY`) or one registered
    with ``push_envs.register_task``. Any other id (unknown, or a Gymnasium env that is not a
    push_envs task, such as ``CartPole-v1``) raises KeyError naming the registered tasks."""
    module = TASK_MODULES.get(env_id) if isinstance(env_id, str) else None
    if module is not None:
        return spec_of(module)
    for module in REGISTRY:  # before push_envs has registered them
        found = spec_of(module)
        if found.id == env_id:
            return found
    for module in dict.fromkeys([*REGISTRY, *TASK_MODULES.values()]):
        task = spec_of(module)
        if isinstance(env_id, str) and env_id in task.retired:
            raise KeyError(f"{env_id!r} was retired ({task.retired[env_id]}): its rollouts "
                           f"differ from {task.id}'s, which replaced it; see "
                           f"docs/tasks/{task.id}.md, Version History")
    from gymnasium.envs.registration import registry

    entry = registry.get(env_id) if isinstance(env_id, str) else None
    ids = list(dict.fromkeys([spec_of(m).id for m in REGISTRY] + list(TASK_MODULES)))
    why = "not registered" if entry is None else \
        f"a Gymnasium env ({entry.entry_point}), not a push_envs task"
    raise KeyError(f"no task {env_id!r} ({why}); registered tasks: {ids}")


__all__ = ["REGISTRY", "TASK_MODULES", "spec", "spec_of"]
