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
import math
from collections.abc import Mapping
from typing import Any

from . import tasks
from .rollout import rollout
from .scripted import BatchPolicy
from .tasks import spec
from .tasks import spec_of


def available() -> list[tuple[str, str]]:
    """Every (task id, robot) that has a scripted expert, in registry order (read at each
    call: the registry is the one list of tasks)."""
    return [(s.id, robot) for s in map(spec_of, tasks.REGISTRY) for robot in s.experts]


def factory(task_class: Any, robot: str, target: str | None = None) -> Any:
    """The expert factory a TaskSpec class declares for ``robot`` (KeyError otherwise), or
    the one at ``target`` (``"module:factory"``, the module relative to the task's package
    unless it is a full dotted path)."""
    if target is None:
        try:
            target = task_class.experts[robot]
        except KeyError:
            drives: dict[str, list[str]] = {}  # task id -> its experts' drives, in order
            for i, r in available():
                drives.setdefault(i, []).append(r)
            have = ", ".join(f"{i} ({', '.join(r)})" for i, r in drives.items())
            raise KeyError(f"no scripted expert for {task_class.id} with robot={robot!r}; "
                           f"scripted experts exist for: {have}. Use a trained model (.zip) "
                           f"instead") from None
    module, _, name = target.partition(":")
    if not module.startswith("push_envs.") and "." not in module:
        module = f"{task_class.__module__}.{module}"
    return getattr(importlib.import_module(module), name)


def expert(env_id: str, robot: str, env_kwargs: Mapping[str, Any] | None = None,
           factory_path: str | None = None) -> BatchPolicy:
    """The scripted batch policy of ``env_id`` driven by ``robot``, set for the task
    arguments in ``env_kwargs`` (those that change the observation's columns, e.g.
    ``num_objects``; the env's own arguments are ignored, except that an expert may refuse
    one it cannot act under with a KeyError naming it). KeyError naming the tasks that have
    one otherwise. ``factory_path`` (``"module:factory"``) takes another policy of the task's
    than the one it declares (e.g. a variant a warm start clones more easily)."""
    env_kwargs = dict(env_kwargs or {})
    cls = spec(env_id)
    make = factory(cls, robot, factory_path)
    task = cls(cls.resolve_args({k: v for k, v in env_kwargs.items() if k in cls.arguments}))
    return make(task, env_kwargs)


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a success rate (95 % by default), as LeRobot reports."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    d = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, centre - half), min(1.0, centre + half)


def evaluate(env_id: str, robot: str | None = None, episodes: int = 500, seed: int = 10_000,
             num_envs: int = 50, env_kwargs: Mapping[str, Any] | None = None
             ) -> dict[str, Any]:
    """The scripted expert's success on ``episodes`` fresh episodes of ``env_id`` (a batch of
    ``num_envs`` envs, env i seeded ``seed + i``): success count and rate with its 95 %
    Wilson interval, and the mean episode length [steps]."""
    import gymnasium as gym
    from gymnasium.vector import AutoresetMode

    cls = spec(env_id)
    robot = robot or next(iter(cls.experts), cls.default_robot)
    kwargs = dict(env_kwargs or {})
    policy = expert(env_id, robot, kwargs)
    venv = gym.make_vec(env_id, num_envs=min(num_envs, episodes), robot=robot,
                        autoreset_mode=AutoresetMode.DISABLED, num_threads=1, **kwargs)
    wins = lengths = 0
    try:
        for ep in rollout(venv, policy, episodes, seed=seed):
            wins += bool(ep.infos["is_success"][-1])
            lengths += len(ep.actions)
    finally:
        venv.close()
    lo, hi = wilson(wins, episodes)
    return {"task": env_id, "robot": robot, "policy": "scripted expert", "episodes": episodes,
            "successes": wins, "success": wins / episodes, "wilson_lo": lo, "wilson_hi": hi,
            "mean_length": lengths / episodes, "seed": seed,
            "command": f"python -m push_envs.experts evaluate {env_id} --robot {robot} "
                       f"--episodes {episodes} --seed {seed}"}


def main(argv: list[str] | None = None) -> None:
    """``python -m push_envs.experts evaluate <id> [--robot R] [--episodes N] [--seed S]
    [--csv FILE]``: an expert's success rate with its 95 % Wilson interval."""
    import argparse
    import csv
    from pathlib import Path

    ap = argparse.ArgumentParser(prog="python -m push_envs.experts")
    sub = ap.add_subparsers(dest="cmd", required=True)
    ev = sub.add_parser("evaluate", help="an expert's success on fresh episodes")
    ev.add_argument("env_id", nargs="+", help="task ids (all: every one with an expert)")
    ev.add_argument("--robot", default=None)
    ev.add_argument("--episodes", type=int, default=500)
    ev.add_argument("--seed", type=int, default=10_000)
    ev.add_argument("--num-envs", type=int, default=50)
    ev.add_argument("--csv", type=Path, default=None, help="append the rows to this file")
    args = ap.parse_args(argv)
    ids = [i for i, _ in available()] if args.env_id == ["all"] else args.env_id
    if args.episodes < 1 or args.num_envs < 1:
        ap.error("--episodes and --num-envs must be >= 1")
    for env_id in ids:  # every id checked before the first evaluation starts
        try:
            task = spec(env_id)
            factory(task, args.robot or task.default_robot)
        except KeyError as exc:
            ap.error(exc.args[0])
    for env_id in ids:
        row = evaluate(env_id, args.robot, args.episodes, args.seed, args.num_envs)
        print(f"{env_id} ({row['robot']}): {row['successes']} / {row['episodes']} = "
              f"{100 * row['success']:.1f} % (95 % Wilson {100 * row['wilson_lo']:.1f}-"
              f"{100 * row['wilson_hi']:.1f} %), mean length {row['mean_length']:.0f} steps",
              flush=True)
        if args.csv is not None:
            new = not args.csv.exists()
            args.csv.parent.mkdir(parents=True, exist_ok=True)
            with open(args.csv, "a", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=list(row))
                if new:
                    w.writeheader()
                w.writerow(row)


__all__ = ["BatchPolicy", "available", "evaluate", "expert", "factory", "wilson"]


if __name__ == "__main__":
    main()
