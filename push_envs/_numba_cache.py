"""Where numba keeps the compiled kernels, keyed by the package's source.

numba's ``cache=True`` checks only the timestamp of the file that defines a kernel, so a change
to a helper in another module can silently load a stale kernel that still calls the old
helper. Keying the cache folder by a hash of every source file of the package makes any edit
start a fresh cache. A user-set ``NUMBA_CACHE_DIR`` is respected.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba


def configure() -> str:
    """Point numba's cache at a folder keyed by the package sources; returns the folder."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    root = Path(__file__).resolve().parent
    digest = hashlib.sha1()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = base / "push_envs" / f"numba-{numba.__version__}-{digest.hexdigest()[:16]}"
    numba.config.CACHE_DIR = str(folder)
    return str(folder)


def threading_layer() -> str:
    """Use numba's ``workqueue`` threading layer unless NUMBA_THREADING_LAYER says otherwise.

    The default (OpenMP) layer is not fork-safe once a parallel kernel has run: forked children
    abort. workqueue is, and gave the same bit-identical results, so a batch can live inside
    ``AsyncVectorEnv`` or a forked data loader.
    """
    if not os.environ.get("NUMBA_THREADING_LAYER"):
        numba.config.THREADING_LAYER = "workqueue"
    return numba.config.THREADING_LAYER


CACHE_DIR = configure()
THREADING_LAYER = threading_layer()
