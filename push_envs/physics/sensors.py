"""contact2d: contact readings from the last step, per object.

Two views of the same contacts:

* :class:`ContactReport` lists (``World.contacts``): one report per touching pair, from the
  owner's side (IR-SIM's ``ContactReport``), plus raisim's view of the pair: the contact
  frame (rows: two tangents, then the normal from B toward A), the impulse on object A in that
  frame (object B receives the negation), ``is_object_a`` and the pair object's index.
* fixed-size arrays (``World.contact_array``), built by a compiled kernel over the batch, for
  observations.

Only touching contacts (gap <= rest tolerance) are reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from .layout import (
    CT_DEPTH,
    CT_FN,
    CT_FT,
    CT_NPTS,
    CT_NX,
    CT_NY,
    CT_P1X,
    CT_P1Y,
    CT_P2X,
    CT_P2Y,
    CT_PX,
    CT_PY,
)

if TYPE_CHECKING:
    from .world import World



@dataclass(frozen=True, eq=False)
class ContactReport:
    """One contact of an object, seen from its own side.

    other:       name of the body it touches.
    point:       world-frame contact point (2,) [m], the middle of the contact patch.
    normal:      unit normal (2,) from ``other`` toward this object (the way it is pushed).
    depth:       overlap removed this step [m]; zero or negative for a resting contact.
    force:       normal contact force [N] (>= 0).
    friction:    tangential force on this object [N] along its tangent (-normal_y, normal_x).
    patch:       (n, 2) world-frame patch points [m] (2 when two edges lie flat together).
    frame:       raisim contact frame (3, 3): rows t1, t2, n with n from B toward A.
    impulse:     impulse on object A in that frame [N s] (the same in both objects' reports).
    is_object_a: whether this object is A of the pair.
    pair_index:  world index of ``other``.
    """

    other: str
    point: np.ndarray
    normal: np.ndarray
    depth: float
    force: float
    friction: float
    patch: np.ndarray
    frame: np.ndarray
    impulse: np.ndarray
    is_object_a: bool
    pair_index: int

    @property
    def own_impulse(self) -> np.ndarray:
        """Impulse on this object in the contact frame [N s] (B's is A's negated)."""
        return self.impulse if self.is_object_a else -self.impulse


def raisim_frame(normal: np.ndarray) -> np.ndarray:
    """Contact frame whose rows are t1, t2 and the normal, right-handed (t1 x t2 = n)."""
    nx, ny = float(normal[0]), float(normal[1])
    return np.array([[-ny, nx, 0.0], [0.0, 0.0, 1.0], [nx, ny, 0.0]])


def reports_for(world: World, body: int, env: int) -> list[ContactReport]:
    """Reports of ``body`` in ``env`` from the world's contact buffers."""
    names = world.scene.names
    out = []
    for c in range(int(world.ctn[env])):
        a, b, _sp = (int(v) for v in world.cti[env, c])
        if body not in (a, b):
            continue
        f = world.ctf[env, c]
        n_a = np.array([f[CT_NX], f[CT_NY]])
        is_a = body == a
        npts = int(f[CT_NPTS])
        patch = np.array([[f[CT_P1X], f[CT_P1Y]], [f[CT_P2X], f[CT_P2Y]]])[:npts]
        impulse = np.array([f[CT_FT], 0.0, f[CT_FN]]) * world.dt
        out.append(ContactReport(
            other=names[b if is_a else a],
            point=np.array([f[CT_PX], f[CT_PY]]),
            normal=n_a if is_a else -n_a,
            depth=float(f[CT_DEPTH]),
            force=float(f[CT_FN]),
            friction=float(f[CT_FT]),
            patch=patch,
            frame=raisim_frame(n_a),
            impulse=impulse,
            is_object_a=is_a,
            pair_index=b if is_a else a,
        ))
    return out


@njit(cache=True)
def contact_array(body, cti, ctf, ctn, out, count):
    """Fill ``out[e]`` with ``body``'s contacts (largest force first) and ``count[e]``."""
    m = out.shape[1]
    for e in range(out.shape[0]):
        for s in range(m):
            for j in range(out.shape[2]):
                out[e, s, j] = 0.0
        n = 0
        for c in range(ctn[e]):
            a = cti[e, c, 0]
            b = cti[e, c, 1]
            if a == body:
                sgn = 1.0
                other = b
            elif b == body:
                sgn = -1.0
                other = a
            else:
                continue
            n += 1
            f = ctf[e, c, CT_FN]
            # Insertion into the fixed slots, keeping the largest forces.
            slot = min(n - 1, m)
            while slot > 0 and out[e, slot - 1, 3] < f:
                if slot < m:
                    for j in range(8):
                        out[e, slot, j] = out[e, slot - 1, j]
                slot -= 1
            if slot < m:
                out[e, slot, 0] = 1.0
                out[e, slot, 1] = sgn * ctf[e, c, CT_NX]
                out[e, slot, 2] = sgn * ctf[e, c, CT_NY]
                out[e, slot, 3] = f
                out[e, slot, 4] = ctf[e, c, CT_PX]
                out[e, slot, 5] = ctf[e, c, CT_PY]
                out[e, slot, 6] = ctf[e, c, CT_DEPTH]
                out[e, slot, 7] = other
        count[e] = n
