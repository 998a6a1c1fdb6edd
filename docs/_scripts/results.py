"""The training results page, generated whole from the data: one command.

    python docs/_scripts/results.py

Inputs (``docs/data/``):

* ``learned.csv``, one row per agent and training seed, appended by ``python -m
  push_envs.baselines evaluate <agent> --csv docs/data/learned.csv`` (500 fresh episodes on
  seeds 100000 + i, disjoint from training; success with its 95 % Wilson interval, Push-T's
  coverage figures, the env steps, wall clock and command of the training). A later row of
  the same task, robot, policy and seed replaces an earlier one;
* ``experts.csv``, the scripted experts' rows (``python -m push_envs.experts evaluate all
  --csv docs/data/experts.csv``);
* ``curves.csv``, the learning curves of the published figures (``docs/_scripts/curves.py``).

Outputs (do not edit them by hand: rerun this script):

* ``docs/training_results.md``, the whole page: every seed's success and interval, Push-T's
  final and max coverage and success at coverage >= 0.95 and >= 0.90, Sweep-v1's fraction of
  pucks inside at the end, the commands; the suite's interquartile mean (IQM) of success over
  task-robot pairs x seeds with its 95 % stratified bootstrap interval
  (:mod:`push_envs.baselines.stats`: rliable's estimators, seeded, so the page is the same on
  every machine); the scripted experts; the learning-curve figures;
* ``docs/_static/training/performance_profile.png``: the fraction of runs above each success
  rate, with its bootstrap band;
* README.md's task table (``readme_tables.py``) and the task pages (``task_pages.py``), which
  read the same rows through :func:`summaries` (a task and robot without rows in
  learned.csv keeps its older figure from ``docs/data/baselines.csv``, 100 episodes per seed).

Needs matplotlib for the figure (the ``[train]`` or ``[docs]`` extra).
"""

from __future__ import annotations

import csv
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
DATA = DOCS / "data"
LEARNED = DATA / "learned.csv"
LEGACY = DATA / "baselines.csv"
EXPERTS = DATA / "experts.csv"
CURVES = DATA / "curves.csv"
PAGE = DOCS / "training_results.md"
FIGURE = DOCS / "_static" / "training" / "performance_profile.png"
FIGURE_REF = "_static/training/performance_profile.png"  # from docs/training_results.md
ROBOT_ORDER = ("diff", "omni", "acker")
REPS = 50_000  # bootstrap resamples of the IQM interval (rliable's default)
SEED = 0  # the bootstrap's seed: the page is the same at every run
for _path in (ROOT, DOCS / "_scripts"):  # push_envs from this checkout; curves.py beside
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))


def _read(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def read_rows(path: Path | None = None) -> list[dict[str, str]]:
    """The evaluation rows of ``path`` (default :data:`LEARNED`), a later row of the same
    (task, robot, policy, seed) replacing an earlier one, in first-seen order."""
    rows: dict[tuple[str, ...], dict[str, str]] = {}
    for r in _read(LEARNED if path is None else path):
        rows[(r["task"], r["robot"], r["policy"], r["seed"])] = r
    return list(rows.values())


def task_order() -> list[str]:
    """The task ids in the registry's order (``push_envs.ENV_IDS``, read at each call)."""
    import push_envs

    return list(push_envs.ENV_IDS)


def _sort_key(order: list[str]):
    def key(item: tuple[str, str, str]) -> tuple:
        task, robot, policy = item
        return (order.index(task) if task in order else len(order), task,
                ROBOT_ORDER.index(robot) if robot in ROBOT_ORDER else 9, policy)
    return key


def groups(rows: list[dict[str, str]]) -> dict[tuple[str, str, str], list[dict[str, str]]]:
    """Rows by (task, robot, policy), in task-registry and robot order; each group's rows by
    seed."""
    out: dict[tuple[str, str, str], list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        out[(r["task"], r["robot"], r["policy"])].append(r)
    order = task_order()
    return {k: sorted(out[k], key=lambda r: _seed(r["seed"]))
            for k in sorted(out, key=_sort_key(order))}


def _seed(value: str) -> tuple:
    return (0, int(value)) if value.lstrip("-").isdigit() else (1, value)


def _command(rows: list[dict[str, str]], key: str = "command") -> str:
    """The group's one command for every seed: the seed written as S (``--seed N`` of a
    training command, a run folder's ``/N/`` in an evaluation's agent path); where the rows
    differ otherwise, each distinct command, joined by `` ; ``."""
    if len(rows) == 1:
        return rows[0].get(key) or ""
    out = []
    for r in rows:
        cmd = r.get(key) or ""
        if key == "command":
            cmd = re.sub(r"--seed \d+", "--seed S", cmd)
        elif r["seed"]:
            cmd = cmd.replace(f"/{r['seed']}/", "/S/")
        out.append(cmd)
    return " ; ".join(dict.fromkeys(out))


def summaries() -> list[dict[str, Any]]:
    """The learned baseline of each (task, robot, policy), as README.md's table and the task
    pages show it: ``success_per_seed``, ``intervals`` (each seed's 95 % Wilson interval, None
    for the older rows), ``episodes_per_seed``, ``command``, ``configuration``, ``source``.
    Rows of docs/data/learned.csv first; a task and robot it lacks keeps its row of
    docs/data/baselines.csv."""
    out = []
    for (task, robot, policy), rows in groups(read_rows()).items():
        eps = sorted({r["episodes"] for r in rows})
        out.append({"task": task, "robot": robot, "policy": policy,
                    "seeds": [r["seed"] for r in rows],
                    "success_per_seed": [float(r["success"]) for r in rows],
                    "intervals": [(float(r["wilson_lo"]), float(r["wilson_hi"]))
                                  for r in rows],
                    "episodes_per_seed": "/".join(eps), "command": _command(rows),
                    "configuration": rows[-1].get("configuration") or "",
                    "source": "learned.csv"})
    covered = {(s["task"], s["robot"]) for s in out}
    for r in _read(LEGACY):
        if (r["task"], r["robot"]) in covered:
            continue
        out.append({"task": r["task"], "robot": r["robot"], "policy": r["policy"],
                    "seeds": [], "success_per_seed": [float(v) for v in
                                                       r["success_per_seed"].split(";")],
                    "intervals": None, "episodes_per_seed": r["episodes_per_seed"],
                    "command": r["command"], "configuration": r["configuration"],
                    "source": "baselines.csv"})
    order = task_order()
    key = _sort_key(order)
    return sorted(out, key=lambda s: key((s["task"], s["robot"], "")))


# ------------------------------------------------------------------------------ the suite
def scores(rows: list[dict[str, str]]) -> dict[str, list[float]]:
    """Success per seed of each task-robot pair, the IQM's input. One policy per pair: a
    pair with rows of two policies raises ValueError naming them (keep the suite's baseline
    in learned.csv, and other policies elsewhere)."""
    out: dict[str, list[float]] = {}
    seen: dict[str, str] = {}
    for (task, robot, policy), group in groups(rows).items():
        name = f"{task} ({robot})"
        if name in seen:
            raise ValueError(f"{name} has rows of two policies, {seen[name]!r} and "
                             f"{policy!r}: the suite's IQM takes one per task and robot")
        seen[name] = policy
        out[name] = [float(r["success"]) for r in group]
    return out


def suite(rows: list[dict[str, str]]) -> dict[str, Any] | None:
    """The IQM of success over task-robot pairs x seeds with its 95 % stratified bootstrap
    interval (None without rows)."""
    from push_envs.baselines import stats

    s = scores(rows)
    return stats.interval(s, reps=REPS, seed=SEED, use_rliable=False) if s else None


def suite_line(result: dict[str, Any]) -> str:
    return (f"IQM of success over {result['tasks']} task-robot pairs x seeds "
            f"({result['runs']} runs): **{100 * result['iqm']:.1f} %** (95 % stratified "
            f"bootstrap interval {100 * result['lo']:.1f}-{100 * result['hi']:.1f} %, "
            f"{result['reps']:,} resamples)")


# ------------------------------------------------------------------------------ the page
def _pct(v: str) -> str:
    return f"{100 * float(v):.1f}"


def _steps(v: str) -> str:
    if not v:
        return "-"
    n = float(v)
    return f"{n / 1e6:.3g} M" if n >= 1e6 else f"{n / 1e3:.3g} k" if n >= 1e3 else f"{n:g}"


def _clock(v: str) -> str:
    if not v:
        return "-"
    s = float(v)
    return f"{s:.0f} s" if s < 600 else f"{s / 60:.1f} min"


def _to_floor(r: dict[str, str]) -> str:
    """A row's wall clock to floor with its env steps, e.g. ``14 s (1.02 M)``; ``-`` when
    the run did not record one, ``not reached`` when it recorded a floor it never met."""
    if r.get("floor_wall_clock_s"):
        return f"{_clock(r['floor_wall_clock_s'])} ({_steps(r.get('floor_env_steps', ''))})"
    return "not reached" if r.get("floor") else "-"


HEAD = """<!-- generated by docs/_scripts/results.py from docs/data/*.csv; do not edit -->

# Training results

Every table and figure on this page is generated by `python docs/_scripts/results.py` from the
files in `docs/data/`: the learned baselines from `learned.csv`, the scripted experts from
`experts.csv`, the learning curves from `curves.csv`. The recipes, and how to train, export
and evaluate an agent, are in [training](training.md); how the recipes were found, in
[history](history.md).
"""


def page(rows: list[dict[str, str]], result: dict[str, Any] | None, figure: bool,
         experts: list[dict[str, str]] | None = None,
         figures: list[str] | None = None) -> str:
    """The whole of docs/training_results.md: the learned baselines of ``rows`` (with the
    suite's ``result`` and, if ``figure``, the performance profile), the scripted experts
    (default: :data:`EXPERTS`' rows) and the learning-curve figures (default: those
    :data:`CURVES` has rows of)."""
    experts = _read(EXPERTS) if experts is None else experts
    figures = curve_figures() if figures is None else figures
    lines = [HEAD, "## Learned baselines", ""]
    if not rows:
        lines += ["No agent has been evaluated under this protocol yet. Export a run "
                  "(`python -m train.export <run folder>`), evaluate it (`python -m "
                  "push_envs.baselines evaluate <id or .npz> --csv docs/data/learned.csv`) "
                  "and rerun `python docs/_scripts/results.py`.", ""]
    else:
        lines += _learned(rows, result, figure)
    lines += _experts(experts) + _curves(figures)
    return "\n".join(lines).rstrip() + "\n"


def _learned(rows: list[dict[str, str]], result: dict[str, Any] | None,
             figure: bool) -> list[str]:
    lines = ["Each training seed's final agent on 500 fresh episodes (env i seeded 100000 + i, "
             "disjoint from every training seed), with the 95 % Wilson interval of its "
             "success; the interquartile mean over task-robot pairs x seeds with a 95 % "
             "stratified bootstrap interval and the performance profile (rliable's "
             "estimators). For PushT-v0 also the final and the highest coverage over the "
             "episode, and success at a coverage of at least 0.95 (gym-pusht's test) and at "
             "least 0.90 (ManiSkill's). How a row is made: [training]"
             "(training.md#pretrained-agents-export-evaluate-report).", "",
             f"**The suite.** {suite_line(result)}.", ""]
    if figure:
        lines += [f"![Performance profile: the fraction of runs above each success rate]"
                  f"({FIGURE_REF})", ""]
    lines += ["Wall clock to floor: the first evaluation of the training run (100 episodes, "
              "the warm start's clone included) at or above the task's floor, with the "
              "wall clock since the command started and PPO's env steps then; `-` for a run "
              "that predates the record (train/time_to_floor.py). PushT-v0 reaches its floor "
              "in the DAgger stage of its recipe, before the residual PPO starts: its rows "
              "give the DAgger run of their base (seed 0, the base of all three), its own "
              "episodes of each round an evaluation and the env steps those played, the "
              "expert's included, timed by the same command run again "
              "with `--stop-at-floor` ([training](training.md#push-t-by-dagger-traindaggerpy)"
              ").", "",
              "| task | robot | policy | seed | success (95 % Wilson) | episodes | mean length "
              "| env steps | wall clock | wall clock to floor |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    grouped = groups(rows)
    for (task, robot, policy), group in grouped.items():
        for r in group:
            lines.append(f"| {task} | {robot} | {policy} | {r['seed']} | **{_pct(r['success'])}"
                         f" %** ({_pct(r['wilson_lo'])}-{_pct(r['wilson_hi'])}) | "
                         f"{r['episodes']} | {float(r['mean_length']):.0f} | "
                         f"{_steps(r['env_steps'])} | {_clock(r['wall_clock_s'])} | "
                         f"{_to_floor(r)} |")
    cov = [r for r in rows if r.get("final_coverage")]
    if cov:
        lines += ["", "Push-T by each paper's measure (the same episodes; success at 0.90 on "
                  "a second play with the task's `coverage_threshold=0.90`):", "",
                  "| task | robot | policy | seed | final coverage | max coverage | "
                  "success at coverage >= 0.95 | success at coverage >= 0.90 |",
                  "|---|---|---|---|---|---|---|---|"]
        for (task, robot, policy), group in grouped.items():
            for r in group:
                if not r.get("final_coverage"):
                    continue
                lines.append(
                    f"| {task} | {robot} | {policy} | {r['seed']} | "
                    f"{float(r['final_coverage']):.3f} | {float(r['max_coverage']):.3f} | "
                    f"{_pct(r['success_cov95'])} % ({_pct(r['wilson_lo'])}-"
                    f"{_pct(r['wilson_hi'])}) | {_pct(r['success_cov90'])} % "
                    f"({_pct(r['cov90_wilson_lo'])}-{_pct(r['cov90_wilson_hi'])}) |")
    inside = [r for r in rows if r.get("final_fraction_inside")]
    if inside:
        lines += ["", "Sweep-v1's progress short of success: the fraction of the pucks inside the "
                  "circle at the end of the episodes (the same episodes; success needs "
                  "`success_fraction`, 90 %, inside at once):", "",
                  "| task | robot | policy | seed | inside at the end | success (95 % Wilson) |",
                  "|---|---|---|---|---|---|"]
        for (task, robot, policy), group in grouped.items():
            for r in group:
                if r.get("final_fraction_inside"):
                    lines.append(
                        f"| {task} | {robot} | {policy} | {r['seed']} | "
                        f"{_pct(r['final_fraction_inside'])} % | {_pct(r['success'])} % "
                        f"({_pct(r['wilson_lo'])}-{_pct(r['wilson_hi'])}) |")
    lines += ["", "Commands (S: the seed; each row's own command is in the CSV):", "",
              "| task | robot | policy | training | evaluation |", "|---|---|---|---|---|"]
    for (task, robot, policy), group in grouped.items():
        lines.append(f"| {task} | {robot} | {policy} | `{_command(group)}` | "
                     f"`{_command(group, 'eval_command')}` |")
    lines += ["", "Env steps and wall clock: the training run's, as its `result.json` records "
              "them (train.train: the whole command; train.dagger: the training), on the "
              "project's 2-core machine, usually beside other runs. Task arguments other than "
              "the defaults: "
              + (", ".join(f"{k[0]} ({k[1]}) {v}" for k, v in _kwargs(rows).items()) or
                 "none") + ".", ""]
    return lines


def _experts(rows: list[dict[str, str]]) -> list[str]:
    """The scripted experts' table, in registry order."""
    if not rows:
        return []
    order = task_order()
    rows = sorted(rows, key=lambda r: (order.index(r["task"]) if r["task"] in order
                                       else len(order), r["task"], r["robot"]))
    seeds = sorted({r["seed"] for r in rows})
    lines = ["## Scripted experts", "",
             "Each task's scripted expert (`push_envs.experts`), on fresh episodes (env i of the "
             f"batch seeded {' or '.join(seeds)} + i):", "",
             "| task | robot | success (95 % Wilson) | episodes | mean length | command |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['task']} | {r['robot']} | **{_pct(r['success'])} %** "
                     f"({_pct(r['wilson_lo'])}-{_pct(r['wilson_hi'])}) | {r['episodes']} | "
                     f"{float(r['mean_length']):.0f} | `{r['command']}` |")
    return lines + [""]


def curve_figures(path: Path | None = None) -> list[str]:
    """The figures of ``curves.FIGURES`` that the curves CSV (default :data:`CURVES`) has
    rows of, in that table's order."""
    import curves

    have = {r["figure"] for r in _read(CURVES if path is None else path)}
    return [name for name in curves.FIGURES if name in have]


def _curves(names: list[str]) -> list[str]:
    """The learning-curve figures' section."""
    if not names:
        return []
    import curves

    lines = ["## Learning curves", "",
             "Periodic evaluations during training (EvalCallback: 100 episodes on seeds "
             "seed + 10000, deterministic actions): against env steps, a line is the mean "
             "over a run's seeds, the band one standard deviation across them. "
             "`python docs/_scripts/curves.py plot` draws them from `docs/data/curves.csv`; "
             "the runs' raw logs are on the "
             "`data/curves` branch ([training](training.md#learning-curves)).", ""]
    for name in names:
        fig = curves.FIGURES[name]
        lines += [f"### {fig.title}", ""] + ([fig.note, ""] if fig.note else []) + \
            [f"![{fig.alt}](_static/training/{name})", ""]
    return lines


def _kwargs(rows: list[dict[str, str]]) -> dict[tuple[str, str], str]:
    """Each task-robot pair's task arguments other than ``robot`` (as JSON), where any."""
    out = {}
    for r in rows:
        kw = {k: v for k, v in json.loads(r.get("env_kwargs") or "{}").items() if k != "robot"}
        if kw:
            out[(r["task"], r["robot"])] = json.dumps(kw, sort_keys=True)
    return out


def plot(result_rows: list[dict[str, str]], path: Path | None = None) -> None:
    """The performance profile (score distribution over runs, with its bootstrap band)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from push_envs.baselines import stats

    prof = stats.profile(scores(result_rows), seed=SEED, use_rliable=False)
    fig, ax = plt.subplots(figsize=(5.0, 3.4), dpi=120)
    ax.fill_between(prof["taus"], prof["lo"], prof["hi"], step="post", alpha=0.25,
                    color="C0", lw=0)
    ax.step(prof["taus"], prof["fraction"], where="post", color="C0", lw=2)
    ax.set_xlabel("success rate τ")
    ax.set_ylabel("fraction of runs with success > τ")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    n = len(result_rows)
    ax.set_title(f"Learned baselines: performance profile ({n} runs)", fontsize=10)
    fig.tight_layout()
    path = FIGURE if path is None else path
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


def report(csv_path: Path | None = None, page_path: Path | None = None,
           figure: Path | None = None) -> dict[str, Any] | None:
    """Write the results page (and the figure, when there are rows) from ``csv_path``
    (defaults: :data:`LEARNED`, :data:`PAGE`, :data:`FIGURE`); returns the suite's IQM and
    interval (None without rows)."""
    page_path = PAGE if page_path is None else page_path
    figure = FIGURE if figure is None else figure
    rows = read_rows(csv_path)
    result = suite(rows)
    if rows:
        plot(rows, figure)
    page_path.parent.mkdir(parents=True, exist_ok=True)
    text = page(rows, result, figure=bool(rows))
    if not page_path.exists() or page_path.read_text() != text:
        page_path.write_text(text)
    return result


def main() -> None:
    result = report()
    print(f"wrote {PAGE.relative_to(ROOT)}" + (f" and {FIGURE.relative_to(ROOT)}; "
                                                 f"{suite_line(result)}" if result else ""))
    import readme_tables
    import task_pages

    print("README.md rewritten" if readme_tables.update() else "README.md already up to date")
    for p in task_pages.generate():
        print("wrote", p.relative_to(ROOT))


if __name__ == "__main__":
    main()
