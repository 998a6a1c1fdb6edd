"""What the training scripts share, one floor below them: the command line's run arguments
(one definition: train/train.py's and train/residual.py's ``Args`` extend
:class:`RunArgs`), their checks, the callback that marks a run as under way, and the way a
script ends on bad input (one line, exit code 2, no traceback)."""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated
from typing import Any
from typing import Literal
from typing import TypeVar

import numba
import tyro
from stable_baselines3.common.callbacks import BaseCallback

from .run_folder import RunDir

SEED_LIMIT = 2 ** 32  # numpy's global seeding (SB3's set_random_seed) takes seeds below this


@dataclass
class RunArgs:
    seed: int = 0
    """seed of the training envs, torch and numpy (eval envs use seed + 10000 / + 20000)"""
    timesteps: float | None = None
    """total env steps, e.g. 2e6 (default: the yml's n_timesteps)"""
    n_envs: int | None = None
    """number of parallel envs in the batch (default: the yml's n_envs)"""
    eval_episodes: int = 100
    """episodes of each periodic evaluation and of the final evaluation"""
    eval_freq: int | None = None
    """env steps between evaluations (default: the yml's eval_freq, else timesteps / 20)"""
    eval_envs: int = 100
    """envs in the evaluation batch (as many as episodes: each plays one, so an evaluation
    takes one episode's worth of batched steps)"""
    eval_model: Literal["best", "final"] = "final"
    """model the final line reports: best (highest mean eval return) or final"""
    run_dir: str = "runs"
    """root of the run folders: <run_dir>/<env>/<algo>/<seed>/ (<seed>-2, -3, ... when that
    folder holds an earlier run)"""
    overwrite: bool = False
    """write into <seed>/ even when it holds an earlier run, which is replaced once this run
    is under way (kept if it fails before)"""
    threads: int = 1
    """torch threads while collecting rollouts and evaluating (batch inference of a small
    MLP: 1 is fastest, and it leaves the other core free)"""
    update_threads: int | None = None
    """torch threads during the gradient update and the warm start's fit (default: the
    yml's update_threads, else 1: for the shipped 64-wide nets one thread was faster than
    two, docs/training.md, Threads)"""
    env_threads: int | None = None
    """numba threads stepping the batch (default: the yml's env_threads, else the cores)"""
    hyperparams: str | None = None
    """yml file to read instead of the shipped ones: its <env id> entry over its default"""
    hp: Annotated[list[str], tyro.conf.UseAppendAction] = dataclasses.field(
        default_factory=list)
    """override key=value, value parsed as YAML (mappings merge); repeat the flag, e.g.
    --hp n_epochs=5 --hp 'env_kwargs={max_episode_steps: 50}'"""
    progress: bool = True
    """show the progress bar"""
    verbose: int = 0
    """SB3 verbosity (0: quiet, 1: training stats)"""


def _count(flag: str, value: Any, low: int, high: int | None = None,
           optional: bool = False) -> None:
    if optional and value is None:
        return
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and \
        math.isfinite(value) and value >= low and (high is None or value <= high)
    if not ok:
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"--{flag.replace('_', '-')} must be {bound}, got {value!r}")


def check_run_args(args: RunArgs) -> None:
    """Refuse counts and seeds no run can use (``--timesteps -5`` would report a model
    never trained, ``--eval-episodes -3`` an evaluation never played), each naming its
    flag, before anything is built or written."""
    _count("seed", args.seed, 0, SEED_LIMIT - 1)
    _count("timesteps", args.timesteps, 1, optional=True)
    for flag in ("n_envs", "eval_freq", "update_threads"):
        _count(flag, getattr(args, flag), 1, optional=True)
    for flag in ("eval_episodes", "eval_envs", "threads"):
        _count(flag, getattr(args, flag), 1)
    _count("env_threads", args.env_threads, 1, numba.config.NUMBA_NUM_THREADS, optional=True)
    _count("verbose", args.verbose, 0, 2)


class UnderWay(BaseCallback):
    """Tell the run's folder (:class:`~train.run_folder.RunDir`) the run is under way once
    the model has taken its first gradient update: an earlier run it replaces (--overwrite)
    may go then, and not before."""

    def __init__(self, run: RunDir) -> None:
        super().__init__()
        self.run = run

    def _on_rollout_start(self) -> None:
        if getattr(self.model, "_n_updates", 0) > 0:
            self.run.under_way()

    def _on_training_end(self) -> None:
        self.run.under_way()

    def _on_step(self) -> bool:
        return True


T = TypeVar("T")


def cli(main: Callable[[list[str] | None], T], prog: str, argv: list[str] | None = None) -> T:
    """Run a script's ``main`` as its command line: bad input (a ValueError or KeyError
    naming the flag, key or file, or a file that cannot be read or written) ends in one line
    on stderr and exit code 2, as argparse ends its own errors; no traceback."""
    try:
        return main(argv)
    except (ValueError, KeyError, OSError) as exc:
        text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"{prog}: {text}", file=sys.stderr)
        raise SystemExit(2) from None
