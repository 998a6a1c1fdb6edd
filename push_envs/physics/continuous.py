"""Continuous collision: no body passes through another, whatever its size, speed and step.

The sub-step rule (substeps.py) keeps every body within ``PR_SUBFRAC`` of its half-thickness
per sub-step, so the separating axis always pushes it back the way it came; past the cap on
sub-steps (``PR_MAXSUB``), or for a bullet (``BODY_BULLET``, left out of the count), a body
may move farther. Such a body is *fast* in the sub-step, and this stage sweeps it: its motion
from the sub-step's start pose to its current pose, a straight line in position and angle, is
advanced conservatively against every body its broad-phase pairs list (static pieces and
movable bodies, each along its own sweep), and stopped where it would sink deeper into one
than the sub-step rule allows. It runs twice per sub-step (pipeline.py):

* after the broad phase, on free motion (the pose a drive or coasting reached): a clamped
  body's free motion ends at the time of impact, its velocity kept (Box2D's time-of-impact
  pause), and the contact solve then meets the contact;
* after the position sweeps, on the corrections (a robot pushing a 1 mm disc moves it as far
  as itself): a clamped body is put back at its time of impact, and the sweeps run again to
  settle what that left (the pusher now overlaps it).

Conservative advancement (Mirtich's, as Box2D's ``b2TimeOfImpact`` brackets it), for a pair
at relative positions t in [0, 1] of both sweeps::

    bound  = |d_a - d_b| + |dth_a| r_a + |dth_b| r_b    most any point moves, relative [m]
    target = min(gap(0), 0) - allow                     allow = PR_SUBFRAC * thinner half
    t = 0; repeat: g = gap(t);  g <= target + eps: hit at t
                                t += (g - target) / bound;  t >= 1: no hit

``gap`` is a lower bound of the signed distance between the two bodies (exact for circles;
the largest separation over the polygons' face normals, which never exceeds the distance,
and equals minus the penetration depth when they overlap), so a step never passes the
target. The target lets a body sink as deep as a legal sub-step could (so one sliding along
a wall, or resting on it, is never paused), and no deeper: the solve then pushes it out on
the side it came from. A sweep that has not converged in ``_CA_ITERS`` advances stops where
it is (safe: short of the target).

Cores. SAT measures the depth of the overlap along the axis of least overlap, and where two
static pieces meet (the joint of two walls), that axis can be the wrong one::

          V=========================   top wall
        <=|=========== wedge           the wedge slid tip first along the top wall; its tip
          |                            has crossed the left wall's line by d, and the left
          |  left wall                 wall's end V lies on its long face: the least overlap
                                       is along that face's normal, ~d / 15 for a 1:15 wedge

so the target above lets the tip sink 15 times deeper than a sub-step may, and the contact
solve pushes along the wedge's own face, into the top wall, never back. Box2D's answer
(``b2ContinuousQueryCallback``'s fallback) is a core: a point deep in the body, which a body
reaches only by passing into the other, not by resting against it (a triangle's lies 2/3 of
its half-thickness in, so a sweep that sinks one deeper than that stops there, short of the
target). Here each polygon piece's core is its vertices' mean, and its gap to the other
body's pieces is exact (a point to a convex piece), so::

    core gap g(t) = least distance from a's cores to b's pieces (and from b's to a's)
    g(0) <= 0 or bound <= g(0): nothing to keep (already in, or out of reach)
    else conservative advancement as above, to a target of 0

and the pair's time of impact is the earlier of the two. A thin wedge then stops with its
tip in the corner, not through it, and the narrow phase's joints (joints.py) push the tip
back out along the walls' faces. Circles need no core (their gap is exact).

A disc about its centre of mass against a static piece needs no advancing: its sweep is a
line, and the first time it comes within the target of the piece is a ray cast against the
piece's edges pushed out by that distance and discs at its vertices (:func:`disc_toi`). The
advancing steps by at most the gap over the motion, so a small disc sliding along a wall
stopped where its 64 advances ended, a few centimetres on (a 0.5 mm bullet at 10 m/s moved
2.9 cm a 0.2 s step).

Bodies clamped against each other are swept again along their shortened motions, for a few
rounds (``_ROUNDS``); a pair still hitting after them is frozen at its start poses. A clamp
at a core's time of impact is not taken back in the next round: the shortened sweep visits
the same points, scaled, so its advance lands on the new end.

Compiled on demand. The step reaches this stage through an address (:data:`CCD`,
``prm[PR_CCDFN]``), which is 0 until some world of the process first has a fast body: that
env's step is then rolled back to its start (``ST_CCD``, as for a full pair buffer), World
compiles :data:`CCD` (or loads it from the cache), and the env steps again, now through it.
A step's result is the same either way (tests/physics/test_continuous.py), and scenes that
never have a fast body (every task, at its speeds) never compile it: about 3 of PushBox-v0's
45-60 CPU-seconds of first ``gym.make`` on an empty cache.
"""

from __future__ import annotations

import math

import numpy as np

from .abi import OP_SIG
from .abi import CFunction
from .arrays import cold_row
from .arrays import load_world
from .jit import compiled
from .layout import BF_BRAD
from .layout import BF_HALF
from .layout import BI_PCOUNT
from .layout import BI_PSTART
from .layout import BS_T0
from .layout import BS_TOI
from .layout import BS_TP
from .layout import BS_X0
from .layout import BS_XP
from .layout import BS_Y0
from .layout import BS_YP
from .layout import EP_SCALE
from .layout import IS_SKIP
from .layout import PF_BCX
from .layout import PF_BCY
from .layout import PF_BRAD
from .layout import PF_RAD
from .layout import PI_KIND
from .layout import PI_NV
from .layout import PR_SUBFRAC
from .layout import PRS_A
from .layout import PRS_B
from .layout import PRS_SP
from .layout import SC_AWAKE
from .lidar import ray_circle
from .lidar import ray_segment
from .narrowphase import CIRCLE
from .narrowphase import SEGMENT
from .narrowphase import circle_face
from .narrowphase import edge_normals
from .narrowphase import max_separation
from .narrowphase import mean_point
from .narrowphase import piece_circle
from .narrowphase import place
from .sleeping import regions

_CA_ITERS = 64  # advances per sweep before it stops where it is
_CA_EPS = 1e-9  # [m] how near the target a sweep stops
_CORE_EPS = 1e-9  # [m] a core this near a piece touches it
_ROUNDS = 3  # rounds of sweeps along shortened motions before a pair is frozen


# --------------------------------------------------------------------------------------------
# A lower bound of the signed distance between two placed pieces
# --------------------------------------------------------------------------------------------
@compiled
def _circle_polygon_gap(cx, cy, r, vb, nb):
    """Signed distance [m] from a circle of radius r at (cx, cy) to a convex polygon or
    segment (negative: the depth of the overlap)."""
    sep, idx = circle_face(cx, cy, vb, nb)
    if sep <= 0.0:
        return sep - r
    j = idx + 1 if idx + 1 < nb else 0
    v1x, v1y, v2x, v2y = vb[idx, 0], vb[idx, 1], vb[j, 0], vb[j, 1]
    if (cx - v1x) * (v2x - v1x) + (cy - v1y) * (v2y - v1y) <= 0.0:
        return math.sqrt((cx - v1x) ** 2 + (cy - v1y) ** 2) - r
    if (cx - v2x) * (v1x - v2x) + (cy - v2y) * (v1y - v2y) <= 0.0:
        return math.sqrt((cx - v2x) ** 2 + (cy - v2y) ** 2) - r
    return sep - r


@compiled
def piece_gap(ka, va, na, ra, kb, vb, nb, rb, nrm):
    """A lower bound [m] of the signed distance between two placed pieces (kinds, world
    vertices, counts, radii and normals' scratch ``nrm`` as narrowphase.collide takes them):
    exact with a circle, the best face-normal separation of two polygons (at most the
    distance; minus the penetration depth when they overlap)."""
    if ka == CIRCLE:
        if kb == CIRCLE:
            return math.sqrt((va[0, 0] - vb[0, 0]) ** 2 + (va[0, 1] - vb[0, 1]) ** 2) - ra - rb
        return _circle_polygon_gap(va[0, 0], va[0, 1], ra, vb, nb) - rb
    if kb == CIRCLE:
        return _circle_polygon_gap(vb[0, 0], vb[0, 1], rb, va, na) - ra
    edge_normals(va, na, nrm[0])
    edge_normals(vb, nb, nrm[1])
    sa = max_separation(va, na, nrm[0], vb, nb)[0]
    sb = max_separation(vb, nb, nrm[1], va, na)[0]
    return max(sa, sb) - ra - rb


@compiled
def _start(e, b, sleep_on, pos, ang, bsc, bis):
    """Body b's pose at the sub-step's start (COM x, y [m], theta [rad]): BS_X0.., or, for a
    body that slept into this sub-step (free motion skipped it and left those of an earlier
    one), its current pose: it has not moved."""
    if sleep_on and bis[e, b, IS_SKIP] != 0:
        return pos[e, b, 0], pos[e, b, 1], ang[e, b]
    return bsc[e, b, BS_X0], bsc[e, b, BS_Y0], bsc[e, b, BS_T0]


@compiled
def _swept(e, b, t, sleep_on, pos, ang, bsc, bis):
    """Body b's pose at t in [0, 1] of its sweep: from its sub-step start (:func:`_start`) to
    its current pose, linear in position and angle (COM x, y [m], theta [rad])."""
    x0, y0, t0 = _start(e, b, sleep_on, pos, ang, bsc, bis)
    return (x0 + t * (pos[e, b, 0] - x0), y0 + t * (pos[e, b, 1] - y0),
            t0 + t * (ang[e, b] - t0))


@compiled
def _pair_gap(e, a, b, sp, t, sleep_on, pos, ang, epar, bint, pint, pvert, pflt, sint, svert,
              sflt, bsc, bis, vbuf):
    """Lower bound [m] of the signed distance between a and b (or static piece sp), each at
    position t of its sweep."""
    va = vbuf[e, 0]
    vb = vbuf[e, 1]
    nrm = vbuf[e, 2:4]
    ax, ay, ath = _swept(e, a, t, sleep_on, pos, ang, bsc, bis)
    ca, sa, sca = math.cos(ath), math.sin(ath), epar[e, a, EP_SCALE]
    bx = by = bth = 0.0
    cb = sb = scb = 1.0
    if sp < 0:
        bx, by, bth = _swept(e, b, t, sleep_on, pos, ang, bsc, bis)
        cb, sb, scb = math.cos(bth), math.sin(bth), epar[e, b, EP_SCALE]
        q0, q1 = bint[b, BI_PSTART], bint[b, BI_PSTART] + bint[b, BI_PCOUNT]
    else:
        q0, q1 = sp, sp + 1
    best = np.inf
    for p in range(bint[a, BI_PSTART], bint[a, BI_PSTART] + bint[a, BI_PCOUNT]):
        pcx, pcy, prad = piece_circle(p, ax, ay, ca, sa, sca, pflt)
        placed = False
        for q in range(q0, q1):
            if sp < 0:
                qcx, qcy, qrad = piece_circle(q, bx, by, cb, sb, scb, pflt)
            else:
                qcx, qcy, qrad = sflt[q, PF_BCX], sflt[q, PF_BCY], sflt[q, PF_BRAD]
            # The bounding circles' gap is a lower bound too: enough where it is large.
            circles = math.sqrt((pcx - qcx) ** 2 + (pcy - qcy) ** 2) - prad - qrad
            if circles >= best:
                continue
            if not placed:
                na = place(e, p, ax, ay, ca, sa, sca, pint, pvert, va)
                placed = True
            if sp < 0:
                nb = place(e, q, bx, by, cb, sb, scb, pint, pvert, vb)
                g = piece_gap(pint[p, PI_KIND], va, na, pflt[p, PF_RAD] * sca, pint[q, PI_KIND],
                              vb, nb, pflt[q, PF_RAD] * scb, nrm)
            else:
                g = piece_gap(pint[p, PI_KIND], va, na, pflt[p, PF_RAD] * sca, sint[q, PI_KIND],
                              svert[q], sint[q, PI_NV], sflt[q, PF_RAD], nrm)
            best = min(best, max(g, circles))
    return best


# --------------------------------------------------------------------------------------------
# The cores: a point deep in each polygon piece, which must not enter the other body
# --------------------------------------------------------------------------------------------
@compiled
def _point_gap(px, py, kind, v, n, rad):
    """Signed distance [m] from the point (px, py) to a placed piece (kind, world vertices v,
    count n, radius rad [m]); negative inside it."""
    if kind == CIRCLE:
        return math.sqrt((px - v[0, 0]) ** 2 + (py - v[0, 1]) ** 2) - rad
    return _circle_polygon_gap(px, py, 0.0, v, n) - rad


@compiled
def _cores_gap(e, a, b, sp, t, sleep_on, pos, ang, epar, bint, pint, pvert, pflt, sint, svert,
               sflt, bsc, bis, vbuf):
    """Least signed distance [m] from the core of a polygon piece of a (its vertices' mean)
    to a piece of b (or static piece sp), and, for a movable b, from b's cores to a's pieces,
    each body at position t of its sweep; inf when neither has a polygon piece."""
    va = vbuf[e, 0]
    vb = vbuf[e, 1]
    ax, ay, ath = _swept(e, a, t, sleep_on, pos, ang, bsc, bis)
    ca, sa, sca = math.cos(ath), math.sin(ath), epar[e, a, EP_SCALE]
    best = np.inf
    if sp >= 0:
        for p in range(bint[a, BI_PSTART], bint[a, BI_PSTART] + bint[a, BI_PCOUNT]):
            if pint[p, PI_KIND] == CIRCLE:
                continue
            na = place(e, p, ax, ay, ca, sa, sca, pint, pvert, va)
            px, py = mean_point(va, na)
            best = min(best, _point_gap(px, py, sint[sp, PI_KIND], svert[sp], sint[sp, PI_NV],
                                        sflt[sp, PF_RAD]))
        return best
    bx, by, bth = _swept(e, b, t, sleep_on, pos, ang, bsc, bis)
    cb, sb, scb = math.cos(bth), math.sin(bth), epar[e, b, EP_SCALE]
    for side in range(2):
        c0, c1, x1, y1, c_1, s_1, k1 = bint[a, BI_PSTART], bint[a, BI_PCOUNT], ax, ay, ca, sa, sca
        q0, q1, x2, y2, c_2, s_2, k2 = bint[b, BI_PSTART], bint[b, BI_PCOUNT], bx, by, cb, sb, scb
        if side == 1:
            c0, c1, x1, y1, c_1, s_1, k1, q0, q1, x2, y2, c_2, s_2, k2 = (
                q0, q1, x2, y2, c_2, s_2, k2, c0, c1, x1, y1, c_1, s_1, k1)
        for p in range(c0, c0 + c1):
            if pint[p, PI_KIND] == CIRCLE:
                continue
            na = place(e, p, x1, y1, c_1, s_1, k1, pint, pvert, va)
            px, py = mean_point(va, na)
            for q in range(q0, q0 + q1):
                nb = place(e, q, x2, y2, c_2, s_2, k2, pint, pvert, vb)
                best = min(best, _point_gap(px, py, pint[q, PI_KIND], vb, nb,
                                            pflt[q, PF_RAD] * k2))
    return best


@compiled
def core_toi(e, a, b, sp, bound, sleep_on, pos, ang, epar, bint, pint, pvert, pflt, sint,
             svert, sflt, bsc, bis, vbuf):
    """Time of impact t in [0, 1] (1: none) at which a core of one body (:func:`_cores_gap`)
    would first touch a piece of the other, by conservative advancement to a gap of 0; 1
    when the cores start touching or inside (nothing to keep) or out of reach (``bound``
    [m]: most any point moves, relative). See the module's sketch, 'Cores'."""
    gap = _cores_gap(e, a, b, sp, 0.0, sleep_on, pos, ang, epar, bint, pint, pvert, pflt, sint,
                     svert, sflt, bsc, bis, vbuf)
    if gap <= _CORE_EPS or gap >= bound:
        return 1.0
    t = 0.0
    for _ in range(_CA_ITERS):
        t += gap / bound
        if (1.0 - t) * bound <= _CA_EPS:
            return 1.0
        gap = _cores_gap(e, a, b, sp, t, sleep_on, pos, ang, epar, bint, pint, pvert, pflt,
                         sint, svert, sflt, bsc, bis, vbuf)
        if gap <= _CORE_EPS:
            return t
    return t


# --------------------------------------------------------------------------------------------
# A disc against a static piece: the time of impact exactly
# --------------------------------------------------------------------------------------------
@compiled
def disc_toi(cx, cy, mx, my, reach, kind, v, nv, rad):
    """Fraction t in [0, 1] of the motion (mx, my) [m] at which the point (cx, cy) first
    comes within ``reach`` [m] of a static piece (kind, world vertices v, count nv, radius
    rad); 1 when it never does. The point starts farther than ``reach``.

    The set within ``reach`` of a convex piece is its edges pushed out by ``reach`` joined
    by discs at its vertices (a disc's own rim grown by ``reach``), so the first entry is
    the nearest hit of the ray on those offset edges and discs."""
    length = math.sqrt(mx * mx + my * my)
    if length == 0.0:
        return 1.0
    dx, dy = mx / length, my / length
    if kind == CIRCLE:
        best = ray_circle(cx, cy, dx, dy, v[0, 0], v[0, 1], rad + reach)
    else:
        best = np.inf
        grow = reach + rad  # (a polygon's rad is 0; kept for a rounded one)
        n = 2 if kind == SEGMENT else nv
        for i in range(n):
            j = i + 1 if i + 1 < n else 0
            ex, ey = v[j, 0] - v[i, 0], v[j, 1] - v[i, 1]
            el = math.sqrt(ex * ex + ey * ey)
            if el > 0.0:
                ox, oy = grow * ey / el, -grow * ex / el  # outward for a CCW edge
                best = min(best, ray_segment(v[i, 0] + ox, v[i, 1] + oy, v[j, 0] + ox,
                                           v[j, 1] + oy, cx, cy, dx, dy))
            best = min(best, ray_circle(cx, cy, dx, dy, v[i, 0], v[i, 1], grow))
    t = best / length
    return t if t < 1.0 - _CA_EPS / length else 1.0


# --------------------------------------------------------------------------------------------
# One pair: the time of impact by conservative advancement
# --------------------------------------------------------------------------------------------
@compiled
def _motion(e, b, sleep_on, pos, ang, bflt, epar, bsc, bis):
    """Body b's motion in the sub-step so far: (dx, dy [m], turn times the bounding radius
    [m]), from its start pose (:func:`_start`) to its current pose."""
    x0, y0, t0 = _start(e, b, sleep_on, pos, ang, bsc, bis)
    return (pos[e, b, 0] - x0, pos[e, b, 1] - y0,
            abs(ang[e, b] - t0) * bflt[b, BF_BRAD] * epar[e, b, EP_SCALE])


@compiled
def fast(e, b, frac, sleep_on, pos, ang, bflt, epar, bsc, bis):
    """Whether any point of body b moved more than ``frac`` of its half-thickness in the
    sub-step so far (displacement plus turn times the bounding radius, against BF_HALF)."""
    dx, dy, spin = _motion(e, b, sleep_on, pos, ang, bflt, epar, bsc, bis)
    return math.sqrt(dx * dx + dy * dy) + spin > frac * bflt[b, BF_HALF] * epar[e, b, EP_SCALE]


@compiled
def pair_toi(e, k, frac, sleep_on, prs, pos, ang, epar, bint, bflt, pint, pvert, pflt, sint,
             svert, sflt, bsc, bis, vbuf):
    """Time of impact t in [0, 1] of pair k along both bodies' sweeps (1: none): where the
    pair would sink deeper than ``frac`` of the thinner body's half-thickness (beyond its
    depth at the start, if it started deeper). See the module's sketch."""
    a = prs[e, k, PRS_A]
    b = prs[e, k, PRS_B]
    sp = prs[e, k, PRS_SP]
    half = bflt[a, BF_HALF] * epar[e, a, EP_SCALE]
    dx, dy, spin = _motion(e, a, sleep_on, pos, ang, bflt, epar, bsc, bis)
    if sp < 0:
        half = min(half, bflt[b, BF_HALF] * epar[e, b, EP_SCALE])
        bdx, bdy, bspin = _motion(e, b, sleep_on, pos, ang, bflt, epar, bsc, bis)
        dx -= bdx
        dy -= bdy
        spin += bspin
    bound = math.sqrt(dx * dx + dy * dy) + spin
    allow = frac * half
    if bound <= allow:
        return 1.0  # no point moved far enough to sink deeper than a sub-step may
    p = bint[a, BI_PSTART]
    if sp >= 0 and bint[a, BI_PCOUNT] == 1 and pint[p, PI_KIND] == CIRCLE and \
            pvert[p, 0, 0] == 0.0 and pvert[p, 0, 1] == 0.0:
        # a disc about its centre of mass against a static piece: its sweep is a line
        # whatever it turns, and the time of impact is exact (conservative advancement,
        # whose steps are at most the gap over the motion, would crawl along a wall it
        # slides on: a 0.5 mm bullet at 10 m/s moved a few cm a step)
        x0, y0, _t0 = _start(e, a, sleep_on, pos, ang, bsc, bis)
        r = pflt[p, PF_RAD] * epar[e, a, EP_SCALE]
        kind, v, nv, rad = sint[sp, PI_KIND], svert[sp], sint[sp, PI_NV], sflt[sp, PF_RAD]
        gap0 = _point_gap(x0, y0, kind, v, nv, rad)
        reach = r + min(gap0 - r, 0.0) - allow
        if reach <= 0.0 and kind == SEGMENT:
            # Started deeper than a sub-step may sink: a segment has no inside (two faces back
            # to back), so the pair's depth peaks where the centre crosses its line and falls
            # past it, and a sweep to a depth beyond the peak lets the disc through (a disc
            # crushed into the corner of two segments went out so). Its centre may come at
            # most half way to the line.
            reach = 0.5 * gap0
        if reach > 0.0:  # (else the disc started deeper than its core: swept as any body)
            return disc_toi(x0, y0, dx, dy, reach, kind, v, nv, rad)
    return min(_sink_toi(e, a, b, sp, bound, allow, sleep_on, pos, ang, epar, bint, pint,
                         pvert, pflt, sint, svert, sflt, bsc, bis, vbuf),
               core_toi(e, a, b, sp, bound, sleep_on, pos, ang, epar, bint, pint, pvert, pflt,
                        sint, svert, sflt, bsc, bis, vbuf))


@compiled
def _sink_toi(e, a, b, sp, bound, allow, sleep_on, pos, ang, epar, bint, pint, pvert, pflt,
              sint, svert, sflt, bsc, bis, vbuf):
    """Time of impact t in [0, 1] (1: none) at which the pair would sink ``allow`` [m] deeper
    than it started (``bound`` [m]: most any point moves, relative)."""
    gap = _pair_gap(e, a, b, sp, 0.0, sleep_on, pos, ang, epar, bint, pint, pvert, pflt, sint,
                    svert, sflt, bsc, bis, vbuf)
    target = min(gap, 0.0) - allow
    t = 0.0
    for _ in range(_CA_ITERS):
        t += (gap - target) / bound
        if (1.0 - t) * bound <= _CA_EPS:
            # Reaches the end within the tolerance: no hit (a body clamped in an earlier
            # round ends right at the target, and must not be taken back again).
            return 1.0
        gap = _pair_gap(e, a, b, sp, t, sleep_on, pos, ang, epar, bint, pint, pvert, pflt,
                        sint, svert, sflt, bsc, bis, vbuf)
        if gap <= target + _CA_EPS:
            return t
    return t


# --------------------------------------------------------------------------------------------
# The stage
# --------------------------------------------------------------------------------------------
@compiled
def _clamp(e, b, t, sleep_on, pos, ang, bsc, bis):
    x, y, th = _swept(e, b, t, sleep_on, pos, ang, bsc, bis)
    pos[e, b, 0] = x
    pos[e, b, 1] = y
    ang[e, b] = th


# Not inlined: a stage that does nothing in a step without fast bodies but check each body
# (continuous_active), so its body is typed once, apart from step_env.
@compiled
def sweep_fast(e, free, sleep_on, npairs, prm, prs, pos, ang, epar, bint, bflt, pint, pvert,
               pflt, sint, svert, sflt, movable, bsc, bis, vbuf):
    """Sweep the fast bodies of env e against their pairs and stop each at its earliest time
    of impact; returns the number of bodies moved back.

    ``free``: on free motion (after the broad phase), the clamped pose also becomes the end
    of free motion (``BS_XP``..), so the velocity the body had is kept; after the sweeps the
    clamp is a correction like any other. A body is fast when it moved more than PR_SUBFRAC
    of its half-thickness since the sub-step began; its ``BS_TOI`` (cold row) holds its
    earliest time of impact while this runs.
    """
    frac = prm[PR_SUBFRAC]
    nm = movable.shape[0]
    moved = 0
    for rnd in range(_ROUNDS + 1):
        for i in range(nm):
            b = movable[i]
            bsc[e, cold_row(bsc, b), BS_TOI] = 1.0
        hits = 0
        for k in range(npairs):
            a = prs[e, k, PRS_A]
            b = prs[e, k, PRS_B]
            sp = prs[e, k, PRS_SP]
            if not (fast(e, a, frac, sleep_on, pos, ang, bflt, epar, bsc, bis) or (
                    sp < 0 and fast(e, b, frac, sleep_on, pos, ang, bflt, epar, bsc, bis))):
                continue
            t = pair_toi(e, k, frac, sleep_on, prs, pos, ang, epar, bint, bflt, pint, pvert,
                         pflt, sint, svert, sflt, bsc, bis, vbuf)
            if t >= 1.0:
                continue
            if rnd == _ROUNDS:
                t = 0.0  # still hitting after the rounds: both stay where they started
            hits += 1
            ra = cold_row(bsc, a)
            bsc[e, ra, BS_TOI] = min(bsc[e, ra, BS_TOI], t)
            if sp < 0:
                rb = cold_row(bsc, b)
                bsc[e, rb, BS_TOI] = min(bsc[e, rb, BS_TOI], t)
        if hits == 0:
            break
        for i in range(nm):
            b = movable[i]
            t = bsc[e, cold_row(bsc, b), BS_TOI]
            if t >= 1.0:
                continue
            _clamp(e, b, t, sleep_on, pos, ang, bsc, bis)
            moved += 1
            if free:
                bsc[e, b, BS_XP] = pos[e, b, 0]
                bsc[e, b, BS_YP] = pos[e, b, 1]
                bsc[e, b, BS_TP] = ang[e, b]
    return moved


# LLVM-inlined into step_env, as each stage of the sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def any_fast(e, sleep_on, prm, movable, pos, ang, bflt, epar, bsc, bis):
    """Whether some body of env e moved more than PR_SUBFRAC of its half-thickness since
    the sub-step began (what makes :func:`sweep_fast` worth calling)."""
    frac = prm[PR_SUBFRAC]
    for i in range(movable.shape[0]):
        if fast(e, movable[i], frac, sleep_on, pos, ang, bflt, epar, bsc, bis):
            return True
    return False


OP_FREE = 1  # bit of sweep_op's code: sweep the free motion (else the corrections)
OP_ASLEEP = 2  # bit: sleeping is on (the awake bodies are the awake list of ``stamp``)
OP_PAIRS = 4  # the code's rest counts the candidate pairs: code // OP_PAIRS


def sweep_op(code, e, x, wp):
    """:func:`sweep_fast` of env ``e`` of the worlds at ``wp``, its flags and pair count
    packed in ``code`` (``OP_FREE | OP_ASLEEP | npairs * OP_PAIRS``; ``x`` unused). With
    sleeping on, the bodies swept are the awake list (``stamp``, its length at
    ``SC_AWAKE``, which the sleeping stages keep current), else every movable body."""
    W = load_world(wp)
    sleep_on = (code & OP_ASLEEP) != 0
    movable = W.movable
    if sleep_on:
        _, at, _, counts = regions(W.stamp, W.sint.shape[0], movable.shape[0])
        movable = W.stamp[e, at:at + W.stamp[e, counts + SC_AWAKE]]
    return sweep_fast(e, (code & OP_FREE) != 0, sleep_on, code // OP_PAIRS, W.prm, W.prs,
                      W.pos, W.ang, W.epar, W.bint, W.bflt, W.pint, W.pvert, W.pflt, W.sint,
                      W.svert, W.sflt, movable, W.bsc, W.bis, W.vbuf)


CCD = CFunction(sweep_op, OP_SIG)
"""Continuous collision as one C function ``int64(int64 code, int64 e, float64 x,
WorldArrays*)`` (:func:`sweep_op`), compiled on demand (see the module's docstring)."""
