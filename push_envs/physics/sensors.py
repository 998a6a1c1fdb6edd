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

from .contacts import uf_find
from .jit import compiled
from .layout import (
    BI_KIND,
    BS_DRIVE,
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
    DRIVEN,
    EP_FRICTION,
    EP_MASS,
    HL_MAXPEN,
    PASSIVE,
    PFL_DEPTH,
    PFL_DMAX,
    PFL_LPOS,
    PFL_LTAN,
    PFL_LVEL,
    PFL_LVEL2,
    PFL_LVT,
    PFL_NPTS,
    PFL_NX,
    PFL_NY,
    PFL_P1X,
    PFL_P1Y,
    PFL_P2X,
    PFL_P2Y,
    PFL_TOUCH,
    PRS_A,
    PRS_B,
    PRS_SP,
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


@compiled
def sorted_slot(row, base, width, key_col, seen, slots, key):
    """Slot for a reading with sort ``key`` among ``seen`` earlier ones, largest key first.

    The fixed slots are ``slots`` runs of ``width`` numbers starting at ``row[base]``, the key
    in column ``key_col``. Smaller readings move down one slot to make room (the last falls
    off); returns ``slots`` when the new reading is too small to keep. This is the one slot
    order of contact readings: ``World.contact_array`` and the task observations use it.
    """
    slot = min(seen, slots)
    while slot > 0 and row[base + width * (slot - 1) + key_col] < key:
        if slot < slots:
            for j in range(width):
                row[base + width * slot + j] = row[base + width * (slot - 1) + j]
        slot -= 1
    return slot


@njit(cache=True)
def contact_array(body, cti, ctf, ctn, out, count):
    """Fill ``out[e]`` with ``body``'s contacts (largest force first) and ``count[e]``."""
    m = out.shape[1]
    w = out.shape[2]
    for e in range(out.shape[0]):
        row = out[e].reshape(m * w)
        for j in range(m * w):
            row[j] = 0.0
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
            f = ctf[e, c, CT_FN]
            slot = sorted_slot(row, 0, w, 3, n, m, f)
            n += 1
            if slot < m:
                q = w * slot
                row[q] = 1.0
                row[q + 1] = sgn * ctf[e, c, CT_NX]
                row[q + 2] = sgn * ctf[e, c, CT_NY]
                row[q + 3] = f
                row[q + 4] = ctf[e, c, CT_PX]
                row[q + 5] = ctf[e, c, CT_PY]
                row[q + 6] = ctf[e, c, CT_DEPTH]
                row[q + 7] = other
        count[e] = n


@compiled
def write_contacts(e, npairs, dts, gravity, prs, bint, epar, bsc, bis, pfl, cti, ctf, ctn,
                    hl):
    """The sensors stage: touching pairs of the last sub-step into the contact buffers.

    Forces [N] come from the solver's accumulated position and velocity lambdas over the
    sub-step ``dts`` [s]; ``hl[e, HL_MAXPEN]`` gets the deepest overlap left [m]."""
    n = 0
    cap = cti.shape[1]
    maxpen = 0.0
    for k in range(npairs):
        if pfl[e, k, PFL_TOUCH] <= 0.0:
            continue
        a = prs[e, k, PRS_A]
        b = prs[e, k, PRS_B]
        depth_now = pfl[e, k, PFL_DEPTH]
        if depth_now > maxpen:
            maxpen = depth_now
        if n >= cap:
            continue
        fn = (pfl[e, k, PFL_LPOS] / dts + pfl[e, k, PFL_LVEL] + pfl[e, k, PFL_LVEL2]) / dts
        ft = (pfl[e, k, PFL_LTAN] / dts + pfl[e, k, PFL_LVT]) / dts
        raw = fn
        # A contact cannot carry more than the traction of a drive pushing into it.
        if bint[a, BI_KIND] == DRIVEN:
            fn = min(fn, epar[e, a, EP_FRICTION] * epar[e, a, EP_MASS] * gravity)
        if prs[e, k, PRS_SP] < 0 and bint[b, BI_KIND] == DRIVEN:
            fn = min(fn, epar[e, b, EP_FRICTION] * epar[e, b, EP_MASS] * gravity)
        # Inside a passive chain that drives push, no contact carries more than their traction.
        if bint[a, BI_KIND] == PASSIVE:
            drive = bsc[e, uf_find(e, a, bis), BS_DRIVE]
            if drive > 0.0:
                fn = min(fn, drive)
        if raw > fn:
            ft *= fn / raw
        cti[e, n, 0] = a
        cti[e, n, 1] = b
        cti[e, n, 2] = prs[e, k, PRS_SP]
        ctf[e, n, CT_NX] = pfl[e, k, PFL_NX]
        ctf[e, n, CT_NY] = pfl[e, k, PFL_NY]
        npts = pfl[e, k, PFL_NPTS]
        ctf[e, n, CT_P1X] = pfl[e, k, PFL_P1X]
        ctf[e, n, CT_P1Y] = pfl[e, k, PFL_P1Y]
        ctf[e, n, CT_P2X] = pfl[e, k, PFL_P2X]
        ctf[e, n, CT_P2Y] = pfl[e, k, PFL_P2Y]
        ctf[e, n, CT_PX] = 0.5 * (pfl[e, k, PFL_P1X] + pfl[e, k, PFL_P2X])
        ctf[e, n, CT_PY] = 0.5 * (pfl[e, k, PFL_P1Y] + pfl[e, k, PFL_P2Y])
        ctf[e, n, CT_NPTS] = npts
        dmax = pfl[e, k, PFL_DMAX]
        ctf[e, n, CT_DEPTH] = dmax if dmax > 0.0 else depth_now
        ctf[e, n, CT_FN] = fn
        ctf[e, n, CT_FT] = ft
        n += 1
    ctn[e] = n
    hl[e, HL_MAXPEN] = maxpen


