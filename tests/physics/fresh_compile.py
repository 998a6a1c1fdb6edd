"""Compile one of the package's C functions first thing in a fresh process, as a user's first
world of its kind does: at numba's default -O3 (the suite compiles at -O1: conftest.py), on
an empty kernel cache. LLVM crashed this way compiling IR-SIM's collision modes for an AMD
Zen 3 host (push_envs/physics/collision_modes.py), where the suite's own order never did."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_COMPILE_ONE = """
import importlib, sys
module, name = sys.argv[1].split(":")
print(getattr(importlib.import_module(module), name).address > 0)
"""


def compile_alone(spec: str, cache: Path, timeout: float = 1200) -> subprocess.CompletedProcess:
    """Compile the C function ``spec`` (``"module:NAME"``, an abi.CFunction) alone in a fresh
    process at -O3 on the empty cache folder ``cache``; its stdout is ``True`` when it
    compiled to an address."""
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), NUMBA_OPT="3")
    env.pop("NUMBA_CACHE_DIR", None)
    return subprocess.run([sys.executable, "-c", _COMPILE_ONE, spec], env=env,
                          capture_output=True, text=True, timeout=timeout)
