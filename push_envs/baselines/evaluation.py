"""Evaluate a pretrained agent the way the field reports: success on fresh episodes with its
95 % Wilson interval (LeRobot's), the mean episode length, for Push-T the four coverage
figures papers use and, for a task whose info reports ``fraction_inside`` (Sweep-v1), the
fraction of the objects inside the goal at the end of the episodes (the progress a policy
that falls short of success still makes).

Seeds: env i of the evaluation batch is seeded ``EVAL_SEED + i`` (100000 + i by default) and
plays its share of the episodes back to back (:func:`push_envs.datasets.rollout`). Training
never uses a seed that high: train/train.py seeds its envs ``seed + i``, its evaluations
``seed + 10000 + i`` and ``seed + 20000 + i``, the warm start's demonstrations ``seed + 30000
+ i`` and DAgger's rounds ``seed + 40000 + 1000 * round + i``; train/dagger.py the same. With
training seeds below 1000 (the suite's are 0, 1, 2), batches of at most 1024 envs and at
most 50 DAgger rounds, the evaluation episodes are none of them (tests/train/test_export.py
checks the offsets). Every training seed's agent is evaluated on the same episodes.

Push-T (a task with the ``success`` and ``coverage_threshold`` arguments) is played under
``success="coverage"`` twice, with the threshold at 0.95 (gym-pusht's; the row's ``success``)
and at 0.90 (ManiSkill's PushT-v1): success at each, the final coverage and the highest
coverage over the episode (Diffusion Policy's), means over the episodes of the 0.95 run.
"""

from __future__ import annotations

import csv
import json
import math
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..experts import wilson
from .agent import Agent

EVAL_SEED = 100_000
COVERAGE_THRESHOLDS = (0.95, 0.90)  # gym-pusht's, ManiSkill PushT-v1's

FIELDS = ("task", "robot", "policy", "seed", "episodes", "successes", "success", "wilson_lo",
          "wilson_hi", "mean_length", "final_coverage", "max_coverage", "success_cov95",
          "success_cov90", "cov90_wilson_lo", "cov90_wilson_hi", "final_fraction_inside",
          "eval_seed", "env_steps", "wall_clock_s", "env_kwargs", "agent", "command",
          "eval_command", "configuration", "floor", "floor_env_steps", "floor_wall_clock_s")
"""The columns of an evaluation row (docs/data/learned.csv); empty where they do not apply
(the coverage columns outside Push-T, ``final_fraction_inside`` outside Sweep-v1, the
training figures an agent does not record). ``floor*``: the training run's time to floor
(train/time_to_floor.py): the task's floor and the env steps and wall clock [s] of its first
evaluation at or above it."""


def has_coverage(env_id: str) -> bool:
    """Whether the task takes a coverage success test (``success`` and
    ``coverage_threshold`` arguments: PushT-v0)."""
    from ..tasks import spec

    args = spec(env_id).arguments
    return "success" in args and "coverage_threshold" in args


def _count(name: str, value: Any, low: int) -> int:
    """An int (numpy integers alike) >= ``low``, as a Python int."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return int(value)


def check_run(agent: Agent, episodes: Any, seed: Any, num_envs: Any) -> tuple[int, int, int]:
    """(episodes, seed, num_envs) as ints, checked before anything is played: ``agent``'s
    task registered, ``episodes`` and ``num_envs`` >= 1, ``seed`` >= 0 with every env's seed
    ``seed + i`` below 2**64. ValueError naming the argument otherwise."""
    from ..core.env import SEED_LIMIT
    from ..tasks import spec

    episodes = _count("episodes", episodes, 1)
    num_envs = _count("num_envs", num_envs, 1)
    seed = _count("seed", seed, 0)
    if seed + min(num_envs, episodes) > SEED_LIMIT:
        raise ValueError(f"seed must leave room for one seed per env below 2**64 "
                         f"(env i is seeded seed + i), got {seed}")
    try:
        spec(agent.env_id)
    except KeyError as exc:
        raise ValueError(f"{agent!r} is for {agent.env_id}, which is not a registered task "
                         f"({exc.args[0]})") from None
    return episodes, seed, num_envs


def play(agent: Agent, episodes: int, seed: int = EVAL_SEED, num_envs: int = 50,
         **env_kwargs: Any) -> dict[str, np.ndarray]:
    """``episodes`` episodes of ``agent`` on its task (its ``env_kwargs``, updated by
    ``env_kwargs``): per episode whether it succeeded, its length and, where the info has
    it, its final and highest coverage and its final fraction of objects inside."""
    import gymnasium as gym
    from gymnasium.vector import AutoresetMode

    from ..datasets import rollout

    episodes, seed, num_envs = check_run(agent, episodes, seed, num_envs)
    kwargs = {**agent.env_kwargs, **env_kwargs}
    venv = gym.make_vec(agent.env_id, num_envs=min(num_envs, episodes),
                        autoreset_mode=AutoresetMode.DISABLED, num_threads=1, **kwargs)
    try:
        n_obs = venv.single_observation_space.shape
        n_act = venv.single_action_space.shape
        if n_obs != (agent.observation_dim,) or n_act != (agent.action_dim,):
            raise ValueError(f"{agent!r} does not fit {agent.env_id} with {kwargs}: it maps "
                             f"{agent.observation_dim} -> {agent.action_dim} values, the env "
                             f"observes {n_obs} and acts with {n_act}")
        out: dict[str, list] = {"success": [], "length": [], "final_coverage": [],
                                "max_coverage": [], "final_fraction_inside": []}
        for ep in rollout(venv, agent, episodes, seed=seed):
            out["success"].append(ep.success)
            out["length"].append(len(ep))
            if "coverage" in ep.infos:
                out["final_coverage"].append(ep.infos["coverage"][-1])
                out["max_coverage"].append(ep.infos["coverage"].max())
            if "fraction_inside" in ep.infos:
                out["final_fraction_inside"].append(ep.infos["fraction_inside"][-1])
    finally:
        venv.close()
    return {k: np.asarray(v) for k, v in out.items()}


def _training(agent: Agent, key: str) -> Any:
    value = (agent.meta.get("training") or {}).get(key)
    return "" if value is None else value


def evaluate(agent: Agent, episodes: int = 500, seed: int = EVAL_SEED, num_envs: int = 50,
             target: str | None = None) -> dict[str, Any]:
    """The evaluation row of ``agent`` (:data:`FIELDS`): success count, rate and 95 % Wilson
    interval over ``episodes`` fresh episodes (env i seeded ``seed + i``), the mean length
    [steps], Push-T's coverage figures, Sweep-v1's final fraction inside, and the training
    figures the agent records.
    ``target`` is what the evaluation command names (default: the task id)."""
    episodes, seed, num_envs = check_run(agent, episodes, seed, num_envs)
    coverage = has_coverage(agent.env_id)
    extra = {"success": "coverage", "coverage_threshold": COVERAGE_THRESHOLDS[0]} \
        if coverage else {}
    runs = play(agent, episodes, seed, num_envs, **extra)
    wins = int(runs["success"].sum())
    lo, hi = wilson(wins, episodes)
    row: dict[str, Any] = dict.fromkeys(FIELDS, "")
    row.update(task=agent.env_id, robot=agent.robot, policy=agent.policy,
               seed=_training(agent, "seed"), episodes=episodes, successes=wins,
               success=wins / episodes, wilson_lo=lo, wilson_hi=hi,
               mean_length=float(runs["length"].mean()), eval_seed=seed,
               env_steps=_training(agent, "env_steps"),
               wall_clock_s=_training(agent, "wall_clock_s"),
               **{k: _training(agent, k) for k in ("floor", "floor_env_steps",
                                                    "floor_wall_clock_s")},
               env_kwargs=json.dumps(agent.env_kwargs, sort_keys=True),
               agent=target if target and target.endswith(".npz") else
               (agent.path.name if agent.path else ""),
               command=_training(agent, "command"),
               configuration=agent.meta.get("configuration", ""))
    if len(runs["final_fraction_inside"]):
        row["final_fraction_inside"] = float(runs["final_fraction_inside"].mean())
    if coverage:
        at90 = play(agent, episodes, seed, num_envs, success="coverage",
                    coverage_threshold=COVERAGE_THRESHOLDS[1])
        wins90 = int(at90["success"].sum())
        lo90, hi90 = wilson(wins90, episodes)
        row.update(final_coverage=float(runs["final_coverage"].mean()),
                   max_coverage=float(runs["max_coverage"].mean()), success_cov95=wins / episodes,
                   success_cov90=wins90 / episodes, cov90_wilson_lo=lo90,
                   cov90_wilson_hi=hi90)
    named = target if target and target.endswith(".npz") else \
        f"{agent.env_id} --robot {agent.robot}"
    row["eval_command"] = (f"python -m push_envs.baselines evaluate {named} --episodes "
                           f"{episodes} --seed {seed}")
    return row


def summary(row: Mapping[str, Any]) -> str:
    """One line for a row: ``PushBox-v0 (diff, PPO, seed 0): 480 / 500 = 96.0 % (...)``."""
    pct = lambda v: f"{100 * float(v):.1f}"  # noqa: E731
    seed = f", seed {row['seed']}" if row["seed"] != "" else ""
    line = (f"{row['task']} ({row['robot']}, {row['policy']}{seed}): {row['successes']} / "
            f"{row['episodes']} = {pct(row['success'])} % (95 % Wilson {pct(row['wilson_lo'])}"
            f"-{pct(row['wilson_hi'])} %), mean length {float(row['mean_length']):.0f} steps")
    if row["final_coverage"] != "":
        line += (f"; coverage final {float(row['final_coverage']):.3f}, max "
                 f"{float(row['max_coverage']):.3f}; success at >= 0.95 "
                 f"{pct(row['success_cov95'])} %, at >= 0.90 {pct(row['success_cov90'])} %")
    if row.get("final_fraction_inside", "") != "":
        line += f"; inside at the end {pct(row['final_fraction_inside'])} % of the objects"
    return line


def check_csv(path: str | Path) -> bool:
    """Check that evaluation rows can be appended to the CSV ``path``, before any episode is
    played: not a folder, an existing file's header :data:`FIELDS`, and a file (or, for a
    new one, a folder) this process can write to. Returns whether the file is new (empty
    or absent); ValueError naming the file and the reason otherwise. Nothing is written."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path}: is a folder; --csv takes the CSV file to append to")
    if path.exists():
        try:
            with open(path, newline="") as fh:
                header = next(csv.reader(fh), [])
            with open(path, "a"):
                pass
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise ValueError(f"{path}: cannot read and append to it ({exc})") from None
        if header and tuple(header) != FIELDS:
            raise ValueError(f"{path}: its columns {header} are not an evaluation CSV's "
                             f"{list(FIELDS)}")
        return not header
    folder = path.parent
    while not folder.exists():  # the folders append_csv would make
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{path}: cannot create it ({folder} is not a folder this process "
                         f"can write to)")
    return True


def append_csv(path: str | Path, row: Mapping[str, Any]) -> None:
    """Append ``row`` to the CSV ``path`` (with the header :data:`FIELDS` when new). A file
    whose header is not :data:`FIELDS` is refused with both listed, and left as it is."""
    path = Path(path)
    new = check_csv(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(FIELDS))
        if new:
            w.writeheader()
        w.writerow({k: _cell(row.get(k, "")) for k in FIELDS})


def _cell(value: Any) -> Any:
    if isinstance(value, float) and not math.isnan(value):
        return f"{value:.6g}"
    return value


def main(argv: list[str] | None = None) -> int:
    """``python -m push_envs.baselines``: ``list`` the shipped agents, ``evaluate`` one."""
    import argparse

    from . import available
    from . import load
    from . import load_file

    ap = argparse.ArgumentParser(prog="python -m push_envs.baselines",
                                 description="pretrained agents: list them, evaluate them")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="the shipped agents and how each was trained")
    ev = sub.add_parser("evaluate", help="an agent's success on fresh episodes, with its 95 %% "
                        "Wilson interval")
    ev.add_argument("target", nargs="+", help="task ids (their shipped agents), agent .npz "
                    "files, or 'all' (every shipped agent)")
    ev.add_argument("--robot", default=None, help="the robot's agent (default: the task's)")
    ev.add_argument("--episodes", type=int, default=500)
    ev.add_argument("--seed", type=int, default=EVAL_SEED,
                    help=f"env i of the batch is seeded seed + i (default {EVAL_SEED}: "
                         "disjoint from every training seed)")
    ev.add_argument("--num-envs", type=int, default=50, help="envs in the batch")
    ev.add_argument("--csv", type=Path, default=None, help="append the rows to this CSV "
                    "(e.g. docs/data/learned.csv)")
    args = ap.parse_args(argv)

    def refuse(exc: BaseException) -> None:
        text = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
        ap.exit(2, f"{ap.prog} {args.cmd}: {text}\n")

    if args.cmd == "list":
        have = available()
        if not have:
            print("no agents shipped yet: python -m train.export <run folder> writes one")
        for env_id, robot in have:
            try:
                agent = load(env_id, robot)
            except (KeyError, ValueError, OSError) as exc:
                refuse(exc)
            t = agent.meta.get("training") or {}
            print(f"{env_id} ({robot}): {agent.policy}, {t.get('env_steps', '?')} env steps; "
                  f"{t.get('command', '')}")
        return 0
    if args.episodes < 1 or args.num_envs < 1:
        ap.error("--episodes and --num-envs must be >= 1")
    if args.seed < 0:
        ap.error(f"--seed must be >= 0 (env i is seeded seed + i), got {args.seed}")
    targets = [f"{e}" for e, _ in available()] if args.target == ["all"] else args.target
    robots = [r for _, r in available()] if args.target == ["all"] else None
    agents = []
    try:
        # Every agent and the output are checked before the first episode is played: a bad
        # --csv or a bad file further down the list must not throw evaluations away.
        if args.csv is not None:
            check_csv(args.csv)
        for i, target in enumerate(targets):
            agent = load_file(target) if target.endswith(".npz") else \
                load(target, robots[i] if robots else args.robot)
            check_run(agent, args.episodes, args.seed, args.num_envs)
            agents.append((target, agent))
        for target, agent in agents:
            start = time.perf_counter()
            row = evaluate(agent, args.episodes, args.seed, args.num_envs, target)
            print(f"{summary(row)} [{time.perf_counter() - start:.0f} s]", flush=True)
            if args.csv is not None:
                append_csv(args.csv, row)
    except (KeyError, ValueError, TypeError, FileNotFoundError, OSError) as exc:
        # An agent whose task arguments the task refuses ends here too (ValueError or
        # TypeError from the env's construction), named by the message.
        refuse(exc)
    return 0
