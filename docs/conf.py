"""Sphinx configuration of the push_envs documentation (Furo theme, MyST Markdown).

Build (offline; warnings are errors, as CI builds it):

    pip install -e ".[docs]"
    sphinx-build -W -b html docs docs/_build/html

The pages are Markdown. Pictures, tables and pages that come from measurements or from the
task declarations are made by the scripts in ``docs/_scripts`` and committed (the task pages:
``python docs/_scripts/task_pages.py``); tests/docs/ checks that each committed one is what
its script writes now. The build only reads the source tree and writes nothing but its output
folder; it runs no simulation and fetches nothing from the network (no intersphinx).
"""

from __future__ import annotations

import os
import re
import sys
from importlib import metadata
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # autodoc imports push_envs from this checkout
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame, imported by the env classes


def _version() -> str:
    """The package's version: push_envs.__version__ when it has one, else its metadata."""
    try:
        import push_envs

        return str(push_envs.__version__)
    except (ImportError, AttributeError):
        pass
    try:
        return metadata.version("push_envs")
    except metadata.PackageNotFoundError:
        return "unknown"


# -- Project -------------------------------------------------------------------------------
project = "push_envs"
author = "the push_envs developers"
copyright = "push_envs developers"
release = _version()
version = release

# -- General -------------------------------------------------------------------------------
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "_generated",  # tables included by pages, not pages of their own
    "_scripts",
    "data",
    "Thumbs.db",
    ".DS_Store",
]
templates_path: list[str] = []
nitpicky = False

# MyST: ::: fences for directives in Markdown, definition lists, and anchors for headings
# down to level 3 so pages can link to sections (page.md#section).
myst_enable_extensions = ["colon_fence", "deflist", "attrs_inline", "attrs_block"]
myst_heading_anchors = 3

# autodoc: members in source order, the class docstring and __init__'s together; numpy and
# numba are real imports (importing push_envs compiles nothing).
autodoc_member_order = "bysource"
autoclass_content = "class"
autodoc_typehints = "description"
autodoc_default_options = {"show-inheritance": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# The package's docstrings list attributes as aligned "name: text" lines, the texts starting in
# one column and continued under it (see SolverParams, ContactReport, TaskSpec). That is not
# reStructuredText (an indented continuation without a blank line is an error), so such a
# block (two or more such lines, or one with a gap of two spaces or more) becomes a
# definition list here.
_FIELD = re.compile(r"^(?P<indent>\s*)(?P<name>[A-Za-z_][\w.]*(?: [\w.]+)?):(?P<gap> +)"
                    r"(?P<text>\S.*)$")


def _aligned_block(lines: list[str], i: int) -> tuple[list[tuple[str, list[str]]], int]:
    """The aligned fields starting at line i (name, text lines) and the line after them."""
    first = _FIELD.match(lines[i])
    assert first is not None
    indent = first["indent"]
    column = len(indent) + len(first["name"]) + 1 + len(first["gap"])
    items: list[tuple[str, list[str]]] = []
    while i < len(lines):
        m = _FIELD.match(lines[i])
        if m is None or m["indent"] != indent or \
                len(indent) + len(m["name"]) + 1 + len(m["gap"]) != column:
            break
        text = [m["text"]]
        i += 1
        while i < len(lines) and lines[i].strip() and \
                len(lines[i]) - len(lines[i].lstrip()) >= column:
            text.append(lines[i].strip())
            i += 1
        items.append((m["name"], text))
    return items, i


def aligned_fields(lines: list[str]) -> list[str]:
    """``lines`` with each block of aligned ``name: text`` lines as a definition list."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _FIELD.match(lines[i])
        if m is not None:
            items, end = _aligned_block(lines, i)
            if len(items) >= 2 or len(m["gap"]) >= 2:
                if out and out[-1].strip():
                    out.append("")
                for name, text in items:
                    out.append(f"{m['indent']}``{name}``")
                    out.extend(f"{m['indent']}    {t}" for t in text)
                out.append("")
                i = end
                continue
        out.append(lines[i])
        i += 1
    return out


def _process_docstring(app, what, name, obj, options, lines: list[str]) -> None:
    lines[:] = aligned_fields(lines)


def setup(app) -> None:
    app.connect("autodoc-process-docstring", _process_docstring)


# -- HTML ----------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"push_envs {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
html_theme_options = {
    "sidebar_hide_name": False,
    "navigation_with_keys": True,
}
