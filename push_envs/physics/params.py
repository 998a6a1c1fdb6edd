"""Solver tunables, kept apart from the scene's sizes (as Jax2D keeps its static sizes apart)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SolverParams:
    """Tunables of the contact solver; defaults follow IR-SIM's contact mode.

    slop:              gap left between separated bodies [m].
    rest_tolerance:    a gap up to this still counts as a touching (resting) contact [m].
    max_sweeps:        cap on Gauss-Seidel sweeps per sub-step.
    max_substeps:      cap on the sub-steps a step may be split into (tunnelling guard).
    substep_fraction:  a body may travel at most this fraction of its smallest half-thickness
                       per sub-step, so the separating axis always points back the way it came.
    max_pairs:         candidate-pair capacity per env; None sizes it from the scene.
    max_contacts:      contact-report capacity per env; None sizes it from the scene.
    """

    slop: float = 1e-6
    rest_tolerance: float = 1e-5
    max_sweeps: int = 32
    max_substeps: int = 64
    substep_fraction: float = 0.9
    max_pairs: int | None = None
    max_contacts: int | None = None

    def __post_init__(self) -> None:
        for name in ("slop", "rest_tolerance", "substep_fraction"):
            if not getattr(self, name) > 0:
                raise ValueError(f"SolverParams.{name}: must be > 0, got {getattr(self, name)}")
        for name in ("max_sweeps", "max_substeps"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"SolverParams.{name}: must be >= 1, got {getattr(self, name)}")
