"""What a task declares: its id, episode length, scene, arguments, observation layout, info
columns, experts and baseline.

A task is one folder (``push_envs/tasks/<family>/<task>/``, or any importable package)
holding

* a :class:`TaskSpec` subclass, the Python side: constructor arguments with their defaults and
  checks, the observation layout, the goal and info columns, and ``build`` which turns the
  compiled scene and the arguments into the task's :class:`~push_envs.core.step.TaskArrays`;
* the compiled hooks ``spawn``, ``observe``, ``evaluate``, ``start``, ``is_success`` and
  ``goal_reward`` (see ``step.py`` for when each runs), each declared on the TaskSpec where
  it is defined (``@MyTask.hook``), or inherited from its family's TaskSpec;
* ``Env`` / ``VectorEnv`` classes made by :func:`push_envs.core.env.task_envs`;
* its scene, scripted expert and baseline hyperparameters;

and one line in ``push_envs/tasks/__init__.py``'s registry. docs/adding_a_task.md walks
through one.
"""

from __future__ import annotations

import functools
import math
import sys
from collections import namedtuple
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import ClassVar

import numpy as np

from .obs_layout import Layout
from .obs_layout import names

HOOKS = ("spawn", "observe", "evaluate", "start", "is_success", "goal_reward")
"""The compiled hooks every task declares (``TaskSpec.hook``)."""


def columns(*names: str | Sequence[str]) -> Any:
    """Named column indices for the kernels: ``columns("x y", ("z",)).y == 1``.

    The result is a namedtuple of ints; as a module global, numba folds ``C.y`` into a
    constant, so ``fp[C.y]`` costs what ``fp[1]`` does.
    """
    flat: list[str] = []
    for n in names:
        flat.extend(n.split() if isinstance(n, str) else n)
    return namedtuple("Columns", flat)(*range(len(flat)))


@dataclass(frozen=True)
class Arg:
    """One constructor argument of a task.

    default: its value when not given
    check:   ``check(name, value) -> value`` returns the normalised value or raises
             ValueError naming the argument and the reason
    doc:     one line for the docstring, with units
    """

    default: Any
    check: Callable[[str, Any], Any]
    doc: str


# ----------------------------------------------------------------------------- checks
def choice(*choices: str) -> Callable[[str, Any], str]:
    def check(name: str, value: Any) -> str:
        if not isinstance(value, str) or value not in choices:
            raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
        return value
    return check


def integer(low: int, high: int | None = None) -> Callable[[str, Any], int]:
    def check(name: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low \
                or (high is not None and value > high):
            bound = f">= {low}" if high is None else f"in [{low}, {high}]"
            raise ValueError(f"{name} must be an integer {bound}, got {value!r}")
        return int(value)
    return check


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float, np.integer,
                                                             np.floating))


def number(low: float, high: float = math.inf, *, strict: bool = False,
           unit: str = "") -> Callable[[str, Any], float]:
    """A finite number in [low, high] (low excluded when ``strict``)."""
    def check(name: str, value: Any) -> float:
        ok = _is_number(value) and math.isfinite(value) and value <= high and \
            (value > low if strict else value >= low)
        if not ok:
            lo = f"> {low:g}" if strict else f">= {low:g}"
            hi = "" if math.isinf(high) else f" and <= {high:g}"
            raise ValueError(f"{name} must be a finite number {lo}{hi}{unit}, got {value!r}")
        return float(value)
    return check


def _pair(name: str, value: Any, what: str) -> tuple[Any, Any]:
    """``value`` unpacked as a pair; a ValueError naming ``name`` and ``what`` the pair is
    when it is not one."""
    try:
        a, b = value
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be None or {what}, got {value!r}") from None
    return a, b


def optional_pair(item: Callable[[str, Any], Any], what: str) -> Callable[[str, Any],
                                                                          tuple | None]:
    """None, or a pair whose two entries each pass ``item`` (checked as ``name[0]`` and
    ``name[1]``); ``what`` names the pair in the error, e.g. "(columns, rows) of layouts"."""
    def check(name: str, value: Any) -> tuple[Any, Any] | None:
        if value is None:
            return None
        a, b = _pair(name, value, what)
        return item(f"{name}[0]", a), item(f"{name}[1]", b)
    return check


def optional_range(low: float, *, strict: bool) -> Callable[[str, Any], tuple | None]:
    """None, or a finite (lo, hi) with lo > low (or >= low) and lo <= hi."""
    def check(name: str, value: Any) -> tuple[float, float] | None:
        if value is None:
            return None
        lo, hi = _pair(name, value, "a (low, high) pair")
        bad_low = not (_is_number(lo) and _is_number(hi)) or \
            (lo <= low if strict else lo < low)
        if bad_low or not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo:
            bound = ">" if strict else ">="
            raise ValueError(f"{name} must be a finite (low, high) with low {bound} {low} and "
                             f"low <= high, got {value!r}")
        return float(lo), float(hi)
    return check


def region() -> Callable[[str, Any], tuple | None]:
    """None, or a finite (x0, y0, x1, y1) [m] with x1 > x0 and y1 > y0."""
    def check(name: str, value: Any) -> tuple[float, ...] | None:
        if value is None:
            return None
        try:
            vals = tuple(value)
        except TypeError:
            vals = ()
        if len(vals) != 4 or not all(_is_number(v) and math.isfinite(v) for v in vals) \
                or vals[2] <= vals[0] or vals[3] <= vals[1]:
            raise ValueError(f"{name} must be finite (x0, y0, x1, y1) [m] with x1 > x0 and "
                             f"y1 > y0, got {value!r}")
        return tuple(float(v) for v in vals)
    return check


class TaskSpec:
    """The declaration of a task: the one place each of its facts is written.

    A task is one folder (``push_envs/tasks/<family>/<task>/``, or any importable package)
    whose module defines a subclass of this (or of a family's subclass) and the compiled
    hooks. The registry (``push_envs/tasks/__init__.py``), the env classes and their
    docstrings, the docs pages, the experts' lookup, the training scripts and the tests all
    read these attributes; none repeats them.

    Class attributes a task sets:

    id:                the Gymnasium id, ``<Name>-v<version>``
    max_episode_steps: the episode length [steps] (truncation)
    scene:             the YAML scene, a path relative to the task's folder
    experts:           robot -> ``"module:factory"`` of its scripted expert; the factory takes
                       the TaskSpec instance (its arguments resolved) and returns a batch
                       policy (observations (N, n_obs) -> actions (N, 2R))
    hyperparams:       the baseline's hyperparameters, a YAML file in the task's folder
                       keyed by algorithm (``ppo: {...}``), merged over train/hyperparams
    versions:          the version history, one line per id version (newest last)
    retired:           earlier ids of the task -> why they were retired (their rollouts
                       moved); the project's id lookups name the id that replaced them

    The compiled hooks (:data:`HOOKS`) are declared on the class with :meth:`hook`, where they
    are defined; a subclass inherits its parents' hooks and may declare its own.
    """

    id: ClassVar[str]  # registered id, e.g. "PushBox-v0"
    max_episode_steps: ClassVar[int]  # [steps]
    scene: ClassVar[str] = "scene.yaml"  # in the task's folder
    # Hooks declared on this class itself (TaskSpec.hook); declared_hooks() adds the parents'.
    own_hooks: ClassVar[dict[str, Any]] = {}
    experts: ClassVar[Mapping[str, str]] = {}
    hyperparams: ClassVar[str | None] = "hyperparams.yml"
    versions: ClassVar[tuple[str, ...]] = ("v0: initial release.",)
    retired: ClassVar[Mapping[str, str]] = {}
    robot_body: ClassVar[str] = "robot"  # the scene body the action drives
    # Several driven robots, in action order (2 action columns each); empty: (robot_body,).
    # robot_body stays the one whose trail is drawn and whose contacts PushEnv.contacts reads.
    robot_bodies: ClassVar[tuple[str, ...]] = ()
    default_robot: ClassVar[str] = "diff"
    arguments: ClassVar[Mapping[str, Arg]] = {}  # task arguments beyond the shared ones
    # names of the goal vector's columns; a task whose goal grows with its arguments (one
    # per object) sets them on the instance, which the env reads
    goal_fields: tuple[str, ...] = ()
    info_fields: ClassVar[tuple[tuple[str, type], ...]] = ()  # task info columns, in order
    # Set by push_envs.core.env.task_envs: the task's Gymnasium classes.
    env_class: ClassVar[type]
    vector_class: ClassVar[type]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.own_hooks = {}

    @classmethod
    def hook(cls, *fns: Any, name: str | None = None) -> Any:
        """Declare compiled functions as this task's hooks, each under its own name (one of
        :data:`HOOKS`) or ``name``::

            @PushBox.hook            # at the definition
            @compiled
            def spawn(e, W, V, T): ...

            SingleObjectTask.hook(start, goal_reward)   # a family's, shared by its tasks

        A hook is a module-level ``@compiled`` function: the generated wrapper
        (:mod:`push_envs.core.codegen`) imports it by its module and name. Returns the (one)
        function, so it serves as a decorator.
        """
        if cls is TaskSpec:
            raise TypeError("declare hooks on a task's (or a family's) TaskSpec subclass, not "
                            "on TaskSpec itself")
        if not fns:
            return functools.partial(cls.hook, name=name)
        if name is not None and len(fns) != 1:
            raise TypeError(f"{cls.__name__}.hook: name= declares one function, got {len(fns)}")
        for fn in fns:
            py = getattr(fn, "py_func", None)
            if py is None:
                raise TypeError(f"{cls.__name__}.hook: {fn!r} is not a compiled function "
                                f"(decorate it with @compiled first)")
            hook_name = name or py.__name__
            if hook_name not in HOOKS:
                raise ValueError(f"{cls.__name__}.hook: {hook_name!r} is not a hook; the hooks "
                                 f"are {list(HOOKS)} (name= declares a function under another "
                                 f"name)")
            cls.own_hooks[hook_name] = fn
        return fns[0]

    @classmethod
    def declared_hooks(cls) -> dict[str, Any]:
        """Hook name -> compiled function: this class's declarations over its parents'."""
        out: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            out.update(klass.__dict__.get("own_hooks", {}))
        return out

    @classmethod
    def folder(cls) -> Path:
        """The task's folder: where its module, scene and hyperparameters live."""
        return Path(sys.modules[cls.__module__].__file__).resolve().parent

    @classmethod
    def scene_path(cls) -> Path:
        """The task's default scene file."""
        return cls.folder() / cls.scene

    @classmethod
    def hyperparams_path(cls) -> Path | None:
        """The baseline's hyperparameter file, or None when the task declares none."""
        return None if cls.hyperparams is None else cls.folder() / cls.hyperparams

    @classmethod
    def obs_names(cls) -> Any:
        """The kernels' observation name table of this task (:func:`obs_layout.names` of its
        layout with the default arguments: names do not depend on the arguments, only the
        columns do)."""
        return names(cls(cls.resolve_args({})).observation())

    @classmethod
    def resolve_args(cls, task_args: Mapping[str, Any],
                     common: Sequence[str] = ()) -> dict[str, Any]:
        """The task arguments ``task_args`` checked and completed with the defaults.

        Raises TypeError naming unknown arguments (``common``: the env's own arguments,
        listed as valid too) and ValueError naming a bad value.
        """
        declared = cls.arguments
        unknown = sorted(set(task_args) - set(declared))
        if unknown:
            valid = sorted([*common, *declared])
            raise TypeError(f"{cls.id}: unknown argument(s) {unknown}; valid arguments: {valid}")
        return {name: a.check(name, task_args[name]) if name in task_args else a.default
                for name, a in declared.items()}

    def __init__(self, args: Mapping[str, Any]) -> None:
        self.args = dict(args)

    @classmethod
    def driven_bodies(cls) -> tuple[str, ...]:
        """The scene bodies the action drives, in action order."""
        return tuple(cls.robot_bodies) or (cls.robot_body,)

    def observation(self) -> Layout:
        """The state observation's layout for these arguments."""
        raise NotImplementedError

    def edit_scene(self, raw: dict, source: str) -> dict:
        """The scene mapping ``raw`` (read from ``source``) as this task compiles it.

        Called before the scene is checked and compiled; a task whose body list follows its
        arguments (e.g. how many objects) drops or adds bodies here. The default keeps it.
        """
        return raw

    def build(self, env: Any) -> Any:
        """The task's TaskArrays for ``env`` (its world is compiled, its buffers made)."""
        raise NotImplementedError

    def close(self) -> None:
        """Let go of what :meth:`build` holds beyond the env's arrays (a shared table, a
        file); the env calls it once, on ``close()``. Default: nothing to let go."""

    def spawn_failures(self, task_arrays: Any) -> np.ndarray | None:
        """(E,) bool: envs whose last spawn found no place for a body without overlap (the env
        refuses the arguments then, see :meth:`spawn_refusal`); None for a task whose spawn
        always places its bodies."""
        return None

    def spawn_refusal(self, e: int, count: int) -> str:
        """The error when ``count`` envs' spawns failed, env ``e`` first."""
        return f"{self.id}: the spawn of env {e} ({count} env(s)) found no place without overlap"

    def goal_arrays(self, env: Any) -> tuple[np.ndarray, np.ndarray]:
        """(E, G) achieved and desired goal vectors of the current state (float64)."""
        return env.task_arrays.ag, env.task_arrays.dg

    def goal_marks(self, env: Any) -> Sequence[Any]:
        """How the task's goals are drawn: a sequence of :class:`~push_envs.core.render.
        GoalMark` (an outline and / or success circle each, at the pose held in columns of
        ``TaskArrays.goal``, in a colour). ``render()`` and the pixel observation both draw
        from it, so a task declares its goals once. Default: no goal drawn."""
        return ()

    def render_goals(self, env: Any, e: int) -> list:
        """What the renderer draws as env e's goals (a list of render.Goal), from
        :meth:`goal_marks` at env e's goal row."""
        row = env.task_arrays.goal[e]
        return [g for m in self.goal_marks(env) for g in m.goals(row)]
