"""The learning-curve figures: their data, and the command that redraws them.

    python docs/_scripts/curves.py plot            # the figures, from docs/data/curves.csv
    python docs/_scripts/curves.py fetch           # the runs' raw logs, from the data branch
    python docs/_scripts/curves.py csv             # docs/data/curves.csv, from those logs

The training runs' raw evaluation logs (``evaluations.npz``, ``args.json``, ``result.json``
of each seed) live on the ``data/curves`` branch of the repository, not in the source tree.
``fetch`` brings them beside the docs (``git fetch origin data/curves`` and a ``git
worktree add`` of it into ``docs/_build/curves``, which git ignores; the local branch when
there is no remote). ``csv`` reduces the runs each figure draws to ``docs/data/curves.csv``:
one row per evaluation of a seed (the figure, its line, the seed's folder, the env steps, the
success rate and the mean return of that evaluation; for a figure against wall clock also the
seconds since the training command started and the task's floor, from the seed's
``result.json``, train/time_to_floor.py). ``plot`` draws every figure of :data:`FIGURES` from
that file alone with ``train.plot`` (the ``[train]`` or ``[docs]`` extra's matplotlib). Against
env steps, each line is the mean over its seeds with a band of one standard deviation, the
seeds cut to their common length, as ``python -m train.plot <run folder>`` draws a folder of
runs; against wall clock, each seed is its own line (seeds evaluate at different seconds), in
its task's colour, with a dot where it first reached the floor.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
DATA = DOCS / "data" / "curves.csv"
OUT = DOCS / "_static" / "training"
RAW = DOCS / "_build" / "curves"  # where fetch puts the data branch (gitignored)
BRANCH = "data/curves"
COLUMNS = ("figure", "line", "seed", "steps", "success", "return", "wall_clock_s", "floor")
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # train.plot from this checkout


@dataclass(frozen=True)
class Figure:
    """A published figure: its title, what its picture shows (the alt text) and its lines,
    each a label and the data branch's folder of the runs (one seed per subfolder); ``x`` is
    ``"steps"`` (the seeds' ``evaluations.npz``) or ``"wall_clock"`` (their ``result.json``'s
    evaluation log, which train.train writes with the seconds since the command started)."""

    title: str
    alt: str
    lines: tuple[tuple[str, str], ...]
    x: str = "steps"
    note: str = ""
    """what the results page says under the figure's heading (which runs it draws)"""


FIGURES: dict[str, Figure] = {
    "agents_short.png": Figure(
        "The first published recipes (4 Dec), up to 2 M steps",
        "Evaluation success and return against env steps of the 4 December runs of up to 2 M "
        "steps, the first published recipes",
        (("PushBox diff", "2026-12-04/PushBox-v0/ppo"),
         ("WallSlide", "2026-12-04/WallSlide-v0/ppo"),
         ("PushMulti (3 boxes)", "2026-12-04/PushMulti-v0/ppo"),
         ("PushClutter", "2026-12-04/PushClutter-v0/ppo"),
         ("PushMaze", "2026-12-04/PushMaze-v0/ppo"))),
    "agents_long.png": Figure(
        "The first published recipes (4 Dec), 3-5 M steps",
        "Evaluation success and return against env steps of the 4 December runs of 3 to 5 M "
        "steps, the first published recipes",
        (("PushBox omni", "2026-12-04/PushBox-v0-omni/ppo"),
         ("PushBox acker", "2026-12-04/PushBox-v0-acker/ppo"),
         ("CoopPush", "2026-12-04/CoopPush-v0/ppo"),
         ("PushT residual", "2026-12-04/PushT-v0/residual"))),
    "sweep_std_band.png": Figure(
        "Sweep-v1: the action's std held in a band, and 60 M steps (3 seeds each)",
        "Sweep-v1 evaluation success and return of the entry without std bounds, of the std "
        "ceiling alone and of the std held in [0.3, 0.6] over 60 M steps, three seeds each",
        (("no std bounds (36 M)", "2026-12-04/Sweep-v0/ppo"),
         ("max_std 0.6 (36 M)", "2026-12-04-r15-cap/Sweep-v0/ppo"),
         ("min_std 0.3 + max_std 0.6, 60 M (shipped)", "2026-12-05/Sweep-v0/ppo"))),
    "wall_clock.png": Figure(
        "The shipped recipes against wall clock",
        "Evaluation success against the seconds since the training command started, three "
        "seeds of each task and drive with the shipped recipe, each seed a line and a dot "
        "where it first reached its task's floor",
        (("PushBox diff", "wall_clock/PushBox-v0/ppo"),
         ("PushBox omni", "wall_clock/PushBox-v0-omni/ppo"),
         ("PushBox acker", "wall_clock/PushBox-v0-acker/ppo"),
         ("WallSlide", "wall_clock/WallSlide-v0/ppo"),
         ("PushMulti (3 boxes)", "wall_clock/PushMulti-v0/ppo"),
         ("PushClutter", "wall_clock/PushClutter-v0/ppo"),
         ("CoopPush", "wall_clock/CoopPush-v0/ppo"),
         ("PushMaze", "wall_clock/PushMaze-v1/ppo"),
         ("PushT omni (DAgger, to the floor)", "wall_clock/PushT-v0/dagger")),
        x="wall_clock",
        note="Each seed is a line of its own (the seeds evaluate at different seconds), with "
             "a dot where it first reached its task's floor (dashed). The clock runs from the "
             "start of the script's main function (the imports before it take about 2 s): "
             "building the batches, the warm start, PPO and its evaluations. PushBox-v0 "
             "(diff, omni), WallSlide-v0 and PushMulti-v0: seeds 0-2 trained again with the "
             "shipped commands, one run at a time, for this figure (the runs their agents "
             "come from predate the clock's log); PushBox-v0 "
             "(acker), PushClutter-v0, CoopPush-v0 and PushMaze-v1: the runs the shipped "
             "agents come from. PushT-v0: the DAgger stage of its recipe "
             "(`python -m train.dagger --stop-at-floor`), each round's 500 own episodes an "
             "evaluation, stopped at the floor; the residual PPO that follows starts above "
             "it. Sweep-v1 is not drawn: its runs (about 100 minutes each) predate the log."),
    "learning_curve_pushbox.png": Figure(
        "PPO on PushBox-v0: 100 evaluation episodes per point",
        "PushBox-v0 learning curves of PPO from scratch for the three drives, and of the diff "
        "drive before the goal-in-robot-frame columns",
        (("diff", "pushbox_diff"), ("omni", "pushbox_omni"), ("acker", "pushbox_acker"),
         ("diff, before the robot-frame goal columns", "pushbox_diff_world_frame_obs"))),
}


# ------------------------------------------------------------------------------- fetch
def _git(*args: str, cwd: Path = ROOT, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=check)


def fetch(dest: Path = RAW, repo: Path = ROOT) -> Path:
    """Check the data branch out at ``dest`` (a detached ``git worktree`` of the repository
    at ``repo``): the remote ``origin``'s branch when there is one, else the local branch.
    Returns ``dest``; RuntimeError saying what to run when neither has the branch."""
    if _git("remote", cwd=repo).stdout.split().count("origin") and \
            _git("fetch", "origin", BRANCH, cwd=repo, check=False).returncode == 0:
        ref = _git("rev-parse", "FETCH_HEAD", cwd=repo).stdout.strip()
    elif _git("rev-parse", "--verify", "--quiet", f"refs/heads/{BRANCH}", cwd=repo,
              check=False).returncode == 0:
        ref = BRANCH
    else:
        raise RuntimeError(f"no branch {BRANCH!r} in {repo} or its remote 'origin': "
                           f"git fetch <the push_envs repository> {BRANCH}")
    if (dest / ".git").exists():
        _git("checkout", "--quiet", "--detach", ref, cwd=dest)
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        _git("worktree", "add", "--quiet", "--detach", str(dest), ref, cwd=repo)
    return dest


# --------------------------------------------------------------------------------- csv
def _seed_rows(figure: str, label: str, folder: Path) -> list[dict[str, str]]:
    """One row per evaluation of every seed's ``evaluations.npz`` under ``folder``."""
    files = sorted(folder.rglob("evaluations.npz"))
    if not files:
        raise FileNotFoundError(f"{figure}, line {label!r}: no evaluations.npz under {folder}")
    rows = []
    for path in files:
        log = np.load(path)
        success = log["successes"].mean(axis=1) if "successes" in log and \
            len(log["successes"]) else [None] * len(log["timesteps"])
        for step, ok, ret in zip(log["timesteps"], success, log["results"].mean(axis=1),
                                 strict=True):
            rows.append({"figure": figure, "line": label,
                         "seed": path.parent.relative_to(folder).as_posix(),
                         "steps": str(int(step)), "success": "" if ok is None else repr(float(ok)),
                         "return": repr(float(ret))})
    return rows


def _clock_rows(figure: str, label: str, folder: Path) -> list[dict[str, str]]:
    """One row per logged evaluation of every seed's ``result.json`` under ``folder`` (its
    ``evaluations``: env steps, seconds since the command started, success rate and mean
    return; and its ``floor``)."""
    files = sorted(folder.rglob("result.json"))
    if not files:
        raise FileNotFoundError(f"{figure}, line {label!r}: no result.json under {folder}")
    rows = []
    for path in files:
        result = json.loads(path.read_text())
        log, floor = result.get("evaluations"), result.get("floor")
        if not log or floor is None:
            raise ValueError(f"{path}: no evaluation log with wall clock and floor (a run of "
                             f"train.train from before train/time_to_floor.py)")
        for e in log:
            rows.append({"figure": figure, "line": label,
                         "seed": path.parent.relative_to(folder).as_posix(),
                         "steps": str(int(e["env_steps"])),
                         "success": repr(float(e["success_rate"])),
                         "return": repr(float(e["mean_return"])),
                         "wall_clock_s": repr(float(e["wall_clock_s"])),
                         "floor": repr(float(floor))})
    return rows


def write_csv(raw: Path = RAW, path: Path = DATA,
              figures: dict[str, Figure] | None = None) -> int:
    """Reduce the runs of every figure's lines under ``raw`` (the data branch) to ``path``;
    returns the number of rows."""
    rows = []
    for name, fig in (FIGURES if figures is None else figures).items():
        read = _clock_rows if fig.x == "wall_clock" else _seed_rows
        for label, folder in fig.lines:
            rows += read(name, label, raw / folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS, restval="", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return len(rows)


# -------------------------------------------------------------------------------- plot
def _runs(figure: str, path: Path, figures: dict[str, Figure] | None
          ) -> list[tuple[str, list[list[dict[str, str]]]]]:
    """Each line of ``figure`` in the CSV at ``path``: its label and its seeds' rows (the seeds
    sorted by folder, each seed's rows in the order played)."""
    with open(path, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["figure"] == figure]
    out = []
    for label, _ in (FIGURES if figures is None else figures)[figure].lines:
        seeds: dict[str, list[dict[str, str]]] = {}
        for r in rows:
            if r["line"] == label:
                seeds.setdefault(r["seed"], []).append(r)
        if not seeds:
            raise ValueError(f"{path} has no rows of {figure}, line {label!r}: rerun "
                             f"python docs/_scripts/curves.py csv")
        out.append((label, [seeds[k] for k in sorted(seeds)]))
    return out


def curves(figure: str, path: Path = DATA, figures: dict[str, Figure] | None = None) -> list:
    """The lines of ``figure`` from the CSV, as ``train.plot.Curve`` objects: per line the
    seeds cut to their common length, the steps of the first seed."""
    from train.plot import Curve

    out = []
    for label, runs in _runs(figure, path, figures):
        n = min(len(run) for run in runs)
        runs = [run[:n] for run in runs]
        out.append(Curve(label, np.array([int(r["steps"]) for r in runs[0]]),
                         np.array([[float(r["success"]) if r["success"] else np.nan
                                    for r in run] for run in runs]),
                         np.array([[float(r["return"]) for r in run] for run in runs])))
    return out


def clock_curves(figure: str, path: Path = DATA,
                 figures: dict[str, Figure] | None = None) -> list:
    """The lines of a wall-clock ``figure`` from the CSV, as ``train.plot.ClockCurve``
    objects: per line each seed's evaluations in the order played."""
    from train.plot import ClockCurve

    return [ClockCurve(label, float(runs[0][0]["floor"]),
                       [np.array([float(r["wall_clock_s"]) for r in run]) for run in runs],
                       [np.array([float(r["success"]) for r in run]) for run in runs])
            for label, runs in _runs(figure, path, figures)]


def plot(path: Path = DATA, out: Path = OUT) -> list[Path]:
    """Draw every figure of :data:`FIGURES` from the CSV at ``path`` into ``out``."""
    from train.plot import plot as draw
    from train.plot import plot_wall_clock

    written = []
    for name, fig in FIGURES.items():
        if fig.x == "wall_clock":
            plot_wall_clock(clock_curves(name, path), out / name, fig.title)
        else:
            draw(curves(name, path), out / name, fig.title)
        written.append(out / name)
    return written


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python docs/_scripts/curves.py",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=("fetch", "csv", "plot"))
    ap.add_argument("--raw", type=Path, default=RAW,
                    help="where the data branch is checked out (fetch, csv)")
    args = ap.parse_args(argv)
    if args.command == "fetch":
        print(f"{BRANCH} checked out at {fetch(args.raw)}")
    elif args.command == "csv":
        print(f"wrote {write_csv(args.raw)} rows to {DATA}")
    else:
        for p in plot():
            print("wrote", p)


if __name__ == "__main__":
    main()
