"""What both task families share beyond the robot's view: the domain randomisation of a
body, and the packing of the parameters every task has (spawn region, success distance, wall
margin, the reward's bonus and step penalty, the robot's radius and traction).

Written once here; ``pushing/family.py`` and ``many/family.py`` call it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from push_envs.core import compiled
from push_envs.core.task import columns
from push_envs.physics.layout import BF_BRAD
from push_envs.physics.layout import EP_FRICTION
from push_envs.physics.layout import EP_INERTIA
from push_envs.physics.layout import EP_MASS
from push_envs.physics.layout import EP_SCALE
from push_envs.physics.rng import uniform


@compiled
def randomise_body(e, W, V, b, mass_lo, mass_hi, fric_lo, fric_hi, scale_lo, scale_hi):
    """Draw body b's mass [kg] (when ``mass_hi`` > 0), ground friction (``fric_hi`` >= 0) and
    size factor (``scale_hi`` > 0), in that order from env e's stream; inertia follows mass
    and size (I = I0 (m / m0) s^2). Returns the size factor."""
    rng = V.rng
    m = V.base_mass[b]
    if mass_hi > 0.0:
        m = uniform(rng, e, mass_lo, mass_hi)
    mu = V.base_fric[b]
    if fric_hi >= 0.0:
        mu = uniform(rng, e, fric_lo, fric_hi)
    s = 1.0
    if scale_hi > 0.0:
        s = uniform(rng, e, scale_lo, scale_hi)
    W.epar[e, b, EP_MASS] = m
    W.epar[e, b, EP_INERTIA] = V.base_inertia[b] * (m / V.base_mass[b]) * s * s
    W.epar[e, b, EP_FRICTION] = mu
    W.epar[e, b, EP_SCALE] = s
    return s


def fill_ranges(fp: np.ndarray, cols: Any, args: Mapping[str, Any], prefix: str, mass: str,
                fric: str, scale: str | None = None) -> None:
    """Fill fp's ``{prefix}mass_lo`` ... columns from the range arguments ``mass``, ``fric``,
    ``scale``; an unset range becomes :func:`randomise_body`'s "keep the scene's value"
    marker (mass and scale 0, friction -1)."""
    m, f = args[mass], args[fric]
    fp[[getattr(cols, f"{prefix}mass_lo"), getattr(cols, f"{prefix}mass_hi")]] = \
        m if m else (0.0, 0.0)
    fp[[getattr(cols, f"{prefix}fric_lo"), getattr(cols, f"{prefix}fric_hi")]] = \
        f if f else (-1.0, -1.0)
    if scale is not None:
        s = args[scale]
        fp[[getattr(cols, f"{prefix}scale_lo"), getattr(cols, f"{prefix}scale_hi")]] = \
            s if s else (0.0, 0.0)


def common_parameters(task: Any, env: Any) -> tuple[tuple[float, ...], float, float, float]:
    """The spawn region (x0, y0, x1, y1) [m], success distance [m] and wall margin [m] of
    ``task`` (its arguments, else its class defaults) and its robot's bounding radius [m];
    the env keeps the success distance and margin (for the renderer and the docs)."""
    a = task.args
    reg = a["spawn_region"] or task.region
    succ = a["success_distance"] if a.get("success_distance") is not None \
        else task.success_distance
    margin = a["wall_margin"] if a["wall_margin"] is not None else task.wall_margin
    env.success_distance, env.wall_margin = succ, margin
    sc = env.world.scene
    robot_r = float(sc.bflt[sc.index[task.robot_body], BF_BRAD])
    return reg, succ, margin, robot_r


def fill_common(task: Any, env: Any, reg: tuple[float, ...], succ: float, margin: float,
                robot_r: float, attributes: tuple[str, ...] = ()) -> tuple[np.ndarray, Any]:
    """A new parameter row ``fp`` (the columns ``task.fp_names``) and its columns, with those
    every task has filled: region [m], success distance [m], success bonus, step penalty, the
    robot's radius [m] and traction mu m g [N], the wall margin [m]; then each column named
    in ``attributes`` from the task's attribute of the same name."""
    cols = columns(task.fp_names)
    fp = np.zeros(len(cols))
    fp[[cols.x0, cols.y0, cols.x1, cols.y1]] = reg
    fp[cols.success_distance] = succ
    fp[cols.bonus] = task.success_bonus
    fp[cols.step_penalty] = task.step_penalty
    fp[cols.robot_r] = robot_r
    fp[cols.traction] = float(env.world.traction(task.robot_body)[0])
    fp[cols.margin] = margin
    for name in attributes:
        fp[getattr(cols, name)] = getattr(task, name)
    return fp, cols


__all__ = ["common_parameters", "fill_common", "fill_ranges", "randomise_body"]
