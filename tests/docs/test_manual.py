"""The docs are a manual, not a lab notebook: no dated folder or file under docs/, a results page
and a history of bounded length, and hyperparameter files that hold settings and one-line
reasons (the notes live in docs/training.md and docs/history.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import push_envs
from push_envs.tasks import spec

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
DATED = re.compile(r"(19|20)\d\d-?[01]\d-?[0-3]\d")  # 2026-12-04, 20261204


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def comment_lines(text: str) -> int:
    """The lines of a YAML text that hold a comment (alone or after a value)."""
    return sum(1 for line in text.splitlines()
               if line.lstrip().startswith("#") or re.search(r"\s#", line))


def test_no_dated_folder_or_file_under_docs():
    dated = [p.relative_to(ROOT).as_posix() for p in DOCS.rglob("*")
             if DATED.search(p.name) and "_build" not in p.relative_to(DOCS).parts]
    assert not dated, dated


def test_the_results_page_and_the_history_are_short():
    assert _lines(DOCS / "training_results.md") <= 400
    assert _lines(DOCS / "history.md") <= 150
    assert "## " in (DOCS / "history.md").read_text()


@pytest.mark.parametrize("env_id", push_envs.ENV_IDS)
def test_a_hyperparameter_file_holds_settings_and_short_reasons(env_id):
    path = spec(env_id).hyperparams_path()
    if path is None:
        pytest.skip(f"{env_id} declares no hyperparameter file")
    assert comment_lines(path.read_text()) <= 40, path


def test_the_comment_count_sees_inline_comments():
    assert comment_lines("# a\nppo:\n  gamma: 0.98  # why\n  x: 'a#b'\n  # c\n") == 3
