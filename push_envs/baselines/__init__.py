"""Pretrained agents shipped with push_envs, run in numpy, and their evaluation.

    from push_envs.baselines import available, load
    agent = load("PushBox-v0")          # the agent of the task's default robot
    actions = agent(obs)                # (N, obs_dim) -> (N, act_dim), deterministic

    python -m push_envs.baselines list
    python -m push_envs.baselines evaluate PushBox-v0 --episodes 500 --csv results.csv

An agent is one file ``push_envs/baselines/agents/<env id>-<robot>.npz``: the actor's
weights and its observation normalisation (no optimiser state, no critic), with a JSON
description of the architecture, the task arguments it was trained with (make the env with
``agent.env_kwargs``) and the training command, seed, env steps and wall clock that produced
it. Files are read with ``numpy.load(allow_pickle=False)``: nothing is unpickled
(:mod:`push_envs.baselines.agent`). Neither loading nor evaluating needs torch or
Stable-Baselines3; ``python -m train.export <run folder>`` (the ``[train]`` extra) writes a
file from a training run.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.env import ROBOTS
from .agent import Agent
from .agent import read
from .agent import write
from .evaluation import EVAL_SEED
from .evaluation import evaluate

AGENTS_DIR = Path(__file__).resolve().parent / "agents"
"""The shipped agents' folder (package data)."""


def agent_path(env_id: str, robot: str) -> Path:
    """Where the shipped agent of ``env_id`` driven by ``robot`` lives (it may not exist)."""
    return AGENTS_DIR / f"{env_id}-{robot}.npz"


def _split(stem: str) -> tuple[str, str] | None:
    env_id, _, robot = stem.rpartition("-")
    return (env_id, robot) if env_id and robot in ROBOTS else None


def available(folder: str | os.PathLike | None = None) -> list[tuple[str, str]]:
    """Every (task id, robot) with a shipped agent (or one in ``folder``), sorted by task id
    and then in the order diff, omni, acker."""
    folder = AGENTS_DIR if folder is None else Path(folder)
    found = [_split(p.stem) for p in folder.glob("*.npz")] if folder.is_dir() else []
    return sorted((f for f in found if f is not None),
                  key=lambda f: (f[0], ROBOTS.index(f[1])))


def _default_robot(env_id: str) -> str | None:
    from ..tasks import spec

    try:
        return spec(env_id).default_robot
    except KeyError:
        return None


def load(env_id: str, robot: str | None = None) -> Agent:
    """The shipped agent of ``env_id`` driven by ``robot``: a callable mapping observations
    (N, obs_dim) to actions (N, act_dim), its normalisation inside.

    ``robot=None`` takes the task's default robot's agent when there is one, else the first of
    the task's agents (diff, omni, acker). KeyError naming the agents that exist when the
    task (or the robot) has none."""
    have = available()
    robots = [r for e, r in have if e == env_id]
    if robot is None and robots:
        default = _default_robot(env_id)
        robot = default if default in robots else robots[0]
    if robot not in robots:
        which = f"{env_id} with robot={robot!r}" if robot else env_id
        listed = ", ".join(f"{e} ({r})" for e, r in have) or "none yet"
        raise KeyError(f"no pretrained agent for {which}; agents exist for: {listed}. Export "
                       f"one from a training run with python -m train.export <run folder>")
    agent = read(agent_path(env_id, robot))
    if (agent.env_id, agent.robot) != (env_id, robot):
        raise ValueError(f"{agent.path}: the file describes {agent.env_id} ({agent.robot}), "
                         f"not {env_id} ({robot}) as its name says")
    return agent


def load_file(path: str | os.PathLike) -> Agent:
    """An agent from any ``.npz`` file in this format (e.g. one exported beside its run);
    read as :func:`load` reads the shipped ones, nothing unpickled."""
    return read(path)


__all__ = ["AGENTS_DIR", "EVAL_SEED", "Agent", "agent_path", "available", "evaluate", "load",
           "load_file", "write"]
