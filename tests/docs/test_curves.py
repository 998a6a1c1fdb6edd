"""docs/_scripts/curves.py: the published learning curves come from docs/data/curves.csv, which
is made from the runs' raw logs on the data branch, and the figures redraw from it alone."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "_scripts"))

import curves  # noqa: E402


def _log(path: Path, steps: list[int], successes: bool = True) -> None:
    """An EvalCallback log of 4 episodes per evaluation at ``steps``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(len(steps) + len(str(path)))
    n = len(steps)
    np.savez(path, timesteps=np.array(steps), results=rng.normal(size=(n, 4)),
             ep_lengths=np.full((n, 4), 50), successes=(rng.random((n, 4)) > 0.5) if
             successes else np.zeros((0,)))


def test_the_csv_holds_every_published_figure():
    pytest.importorskip("train.plot")  # matplotlib
    for name, fig in curves.FIGURES.items():
        assert (curves.OUT / name).is_file(), name
        runs = curves.curves(name)
        assert [c.label for c in runs] == [label for label, _ in fig.lines]
        # at least two seeds and five evaluations a line, each seed's evaluations in order
        assert all(c.returns.shape[0] >= 2 and len(c.steps) >= 5 for c in runs), name
        assert all(np.all(np.diff(c.steps) > 0) for c in runs), name


def test_the_csv_keeps_what_train_plot_reads_from_the_raw_logs(tmp_path):
    plot = pytest.importorskip("train.plot")  # matplotlib
    raw = tmp_path / "raw"
    _log(raw / "day" / "a" / "0" / "evaluations.npz", [100, 200, 300, 400])
    _log(raw / "day" / "a" / "1" / "evaluations.npz", [100, 200, 300])  # stopped early
    _log(raw / "b" / "0" / "evaluations.npz", [50, 100], successes=False)
    figures = {"x.png": curves.Figure("t", "alt", (("line a", "day/a"), ("line b", "b")))}
    csv_path = tmp_path / "curves.csv"
    assert curves.write_csv(raw, csv_path, figures) == 4 + 3 + 2
    got = curves.curves("x.png", csv_path, figures)
    for curve, (label, folder) in zip(got, figures["x.png"].lines, strict=True):
        ref = plot.load_curve(raw / folder, label)
        assert curve.label == label
        np.testing.assert_array_equal(curve.steps, ref.steps)
        np.testing.assert_array_equal(curve.returns, ref.returns)
        np.testing.assert_array_equal(curve.success, ref.success)
    assert got[0].returns.shape == (2, 3) and np.isnan(got[1].success).all()
    with pytest.raises(FileNotFoundError, match=r"x.png, line 'line c': no evaluations.npz"):
        curves.write_csv(raw, csv_path, {"x.png": curves.Figure("t", "a", (("line c", "c"),))})


def test_the_figures_redraw_from_the_csv_alone(tmp_path):
    pytest.importorskip("matplotlib")
    written = curves.plot(out=tmp_path)
    assert sorted(p.name for p in written) == sorted(curves.FIGURES)
    from PIL import Image

    for p in written:
        with Image.open(p) as im:
            assert im.size[0] > 800 and im.size[1] > 300


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), "-c", "user.email=t@t", "-c", "user.name=t",
                           *args], check=True, capture_output=True, text=True).stdout


def test_fetch_checks_the_data_branch_out_beside_the_docs(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    origin = tmp_path / "origin"
    origin.mkdir()
    _git(origin, "init", "-q", "-b", "main")
    (origin / "README.md").write_text("source\n")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-qm", "source")
    _git(origin, "checkout", "-q", "--orphan", curves.BRANCH)
    _git(origin, "rm", "-rqf", ".")
    (origin / "run" / "0").mkdir(parents=True)
    (origin / "run" / "0" / "result.json").write_text("{}\n")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-qm", "data")
    _git(origin, "checkout", "-q", "main")
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(origin), str(clone))
    assert curves.BRANCH not in _git(clone, "branch")  # only the remote has it
    dest = curves.fetch(clone / "docs" / "_build" / "curves", repo=clone)
    assert (dest / "run" / "0" / "result.json").read_text() == "{}\n"
    assert not (dest / "README.md").exists()  # the data branch, not the source tree
    assert curves.fetch(dest, repo=clone) == dest  # a second fetch updates it in place
    # Without a remote, the local branch; without either, a message saying what to run.
    local = curves.fetch(tmp_path / "local", repo=origin)
    assert (local / "run" / "0" / "result.json").is_file()
    bare = tmp_path / "bare"
    bare.mkdir()
    _git(bare, "init", "-q")
    with pytest.raises(RuntimeError, match="no branch 'data/curves'"):
        curves.fetch(tmp_path / "none", repo=bare)
