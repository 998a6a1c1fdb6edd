"""IR-SIM's crowds, IR-SIM 2.12 and push_envs side by side in one process.

    python benchmarks/behaviours.py --irsim-usage path/to/ir-sim/usage
    python benchmarks/behaviours.py --quick --csv behaviours.csv

Two of IR-SIM's example worlds (its repository's ``usage`` folder: ``--irsim-usage``, or the
``IRSIM_USAGE`` environment variable):

* the rvo crowd, ``11collision_avoidance/collision_avoidance.yaml`` (ten diff robots on a
  circle, rvo, each to the opposite side and back): IR-SIM's ``env.step()`` steps/s against
  push_envs' env-steps/s with ``num_envs`` (1024) envs on one thread;
* the orca crowd, ``19orca_world/orca_behavior_world.yaml`` (200 omni robots, group orca):
  IR-SIM's steps/s against push_envs' with one env.

Both sides time the same steps of the same world: the first ``--steps`` after the first
(IR-SIM headless, no render; push_envs after its first step, which compiles when the cache is
cold). push_envs loads the world file itself when its parser takes IR-SIM's keys, and
otherwise builds the world IR-SIM loaded, object by object
(``push_envs.physics.behaviours.reference``); without IR-SIM (or without its world files) it
runs the recorded worlds of ``tests/physics/behaviours/data`` and the IR-SIM columns are left
empty. The two sides run in alternating rounds (``--repeats``, wall clock); each figure is
printed as min / median / max over the rounds, and the ratio is of the medians: compare the
ratios of one run on a machine others may share.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numba

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from push_envs.physics import World  # noqa: E402
from push_envs.physics.behaviours.reference import reference_from_irsim  # noqa: E402
from push_envs.physics.behaviours.reference import world_from_reference  # noqa: E402

DATA = ROOT / "tests" / "physics" / "behaviours" / "data"
WORLDS = {
    "rvo": ("11collision_avoidance/collision_avoidance.yaml",
            "usage__11collision_avoidance__collision_avoidance",
            "rvo crowd, 10 diff agents", 1000.0),
    "orca": ("19orca_world/orca_behavior_world.yaml",
             "usage__19orca_world__orca_behavior_world",
             "orca crowd, 200 omni agents", 100.0),
}


def irsim_env(path: Path):
    """IR-SIM's env of ``path``, headless, or None when IR-SIM is not importable."""
    try:
        os.environ.setdefault("MPLBACKEND", "Agg")
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            import irsim

            return irsim.make(str(path), display=False, log_level="ERROR", seed=0)
    except ImportError:
        return None


def time_irsim(env, steps: int) -> float:
    """IR-SIM's steps/s over ``steps`` steps (one round)."""
    with contextlib.redirect_stdout(io.StringIO()):
        t = time.perf_counter()
        for _ in range(steps):
            env.step()
    return steps / (time.perf_counter() - t)


def push_world(path: Path | None, ref: dict, num_envs: int) -> tuple[World, str]:
    """push_envs' world: the file itself when the parser takes it, else IR-SIM's objects."""
    if path is not None:
        try:
            return World.from_config(path, num_envs=num_envs, num_threads=1), "world file"
        except ValueError:  # a SceneError: a key the parser does not take (yet)
            pass
    return world_from_reference(ref, num_envs=num_envs), "IR-SIM's objects"


def time_push(world: World, steps: int) -> float:
    """push_envs' env-steps/s over ``steps`` steps (one round, from a reset and one step)."""
    world.reset()
    world.step()
    t = time.perf_counter()
    for _ in range(steps):
        world.step()
    return steps * world.num_envs / (time.perf_counter() - t)


def spread(xs: list[float]) -> tuple[float, float, float]:
    """(min, median, max) of the rounds' figures."""
    if not xs:
        return (float("nan"),) * 3
    return min(xs), statistics.median(xs), max(xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--irsim-usage", default=os.environ.get("IRSIM_USAGE"),
                    help="IR-SIM's usage folder (its example worlds)")
    ap.add_argument("--num-envs", type=int, default=1024, help="push_envs envs, rvo crowd")
    ap.add_argument("--steps", type=int, default=200, help="steps timed (rvo crowd)")
    ap.add_argument("--orca-steps", type=int, default=20, help="steps timed (orca crowd)")
    ap.add_argument("--repeats", type=int, default=5, help="alternating rounds")
    ap.add_argument("--quick", action="store_true", help="fewer steps and envs")
    ap.add_argument("--csv", default=None, help="also write the rows to this CSV file")
    args = ap.parse_args()
    if args.quick:
        args.num_envs, args.steps, args.orca_steps, args.repeats = 256, 50, 5, 1
    numba.set_num_threads(1)
    rows = []
    for key, (rel, recorded, label, target) in WORLDS.items():
        path = Path(args.irsim_usage, rel) if args.irsim_usage else None
        if path is not None and not path.is_file():
            path = None
        env = irsim_env(path) if path is not None else None
        ref = reference_from_irsim(env) if env is not None else \
            json.loads((DATA / f"{recorded}.json").read_text())
        envs = args.num_envs if key == "rvo" else 1
        steps = args.steps if key == "rvo" else args.orca_steps
        world, how = push_world(path, ref, envs)
        world.step()  # compiles on a cold cache: not timed
        if env is not None:
            with contextlib.redirect_stdout(io.StringIO()):
                env.step()
        # Alternating rounds of the same steps on both sides (the machine may be shared):
        # the ratio is of the medians. push_envs' few orca steps are timed more often.
        ours, theirs = [], []
        for _ in range(args.repeats):
            if env is not None:
                theirs.append(time_irsim(env, steps))
            for _ in range(1 if key == "rvo" else 5):
                ours.append(time_push(world, steps))
        o, t = spread(ours), spread(theirs)
        rows.append({"world": label, "irsim_min": t[0], "irsim_median": t[1], "irsim_max": t[2],
                     "push_envs_num_envs": envs, "push_envs_min": o[0], "push_envs_median": o[1],
                     "push_envs_max": o[2], "ratio": o[1] / t[1], "target_ratio": target,
                     "push_envs_world_from": how})
    print(f"{'world':28s} {'IR-SIM steps/s (min/med/max)':>30s} "
          f"{'push_envs env-steps/s (min/med/max)':>38s} {'envs':>5s} {'ratio':>7s} "
          f"{'target':>7s}")
    for r in rows:
        irs = f"{r['irsim_min']:.0f}/{r['irsim_median']:.0f}/{r['irsim_max']:.0f}"
        pe = f"{r['push_envs_min']:.0f}/{r['push_envs_median']:.0f}/{r['push_envs_max']:.0f}"
        print(f"{r['world']:28s} {irs:>30s} {pe:>38s} {r['push_envs_num_envs']:5d} "
              f"{r['ratio']:7.0f} {r['target_ratio']:6.0f}x   ({r['push_envs_world_from']})")
    if any(r["irsim_median"] != r["irsim_median"] for r in rows):
        print("IR-SIM not run (not importable, or no --irsim-usage): push_envs alone, on the "
              "recorded worlds")
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            out = csv.DictWriter(fh, fieldnames=list(rows[0]))
            out.writeheader()
            out.writerows(rows)


if __name__ == "__main__":
    main()
