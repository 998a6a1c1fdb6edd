"""Placeholder task pages: docs/tasks/index.md and docs/tasks/<id>.md for every registered id.

    PYTHONPATH=. python docs/_scripts/task_stubs.py

The real task pages are generated from each task's declaration (``TaskSpec``) and docstring
by the task-page generator, which overwrites these files. Until it runs, each stub holds the
task's pictures and ``make`` id, so every link of the site resolves and ``sphinx-build -W``
passes. Only a file that is still a stub (it carries ``STUB_MARK``) is rewritten.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent
TASKS = DOCS / "tasks"
STUB_MARK = "<!-- task page stub (docs/_scripts/task_stubs.py): the generator replaces it -->"

# The episode shown beside the first frame, and who plays it.
EPISODE = {
    "PushBox-v0": ("PushBox-v0.gif", "PPO agent"),
    "WallSlide-v0": ("WallSlide-v0.gif", "PPO agent"),
    "PushT-v0": ("PushT-v0-dagger.gif", "DAgger agent"),
    "PushMulti-v0": ("PushMulti-v0-ppo.gif", "warm start + PPO agent"),
    "PushClutter-v0": ("PushClutter-v0-ppo.gif", "DAgger warm start + PPO agent"),
    "Sweep-v0": ("Sweep-v0-scripted.gif", "scripted sweeper"),
    "CoopPush-v0": ("CoopPush-v0-scripted.gif", "scripted team"),
    "PushMaze-v0": ("PushMaze-v0-scripted.gif", "scripted policy"),
}


def stub(env_id: str) -> str:
    rows = [f"| first frame | {EPISODE[env_id][1]} |" if env_id in EPISODE
            else "| first frame |", "|---|---|" if env_id in EPISODE else "|---|"]
    cells = [f"![{env_id}, first frame](../_static/tasks/{env_id}.png)"]
    if env_id in EPISODE:
        gif, who = EPISODE[env_id]
        cells.append(f"![{env_id}, {who}](../_static/tasks/{gif})")
    rows.append("| " + " | ".join(cells) + " |")
    table = "\n".join(rows)
    return f"""{STUB_MARK}

# {env_id}

:::{{note}}
This page is generated from the task's declaration (`TaskSpec`) and its docstring: the
action and observation spaces, the observation table with units, rewards, success,
termination and truncation, the arguments with their defaults, the expert's and the trained
baseline's success with the commands that reproduce them, and the version history. Until the
generator has run, it holds only the pictures and the `make` id.
:::

{table}

```python
import gymnasium as gym
import push_envs  # registers the ids

env = gym.make("{env_id}")                       # one env
envs = gym.make_vec("{env_id}", num_envs=1024)   # a native batch
```
"""


def index(ids: list[str]) -> str:
    entries = "\n".join(ids)
    lines = "\n".join(f"| [{i}]({i}.md) | ![{i}](../_static/tasks/{i}.png) |" for i in ids)
    return f"""{STUB_MARK}

# Tasks

Every task is registered with Gymnasium under its id, with a single-env entry point
(`gym.make`) and a native batched one (`gym.make_vec`). Each task's page is generated from its
declaration.

| id | first frame |
|---|---|
{lines}

```{{toctree}}
:hidden:

{entries}
```
"""


def main() -> None:
    sys.path.insert(0, str(DOCS.parent))
    import push_envs

    ids = list(push_envs.ENV_IDS)
    TASKS.mkdir(parents=True, exist_ok=True)
    pages = {TASKS / "index.md": index(ids)}
    pages.update({TASKS / f"{i}.md": stub(i) for i in ids})
    for path, text in pages.items():
        if path.exists() and STUB_MARK not in path.read_text():
            print(f"kept {path} (not a stub)")
            continue
        path.write_text(text)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
