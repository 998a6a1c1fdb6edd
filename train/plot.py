"""Learning curves from EvalCallback logs: success rate and mean return vs env steps.

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
    if title:
        fig.suptitle(title)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)


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
