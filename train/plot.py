"""Learning curves from EvalCallback logs: success rate and mean return vs env steps; and
success against wall clock (:func:`plot_wall_clock`, from train.train's evaluation logs).

    python -m train.plot runs/PushBox-v0/ppo --out learning_curve_pushbox.png
    python -m train.plot runs/PushBox-v0/ppo runs/WallSlide-v0/ppo --labels PushBox WallSlide

Each positional folder is one line: the mean over the seeds found under it (every
``evaluations.npz`` below the folder, one per seed), with a +-1 std band across seeds.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


@dataclass
class Curve:
    """One folder's curves: steps (T,), success and return (seeds, T)."""

    label: str
    steps: np.ndarray
    success: np.ndarray
    returns: np.ndarray


@dataclass
class ClockCurve:
    """One task's runs against wall clock: its success floor (0..1) and, per seed, the
    seconds since the training command started [s] and the success rate (0..1) of each
    evaluation, in the order played."""

    label: str
    floor: float
    seconds: list[np.ndarray]
    success: list[np.ndarray]


def _save(fig, out: Path, title: str) -> None:
    """Title the figure (when ``title``), write it to ``out`` as a PNG and close it."""
    if title:
        fig.suptitle(title)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)


def load_curve(folder: Path, label: str) -> Curve:
    """Seeds' evaluations.npz under ``folder``, cut to their common length."""
    files = sorted(folder.rglob("evaluations.npz"))
    if not files:
        raise FileNotFoundError(f"no evaluations.npz under {folder}")
    logs = [np.load(f) for f in files]
    n = min(len(log["timesteps"]) for log in logs)
    steps = logs[0]["timesteps"][:n]
    returns = np.stack([log["results"][:n].mean(axis=1) for log in logs])
    success = np.stack([
        log["successes"][:n].mean(axis=1) if "successes" in log and len(log["successes"])
        else np.full(n, np.nan) for log in logs])
    return Curve(label, steps, success, returns)


def plot(curves: list[Curve], out: Path, title: str = "") -> None:
    """Two panels (success %, mean return) with mean +- std across seeds."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    for c in curves:
        seeds = len(c.returns)
        for ax, data, scale in ((axes[0], c.success, 100.0), (axes[1], c.returns, 1.0)):
            mean, std = np.nanmean(data, 0) * scale, np.nanstd(data, 0) * scale
            (line,) = ax.plot(c.steps, mean, label=f"{c.label} ({seeds} seed{'s' * (seeds > 1)})")
            if seeds > 1:
                ax.fill_between(c.steps, mean - std, mean + std, alpha=0.25,
                                color=line.get_color())
    axes[0].set(xlabel="env steps", ylabel="success rate [%]", ylim=(-2, 102),
                title="evaluation success (deterministic)")
    axes[1].set(xlabel="env steps", ylabel="mean episode return", title="evaluation return")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    _save(fig, out, title)


def plot_wall_clock(curves: list[ClockCurve], out: Path, title: str = "") -> None:
    """Success [%] against wall clock [s] on a log axis, one colour per task: each seed a
    line (seeds evaluate at different seconds, so there is no mean to draw), a dot where it
    first reached the task's floor, and each floor a dashed level."""
    fig, ax = plt.subplots(figsize=(12, 5), constrained_layout=True)
    for floor in sorted({c.floor for c in curves}):
        ax.axhline(100.0 * floor, color="0.5", lw=0.8, ls="--")
    for i, c in enumerate(curves):
        color = f"C{i % 10}"
        for k, (t, ok) in enumerate(zip(c.seconds, c.success, strict=True)):
            ax.plot(t, 100.0 * ok, color=color, lw=1.2, alpha=0.8,
                    label=f"{c.label} ({len(c.seconds)} seeds)" if k == 0 else None)
            at = np.flatnonzero(ok >= c.floor)
            if len(at):
                ax.plot(t[at[0]], 100.0 * ok[at[0]], "o", color=color, ms=5)
    # log seconds: the runs take 10 s to several minutes, and the first seconds matter most
    ax.set_xscale("log")
    ax.set(xlabel="wall clock since the command started [s] (log scale)",
           ylabel="success rate [%]", ylim=(-2, 102),
           title="evaluation success (deterministic); dots: first at the floor (dashed)")
    ax.grid(alpha=0.3)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    _save(fig, out, title)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", help="run folders; each holds one or more seeds' "
                   "evaluations.npz and becomes one line")
    p.add_argument("--out", default="learning_curve.png", help="PNG to write")
    p.add_argument("--labels", nargs="+", default=[],
                   help="a legend label per folder (default: the folder path)")
    p.add_argument("--title", default="", help="figure title")
    args = p.parse_args(argv)
    labels = list(args.labels) + args.runs[len(args.labels):]
    curves = [load_curve(Path(f), label) for f, label in zip(args.runs, labels, strict=False)]
    plot(curves, Path(args.out), args.title)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
