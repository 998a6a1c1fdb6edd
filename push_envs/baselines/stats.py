"""Suite-level statistics the way rliable (Agarwal et al., 2021) reports them: the
interquartile mean (IQM) of scores over tasks x seeds, its stratified bootstrap confidence
interval, and the performance profile (the score distribution over runs).

Scores come as a mapping task -> per-seed scores (a task may have any number of seeds).
With ``rliable`` importable (the ``[report]`` extra) and the same number of seeds in every
task, :func:`interval` and :func:`profile` call it; otherwise they compute the same
quantities here in numpy: the IQM as ``scipy.stats.trim_mean(scores, 0.25)`` over all runs
(rliable's ``aggregate_iqm``), the bootstrap resampling each task's seeds with replacement
(rliable's ``StratifiedBootstrap``) and the interval its percentiles. The two agree up to
the bootstrap's sampling noise (tests/baselines/test_stats.py).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np

Scores = Mapping[str, Sequence[float]]


def _runs(scores: Scores) -> list[np.ndarray]:
    if not scores:
        raise ValueError("no scores: need at least one task with one seed")
    out = []
    for task, s in scores.items():
        a = np.asarray(s, np.float64).ravel()
        if not len(a) or not np.all(np.isfinite(a)):
            raise ValueError(f"{task}: scores must be one or more finite numbers, got {s!r}")
        out.append(a)
    return out


def trimmed_mean(values: np.ndarray, cut: float = 0.25, axis: int = -1) -> np.ndarray:
    """The mean of ``values`` along ``axis`` with ``int(cut * n)`` of the lowest and of the
    highest left out (scipy's ``trim_mean``)."""
    v = np.sort(np.asarray(values, np.float64), axis=axis)
    n = v.shape[axis]
    k = int(cut * n)
    return np.take(v, np.arange(k, n - k), axis=axis).mean(axis=axis)


def iqm(scores: Scores) -> float:
    """The interquartile mean of every run's score (all tasks' seeds pooled)."""
    return float(trimmed_mean(np.concatenate(_runs(scores))))


def _rectangular(scores: Scores) -> np.ndarray | None:
    runs = _runs(scores)
    if len({len(r) for r in runs}) != 1:
        return None
    return np.stack(runs, axis=1)  # (seeds, tasks), rliable's layout


def load_rliable() -> tuple[Any, Any] | None:
    """rliable's ``(library, metrics)`` modules, or None where it is missing or fails to
    import (rliable 1.2 with pandas 3: its arch < 8 raises a TypeError on import)."""
    try:
        from rliable import library
        from rliable import metrics
    except Exception:  # noqa: BLE001  (any failure to import means: not usable here)
        return None
    return library, metrics


def _resample(runs: list[np.ndarray], reps: int, rng: np.random.Generator) -> np.ndarray:
    """(reps, total runs): each task's seeds drawn with replacement, tasks side by side."""
    return np.concatenate([r[rng.integers(0, len(r), size=(reps, len(r)))] for r in runs],
                          axis=1)


def interval(scores: Scores, reps: int = 50_000, size: float = 0.95, seed: int = 0,
             use_rliable: bool | None = None) -> dict[str, Any]:
    """The IQM with its ``size`` stratified bootstrap interval (percentile method, ``reps``
    resamples, seeded). ``use_rliable``: None uses rliable when it is installed and every task
    has as many seeds; True requires it (ImportError naming the extra otherwise). Returns
    ``iqm``, ``lo``, ``hi``, ``reps``, ``tasks``, ``runs`` and ``by`` (who computed it)."""
    runs = _runs(scores)
    matrix = _rectangular(scores)
    lib = load_rliable() if use_rliable is not False else None
    if use_rliable and lib is None:
        raise ImportError("rliable is not installed: pip install -e '.[report]'")
    if use_rliable and matrix is None:
        raise ValueError("rliable needs the same number of seeds in every task")
    point = iqm(scores)
    if lib is not None and matrix is not None:
        library, metrics = lib
        import rliable

        with warnings.catch_warnings():  # arch's notice that random_state is deprecated
            warnings.simplefilter("ignore", FutureWarning)
            _, ci = library.get_interval_estimates(
                {"x": matrix}, lambda m: np.array([metrics.aggregate_iqm(m)]), reps=reps,
                confidence_interval_size=size, random_state=np.random.RandomState(seed))
        lo, hi = (float(v) for v in np.asarray(ci["x"]).ravel()[:2])
        by = f"rliable {getattr(rliable, '__version__', '')}".strip()
    else:
        rng = np.random.default_rng(seed)
        stats = np.concatenate([trimmed_mean(_resample(runs, n, rng))
                                for n in _chunks(reps)])
        tail = 100 * (1 - size) / 2
        lo, hi = (float(v) for v in np.percentile(stats, [tail, 100 - tail]))
        by = "push_envs.baselines.stats"
    return {"iqm": point, "lo": lo, "hi": hi, "reps": reps, "size": size, "seed": seed,
            "tasks": len(runs), "runs": int(sum(len(r) for r in runs)), "by": by}


def _chunks(reps: int, chunk: int = 10_000) -> list[int]:
    return [min(chunk, reps - i) for i in range(0, reps, chunk)]


def profile(scores: Scores, taus: np.ndarray | None = None, reps: int = 2_000,
            size: float = 0.95, seed: int = 0, use_rliable: bool | None = None
            ) -> dict[str, Any]:
    """The performance profile: for each threshold ``tau`` the fraction of runs (tasks x
    seeds) scoring above it, with a ``size`` stratified bootstrap band. Returns ``taus``,
    ``fraction``, ``lo``, ``hi`` (arrays) and ``by``."""
    taus = np.linspace(0.0, 1.0, 101) if taus is None else np.asarray(taus, np.float64)
    runs = _runs(scores)
    pooled = np.concatenate(runs)
    fraction = (pooled[:, None] > taus[None, :]).mean(axis=0)
    matrix = _rectangular(scores)
    lib = load_rliable() if use_rliable is not False else None
    if use_rliable and (lib is None or matrix is None):
        raise ImportError("rliable (pip install -e '.[report]') and the same number of seeds "
                          "in every task are needed")
    if lib is not None and matrix is not None:
        library, _ = lib
        # create_performance_profile with the score distribution, seeded as interval() is
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            _, bands = library.get_interval_estimates(
                {"x": matrix}, lambda m: library.score_distributions(m, taus), reps=reps,
                confidence_interval_size=size, random_state=np.random.RandomState(seed))
        lo, hi = np.asarray(bands["x"])[0], np.asarray(bands["x"])[1]
        by = "rliable"
    else:
        rng = np.random.default_rng(seed)
        boot = _resample(runs, reps, rng)  # (reps, runs)
        fracs = (boot[:, :, None] > taus[None, None, :]).mean(axis=1)
        tail = 100 * (1 - size) / 2
        lo, hi = np.percentile(fracs, [tail, 100 - tail], axis=0)
        by = "push_envs.baselines.stats"
    return {"taus": taus, "fraction": fraction, "lo": np.asarray(lo, np.float64),
            "hi": np.asarray(hi, np.float64), "by": by}
