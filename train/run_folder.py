"""The run folder of a training script (train.py, residual.py, bc.py, dagger.py,
rllib_ppo.py): a new run never silently replaces an old one, and never loses it.

``<run_dir>/<env>/<algo>/<seed>`` when it does not exist yet; otherwise the first of
``<seed>-2``, ``<seed>-3``, ... that does not, so running the same command twice keeps both
runs. ``overwrite=True`` (the scripts' ``--overwrite``) reuses ``<seed>``, with the earlier
run kept until the new one is under way:

    claim       <seed>/ (the earlier run) is renamed to .<seed>.earlier-<random>/, whole;
                a fresh <seed>/ is made for the new run
    under way   (:meth:`RunDir.under_way`: the scripts call it once training has taken its
                first update, or at the end) the earlier run is deleted
    failure     an error or an interrupt before that: the new run's folder is removed and
                the earlier run renamed back to <seed>/, as it was

So the earlier run goes whole or not at all: no file of it (a model the new run does not
write, an exported ``agent.npz``, its tensorboard logs) is left beside the new run's, and a
new run that fails to start (a typo in a hyperparameter, an interrupt during the warm start)
leaves it in place. Without ``overwrite``, a run that fails before it is under way removes
its own folder: nothing half-built is left. The scripts check and build everything they can
(hyperparameters, envs, the model) before they claim a folder at all. Only a process killed
outright between the claim and the first update leaves the earlier run at
``.<seed>.earlier-<random>/`` beside the new one, to be renamed back by hand.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from types import TracebackType


class RunDir:
    """The folder a new run writes to (see the module docs), as a context manager:

        with RunDir(base, overwrite) as run:
            ...                       # write into run.path
            run.under_way()           # the earlier run (with overwrite) may go now

    Leaving the block normally counts as under way; leaving it by an exception before
    :meth:`under_way` undoes the claim."""

    def __init__(self, base: str | Path, overwrite: bool = False) -> None:
        self.base = Path(base)
        self.overwrite = overwrite
        self.path = self.base
        self.earlier: Path | None = None  # the earlier run, moved aside until under way
        self._under_way = False

    def __enter__(self) -> RunDir:
        base = self.base
        base.parent.mkdir(parents=True, exist_ok=True)
        if self.overwrite:
            if base.exists():
                earlier = base.with_name(f".{base.name}.earlier-{uuid.uuid4().hex[:8]}")
                os.replace(base, earlier)  # one rename: the earlier run stays whole
                self.earlier = earlier
                print(f"{base} holds an earlier run: kept at {earlier} until this run is "
                      f"under way")
            base.mkdir()
            self.path = base
            return self
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
            self.path = path
            return self

    def under_way(self) -> None:
        """The new run has started safely: the earlier run (with overwrite) is deleted."""
        self._under_way = True
        if self.earlier is not None:
            shutil.rmtree(self.earlier, ignore_errors=True)
            self.earlier = None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is None:
            self.under_way()
            return
        if self._under_way:
            return  # a run that had started keeps what it wrote
        shutil.rmtree(self.path, ignore_errors=True)
        if self.earlier is not None:
            os.replace(self.earlier, self.path)
            print(f"{self.path}: the earlier run is back in place (this run did not start)")
            self.earlier = None
