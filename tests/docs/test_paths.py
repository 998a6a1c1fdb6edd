"""Paths in the prose point at files that exist.

Markdown pages, Python comments and docstrings, and the comments of YAML and TOML files name
files of the repository (``push_envs/...``, ``docs/...``, ``tests/...``, ``train/...``,
``benchmarks/...``). Each such path must exist in the checkout; a placeholder (``<id>``,
``{name}``, ``*``) must match at least one file. A path that names no file of the checkout
on purpose (a build folder, a Minari dataset id) is in :data:`NOT_FILES`. The changelog keeps
the paths of its time and is not read.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PREFIXES = ("push_envs", "docs", "tests", "train", "benchmarks")
PATH = re.compile(r"(?<![\w./~-])((?:" + "|".join(PREFIXES) + r")/(?:[\w./*{}\-]|<[^>\n]*>)*)")
# Paths that name no file of the checkout on purpose.
NOT_FILES = (
    re.compile(r"docs/_build(/|$)"),  # the docs build's output folder
    re.compile(r"push_envs/[A-Z]\w*-v\d+(/|$)"),  # a Minari dataset id's namespace
)
SKIP_FILES = {"CHANGELOG.md"}  # a record of its time: its paths are the paths of then
SKIP_DIRS = {".git", "_build", "__pycache__", "runs", ".pytest_cache", ".ruff_cache"}


def python_prose(source: str) -> list[str]:
    """The comment and docstring lines of a Python source."""
    lines = [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline)
             if t.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            lines += doc.splitlines() if doc else []
    return lines


def prose(path: Path) -> list[str]:
    """The lines of ``path`` that are prose: all of a Markdown page, the comments and
    docstrings of Python, the comments of YAML and TOML."""
    if path.suffix == ".md":
        return path.read_text().splitlines()
    if path.suffix == ".py":
        return python_prose(path.read_text())
    if path.suffix in (".yaml", ".yml", ".toml"):
        return [line.partition("#")[2] for line in path.read_text().splitlines() if "#" in line]
    return []


def files(root: Path = ROOT) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not SKIP_DIRS.intersection(rel.parts) \
                and not any(p.endswith(".egg-info") for p in rel.parts) \
                and rel.as_posix() not in SKIP_FILES:
            yield path


def missing(lines: list[str], root: Path = ROOT) -> list[str]:
    """The repository paths named in ``lines`` that match no file or folder under ``root``."""
    out = []
    for line in lines:
        for m in PATH.finditer(line):
            path = m.group(1).split("::")[0].rstrip(".,:;)'`\"/")
            if any(p.match(path) for p in NOT_FILES):
                continue
            pattern = re.sub(r"<[^>]*>|\{[^}]*\}", "*", path)
            found = any(root.glob(pattern)) if "*" in pattern else (root / pattern).exists()
            if not found:
                out.append(path)
    return out


def test_every_path_in_the_prose_exists():
    stale = [f"{path.relative_to(ROOT)}: {p}" for path in files()
             for p in missing(prose(path))]
    assert not stale, stale


def test_the_check_finds_a_stale_path(tmp_path):
    (tmp_path / "docs" / "tasks").mkdir(parents=True)
    (tmp_path / "docs" / "tasks" / "PushBox-v0.md").write_text("")
    source = ('"""See docs/tasks/<id>.md and tests/envs/test_vector.py."""\n'
              "x = 'docs/not_prose.md'  # and push_envs/envs/codegen.py, docs/_build/html\n"
              "# push_envs/PushBox-v0/scripted-v0 is a dataset id\n")
    assert sorted(missing(python_prose(source), tmp_path)) == [
        "push_envs/envs/codegen.py", "tests/envs/test_vector.py"]
    yaml = tmp_path / "scene.yaml"
    yaml.write_text("world:  # see push_envs/envs/floor_plans.py\n  width: 4.0\n")
    assert missing(prose(yaml), tmp_path) == ["push_envs/envs/floor_plans.py"]
