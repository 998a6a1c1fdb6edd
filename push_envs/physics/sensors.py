"""contact2d: the sensors stage, and the fixed-size contact readings built from its buffers.

* ``write_contacts`` (the step's last stage): the touching pairs of the last sub-step into
  the contact buffers ``cti``/``ctf``/``ctn``, with forces [N] from the solver's lambdas;
* ``contact_array`` (``World.contact_array``): a compiled kernel over the batch that reads
  them into fixed-size arrays, for observations; ``sorted_slot`` is the one slot order of
  contact readings, shared with the task observations.

The per-object view of the same buffers, :class:`~push_envs.physics.world.ContactReport`
(``World.contacts``), is built in world.py. Only touching contacts (gap <= rest tolerance)
are reported.
"""

from __future__ import annotations

from numba import njit

from .contacts import uf_find
from .jit import compiled
from .layout import BI_KIND
from .layout import BS_DRIVE
from .layout import CT_DEPTH
from .layout import CT_FN
from .layout import CT_FT
from .layout import CT_NPTS
from .layout import CT_NX
from .layout import CT_NY
from .layout import CT_P1X
from .layout import CT_P1Y
from .layout import CT_P2X
from .layout import CT_P2Y
from .layout import CT_PX
from .layout import CT_PY
from .layout import DRIVEN
from .layout import EP_FRICTION
from .layout import EP_MASS
from .layout import HL_MAXPEN
from .layout import PASSIVE
from .layout import PFL_DEPTH
from .layout import PFL_DMAX
from .layout import PFL_LPOS
from .layout import PFL_LTAN
from .layout import PFL_LVEL
from .layout import PFL_LVEL2
from .layout import PFL_LVT
from .layout import PFL_NPTS
from .layout import PFL_NX
from .layout import PFL_NY
from .layout import PFL_P1X
from .layout import PFL_P1Y
from .layout import PFL_P2X
from .layout import PFL_P2Y
from .layout import PFL_TOUCH
from .layout import PRS_A
from .layout import PRS_B
from .layout import PRS_SP


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


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def write_contacts(e, npairs, frozen, dts, gravity, prs, bint, epar, bsc, bis, pfl, cti, ctf,
                   ctn, hl):
    """The sensors stage: touching pairs of the last sub-step into the contact buffers, then
    the ``frozen`` ones of the sleepers (at the pair buffers' end, sleeping.py: resting, no
    force).

    Forces [N] come from the solver's accumulated position and velocity lambdas over the
    sub-step ``dts`` [s]; ``hl[e, HL_MAXPEN]`` gets the deepest overlap left [m]."""
    n = 0
    cap = cti.shape[1]
    maxpen = 0.0
    top = prs.shape[1]
    for j in range(npairs + frozen):
        k = j if j < npairs else top - frozen + (j - npairs)
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


