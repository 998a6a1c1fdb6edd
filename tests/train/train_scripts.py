"""The train package's modules for the tests (train/ is a package run as ``python -m
train.<module>`` from the checkout's root, which pytest puts on sys.path)."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
TRAIN_DIR = ROOT / "train"


def load_script(filename: str, name: str | None = None) -> ModuleType:
    """The module ``train.<filename without .py>``."""
    return importlib.import_module(f"train.{Path(filename).stem}")
