"""The run folder of a training script (train.py, bc.py, dagger.py): a new run never
silently replaces an old one.

``<run_dir>/<env>/<algo>/<seed>`` when it does not exist yet; otherwise the first of
``<seed>-2``, ``<seed>-3``, ... that does not, so running the same command twice keeps both
runs. ``overwrite=True`` (the scripts' ``--overwrite``) empties ``<seed>`` and reuses it:
the earlier run goes whole, so no file of it (a model the new run does not write, an exported
``agent.npz``, its tensorboard logs) is left beside the new run's to be taken for part of it.
"""

from __future__ import annotations

import shutil
from pathlib import Path


def fresh_run_dir(base: str | Path, overwrite: bool = False) -> Path:
    """Create and return the folder a new run writes to (see the module docs), printing it
    when it is not ``base``."""
    base = Path(base)
    if overwrite:
        if base.is_dir():
            shutil.rmtree(base)
        base.mkdir(parents=True)
        return base
    base.parent.mkdir(parents=True, exist_ok=True)
    k = 1
    while True:
        path = base if k == 1 else base.with_name(f"{base.name}-{k}")
        try:
            # exist_ok=False claims the folder: two runs started at once get different ones.
            path.mkdir()
        except FileExistsError:
            k += 1
            continue
        if k > 1:
            print(f"{base} holds an earlier run: this run writes to {path} "
                  f"(--overwrite reuses {base})")
        return path
