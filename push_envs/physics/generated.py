"""Generated wrapper modules: Python source the package writes, then imports by name.

numba caches a compiled function by the file it is defined in, so a wrapper made at run time
(around a task's hooks, a user behaviour) is written as a module file into the cache folder,
``<numba cache>/push_envs_tasks/<stem>.py``, and imported from there: the next process finds
the same file and numba's cache of it. The file is rewritten only when its text changes,
and atomically, as several processes may write the same wrapper at once.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from .. import _numba_cache

PACKAGE = "push_envs_tasks"
"""The folder (in the numba cache) and package name of the generated modules."""


def load_generated(stem: str, text: str) -> ModuleType:
    """The module ``push_envs_tasks.<stem>`` whose source is ``text``: the file
    ``<numba cache>/push_envs_tasks/<stem>.py`` written (when missing or different) and
    imported, and registered in ``sys.modules``."""
    folder = Path(_numba_cache.CACHE_DIR) / PACKAGE
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.py"
    if not path.is_file() or path.read_text() != text:
        # Atomic replace: several processes may generate the same file at once.
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    name = f"{PACKAGE}.{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
