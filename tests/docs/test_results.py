"""docs/_scripts/results.py: the results page (generated whole), the suite's IQM, the
performance profile and the rows README.md's table and the task pages read, all from the CSV
files in docs/data/."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "_scripts"))

import results  # noqa: E402

from push_envs.baselines.evaluation import FIELDS  # noqa: E402
from push_envs.baselines.evaluation import append_csv  # noqa: E402
from push_envs.experts import wilson  # noqa: E402


def _row(task: str, robot: str, policy: str, seed: int, wins: int, n: int = 500,
         **extra) -> dict:
    lo, hi = wilson(wins, n)
    row = dict.fromkeys(FIELDS, "")
    row.update(task=task, robot=robot, policy=policy, seed=seed, episodes=n, successes=wins,
               success=wins / n, wilson_lo=lo, wilson_hi=hi, mean_length=80.0,
               eval_seed=100_000, env_steps=500_000, wall_clock_s=1410.0,
               env_kwargs=json.dumps({"robot": robot}),
               command=f"python -m train.train --env {task} --seed {seed}",
               eval_command=f"python -m push_envs.baselines evaluate runs/{task}/ppo/{seed}/"
                            f"agent.npz --episodes {n} --seed 100000", **extra)
    return row


@pytest.fixture
def csv_path(tmp_path: Path) -> Path:
    path = tmp_path / "learned.csv"
    for seed, wins in enumerate((480, 490, 470)):
        append_csv(path, _row("PushBox-v0", "diff", "PPO", seed, wins))
    for seed, wins in enumerate((400, 450, 300)):
        # seed 0 reached its floor at 14.4 s and 1.02 M steps; seed 1 never did
        floor = [dict(floor=0.8, floor_env_steps=1_024_000, floor_wall_clock_s=14.4),
                 dict(floor=0.8), {}][seed]
        append_csv(path, _row("PushBox-v0", "omni", "PPO", seed, wins, **floor))
    for seed, wins in enumerate((420, 440, 430)):
        append_csv(path, _row("PushT-v0", "omni", "DAgger", seed, wins, final_coverage=0.91,
                              max_coverage=0.97, success_cov95=wins / 500,
                              success_cov90=0.9, cov90_wilson_lo=0.871,
                              cov90_wilson_hi=0.923))
    return path


def test_the_report_writes_the_table_the_iqm_and_the_profile(csv_path, tmp_path):
    page, png = tmp_path / "page.md", tmp_path / "profile.png"
    result = results.report(csv_path, page, png)
    # 9 runs: 0.60 0.80 0.84 0.86 0.88 0.90 0.94 0.96 0.98; the IQM drops 2 at each end.
    assert result["iqm"] == pytest.approx((0.84 + 0.86 + 0.88 + 0.90 + 0.94) / 5)
    assert result["lo"] < result["iqm"] < result["hi"] and result["runs"] == 9
    text = page.read_text()
    assert "**88.4 %** (95 % stratified bootstrap interval" in text
    assert "| PushBox-v0 | omni | PPO | 2 | **60.0 %** (55.6-64.2) | 500 | 80 | 500 k | " \
           "23.5 min | - |" in text  # a run from before the time to floor was recorded
    assert "| PushBox-v0 | omni | PPO | 0 | **80.0 %** (76.3-83.3) | 500 | 80 | 500 k | " \
           "23.5 min | 14 s (1.02 M) |" in text
    assert "| 23.5 min | not reached |" in text
    assert "| PushT-v0 | omni | DAgger | 1 | 0.910 | 0.970 | 88.0 % (84.9-90.6) | " \
           "90.0 % (87.1-92.3) |" in text
    assert "`python -m train.train --env PushBox-v0 --seed S`" in text
    assert "evaluate runs/PushT-v0/ppo/S/agent.npz --episodes 500 --seed 100000`" in text
    assert f"]({results.FIGURE_REF})" in text
    from PIL import Image

    with Image.open(png) as im:
        assert im.size[0] > 300 and im.size[1] > 200


def test_a_later_row_replaces_an_earlier_one_and_one_policy_per_pair(csv_path):
    append_csv(csv_path, _row("PushBox-v0", "omni", "PPO", 2, 500))  # seed 2 evaluated again
    rows = results.read_rows(csv_path)
    assert len(rows) == 9
    assert results.scores(rows)["PushBox-v0 (omni)"] == [0.8, 0.9, 1.0]
    append_csv(csv_path, _row("PushBox-v0", "omni", "SAC", 0, 100))
    with pytest.raises(ValueError, match=r"PushBox-v0 \(omni\) has rows of two policies, "
                                         r"'PPO' and 'SAC'"):
        results.suite(results.read_rows(csv_path))


def test_no_rows_make_a_page_that_says_how_to_make_them(tmp_path):
    page = tmp_path / "page.md"
    assert results.report(tmp_path / "none.csv", page, tmp_path / "x.png") is None
    assert "No agent has been evaluated under this protocol yet" in page.read_text()
    assert not (tmp_path / "x.png").exists()


def test_readme_and_task_pages_read_learned_rows_before_the_older_ones(csv_path,
                                                                         monkeypatch):
    monkeypatch.setattr(results, "LEARNED", csv_path)
    by_pair = {(s["task"], s["robot"]): s for s in results.summaries()}
    new = by_pair[("PushBox-v0", "diff")]
    assert new["source"] == "learned.csv" and new["success_per_seed"] == [0.96, 0.98, 0.94]
    assert new["intervals"][0] == pytest.approx(wilson(480, 500))
    assert new["episodes_per_seed"] == "500"
    old = by_pair[("PushBox-v0", "acker")]  # not in the CSV: docs/data/baselines.csv's row
    assert old["source"] == "baselines.csv" and old["intervals"] is None
    import readme_tables
    import task_pages

    table = readme_tables.task_table()
    assert "96 % (diff, PPO); 77 % (omni, PPO); " in table
    assert "IQM of success over 3 task-robot pairs x seeds (9 runs): **88.4 %**" in table
    from push_envs.tasks import spec

    page = task_pages.page(spec("PushBox-v0"), [], results.summaries())
    assert "seed 0: 96.0 % (93.9-97.4); seed 1: 98.0 % (96.4-98.9)" in page


def test_the_committed_results_page_is_the_scripts_output():
    rows = results.read_rows()
    expected = results.page(rows, results.suite(rows), figure=bool(rows))
    assert results.PAGE.read_text() == expected, \
        "docs/training_results.md is stale: run python docs/_scripts/results.py"
    if rows:
        assert results.FIGURE.is_file()
