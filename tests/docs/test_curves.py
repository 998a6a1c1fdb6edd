"""docs/_scripts/curves.py: the published learning curves come from docs/data/curves.csv, which
is made from the runs' raw logs on the data branch, and the figures redraw from it alone."""

from __future__ import annotations

import json
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
        if fig.x == "wall_clock":
            lines = curves.clock_curves(name)
            assert [c.label for c in lines] == [label for label, _ in fig.lines]
            for c in lines:
                # three seeds a line, each with its clock running forward, and each reaching
                # its floor (the figure is of the shipped recipes)
                assert len(c.seconds) == 3 and c.floor in (0.5, 0.6, 0.8), (name, c.label)
                assert all(np.all(np.diff(t) > 0) for t in c.seconds), (name, c.label)
                assert all((ok >= c.floor).any() for ok in c.success), (name, c.label)
            continue
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


def _result(path: Path, log: list[tuple[int, float, float]] | None, floor: float = 0.8) -> None:
    """A train.train result.json whose evaluation log is ``log`` (env steps, seconds,
    success)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    entries = None if log is None else [
        {"env_steps": n, "wall_clock_s": t, "success_rate": ok, "mean_return": 10.0 * ok,
         "phase": "ppo"} for n, t, ok in log]
    path.write_text(json.dumps({"evaluations": entries, "floor": floor}))


def test_a_wall_clock_figure_keeps_each_seeds_clock_and_floor(tmp_path):
    pytest.importorskip("train.plot")  # matplotlib
    raw = tmp_path / "raw"
    _result(raw / "a" / "0" / "result.json", [(0, 9.5, 0.4), (100, 12.25, 0.81), (200, 15.0, 0.7)])
    _result(raw / "a" / "1" / "result.json", [(100, 11.0, 0.9)])  # seeds evaluate apart
    _result(raw / "b" / "0" / "result.json", [(50, 3.0, 0.1), (60, 4.0, 0.2)], floor=0.6)
    figures = {"c.png": curves.Figure("t", "alt", (("a", "a"), ("b", "b")), x="wall_clock")}
    csv_path = tmp_path / "curves.csv"
    assert curves.write_csv(raw, csv_path, figures) == 3 + 1 + 2
    a, b = curves.clock_curves("c.png", csv_path, figures)
    assert (a.label, a.floor, b.floor) == ("a", 0.8, 0.6)
    np.testing.assert_array_equal(a.seconds[0], [9.5, 12.25, 15.0])
    np.testing.assert_array_equal(a.success[0], [0.4, 0.81, 0.7])
    np.testing.assert_array_equal(a.seconds[1], [11.0])
    np.testing.assert_array_equal(b.success[0], [0.1, 0.2])
    from train.plot import plot_wall_clock

    plot_wall_clock([a, b], tmp_path / "c.png", "t")
    assert (tmp_path / "c.png").stat().st_size > 10_000
    # a run from before the evaluation log names itself
    _result(raw / "d" / "0" / "result.json", None)
    with pytest.raises(ValueError, match=r"d/0/result.json: no evaluation log"):
        curves.write_csv(raw, csv_path, {"d.png": curves.Figure("t", "a", (("d", "d"),),
                                                                x="wall_clock")})


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
