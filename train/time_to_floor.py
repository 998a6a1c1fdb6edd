"""Wall clock to floor: when a run first reached its task's success floor.

Each task has a floor, the success rate its baseline must reach (:data:`FLOORS`: 80 % for
PushBox-v0, WallSlide-v0, PushMulti-v0, PushClutter-v0 and CoopPush-v0; 60 % for Sweep-v1
and PushMaze-v1; 50 % for PushT-v0, where success is the task's coverage success). A run's
evaluations (the warm start's clone, then each periodic evaluation) are logged with the
wall clock since the command started and PPO's env steps (:class:`EvalLog`); the first
evaluation at or above the floor is the run's time to floor (:func:`first_at_floor`), written
to ``result.json`` (``evaluations`` and ``to_floor``) and carried into the exported agent.

The wall clock counts everything the command did before that evaluation returned: building
the batches, the warm start, PPO and the evaluations so far. A yml entry (or ``--hp``) may
set ``floor`` to another success rate, e.g. for a task registered outside push_envs, which has
no floor here.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.callbacks import EvalCallback

FLOORS: dict[str, float] = {
    "PushBox-v0": 0.8, "WallSlide-v0": 0.8, "PushMulti-v0": 0.8, "PushClutter-v0": 0.8,
    "CoopPush-v0": 0.8, "Sweep-v1": 0.6, "PushMaze-v1": 0.6, "PushT-v0": 0.5}


def floor_of(env_id: str, hp: dict[str, Any]) -> float | None:
    """The run's floor: the hyperparameters' ``floor`` when set, else the task's
    (:data:`FLOORS`), else None (no time to floor is recorded)."""
    value = hp.get("floor")
    if value is None:
        return FLOORS.get(env_id)
    return float(value)


def entry(env_steps: int, wall_clock_s: float, success_rate: float, mean_return: float,
          phase: str) -> dict[str, Any]:
    """One evaluation of the log: PPO's env steps, the wall clock since the command started
    [s], the success rate (0..1) and mean return over the evaluation's episodes, and the
    phase (``clone``: the warm start's clone before PPO; ``ppo``: a periodic evaluation)."""
    return {"env_steps": int(env_steps), "wall_clock_s": float(wall_clock_s),
            "success_rate": float(success_rate), "mean_return": float(mean_return),
            "phase": phase}


def first_at_floor(log: list[dict[str, Any]], floor: float | None) -> dict[str, Any] | None:
    """The first evaluation of ``log`` (in the order played) whose success rate is at or
    above ``floor``, with the floor added; None when none is, or without a floor. A NaN
    success rate (an evaluation whose episodes report no success) never counts."""
    if floor is None:
        return None
    for e in log:
        if e["success_rate"] >= floor:  # False for NaN
            return {**e, "floor": floor}
    return None


class EvalLog(BaseCallback):
    """``callback_after_eval`` of an :class:`EvalCallback`: appends each evaluation to
    ``log`` (:func:`entry`) with the wall clock since ``t_start`` (``time.perf_counter``).

    With ``stop_at`` (the yml's ``stop_at_success``, a success rate), training stops after
    the first evaluation at or above it, as SB3's ``StopTrainingOnRewardThreshold`` stops on
    a return: ``n_timesteps`` is then a cap, and a run that learns early does not pay for the
    steps it no longer needs. The final evaluation is played on fresh episodes all the same,
    so the success a run reports is not the one that stopped it."""

    def __init__(self, log: list[dict[str, Any]], t_start: float,
                 stop_at: float | None = None) -> None:
        super().__init__()
        self.log, self.t_start, self.stop_at = log, t_start, stop_at
        self._seen = 0  # the parent's success lists read so far

    def _on_step(self) -> bool:
        ev = self.parent
        assert isinstance(ev, EvalCallback)
        # The parent appends a success list only when the episodes report is_success: an
        # evaluation that added none has no success rate (NaN), not the previous one's.
        new = ev.evaluations_successes[self._seen:]
        self._seen = len(ev.evaluations_successes)
        succ = new[-1] if new else []
        self.log.append(entry(self.model.num_timesteps, time.perf_counter() - self.t_start,
                              float(np.mean(succ)) if len(succ) else float("nan"),
                              float(ev.last_mean_reward), "ppo"))
        return not (self.stop_at is not None and self.log[-1]["success_rate"] >= self.stop_at)


def describe(hit: dict[str, Any] | None, floor: float | None) -> str:
    """The line a script prints about its time to floor."""
    if floor is None:
        return "floor: none for this task (set --hp floor=<rate>)"
    if hit is None:
        return f"floor {floor:.0%}: not reached by any evaluation"
    return (f"floor {floor:.0%}: reached at {hit['wall_clock_s']:.1f} s of wall clock, "
            f"{hit['env_steps']:,} env steps ({hit['success_rate']:.0%}, {hit['phase']})")


def to_floor(result: dict[str, Any]) -> dict[str, Any]:
    """The time-to-floor figures of a run's ``result.json`` as an exported agent records
    them (``floor``, ``floor_env_steps``, ``floor_wall_clock_s``; None when the run had no
    floor, did not reach it, or predates the record)."""
    hit = result.get("to_floor") or {}
    return {"floor": result.get("floor"), "floor_env_steps": hit.get("env_steps"),
            "floor_wall_clock_s": hit.get("wall_clock_s")}
