"""benchmarks/ppo_throughput.py: its phase clock's exclusive times (the PPO runs themselves
take minutes and are the benchmark's, not the suite's)."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "ppo_throughput.py"
_spec = importlib.util.spec_from_file_location("ppo_throughput", _PATH)
pt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pt)


def _spin(seconds: float) -> None:
    """Burn ``seconds`` of this process's CPU time."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


class Work:
    def inner(self) -> None:
        _spin(0.06)

    def outer(self) -> None:
        _spin(0.03)
        self.inner()
        self.inner()

    def twin(self) -> None:
        _spin(0.02)


def test_phase_clock_counts_each_phase_without_the_phases_it_calls():
    w = Work()
    clock = pt.PhaseClock()
    clock.wrap(w, "inner", "inner")
    clock.wrap(w, "outer", "outer")
    clock.wrap(w, "twin", "inner")  # two methods, one phase: their times add up
    t0 = time.process_time()
    w.outer()
    w.twin()
    total = time.process_time() - t0
    sec = clock.seconds
    assert set(sec) == {"inner", "outer"}
    assert 0.14 <= sec["inner"] < 0.14 + 0.03  # 2 x 0.06 + 0.02
    assert 0.03 <= sec["outer"] < 0.03 + 0.03  # its own spin only
    assert abs(sec["inner"] + sec["outer"] - total) < 0.01  # nothing counted twice
