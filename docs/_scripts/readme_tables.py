"""The README's task table, generated from the task declarations and the results data.

    python docs/_scripts/readme_tables.py          # rewrite the table in README.md

The table sits between ``<!-- tasks:begin -->`` and ``<!-- tasks:end -->``: each task's
episode GIF (a learned agent where there is one, else the expert; else its first frame),
its one-line description (the first line of its docstring), its episode length,
its scripted expert's success (``docs/data/experts.csv``) and its learned baselines' mean
success over seeds (``results.summaries``: ``docs/data/learned.csv``, else the older
``docs/data/baselines.csv``), then the suite's IQM when learned.csv has rows.
``python docs/_scripts/results.py`` runs this too. ``tests/docs/test_readme.py`` checks that
README.md holds exactly what this writes.
"""

from __future__ import annotations

import csv
import inspect
import sys
from collections.abc import Callable
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
README = ROOT / "README.md"
BEGIN, END = "<!-- tasks:begin -->", "<!-- tasks:end -->"


def _rows(name: str) -> list[dict[str, str]]:
    path = DOCS / "data" / name
    if not path.exists():
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def task_table() -> str:
    """The Markdown table of the registered tasks."""
    sys.path.insert(0, str(ROOT))
    import results

    import push_envs
    from push_envs.tasks import spec

    experts: dict[str, list[dict]] = {}  # every drive's expert of a task, in file order
    for r in _rows("experts.csv"):
        experts.setdefault(r["task"], []).append(r)
    learned: dict[str, list[dict]] = {}
    for r in results.summaries():
        learned.setdefault(r["task"], []).append(r)
    floors = _floor_clocks(results.read_rows(), results._clock)
    lines = ["| task | | what | scripted expert | learned baseline (mean over seeds) "
             "| wall clock to floor (seeds) |",
             "|---|---|---|---|---|---|"]
    for env_id in push_envs.ENV_IDS:
        s = spec(env_id)
        lead = inspect.cleandoc(s.env_class.__doc__).splitlines()[0]
        gif = next((f"{env_id}{k}.gif" for k in ("-dagger", "-ppo", "", "-scripted")
                    if (DOCS / "_static" / "tasks" / f"{env_id}{k}.gif").exists()), None)
        shown = gif or f"{env_id}.png"
        pic = f'<img src="docs/_static/tasks/{shown}" width="150" alt="{env_id}">'
        ex = "; ".join(f"{100 * float(e['success']):.0f} % ({e['robot']})"
                       for e in experts.get(env_id, [])) or "-"
        base, clocks = [], []
        for r in learned.get(env_id, []):
            seeds = r["success_per_seed"]
            base.append(f"{100 * sum(seeds) / len(seeds):.0f} % ({r['robot']}, {r['policy']})")
            clock = floors.get((env_id, r["robot"], r["policy"]))
            if clock:
                clocks.append(f"{clock} ({r['robot']})")
        link = f"[{env_id}](docs/tasks/{env_id}.md)"
        lines.append(f"| {link} | {pic} | {lead} {s.max_episode_steps} steps. | {ex} | "
                     f"{'; '.join(base) or '-'} | {'; '.join(clocks) or '-'} |")
    suite = results.suite(results.read_rows())
    if suite is not None:
        lines += ["", f"Learned baselines, on fresh evaluation episodes: "
                      f"{results.suite_line(suite)} ([results](docs/training_results.md))."]
    return "\n".join(lines)


def _floor_clocks(rows: list[dict[str, str]], clock: Callable[[str], str]
                  ) -> dict[tuple[str, str, str], str]:
    """Each (task, robot, policy)'s wall clock to floor over its seeds (the rows of
    ``results.read_rows``), e.g. ``55 s to 144 s``; a seed that recorded a floor it never met
    reads ``not reached``. Pairs whose runs predate the record are left out. ``clock``
    formats seconds as the results page does (``results._clock``), so the tables read alike."""
    out: dict[tuple[str, str, str], list[str]] = {}
    for r in rows:
        if r.get("floor"):
            out.setdefault((r["task"], r["robot"], r["policy"]), []).append(
                r.get("floor_wall_clock_s") or "")
    text = {}
    for key, clocks in out.items():
        met = sorted((c for c in clocks if c), key=float)
        lo, hi = (clock(met[0]), clock(met[-1])) if met else ("", "")
        span = lo if lo == hi else f"{lo} to {hi}"  # one figure when the seeds' read alike
        missed = len(clocks) - len(met)
        text[key] = ", ".join(x for x in (span, f"{missed} not reached" if missed else "")
                              if x)
    return text


def update(path: Path = README) -> bool:
    """Rewrite the table in ``path``; returns whether the file changed."""
    text = path.read_text()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    new = f"{head}{BEGIN}\n{task_table()}\n{END}{tail}"
    if new == text:
        return False
    path.write_text(new)
    return True


if __name__ == "__main__":
    print("README.md rewritten" if update() else "README.md already up to date")
