"""The documentation site builds offline with warnings as errors (``sphinx-build -W``).

A broken cross-reference, a missing picture, a page left out of every toctree, a docstring
that does not parse or an include that moved all fail the build. The build must not touch the
network: the configuration loads no intersphinx inventory, and the build runs with its proxy
pointed at a closed local port, so any fetch would fail (and, under ``-W``, fail the test).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("sphinx", reason="the docs build needs sphinx: pip install -e '.[docs]'")
pytest.importorskip("furo", reason="the docs theme needs furo: pip install -e '.[docs]'")
pytest.importorskip("myst_parser",
                    reason="the docs' Markdown needs myst-parser: pip install -e '.[docs]'")

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BUDGET_S = 60.0  # the build takes a few seconds; a minute means something is wrong


def test_conf_fetches_nothing():
    text = (DOCS / "conf.py").read_text()
    assert "sphinx.ext.intersphinx" not in text, \
        "intersphinx fetches inventories over the network"


def test_sphinx_build_has_no_warnings(tmp_path):
    out = tmp_path / "html"
    env = dict(os.environ)
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens, a fetch fails at once
    env.update(http_proxy=closed, https_proxy=closed, HTTP_PROXY=closed, HTTPS_PROXY=closed,
               no_proxy="", NO_PROXY="", SDL_VIDEODRIVER="dummy",
               PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(
                   os.pathsep))
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    took = time.perf_counter() - t0
    assert proc.returncode == 0, (
        f"sphinx-build -W failed (exit {proc.returncode}):\n{proc.stderr[-6000:]}")
    assert (out / "index.html").is_file()
    assert (out / "physics.html").is_file() and (out / "performance.html").is_file()
    assert took < BUDGET_S, f"the docs build took {took:.0f} s (budget {BUDGET_S:.0f} s)"
