"""Independent overlap check for the physics tests: the deepest overlap between any two bodies.

The engine's own ``max_penetration`` is what is under test, so this recomputes overlaps from
the final poses alone: every pair of movable bodies whose bounding circles meet, and every
movable body against every static piece whose box its circle reaches, through the SAT of
narrowphase.py (tested on its own in test_narrowphase.py). O(n^2) in the movable bodies; meant
for test scenes of up to a few hundred bodies.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from push_envs.physics.layout import BF_BRAD
from push_envs.physics.layout import BI_PCOUNT
from push_envs.physics.layout import BI_PSTART
from push_envs.physics.layout import EP_SCALE
from push_envs.physics.layout import PF_MAXX
from push_envs.physics.layout import PF_MAXY
from push_envs.physics.layout import PF_MINX
from push_envs.physics.layout import PF_MINY
from push_envs.physics.layout import PF_RAD
from push_envs.physics.layout import PI_KIND
from push_envs.physics.layout import PI_NV
from push_envs.physics.narrowphase import MAX_VERTS
from push_envs.physics.narrowphase import OUT_LEN
from push_envs.physics.narrowphase import collide


@njit(cache=True)
def _place(p, x, y, th, sc, pint, pvert, out):
    c, s = math.cos(th), math.sin(th)
    for i in range(pint[p, PI_NV]):
        lx, ly = pvert[p, i, 0] * sc, pvert[p, i, 1] * sc
        out[i, 0] = x + c * lx - s * ly
        out[i, 1] = y + s * lx + c * ly


@njit(cache=True)
def _worst(e, movable, bint, bflt, pint, pvert, pflt, sint, svert, sflt, pos, ang, epar):
    va = np.zeros((MAX_VERTS, 2))
    vb = np.zeros((MAX_VERTS, 2))
    out = np.zeros(OUT_LEN)
    nrm = np.zeros((2, MAX_VERTS, 2))
    worst = 0.0
    wi, wj = -1, -1
    nm = movable.shape[0]
    for ii in range(nm):
        a = movable[ii]
        ra = bflt[a, BF_BRAD] * epar[e, a, EP_SCALE]
        ax, ay = pos[e, a, 0], pos[e, a, 1]
        for jj in range(ii + 1, nm):
            b = movable[jj]
            rb = bflt[b, BF_BRAD] * epar[e, b, EP_SCALE]
            if (pos[e, b, 0] - ax) ** 2 + (pos[e, b, 1] - ay) ** 2 > (ra + rb) ** 2:
                continue
            for p in range(bint[a, BI_PSTART], bint[a, BI_PSTART] + bint[a, BI_PCOUNT]):
                _place(p, ax, ay, ang[e, a], epar[e, a, EP_SCALE], pint, pvert, va)
                for q in range(bint[b, BI_PSTART], bint[b, BI_PSTART] + bint[b, BI_PCOUNT]):
                    _place(q, pos[e, b, 0], pos[e, b, 1], ang[e, b], epar[e, b, EP_SCALE], pint,
                           pvert, vb)
                    if collide(pint[p, PI_KIND], va, pint[p, PI_NV],
                               pflt[p, PF_RAD] * epar[e, a, EP_SCALE], pint[q, PI_KIND], vb,
                               pint[q, PI_NV], pflt[q, PF_RAD] * epar[e, b, EP_SCALE], 0.0, out,
                               nrm):
                        if out[2] > worst:
                            worst, wi, wj = out[2], a, b
        for q in range(sint.shape[0]):
            dx = max(sflt[q, PF_MINX] - ax, 0.0, ax - sflt[q, PF_MAXX])
            dy = max(sflt[q, PF_MINY] - ay, 0.0, ay - sflt[q, PF_MAXY])
            if dx * dx + dy * dy > ra * ra:
                continue
            for p in range(bint[a, BI_PSTART], bint[a, BI_PSTART] + bint[a, BI_PCOUNT]):
                _place(p, ax, ay, ang[e, a], epar[e, a, EP_SCALE], pint, pvert, va)
                if collide(pint[p, PI_KIND], va, pint[p, PI_NV],
                           pflt[p, PF_RAD] * epar[e, a, EP_SCALE], sint[q, PI_KIND], svert[q],
                           sint[q, PI_NV], sflt[q, PF_RAD], 0.0, out, nrm):
                    if out[2] > worst:
                        worst, wi, wj = out[2], a, -2 - q
    return worst, wi, wj


def worst_overlap(w, env: int = 0) -> tuple[float, int, int]:
    """(deepest overlap [m], body a, body b or -2 - static piece) in ``env`` of World ``w``."""
    s = w.scene
    return _worst(env, s.movable, s.bint, s.bflt, s.pint, s.pvert, s.pflt, s.sint, s.svert,
                  s.sflt, w.pos, w.ang, w.epar)
