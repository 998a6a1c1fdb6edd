"""Batch-first 2D contact engine: SAT narrow phase, PBD contact solver, contact2d sensors."""

from .. import _numba_cache  # noqa: F401  (must run before any kernel is defined)
from .config import load_scene
from .errors import SceneError
from .params import SolverParams
from .world import ContactReport
from .world import World

__all__ = ["World", "SceneError", "SolverParams", "ContactReport", "load_scene"]
