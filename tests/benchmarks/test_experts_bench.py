"""benchmarks/experts.py: the states it times and the figures it returns."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "experts.py"
_spec = importlib.util.spec_from_file_location("experts_bench", _PATH)
eb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(eb)


def test_states_are_every_visited_observation_of_the_batch():
    obs = eb.states("PushBox-v0", "diff", envs=3, steps=4, seed=0)
    assert obs.shape == (12, 53)
    assert len(np.unique(obs, axis=0)) == 12  # every step moved something


def test_the_timings_are_one_positive_figure_a_round():
    obs = eb.states("PushBox-v0", "diff", envs=2, steps=3, seed=0)
    us = eb.time_labels("PushBox-v0", "diff", obs, rounds=3, threads=1)
    assert len(us) == 3 and all(u > 0 for u in us)


@pytest.mark.parametrize(("argv", "match"), [
    (["--tasks", "NoSuch-v0"], "no scripted expert for \\['NoSuch-v0'\\]"),
    (["--rounds", "0"], "--rounds must be >= 1"),
    (["--threads", "0"], "--threads must be in"),
])
def test_bad_flags_are_refused_by_name(argv, match, capsys):
    with pytest.raises(SystemExit):
        eb.main(argv)
    assert re.search(match, capsys.readouterr().err)
