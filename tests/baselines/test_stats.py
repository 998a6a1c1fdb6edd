"""push_envs.baselines.stats: the IQM, its stratified bootstrap interval and the performance
profile, on inputs whose answers are known by hand (and against rliable where it imports)."""

from __future__ import annotations

import numpy as np
import pytest

from push_envs.baselines import stats


def test_iqm_of_known_scores():
    # 8 runs: 0.0 ... 0.7; the lowest 2 and the highest 2 go, (0.2 + 0.3 + 0.4 + 0.5) / 4.
    assert stats.iqm({"a": [0.0, 0.1, 0.2, 0.3], "b": [0.4, 0.5, 0.6, 0.7]}) == \
        pytest.approx(0.35)
    # 9 runs: int(0.25 * 9) = 2 cut at each end: (0.84 + 0.86 + 0.88 + 0.90 + 0.94) / 5.
    nine = {"x": [0.96, 0.98, 0.94], "y": [0.80, 0.90, 0.60], "z": [0.84, 0.88, 0.86]}
    assert stats.iqm(nine) == pytest.approx(0.884)
    # 3 runs: nothing is cut, the plain mean; an outlier moves the IQM of 4 runs not at all.
    assert stats.iqm({"a": [0.1, 0.2, 0.6]}) == pytest.approx(0.3)
    assert stats.iqm({"a": [0.5, 0.5], "b": [0.5, 0.0]}) == stats.iqm({"a": [0.5, 0.5],
                                                                       "b": [0.5, 1.0]})


def test_trimmed_mean_is_scipys():
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 5, 8, 13, 33):
        x = rng.uniform(size=n)
        assert stats.trimmed_mean(x) == pytest.approx(scipy_stats.trim_mean(x, 0.25))


def test_the_bootstrap_resamples_seeds_within_each_task():
    # One task, seeds 0 and 1: the mean of two draws is 0, 0.5 or 1 (p = 1/4, 1/2, 1/4), so
    # the 95 % percentile interval is [0, 1] around the IQM 0.5.
    r = stats.interval({"a": [0.0, 1.0]}, reps=20_000, use_rliable=False)
    assert (r["iqm"], r["lo"], r["hi"]) == (0.5, 0.0, 1.0)
    # Tasks of one seed each never change under a stratified bootstrap (a pooled one would
    # draw 0.3 twice a quarter of the time): the interval is the point.
    r = stats.interval({"a": [0.3], "b": [0.9]}, reps=5_000, use_rliable=False)
    assert r["lo"] == r["hi"] == r["iqm"] == pytest.approx(0.6)
    assert (r["tasks"], r["runs"], r["by"]) == (2, 2, "push_envs.baselines.stats")


def test_the_interval_is_seeded_and_holds_the_iqm():
    rng = np.random.default_rng(1)
    scores = {f"t{i}": rng.uniform(size=3) for i in range(8)}
    a = stats.interval(scores, reps=10_000, seed=3, use_rliable=False)
    b = stats.interval(scores, reps=10_000, seed=3, use_rliable=False)
    c = stats.interval(scores, reps=10_000, seed=4, use_rliable=False)
    assert a == b and (a["lo"], a["hi"]) != (c["lo"], c["hi"])
    assert a["lo"] < a["iqm"] < a["hi"] and a["hi"] - a["lo"] < 0.5
    wide = stats.interval(scores, reps=10_000, size=0.99, seed=3, use_rliable=False)
    assert wide["lo"] <= a["lo"] and wide["hi"] >= a["hi"]


def test_the_performance_profile_counts_runs_above_each_threshold():
    p = stats.profile({"a": [0.2], "b": [0.5], "c": [0.9]}, taus=[0.0, 0.2, 0.5, 0.6, 0.9],
                      use_rliable=False)
    np.testing.assert_allclose(p["fraction"], [1, 2 / 3, 1 / 3, 1 / 3, 0])
    np.testing.assert_allclose(p["lo"], p["fraction"])  # one seed per task: no spread
    np.testing.assert_allclose(p["hi"], p["fraction"])
    q = stats.profile({"a": [0.0, 1.0]}, taus=[0.5], reps=4_000, use_rliable=False)
    assert q["fraction"][0] == 0.5 and (q["lo"][0], q["hi"][0]) == (0.0, 1.0)


def test_bad_scores_are_refused(monkeypatch):
    with pytest.raises(ValueError, match="no scores"):
        stats.iqm({})
    with pytest.raises(ValueError, match="b: scores must be one or more finite numbers"):
        stats.interval({"a": [0.5], "b": [float("nan")]})
    monkeypatch.setattr(stats, "load_rliable", lambda: None)
    with pytest.raises(ImportError, match="rliable is not installed"):
        stats.interval({"a": [0.5]}, use_rliable=True)
    assert stats.interval({"a": [0.5]}, reps=100)["by"] == "push_envs.baselines.stats"


def test_rliable_agrees_where_it_imports():
    if stats.load_rliable() is None:
        pytest.skip("rliable does not import here (pip install -e '.[report]')")
    from rliable import metrics

    rng = np.random.default_rng(0)
    scores = {f"t{i}": rng.uniform(size=3) for i in range(11)}
    matrix = np.stack(list(scores.values()), axis=1)
    assert stats.iqm(scores) == pytest.approx(metrics.aggregate_iqm(matrix), abs=1e-12)
    ours = stats.interval(scores, use_rliable=False)
    theirs = stats.interval(scores, use_rliable=True)
    assert theirs["by"].startswith("rliable") and theirs["iqm"] == ours["iqm"]
    assert abs(theirs["lo"] - ours["lo"]) < 0.01 and abs(theirs["hi"] - ours["hi"]) < 0.01
    taus = np.linspace(0, 1, 11)
    p, q = (stats.profile(scores, taus, reps=5_000, use_rliable=u) for u in (False, True))
    np.testing.assert_allclose(p["fraction"], q["fraction"])
    np.testing.assert_allclose(p["lo"], q["lo"], atol=0.07)
    np.testing.assert_allclose(p["hi"], q["hi"], atol=0.07)
