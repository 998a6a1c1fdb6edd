"""Write docs/performance.md and its plots from the benchmark CSV files in docs/data/.

    python docs/_scripts/perf_page.py

Inputs (each CSV has a ``<name>.meta.json`` beside it saying what machine, command, actions
and conditions produced it):

* ``throughput.csv``: ``benchmarks/throughput.py --csv`` (env-steps/s per task and batch size);
* ``cold_start.csv``: ``benchmarks/cold_start.py --csv`` (cold and cached start per task);
* ``cold_start_before.csv``: the figures measured before the engine was compiled once.

Outputs: ``docs/performance.md`` (do not edit it by hand: rerun this script) and
``docs/_static/perf/*.png``. The script only reads files; it runs no benchmark, so it is
cheap to rerun after a new CSV lands. Needs matplotlib.
"""

from __future__ import annotations

import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent
if str(DOCS.parent) not in sys.path:
    sys.path.insert(0, str(DOCS.parent))  # push_envs from this checkout
DATA = DOCS / "data"
PNG = DOCS / "_static" / "perf"
PAGE = DOCS / "performance.md"


def task_order(tasks) -> list[str]:
    """``tasks`` in the registry's order (``push_envs.ENV_IDS``), any other id after them."""
    import push_envs

    ids = list(push_envs.ENV_IDS)
    return [t for t in ids if t in tasks] + [t for t in tasks if t not in ids]


def _read(name: str) -> tuple[list[dict], dict]:
    with open(DATA / f"{name}.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    meta_path = DATA / f"{name}.meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    return rows, meta


def _provenance(meta: dict, csv_name: str) -> str:
    """The box under each table: machine, command, actions, clock, conditions, raw data."""
    lines = [":::{admonition} How this was measured", ":class: note", ""]
    for key, label in (("machine", "Machine"), ("command", "Command"), ("actions", "Actions"),
                       ("clock", "Figures"), ("conditions", "Conditions")):
        if key in meta:
            value = meta[key]
            if key == "command" and not value.startswith("by hand"):
                value = f"`{value}`"
            lines.append(f"{label}\n: {value}\n")
    lines.append(f"Raw data\n: {{download}}`{csv_name} <data/{csv_name}>`"
                 + (f" and {{download}}`its description <data/{csv_name[:-4]}.meta.json>`"
                    if (DATA / f"{csv_name[:-4]}.meta.json").exists() else "") + "\n")
    lines.append(":::")
    return "\n".join(lines)


def _k(x: float) -> str:
    """Env-steps/s in thousands, 3 significant digits."""
    k = x / 1000.0
    return f"{k:.0f}" if k >= 100 else f"{k:.1f}" if k >= 10 else f"{k:.2f}"


def plot_style():
    """matplotlib's pyplot, off-screen (Agg), in the style of the docs' figures (also
    physics_figures.py's)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 10, "axes.grid": True, "grid.alpha": 0.3,
                         "figure.dpi": 110, "savefig.bbox": "tight",
                         "figure.constrained_layout.use": True})
    return plt


# ------------------------------------------------------------------------------ throughput
def throughput_section(plot: bool = True) -> str:
    """The throughput table (and, with ``plot``, its figure)."""
    rows, meta = _read("throughput")
    cells: dict[str, dict[str, tuple[float, float, float]]] = defaultdict(dict)
    sizes: set[int] = set()
    for r in rows:
        if r["obs"] != "state" or r["env"] not in ("gym.make", "make_vec"):
            continue
        col = "gym.make" if r["env"] == "gym.make" else int(r["num_envs"])
        if col != "gym.make":
            sizes.add(col)
        cells[r["task"]][str(col)] = (float(r["median"]), float(r["min"]), float(r["max"]))
    cols = ["gym.make", *[str(n) for n in sorted(sizes)]]
    tasks = task_order(cells)
    head = ("| task | `gym.make` | " + " | ".join(f"`make_vec` N={c}" for c in cols[1:]) + " |")
    lines = [head, "|---|" + "---:|" * len(cols)]
    for t in tasks:
        out = []
        for c in cols:
            if c in cells[t]:
                med, lo, hi = cells[t][c]
                out.append(f"**{_k(med)}** ({_k(lo)}–{_k(hi)})")
            else:
                out.append("–")
        lines.append(f"| {t} | " + " | ".join(out) + " |")
    table = "\n".join(lines)

    if plot:
        plt = plot_style()
        fig, ax = plt.subplots(figsize=(8.0, 4.2))
        for i, t in enumerate(tasks):
            ns = [int(c) for c in cols[1:] if c in cells[t]]
            med = [cells[t][str(n)][0] for n in ns]
            lo = [cells[t][str(n)][0] - cells[t][str(n)][1] for n in ns]
            hi = [cells[t][str(n)][2] - cells[t][str(n)][0] for n in ns]
            ax.errorbar(ns, med, yerr=[lo, hi], marker="o", ms=4, capsize=3, lw=1.2,
                        color=f"C{i}", label=t)
            if "gym.make" in cells[t]:
                ax.plot([1], [cells[t]["gym.make"][0]], marker="*", ms=9, color=f"C{i}",
                        ls="none")
        ax.plot([], [], "k*", ls="none", label="gym.make (1 env)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        from matplotlib.ticker import FuncFormatter
        from matplotlib.ticker import NullFormatter

        sizes_sorted = sorted(sizes | {1})
        ax.set_xticks(sizes_sorted, [str(n) for n in sizes_sorted])
        ax.xaxis.set_minor_formatter(NullFormatter())
        lo_y, hi_y = ax.get_ylim()
        ax.set_yticks([v for v in (1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6)
                       if lo_y <= v <= hi_y])
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y / 1000:g} k"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("envs in the batch, N")
        ax.set_ylabel("env-steps per CPU-second")
        ax.set_title("make_vec throughput, random actions: median, bars min–max over "
                     f"{rows[0]['repeats']} runs", fontsize=9)
        ax.legend(fontsize=8, ncol=2, loc="lower right")
        PNG.mkdir(parents=True, exist_ok=True)
        fig.savefig(PNG / "throughput.png")

    threads = rows[0]["numba_threads"]
    clock = "CPU time" if rows[0]["clock"] == "cpu" else "wall clock"
    return f"""## Throughput

Env-steps per second of every task through `gym.make` (one env) and `gym.make_vec` batches of
N envs, stepped with pre-generated random actions, observation, reward and autoreset included.
Thousands of env-steps per second ({clock}, {threads} numba thread{"s" if threads != "1" else ""}):
**median** (min–max) over {rows[0]["repeats"]} timed runs.

{table}

```{{image}} _static/perf/throughput.png
:alt: Env-steps per second against batch size, one line per task
```

{_provenance(meta, "throughput.csv")}

What sets these figures:

- **Batch size.** A batch pays Python's per-call cost once for all its envs; from N = 16 the
  step runs as a `prange` kernel over envs, chunked 32 envs at a time. `make_vec` with N = 1
  is slower than `gym.make`: it returns batched info arrays with their masks where the single
  env returns a few Python scalars.
- **Sub-steps and bodies.** PushClutter-v0's 0.1 m clutter and Sweep-v1's 5 cm pucks need
  about three and four sub-steps per step at full speed where PushBox-v0 needs one, and Sweep
  has 21 movable bodies ([sub-steps](physics.md#sub-steps-and-continuous-collision)).
- **Threads on a shared machine.** A parallel step waits for its slowest thread, so a batch
  slows badly when another process keeps a core busy: next to torch, give the batch one thread
  (`num_threads=1`, the `train/train.py` default; see [threads](vector.md#threads)).
- **Random actions.** Under random actions the robot touches the object in only a few per cent
  of steps; a policy that pushes solves contacts every step, and a step with contacts costs
  more.
"""


# ------------------------------------------------------------------------------ cold start
def cold_start_section(plot: bool = True) -> str:
    """The cold-start tables (and, with ``plot``, their figure)."""
    rows, meta = _read("cold_start")
    before, bmeta = _read("cold_start_before")
    tasks = [r for r in rows]
    f = float
    lines = ["| task | first `gym.make` CPU s (wall s) | of which numba / LLVM s | "
             f"then `make_vec({rows[0]['num_envs']})` CPU s (wall s) | cached start wall s "
             "min / median / max |",
             "|---|---:|---:|---:|---:|"]
    for r in tasks:
        lines.append(
            f"| {r['task']} | **{f(r['cold_make_cpu_s']):.1f}** ({f(r['cold_make_wall_s']):.1f})"
            f" | {f(r['cold_make_compiler_lock_s']):.1f} / {f(r['cold_make_llvm_lock_s']):.1f}"
            f" | {f(r['cold_make_vec_cpu_s']):.1f} ({f(r['cold_make_vec_wall_s']):.1f})"
            f" | {f(r['cached_wall_min_s']):.2f} / **{f(r['cached_wall_median_s']):.2f}** / "
            f"{f(r['cached_wall_max_s']):.2f} |")
    now = "\n".join(lines)

    blines = ["| what | wall s (second run) | CPU s (second run) |", "|---|---:|---:|"]
    for b in before:
        def both(a: str, b2: str) -> str:
            if not a:
                return "–" if not b2 else f"({b2})"
            return a + (f" ({b2})" if b2 else "")
        blines.append(f"| {b['what']} | {both(b['wall_s'], b['wall_s_second_run'])} | "
                      f"{both(b['cpu_s'], b['cpu_s_second_run'])} |")
    then = "\n".join(blines)

    first = rows[0]
    rest = rows[1:]
    targets = bmeta.get("targets", {})
    worst_further = max(rest, key=lambda r: f(r["cold_make_cpu_s"]))
    worst_vec = max(rest, key=lambda r: f(r["cold_make_vec_cpu_s"]))
    cached = [f(r["cached_wall_median_s"]) for r in rows]

    def verdict(value: float, target: float) -> str:
        return "met" if value <= target else "**not met**"

    comp = ["| figure | before | now | target |", "|---|---:|---:|---|"]
    t_first = targets.get("first gym.make of PushBox-v0 [CPU s]", 45)
    comp.append(f"| first `gym.make` step of PushBox-v0 on an empty cache [CPU s] | 283 (266) | "
                f"{f(first['cold_make_cpu_s']):.1f} | ≤ {t_first}: "
                f"{verdict(f(first['cold_make_cpu_s']), t_first)} |")
    comp.append(f"| each further task's first `gym.make` step [CPU s] | 122 (109), WallSlide-v0 | "
                f"{min(f(r['cold_make_cpu_s']) for r in rest):.1f} to "
                f"{f(worst_further['cold_make_cpu_s']):.1f} ({worst_further['task']}) | ≤ 10: "
                f"{verdict(f(worst_further['cold_make_cpu_s']), 10)} |")
    comp.append(f"| then its first `make_vec(4096)` step, more [CPU s] | 98, WallSlide-v0 | "
                f"{min(f(r['cold_make_vec_cpu_s']) for r in rest):.1f} to "
                f"{f(worst_vec['cold_make_vec_cpu_s']):.1f} ({worst_vec['task']}) | ≤ 10: "
                f"{verdict(f(worst_vec['cold_make_vec_cpu_s']), 10)} |")
    # The target was set on PushBox-v0's start (the figure before); every task is held to
    # it as well, and the verdict says how many meet it.
    over = [r["task"] for r in rows if f(r["cached_wall_median_s"]) > 0.5]
    every = "every task" if not over else \
        f"{len(rows) - len(over)} of {len(rows)} tasks (not {', '.join(over)})"
    comp.append(f"| cached start, new process, median [wall s] | 2.4 (2.6), PushBox-v0 | "
                f"{min(cached):.2f} to {max(cached):.2f} (PushBox-v0 "
                f"{f(first['cached_wall_median_s']):.2f}) | ≤ 0.5: PushBox-v0 "
                f"{verdict(f(first['cached_wall_median_s']), 0.5)}; {every} |")
    comparison = "\n".join(comp)

    if plot:
        plt = plot_style()
        fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8), gridspec_kw={"width_ratios": [1.6, 1]})
        names = [r["task"].replace("-v0", "") for r in rows]
        xs = list(range(len(rows)))
        a.bar([x - 0.2 for x in xs], [f(r["cold_make_cpu_s"]) for r in rows], 0.4, color="C0",
              label="first gym.make step")
        a.bar([x + 0.2 for x in xs], [f(r["cold_make_vec_cpu_s"]) for r in rows], 0.4,
              color="C1", label="then make_vec(4096), more")
        a.bar([-0.2], [283], 0.4, color="none", edgecolor="C0", ls="--", lw=1.2,
              label="before: PushBox-v0 283 CPU s")
        a.bar([0.8], [122], 0.4, color="none", edgecolor="0.4", ls="--", lw=1.2,
              label="before: a further task 122 CPU s")
        a.axhline(10, color="C3", ls=":", lw=1)
        a.text(len(rows) - 0.5, 12, "10 s target", color="C3", fontsize=8, ha="right")
        a.set_yscale("log")
        a.set_xticks(xs, names, rotation=30, fontsize=8)
        a.set_ylabel("CPU seconds (log)")
        a.set_title("cold start, tasks in registry order on one empty cache", fontsize=9)
        a.legend(fontsize=7, loc="upper right")
        med = [f(r["cached_wall_median_s"]) for r in rows]
        lo = [m - f(r["cached_wall_min_s"]) for m, r in zip(med, rows, strict=True)]
        hi = [f(r["cached_wall_max_s"]) - m for m, r in zip(med, rows, strict=True)]
        b.bar(xs, med, 0.6, yerr=[lo, hi], capsize=3, color="C2", label="now (min–max bars)")
        b.axhline(2.4, color="0.4", ls="--", lw=1.2, label="before: 2.4 s")
        b.axhline(0.5, color="C3", ls=":", lw=1, label="target: 0.5 s")
        b.set_xticks(xs, names, rotation=30, fontsize=8)
        b.set_ylabel("wall seconds")
        b.set_title(f"cached start, {rows[0]['cached_runs']} new processes per task", fontsize=9)
        b.legend(fontsize=7, loc="upper left")
        fig.savefig(PNG / "cold_start.png")

    return f"""## Cold start

numba compiles the kernels the first time they run and caches them on disk
([where](limits.md#the-numba-cache)). The engine and the generic step are compiled once per
machine; each task then compiles only its own hooks. `benchmarks/cold_start.py` measures what
a new user pays: on an empty cache it runs, task after task in registry order, a fresh
process for the first `gym.make` step, one for the first `make_vec` step, and then the cached
start (import, make, reset, step) several times.

{now}

```{{image}} _static/perf/cold_start.png
:alt: Cold and cached start per task, beside the figures before the engine was compiled once
```

{_provenance(meta, "cold_start.csv")}

The first task pays for the engine and the generic kernels (numba's own passes take most of
it: its compiler lock includes LLVM's time); every later task compiles only its hooks.

### Before and now

Before the engine was compiled once, each task's kernels inlined the whole physics step and
the cache was keyed by a hash of every source file, so every task compiled the engine again.
The targets were set against those figures:

{comparison}

The cached start depends most on what else runs: a new process imports numpy, numba and
gymnasium (about 0.3 s of it) and loads the kernels from disk, and the host is shared with
other machines (see the conditions above): the same code read a median of 0.44 to 0.78 s for
PushBox-v0 in runs an hour apart. The tasks differ less than that: ten alternating pairs of
PushMulti-v0 (0.52 s here) and PushBox-v0 starts in one run read a median ratio of 1.009.
The figures before:

{then}

{_provenance(bmeta, "cold_start_before.csv")}
"""


def page(plot: bool = True) -> str:
    """docs/performance.md's text (and, with ``plot``, its figures written)."""
    parts = ["""<!-- generated by docs/_scripts/perf_page.py from docs/data/*.csv; do not edit -->

# Performance

Every table and plot on this page is generated by `docs/_scripts/perf_page.py` from the CSV
files that the benchmark scripts write into `docs/data/`; each says on which machine, with which
command and with which actions it was measured, and gives min, median and max. To refresh a
figure, rerun its command on a quiet machine and then `python docs/_scripts/perf_page.py`.
Figures measured on different machines or under different load do not compare; ratios within
one run do. The [performance history](performance_history.md) keeps the earlier
measurements that shaped the engine.

To compare two checkouts, run `python benchmarks/ab_throughput.py --base <other checkout>
--paired --same-core`: both sides step at once on one core, time-sliced by the kernel, so a
slower minute of a shared machine slows both alike. The ratio by round then spreads a few per
cent (WallSlide-v0 at 4096 envs: 0.850 to 0.901 over 7 rounds), where runs taken one after the
other spread from 0.65 to 1.57. Give each checkout its own cache folder, as the script does
([why](limits.md#the-numba-cache)).
""", throughput_section(plot), cold_start_section(plot)]
    return "\n".join(parts).rstrip() + "\n"


def main() -> None:
    PAGE.write_text(page())
    print(f"wrote {PAGE} and {PNG}/*.png")


if __name__ == "__main__":
    main()
