"""README.md is a front page: short, no dated logs, the task table generated from the task
declarations, and the test command exactly what CI runs."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_the_readme_is_a_front_page():
    assert len(README.splitlines()) <= 300
    # No commit hashes and no dated log entries.
    assert not re.search(r"\b[0-9a-f]{7,40}\b", README.replace("0o700", ""))
    assert not re.search(r"\b\d{1,2} (Nov|Dec|Jan)\b|\b20\d\d-\d\d-\d\d\b", README)


def test_the_task_table_is_generated_from_the_declarations():
    sys.path.insert(0, str(ROOT / "docs" / "_scripts"))
    import readme_tables

    head, _, rest = README.partition(readme_tables.BEGIN)
    table, _, _ = rest.partition(readme_tables.END)
    assert table.strip() == readme_tables.task_table().strip()
    import push_envs

    for env_id in push_envs.ENV_IDS:
        assert f"[{env_id}](docs/tasks/{env_id}.md)" in table


def test_ci_runs_the_readmes_test_command_exactly():
    commands = re.findall(r"```bash\n(.*?)\n```", README, re.S)
    assert commands[0] == ('pip install torch==2.13.0 && pip install -e ".[train]" && '
                           "python -m train.train")
    test_command = commands[1]
    assert "python -m pytest" in test_command
    assert test_command in (ROOT / ".ci" / "run").read_text().splitlines()
