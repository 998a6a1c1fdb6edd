"""The documentation site builds offline with warnings as errors (``sphinx-build -W``), writes
only into its output folder, and its generated task pages render as written.

A broken cross-reference, a missing picture, a page left out of every toctree, a docstring
that does not parse or an include that moved all fail the build. The build must not touch the
network: the configuration loads no intersphinx inventory, and the build runs with its proxy
pointed at a closed local port, so any fetch would fail (and, under ``-W``, fail the test).

The task pages are Markdown generated from the task docstrings (docs/_scripts/task_pages.py)
and committed. The fast checks read the generated Markdown; the site's checks read the HTML
the build made of it: no backtick outside code (inline code that fell apart) and no list
item that the docstring did not open as one (a wrapped line read as a list item).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_scripts"))

import task_pages  # noqa: E402

import push_envs  # noqa: E402
from push_envs.tasks import spec  # noqa: E402

BUDGET_S = 60.0  # the build takes a few seconds; a minute means something is wrong


# ------------------------------------------------------------------ the generated Markdown
def _code_spans_close(paragraph: str) -> bool:
    """Whether every code span of a Markdown paragraph closes: a run of n backticks opens
    one, the next run of exactly n closes it (runs of other lengths inside are literal)."""
    open_run = 0
    for run in re.findall(r"`+", paragraph):
        if not open_run:
            open_run = len(run)
        elif len(run) == open_run:
            open_run = 0
    return open_run == 0


def _paragraphs(markdown: str) -> list[str]:
    """The prose paragraphs of a page (not tables, headings or fenced code), each joined."""
    out, lines, fence = [], [], False
    for line in markdown.splitlines() + [""]:
        if line.startswith("```"):
            fence = not fence
        if fence or not line.strip() or line.startswith(("|", "#")):
            if lines:
                out.append(" ".join(lines))
            lines = []
            continue
        lines.append(line.strip())
    return out


def intended_items(docstring: str) -> list[str]:
    """The list items a docstring opens, each as its first line's text: a line starting with
    a list marker after a blank line, a heading or another item. A marker after a line of
    prose is wrapped prose, and the lines after an item's first continue it."""
    items, before = [], "blank"
    for line in docstring.splitlines():
        text = line.strip()
        m = re.match(r"(?:[-*+]|\d+[.)])\s+(\S.*)", text)
        if not text:
            before = "blank"
        elif m and before in ("blank", "heading", "item"):
            items.append(m[1])
            before = "item"
        elif text.startswith("#") and before in ("blank", "heading"):
            before = "heading"
        elif before != "item":
            before = "prose"
    return items


def test_a_wrapped_line_stays_in_its_paragraph():
    # The docstring's wrap put "- 0.01" at the start of a line: Markdown would open a list
    # there and cut the inline code in two.
    doc = ["## Rewards", "Dense: ``1.0 * a + 10 * success", "- 0.01`` per step.",
           "Sparse: 0 on success.", "", "Two tests:", "", "* ``\"pose\"``: within 2 cm and",
           "  5 deg;", "* ``\"coverage\"``: covers 0.95.", "", "| a | b |", "|---|---|",
           "After the table."]
    assert task_pages.reflow(doc) == [
        "## Rewards", "Dense: ``1.0 * a + 10 * success - 0.01`` per step. Sparse: 0 on success.",
        "", "Two tests:", "", "* ``\"pose\"``: within 2 cm and 5 deg;",
        "* ``\"coverage\"``: covers 0.95.", "", "| a | b |", "|---|---|", "", "After the table."]
    assert intended_items("\n".join(doc)) == ['``"pose"``: within 2 cm and',
                                              '``"coverage"``: covers 0.95.']
    assert not _code_spans_close("Dense: ``1.0 * a + 10 * success")
    assert _code_spans_close("Dense: ``1.0 * a + 10 * success - 0.01`` and `x` and ```y``` .")


@pytest.mark.parametrize("env_id", push_envs.ENV_IDS)
def test_a_task_page_has_only_the_lists_its_docstring_opens(env_id):
    s = spec(env_id)
    page = task_pages.page(s, [], [])
    items = [line for line in page.splitlines() if re.match(r"(?:[-*+]|\d+[.)])\s", line)]
    expected = intended_items(s.env_class.__doc__)
    assert len(items) == len(expected), (items, expected)
    for line, first in zip(items, expected, strict=True):
        assert line.split(None, 1)[1].startswith(first), (line, first)
    bad = [p for p in _paragraphs(page) if not _code_spans_close(p)]
    assert not bad, bad


def test_the_committed_task_pages_are_the_generators_output(tmp_path):
    task_pages.generate(tmp_path)
    made = {p.name: p.read_text() for p in tmp_path.glob("*.md")}
    committed = {p.name: p.read_text() for p in (DOCS / "tasks").glob("*.md")}
    assert sorted(committed) == sorted(made), "docs/tasks/ holds a page of no registered task " \
        "or lacks one: run python docs/_scripts/task_pages.py"
    stale = [name for name in made if made[name] != committed[name]]
    assert not stale, f"{stale} are stale: run python docs/_scripts/task_pages.py"


def test_the_committed_performance_page_is_the_scripts_output():
    import perf_page

    assert perf_page.PAGE.read_text() == perf_page.page(plot=False), \
        "docs/performance.md is stale: run python docs/_scripts/perf_page.py"


# ------------------------------------------------------------------------------ the site
def _tree(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and its content's hash, but the build's own folder and
    Python's bytecode caches (other test processes import the docs scripts meanwhile)."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()
            and not {"_build", "__pycache__"} & set(p.relative_to(folder).parts)}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("sphinx", reason="the docs build needs sphinx: pip install -e '.[docs]'")
    pytest.importorskip("furo", reason="the docs theme needs furo: pip install -e '.[docs]'")
    pytest.importorskip("myst_parser",
                        reason="the docs' Markdown needs myst-parser: pip install -e '.[docs]'")
    tmp = tmp_path_factory.mktemp("site")
    out = tmp / "html"
    env = dict(os.environ)
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens, a fetch fails at once
    env.update(http_proxy=closed, https_proxy=closed, HTTP_PROXY=closed, HTTPS_PROXY=closed,
               no_proxy="", NO_PROXY="", SDL_VIDEODRIVER="dummy",
               PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(
                   os.pathsep))
    before = _tree(DOCS)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q",
         "-d", str(tmp / "doctrees"), str(DOCS), str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    return proc, out, time.perf_counter() - t0, before, _tree(DOCS)


def test_conf_fetches_nothing():
    text = (DOCS / "conf.py").read_text()
    assert "sphinx.ext.intersphinx" not in text, \
        "intersphinx fetches inventories over the network"


def test_sphinx_build_has_no_warnings(site):
    proc, out, took, _, _ = site
    assert proc.returncode == 0, (
        f"sphinx-build -W failed (exit {proc.returncode}):\n{proc.stderr[-6000:]}")
    assert (out / "index.html").is_file()
    assert (out / "physics.html").is_file() and (out / "performance.html").is_file()
    assert took < BUDGET_S, f"the docs build took {took:.0f} s (budget {BUDGET_S:.0f} s)"


def test_the_build_writes_only_into_its_output_folder(site):
    _, _, _, before, after = site
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"building the docs changed files of the source tree: {changed}"


class _Page(HTMLParser):
    """The text of a page outside code, and the text of each of its list items."""

    CODE = {"code", "pre", "script", "style"}

    def __init__(self) -> None:
        super().__init__()
        self.code = 0
        self.prose: list[str] = []
        self.items: list[list[str]] = []
        self.open_items = 0

    def handle_starttag(self, tag: str, attrs) -> None:
        self.code += tag in self.CODE
        if tag == "li":
            self.items.append([])
            self.open_items += 1

    def handle_endtag(self, tag: str) -> None:
        self.code -= tag in self.CODE
        self.open_items -= tag == "li"

    def handle_data(self, data: str) -> None:
        if not self.code:
            self.prose.append(data)
        if self.open_items:
            self.items[-1].append(data)


def _article(html: str) -> str:
    """The page's own content (Furo's article), not the navigation around it."""
    m = re.search(r'<article[^>]*role="main"[^>]*>(.*)</article>', html, re.S)
    return m[1] if m else html


@pytest.mark.parametrize("env_id", push_envs.ENV_IDS)
def test_a_task_page_renders_as_written(site, env_id):
    proc, out, _, _, _ = site
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = _Page()
    page.feed(_article((out / "tasks" / f"{env_id}.html").read_text()))
    stray = [t.strip() for t in page.prose if "`" in t]
    assert not stray, f"backticks outside code (inline code that fell apart): {stray}"
    # Compared by their words: the build curls quotes and drops the code spans' backticks.
    items = [" ".join(re.findall(r"\w+", "".join(i))) for i in page.items]
    expected = [" ".join(re.findall(r"\w+", e)) for e in
                intended_items(spec(env_id).env_class.__doc__)]
    assert len(items) == len(expected), (items, expected)
    for item, first in zip(items, expected, strict=True):
        assert item.startswith(first), (item, first)
