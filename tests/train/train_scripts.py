"""The train/ scripts as modules for the tests: train/ is a folder of scripts, not a package."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TRAIN_DIR = Path(__file__).resolve().parents[2] / "train"


def load_script(filename: str, name: str) -> ModuleType:
    """``train/<filename>`` executed as the module ``name``, registered in ``sys.modules``
    before it runs (dataclasses look their module up there)."""
    spec = importlib.util.spec_from_file_location(name, TRAIN_DIR / filename)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
