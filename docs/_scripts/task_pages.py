"""The task pages: docs/tasks/<id>.md for every registered task, generated from its
declaration (TaskSpec) and its docstring, never written by hand.

    python docs/_scripts/task_pages.py            # also run by docs/conf.py at every build

Each page: the first frame and an episode, a table of the ``make`` id, the action and
observation spaces, the episode length and the robots; the docstring's sections (the
observation table with units, rewards, success, episode end, the arguments with their
defaults, the version history); the scripted expert's and the learned baseline's success with
the command that reproduces each (``docs/data/experts.csv``; ``docs/data/learned.csv``
through ``results.summaries``, else the older ``docs/data/baselines.csv``).
"""

from __future__ import annotations

import csv
import inspect
import re
import sys
from pathlib import Path

import numpy as np

DOCS = Path(__file__).resolve().parent.parent
TASKS = DOCS / "tasks"
STATIC = DOCS / "_static" / "tasks"
DATA = DOCS / "data"
# Episode GIFs in order of preference (a learned agent first), by file-name suffix.
EPISODE_KINDS = (("-dagger", "DAgger agent"), ("-ppo", "PPO agent"), ("", "trained agent"),
                 ("-scripted", "scripted expert"))


def _rows(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _space(low: np.ndarray, high: np.ndarray) -> str:
    lo = "-inf" if np.all(np.isinf(low)) else f"{low.min():g}"
    hi = "inf" if np.all(np.isinf(high)) else f"{high.max():g}"
    return f"Box({lo}, {hi}, ({low.shape[0]},), float32)"


def _episode(env_id: str) -> tuple[str, str] | None:
    for suffix, who in EPISODE_KINDS:
        if (STATIC / f"{env_id}{suffix}.gif").exists():
            return f"{env_id}{suffix}.gif", who
    return None


# A list item's first line: a marker ("-", "*", "+", "1." or "1)") and its text.
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
_HEADING = re.compile(r"^#{1,6}\s")


def reflow(lines: list[str]) -> list[str]:
    """Docstring prose as Markdown that does not depend on where the docstring wraps.

    Each paragraph and each list item becomes one line. Markdown lets a list item interrupt
    a paragraph, so a wrapped line that happens to start with ``- 0.01`` would become a list
    item and split the inline code around it; here a line opens a list item only where the
    docstring opens one: after a blank line, a heading or another item. Any other line
    continues the paragraph or item before it. A heading or a table starts after a blank
    line (or a heading); fenced code passes through as it is.
    """
    out: list[str] = []
    kind = "blank"  # what the last line written is: blank, heading, table, para, item, fence
    for raw in lines:
        line = raw.rstrip()
        text = line.strip()
        if kind == "fence":
            out.append(line)
            kind = "para" if text.startswith("```") else "fence"
        elif text.startswith("```") and kind in ("blank", "heading"):
            out.append(line)
            kind = "fence"
        elif not text:
            out.append("")
            kind = "blank"
        elif text.startswith("|") and kind in ("blank", "heading", "table"):
            out.append(line)
            kind = "table"
        elif _HEADING.match(line) and kind in ("blank", "heading"):
            out.append(line)
            kind = "heading"
        elif _ITEM.match(line) and kind in ("blank", "heading", "item"):
            out.append(text)
            kind = "item"
        elif kind in ("para", "item"):
            out[-1] += " " + text
        else:  # a paragraph's first line (after a table, a blank line keeps it out of it)
            out += ([""] if kind == "table" else []) + [text]
            kind = "para"
    return out


def _doc_body(cls_doc: str) -> str:
    """The env class docstring (already filled from the TaskSpec) as page Markdown: its first
    line is the page's lead, its ``## `` sections follow, each paragraph one line
    (:func:`reflow`)."""
    lines = cls_doc.strip("\n").splitlines()
    # The docstrings indent their prose by 4 and hold the generated tables at column 0:
    # Markdown would read the indented prose as code, so the prose loses its indent.
    return "\n".join(reflow([line[4:] if line.startswith("    ") else line
                              for line in lines]))


def _baselines(spec: type, experts: list[dict], learned: list[dict]) -> str:
    rows = ["| policy | robot | success | episodes | command |", "|---|---|---|---|---|"]
    for r in experts:
        if r["task"] != spec.id:
            continue
        pct = 100 * float(r["success"])
        rows.append(f"| scripted expert | {r['robot']} | **{pct:.1f} %** (95 % Wilson "
                    f"{100 * float(r['wilson_lo']):.1f}-{100 * float(r['wilson_hi']):.1f} %) "
                    f"| {r['episodes']} | `{r['command']}` |")
    for r in learned:
        if r["task"] != spec.id:
            continue
        seeds = r["success_per_seed"]
        if r["intervals"] is not None:  # docs/data/learned.csv: each seed's Wilson interval
            per = "; ".join(f"seed {k}: {100 * v:.1f} % ({100 * lo:.1f}-{100 * hi:.1f})"
                            for k, v, (lo, hi) in zip(r["seeds"], seeds, r["intervals"],
                                                      strict=True))
            per = f"{per}; 95 % Wilson"
        else:
            per = "seeds " + " / ".join(f"{100 * v:.0f}" for v in seeds) + " %"
        what = f"{r['policy']} ({r['configuration']})" if r["configuration"] else r["policy"]
        rows.append(f"| {what} | {r['robot']} | **{100 * np.mean(seeds):.1f} %** ({per}) | "
                    f"{r['episodes_per_seed']} per seed | `{r['command']}` |")
    if len(rows) == 2:
        return ""
    return "\n".join(["## Baselines", "", *rows, "",
                      "The expert's rates come from `docs/data/experts.csv`, the learned ones "
                      "from `docs/data/learned.csv` (500 fresh episodes per seed), else the "
                      "older `docs/data/baselines.csv` (100 per seed); see [training results]"
                      "(../training_results.md)."])


def page(spec: type, experts: list[dict], learned: list[dict]) -> str:
    from push_envs.core import obs_layout as L

    task = spec(spec.resolve_args({}))
    layout = task.observation()
    low, high = L.bounds(layout, task.args)
    n_act = 2 * len(spec.driven_bodies())
    robots = ", ".join(f"{r} (default)" if r == spec.default_robot else r
                       for r in ("diff", "omni", "acker"))
    lines = [f"# {spec.id}", ""]
    pictures = [f"![{spec.id}, first frame](../_static/tasks/{spec.id}.png)"]
    heads = ["first frame"]
    ep = _episode(spec.id)
    if ep:
        heads.append(ep[1])
        pictures.append(f"![{spec.id}, {ep[1]}](../_static/tasks/{ep[0]})")
    lines += ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads),
              "| " + " | ".join(pictures) + " |", ""]
    lines += ["| | |", "|---|---|",
              f"| make | `gym.make(\"{spec.id}\")`, `gym.make_vec(\"{spec.id}\", "
              "num_envs=N)` |",
              f"| action space | `Box(-1.0, 1.0, ({n_act},), float32)` |",
              f"| observation space | `{_space(low, high)}` (default arguments, "
              "`obs_mode=\"state\"`) |",
              f"| episode length | {spec.max_episode_steps} steps |",
              f"| robots | {robots} |",
              f"| source | `{spec.__module__}` |", ""]
    lines.append(_doc_body(spec.env_class.__doc__))
    base = _baselines(spec, experts, learned)
    if base:
        lines += ["", base]
    return "\n".join(lines).rstrip() + "\n"


def generate(out: Path = TASKS) -> list[Path]:
    """Write every task's page and the index; returns the paths written (unchanged files
    are left alone, so a build does not see them as new)."""
    sys.path.insert(0, str(DOCS.parent))
    import results

    import push_envs
    from push_envs.tasks import spec

    experts = _rows(DATA / "experts.csv")
    learned = results.summaries()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    index = ["# Tasks", "", "Every page below is generated from the task's declaration "
             "(its `TaskSpec`) and docstring.", "", "| task | what | episode |",
             "|---|---|---|"]
    for env_id in push_envs.ENV_IDS:
        s = spec(env_id)
        lead = inspect.cleandoc(s.env_class.__doc__).splitlines()[0]
        index.append(f"| [{env_id}]({env_id}.md) | {lead} | {s.max_episode_steps} steps |")
        written += _write(out / f"{env_id}.md", page(s, experts, learned))
    toc = ["", "```{toctree}", ":hidden:", "", *push_envs.ENV_IDS, "```", ""]
    written += _write(out / "index.md", "\n".join(index + toc))
    return written


def _write(path: Path, text: str) -> list[Path]:
    if path.exists() and path.read_text() == text:
        return []
    path.write_text(text)
    return [path]


if __name__ == "__main__":
    for p in generate():
        print("wrote", p)
    # a stale page of an id that is no longer registered would still be built
    import push_envs

    stale = [p for p in TASKS.glob("*.md")
             if p.stem not in push_envs.ENV_IDS and p.name != "index.md"]
    for p in stale:
        print("stale (remove it):", p)
