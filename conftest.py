"""Settings of the whole test session that must be made before numba is first imported.

pytest loads this root conftest before any test module (in the main process and in each
pytest-xdist worker), and processes the tests start inherit ``os.environ``, so they compile
the same way and share the session's kernel cache.

``NUMBA_OPT``: most of a fresh suite's time is LLVM optimising each task's entry kernels,
which link the whole physics step. At level 1 PushBox-v0's kernels took about 17 % less CPU
to compile than at numba's default 3 (146 vs 176 CPU-s for ``gym.make``, 160 vs 193 more
for a batch of 16; README, test paragraph), with bit-identical results: no kernel uses
fastmath, and the golden hashes of ``tests/tasks/test_golden.py`` hold at both levels. Level 0
is no use: numba then refuses to cache the physics kernels ("uses dynamic globals"), so
every process would compile them again. Kernels compiled
at another level go to a cache folder of their own (``push_envs/_numba_cache.py`` keys the
folder by the level), so a user's normal run never loads these. ``NUMBA_OPT=3 python -m
pytest`` tests the kernels exactly as users run them.
"""

import os
import sys

if "numba" not in sys.modules:
    # Once numba is imported, push_envs may already have keyed its cache folder by the
    # level read then: a level set now could put kernels of one level in the other's folder.
    os.environ.setdefault("NUMBA_OPT", "1")
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame renders headless
