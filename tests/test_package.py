"""push_envs/__init__.py: what importing the package does to the process (its exit)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# A handler registered before the import runs after push_envs' own (atexit runs handlers
# last-registered first), one registered after it runs before: each prints how many objects
# the collector's permanent generation holds when it runs.
_EXIT = textwrap.dedent("""
    import atexit, gc, sys
    atexit.register(lambda: print("after", gc.get_freeze_count(), flush=True))
    import push_envs
    if sys.argv[1] == "opt-out":
        atexit.unregister(push_envs._freeze_at_exit)
    atexit.register(lambda: print("before", gc.get_freeze_count(), flush=True))

    class Noisy:
        def __init__(self, name):
            self.name = name
        def __del__(self):
            print("finalized", self.name, flush=True)

    looped = Noisy("looped")
    looped.me = looped              # only the cyclic collector can free it
    del looped
""")


def _exit_lines(mode: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", _EXIT, mode], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split("\n")


def test_the_exit_freezes_the_heap_after_the_programs_own_handlers():
    lines = _exit_lines("default")
    before = next(int(x.split()[1]) for x in lines if x.startswith("before"))
    after = next(int(x.split()[1]) for x in lines if x.startswith("after"))
    assert before == 0  # the program's own clean-up ran with the collector as it was
    assert after > 50_000  # numba's, numpy's and gymnasium's objects, and ours, frozen
    # The documented cost: an object only a reference cycle holds is not finalized at exit.
    assert "finalized looped" not in lines


def test_a_program_can_keep_the_collector_at_exit():
    lines = _exit_lines("opt-out")
    after = next(int(x.split()[1]) for x in lines if x.startswith("after"))
    assert after == 0
    assert "finalized looped" in lines
