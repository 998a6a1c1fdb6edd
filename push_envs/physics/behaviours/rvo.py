"""rvo: reciprocal velocity obstacles (IR-SIM's reciprocal_vel_obs, modes rvo, hrvo and vo).

The velocity a body takes is picked from a grid of candidates, as IR-SIM picks it::

    candidates   world velocities (vx_i, vy_j): each axis from max(v - acce, -vmax) up to
                 (not including) min(v + acce, vmax) in steps of 0.05 m/s (numpy's arange,
                 value for value), v the body's current velocity; a window that is empty
                 holds v clipped to [-vmax, vmax] alone
    cones        one per neighbour disc within neighbor_threshold [m] of the body (centre to
                 centroid): the directions that touch the disc of the summed radii, with its
                 apex at the mean of the two velocities (rvo), at the neighbour's velocity
                 (vo), or at HRVO's apex (hrvo); one per line segment (line strings, whatever
                 their distance): the directions that meet the segment, widened by the
                 body's radius at each end, apex at 0
    choice       the candidate outside every cone nearest the desired velocity (the first in
                 the grid's order on a tie); when every candidate is inside some cone, the one
                 of least factor / (time to the first collision) + distance to the desired
                 velocity

Radii are IR-SIM's radius_extend (bounding radius + 0.1 m). The same choice is found without
testing the whole grid (a 1,600-candidate grid for a window of +-1 m/s)::

    rings      the grid is walked ring by ring (Chebyshev distance) around the candidate
               nearest the desired velocity, each ring side by side, and only the stretch of
               a side within the best distance found so far
    covered    when that candidate is blocked, the rings its cone holds whole (all four
               corners inside by a margin: a cone is convex) are skipped: nothing is free
               there (_covered_rings)
    runs       a cone cuts a grid line in one interval (each edge's test is monotone along
               it), so where a candidate is inside a cone, the candidates the cone holds
               further along the side are skipped at once (the interval's end from the
               edges' crossings, settled by the exact test)
    bound      the walk stops once the next ring's nearest possible candidate (from its
               nearest entries on each axis) is farther than the best found; distances are
               compared squared, and exactly (hypot) only within 1e-12 of a tie
    penalty    when nothing is free, the same rings, stopping once a ring's distance to the
               desired velocity alone exceeds the least penalty (a penalty is at least that
               distance when factor >= 0)

The cones' edges are the direction to the neighbour turned by the half angle's sine and
cosine (IR-SIM takes cos and sin of atan2 +- asin: the same to rounding). A diff drive then
follows the chosen velocity through IR-SIM's vel_world2diff (w_max 1.5 rad/s, 0.2 s, 0.1 rad:
its defaults); an omni drive takes it rotated into its frame.

Parameters: vxmax, vymax [m/s] (1.5), acce [m/s] (1.0: the window's half-width), factor (1.0),
mode (rvo, hrvo or vo), neighbor_threshold [m] (3.0).
"""

from __future__ import annotations

import math

import numpy as np

from ..abi import CFunction
from ..arrays import load_world
from ..jit import compiled
from .arrays import load_behaviour
from .common import command_in_range
from .common import desired_omni
from .common import disc_in_reach
from .common import goal_of
from .common import own_state
from .common import segments_seen
from .common import world_to_diff
from .common import world_to_omni
from .common import write_command
from .layout import BI_KIN
from .layout import KIN_DIFF
from .layout import SN_CX
from .layout import SN_CY
from .layout import SN_R
from .layout import SN_T
from .layout import SN_VX
from .layout import SN_VY
from .layout import SN_X
from .layout import SN_Y
from .signatures import BODY_SIG

P_VXMAX = 0  # [m/s]
P_VYMAX = 1  # [m/s]
P_ACCE = 2  # half-width of the candidate window [m/s]
P_FACTOR = 3  # weight of the collision penalty
P_MODE = 4  # MODE_*
P_THRESH = 5  # neighbor_threshold [m]
MODE_RVO = 0
MODE_HRVO = 1
MODE_VO = 2
MODES = {"rvo": MODE_RVO, "hrvo": MODE_HRVO, "vo": MODE_VO}
PARAMS = {"vxmax": 1.5, "vymax": 1.5, "acce": 1.0, "factor": 1.0, "mode": "rvo",
          "neighbor_threshold": 3.0}
"""rvo's parameters, in column order, with IR-SIM's defaults."""

STEP = 0.05  # [m/s] candidate spacing
# IR-SIM's vel_world2diff defaults, which its DiffRVO uses
DIFF_W_MAX = 1.5  # [rad/s]
DIFF_TIME = 0.2  # [s]
DIFF_TOL = 0.1  # [rad]
DIFF_MINI = 0.02  # [m/s]

# lines[e, k, :] of a cone: apex, left edge direction, right edge direction
CO_AX = 0
CO_AY = 1
CO_LX = 2
CO_LY = 3
CO_RX = 4
CO_RY = 5


@compiled
def axis(current, vmax, acce):
    """One axis of the candidate grid: (first value, second value, spacing, count), numpy's
    ``arange(max(current - acce, -vmax), min(current + acce, vmax), 0.05)``; a window that is
    empty is the one value ``current`` clipped to [-vmax, vmax] (count 1)."""
    low = max(current - acce, -vmax)
    high = min(current + acce, vmax)
    if high <= low:
        v = min(max(current, -vmax), vmax)
        return v, v, math.inf, 1
    n = int(math.ceil((high - low) / STEP))
    second = low + STEP
    return low, second, second - low, n


@compiled
def value(first, second, delta, i):
    """Value i of an arange axis (numpy fills entries from 2 on as first + i * delta)."""
    if i == 0:
        return first
    if i == 1:
        return second
    return first + i * delta


@compiled
def cone_angles(x, y, r, mx, my, mr):
    """Edges of the cone from (x, y) toward the disc at (mx, my) of radius r + mr [m]:
    (left angle, right angle, half angle) [rad]; an overlapping disc gives a half angle of
    pi / 2."""
    dis = np.sqrt((my - y) ** 2 + (mx - x) ** 2)
    ang = math.atan2(my - y, mx - x)
    if dis < r + mr:
        dis = r + mr
    ratio = min(max((r + mr) / dis, -1.0), 1.0)
    half = math.asin(ratio)
    return ang + half, ang - half, half


# LLVM-inlined: called for every neighbour disc of every body, each step
@compiled(inline="llvm")
def circle_cone(lines, e, k, mode, x, y, vx, vy, r, mx, my, mvx, mvy, mr):
    """Cone k toward a neighbour disc (centre (mx, my) [m], velocity (mvx, mvy) [m/s],
    radius mr [m]) of a body at (x, y) moving at (vx, vy) with radius r."""
    ax = (vx + mvx) / 2.0
    ay = (vy + mvy) / 2.0
    if mode != MODE_HRVO:
        # the edges are the direction to the disc turned by +-asin(R / distance): rotated
        # with the half angle's sine and cosine, no trigonometric call (the same edges as
        # IR-SIM's cos(atan2 +- asin), to rounding)
        if mode == MODE_VO:
            ax = mvx
            ay = mvy
        ux = mx - x
        uy = my - y
        dist = math.sqrt(ux * ux + uy * uy)
        if dist > 0.0:
            ux /= dist
            uy /= dist
        else:
            ux = 1.0
            uy = 0.0
        sh = min((r + mr) / max(dist, r + mr), 1.0)
        ch = math.sqrt(1.0 - sh * sh)
        lines[e, k, CO_AX] = ax
        lines[e, k, CO_AY] = ay
        lines[e, k, CO_LX] = ux * ch - uy * sh
        lines[e, k, CO_LY] = uy * ch + ux * sh
        lines[e, k, CO_RX] = ux * ch + uy * sh
        lines[e, k, CO_RY] = uy * ch - ux * sh
        return
    left, right, half = cone_angles(x, y, r, mx, my, mr)
    # HRVO: the apex slides along the edge on the side the body passes, so that the
    # velocity obstacle is reciprocal on that side only
    dis_rv = math.hypot(mvx - ax, mvy - ay)
    rad_rv = math.atan2(ay - mvy, ax - mvx)
    temp = math.pi - 2.0 * half
    if temp == 0.0:
        temp = temp + 0.01
    dis_diff = dis_rv * math.sin(left - rad_rv) / math.sin(temp)
    cross = (mx - x) * (vy - ay) - (vx - ax) * (my - y)
    if cross <= 0.0:
        ax = ax - dis_diff * math.cos(right)
        ay = ay - dis_diff * math.sin(right)
    else:
        ax = mvx + dis_diff * math.cos(right)
        ay = mvy + dis_diff * math.sin(right)
    lines[e, k, CO_AX] = ax
    lines[e, k, CO_AY] = ay
    lines[e, k, CO_LX] = math.cos(left)
    lines[e, k, CO_LY] = math.sin(left)
    lines[e, k, CO_RX] = math.cos(right)
    lines[e, k, CO_RY] = math.sin(right)


@compiled
def segment_cone(lines, e, k, x, y, r, x1, y1, x2, y2):
    """Cone k toward the segment (x1, y1)-(x2, y2) [m]: its angular span seen from (x, y),
    widened by asin(r / distance) at each end; apex 0. Returns False for a degenerate
    segment (no cone)."""
    dxs = x2 - x1
    dys = y2 - y1
    if dxs * dxs + dys * dys < 1e-12:
        return False
    a1 = math.atan2(y1 - y, x1 - x)
    a2 = math.atan2(y2 - y, x2 - x)
    d1 = math.sqrt((x1 - x) ** 2 + (y1 - y) ** 2)
    d2 = math.sqrt((x2 - x) ** 2 + (y2 - y) ** 2)
    e1 = math.asin(min(1.0, r / max(d1, r))) if d1 > 1e-6 else math.pi / 2.0
    e2 = math.asin(min(1.0, r / max(d2, r))) if d2 > 1e-6 else math.pi / 2.0
    diff = math.atan2(math.sin(a2 - a1), math.cos(a2 - a1))
    if diff >= 0.0:
        left = a2 + e2
        right = a1 - e1
    else:
        left = a1 + e1
        right = a2 - e2
    lines[e, k, CO_AX] = 0.0
    lines[e, k, CO_AY] = 0.0
    lines[e, k, CO_LX] = math.cos(left)
    lines[e, k, CO_LY] = math.sin(left)
    lines[e, k, CO_RX] = math.cos(right)
    lines[e, k, CO_RY] = math.sin(right)
    return True


@compiled
def segment_tc(x, y, r, vx, vy, x1, y1, x2, y2):
    """Time [s] until a disc of radius r at (x, y) moving at (vx, vy) meets the segment's
    line within its span (the span widened by r), or 1e6 when it does not approach it."""
    dxs = x2 - x1
    dys = y2 - y1
    length = math.sqrt(dxs * dxs + dys * dys)
    if length < 1e-12:
        return 1e6
    nx = -dys / length
    ny = dxs / length
    if nx * (x - x1) + ny * (y - y1) < 0.0:
        nx = -nx
        ny = -ny
    perp = nx * (x - x1) + ny * (y - y1)
    toward = -(nx * vx + ny * vy)
    approaching = toward > 1e-7
    tc = max((perp - r) / (toward if approaching else 1.0), 0.0)
    t = ((x + vx * tc - x1) * dxs + (y + vy * tc - y1) * dys) / (length * length)
    margin = r / length
    if approaching and t >= -margin and t <= 1.0 + margin:
        return tc
    return 1e6


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def penalty(e, b, B, nc, ns, vx, vy, dx, dy, factor):
    """IR-SIM's penalty of candidate (vx, vy) when no candidate is free: factor over the
    shortest time to a collision plus the distance to the desired velocity (dx, dy). Each
    neighbour's gap term (sqrt(max(d^2 - R^2, 0))) is in ``B.nbd[e, k]`` (:func:`gaps`)."""
    snap = B.snap
    x, y, cvx, cvy, r = own_state(snap, e, b)
    dist = np.hypot(vx - dx, vy - dy)
    if nc + ns == 0:
        return dist
    tc_min = math.inf
    for k in range(nc):
        o = B.nbi[e, k]
        tx = 2.0 * vx - cvx - snap[e, o, SN_VX]
        ty = 2.0 * vy - cvy - snap[e, o, SN_VY]
        tc = B.nbd[e, k] / (np.sqrt(tx ** 2 + ty ** 2) + 1e-7)
        tc_min = min(tc_min, tc)
    for k in range(nc, nc + ns):
        j = B.nbi[e, k]
        tc = segment_tc(x, y, r, vx, vy, B.segw[e, j, 0], B.segw[e, j, 1], B.segw[e, j, 2],
                        B.segw[e, j, 3])
        tc_min = min(tc_min, tc)
    if tc_min == 0.0:
        tc_min = 0.0001
    return factor * (1.0 / tc_min) + dist


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def gaps(e, b, B, nc):
    """Each neighbour disc's gap term of the penalty, sqrt(max(d^2 - (r + r_k)^2, 0)) [m],
    into ``B.nbd[e, k]`` (it does not depend on the candidate)."""
    snap = B.snap
    x = snap[e, b, SN_X]
    y = snap[e, b, SN_Y]
    r = snap[e, b, SN_R]
    for k in range(nc):
        o = B.nbi[e, k]
        mr = snap[e, o, SN_R]
        d = math.hypot(x - snap[e, o, SN_CX], y - snap[e, o, SN_CY])
        B.nbd[e, k] = np.sqrt(max(d ** 2 - (r + mr) ** 2, 0.0))


@compiled
def _axis_bound(first, second, delta, n, i0, k, target):
    """The least distance from ``target`` to the entries k steps from entry i0 of an arange
    axis of n entries (inf when both fall outside it)."""
    out = math.inf
    if i0 - k >= 0:
        out = abs(value(first, second, delta, i0 - k) - target)
    if i0 + k < n:
        out = min(out, abs(value(first, second, delta, i0 + k) - target))
    return out


# LLVM-inlined: once per ring of the walk
@compiled(inline="llvm")
def _ring_bound2(bx, by, ex, ey):
    """A lower bound [m^2/s^2] on the squared distance to the desired velocity of every
    candidate past the ring (bx, by: the axes' bounds from :func:`_axis_bound`; ex, ey: the
    nearest entries' offsets), lowered by 4e-12 of itself. The walk stops once it exceeds the
    best candidate's squared distance (as computed, a few ulps from the exact one): then
    every candidate past the ring is strictly farther than the best, so the walk stops at
    the ring where a test of exact distances would, or later, and picks the same candidate.
    No square root, and no hypot (glibc's, correctly rounded, was a tenth of the rvo crowd's
    step)."""
    return min(bx * bx + ey * ey, ex * ex + by * by) * (1.0 - 4e-12)


# LLVM-inlined: read for every candidate velocity tested against a cone
@compiled(inline="llvm")
def _cone(lines, e, c):
    """Cone c of env e: its apex (ax, ay) [m/s] and its left and right edges' unit
    directions (lx, ly), (rx, ry)."""
    return (lines[e, c, CO_AX], lines[e, c, CO_AY], lines[e, c, CO_LX], lines[e, c, CO_LY],
            lines[e, c, CO_RX], lines[e, c, CO_RY])


# LLVM-inlined: the cone test of every candidate (through _inside) and of the walk's corners
@compiled(inline="llvm")
def _in_wedge(ax, ay, lx, ly, rx, ry, vx, vy, margin):
    """Whether (vx, vy) tests inside the cone with apex (ax, ay) and edges (lx, ly), (rx, ry)
    by at least ``margin`` [m/s] on both edges (IR-SIM's test at margin 0: on or right of the
    left edge, on or left of the right edge)."""
    px = vx - ax
    py = vy - ay
    return lx * py - px * ly <= -margin and rx * py - px * ry >= margin


@compiled
def _inside(lines, e, c, vx, vy):
    """Whether (vx, vy) lies inside cone c (IR-SIM's test)."""
    ax, ay, lx, ly, rx, ry = _cone(lines, e, c)
    return _in_wedge(ax, ay, lx, ly, rx, ry, vx, vy, 0.0)


@compiled
def _blocker(lines, e, n, vx, vy):
    """The cone of the first n that contains (vx, vy), moved to the front (the next
    candidates, its neighbours, are most likely inside it too; the order of the cones does
    not change the answer): 0, or -1 when (vx, vy) is free."""
    for k in range(n):
        if _inside(lines, e, k, vx, vy):
            if k > 0:
                for c in range(6):
                    t = lines[e, 0, c]
                    lines[e, 0, c] = lines[e, k, c]
                    lines[e, k, c] = t
            return 0
    return -1


# LLVM-inlined: called for every blocked candidate of the walk
@compiled(inline="llvm")
def _run_end(lines, e, c, along_x, fixed, t, last, first, second, delta, inv):
    """The last index of a run of candidates inside cone c, from index t (inside) up to
    ``last``, along one grid line: the x axis at vy = ``fixed`` (``along_x``) or the y axis at
    vx = ``fixed``, whose entries are the arange (first, second, delta). Each edge's test is
    monotone along a line, so the cone holds one interval of it: its end is estimated from
    the edges' crossings (``inv`` = 1 / delta: an estimate needs no division), then settled
    by the exact test."""
    ax, ay, lx, ly, rx, ry = _cone(lines, e, c)
    # the edges' tests as a + s u along the line (u the moving coordinate): inside while
    # the left one is <= 0 and the right one >= 0
    if along_x:
        la, ls, ra, rs, u0 = lx * (fixed - ay), -ly, rx * (fixed - ay), -ry, ax
    else:
        la, ls, ra, rs, u0 = -(fixed - ax) * ly, lx, -(fixed - ax) * ry, rx, ay
    hi = math.inf
    if ls > 0.0:
        hi = u0 - la / ls
    if rs < 0.0:
        hi = min(hi, u0 - ra / rs)
    end = last
    if hi != math.inf and delta != math.inf:
        f = math.floor((hi - first) * inv)
        if f < end:
            end = int(max(f, float(t)))
    # settle the end exactly: the run is an interval and t is in it
    while end < last and _run_inside(lines, e, c, along_x, fixed,
                                     value(first, second, delta, end + 1)):
        end += 1
    while end > t and not _run_inside(lines, e, c, along_x, fixed,
                                      value(first, second, delta, end)):
        end -= 1
    return end


@compiled
def _run_inside(lines, e, c, along_x, fixed, u):
    if along_x:
        return _inside(lines, e, c, u, fixed)
    return _inside(lines, e, c, fixed, u)


_SURE = 1e-9  # [m/s] how far inside both edges a corner must test for its square to be skipped


# LLVM-inlined: once per walk
@compiled(inline="llvm")
def _covered_rings(lines, e, fx, sx, ddx, nx, fy, sy, ddy, ny, i0, j0, reach):
    """The rings 0..K around (i0, j0) that cone 0 holds whole (every candidate inside it):
    K, or -1 when the centre is not inside it by _SURE.

    A cone is convex, so it holds a rectangle of candidates when it holds its four corners;
    with a margin of _SURE on both edges' tests at the corners, the exact tests inside the
    rectangle, affine in the velocity but for a few ulps of rounding, say inside as well. So
    the walk may start at ring K + 1 and choose what it chose from ring 0::

        edge test g(v) at the centre g0 (g0 <= -margin inside); one ring outward moves a
        corner by (+-dx, +-dy), which changes g by at most |g_x| dx + |g_y| dy = s, so
        K = floor((-g0 - margin) / s), then lowered until the four corners test inside
    """
    ax, ay, lx, ly, rx, ry = _cone(lines, e, 0)
    x0 = value(fx, sx, ddx, i0)
    y0 = value(fy, sy, ddy, j0)
    # each edge's test as "<= 0 inside": the left one, and the right one negated (the
    # numbers _in_wedge compares at the centre)
    gl = lx * (y0 - ay) - (x0 - ax) * ly
    gr = -(rx * (y0 - ay) - (x0 - ax) * ry)
    if gl > -_SURE or gr > -_SURE:
        return -1
    stx = ddx if nx > 1 else 0.0
    sty = ddy if ny > 1 else 0.0
    k = reach
    sl = abs(ly) * stx + abs(lx) * sty
    if sl > 0.0:
        k = min(k, int(max((-gl - _SURE) / sl, 0.0)))
    sr = abs(ry) * stx + abs(rx) * sty
    if sr > 0.0:
        k = min(k, int(max((-gr - _SURE) / sr, 0.0)))
    while k > 0:
        x_lo = value(fx, sx, ddx, max(i0 - k, 0))
        x_hi = value(fx, sx, ddx, min(i0 + k, nx - 1))
        y_lo = value(fy, sy, ddy, max(j0 - k, 0))
        y_hi = value(fy, sy, ddy, min(j0 + k, ny - 1))
        if _in_wedge(ax, ay, lx, ly, rx, ry, x_lo, y_lo, _SURE) and \
                _in_wedge(ax, ay, lx, ly, rx, ry, x_hi, y_lo, _SURE) and \
                _in_wedge(ax, ay, lx, ly, rx, ry, x_lo, y_hi, _SURE) and \
                _in_wedge(ax, ay, lx, ly, rx, ry, x_hi, y_hi, _SURE):
            return k
        k -= 1
    return 0


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def choose(e, b, B, ncone, nc, ns, cvx, cvy, dx, dy, vxmax, vymax, acce, factor):
    """The candidate velocity [m/s] IR-SIM picks (see the module's docstring).

    Rings of the grid around the candidate nearest the desired velocity are walked side by
    side (their rows along x, their columns along y); where a candidate falls inside a cone,
    the run of candidates the cone holds along that side is skipped at once."""
    lines = B.lines
    fx, sx, ddx, nx = axis(cvx, vxmax, acce)
    fy, sy, ddy, ny = axis(cvy, vymax, acce)
    # reciprocals for the index estimates (each has a margin, or is settled exactly)
    ix = 1.0 / ddx
    iy = 1.0 / ddy
    # the candidate nearest the desired velocity, and how far the desired velocity lies
    # from it along each axis
    i0 = 0
    if nx > 1:
        i0 = min(max(int(round((dx - fx) / ddx)), 0), nx - 1)
    j0 = 0
    if ny > 1:
        j0 = min(max(int(round((dy - fy) / ddy)), 0), ny - 1)
    ex = abs(value(fx, sx, ddx, i0) - dx)
    ey = abs(value(fy, sy, ddy, j0) - dy)
    reach = max(i0, nx - 1 - i0, j0, ny - 1 - j0)
    best2 = math.inf  # the best candidate's squared distance to the desired velocity
    best_i = 0
    best_j = 0
    # the rings a single cone holds whole have nothing free: the walk starts past them
    first_ring = 0
    if _blocker(lines, e, ncone, value(fx, sx, ddx, i0), value(fy, sy, ddy, j0)) >= 0:
        first_ring = _covered_rings(lines, e, fx, sx, ddx, nx, fy, sy, ddy, ny, i0, j0,
                                    reach) + 1
    for k in range(first_ring, reach + 1):
        i_lo = max(i0 - k, 0)
        i_hi = min(i0 + k, nx - 1)
        # four sides: the bottom and top rows whole, the left and right columns between them
        for side in range(4):
            along_x = side < 2
            if along_x:
                jj = j0 - k if side == 0 else j0 + k
                if jj < 0 or jj >= ny or (side == 1 and k == 0):
                    continue
                t = i_lo
                last = i_hi
                fixed = value(fy, sy, ddy, jj)
            else:
                ii = i0 - k if side == 2 else i0 + k
                if ii < 0 or ii >= nx or k == 0 or (side == 3 and i0 + k == i0 - k):
                    continue
                t = max(j0 - k + 1, 0)
                last = min(j0 + k - 1, ny - 1)
                fixed = value(fx, sx, ddx, ii)
            if best2 < math.inf:
                # only the stretch of the side within the best distance can win
                off = fixed - (dy if along_x else dx)
                half = math.sqrt(max(best2 * (1.0 + 1e-12) - off * off, 0.0))
                centre = dx if along_x else dy
                first = fx if along_x else fy
                delta = ddx if along_x else ddy
                inv = ix if along_x else iy
                if delta != math.inf:
                    # a margin of one entry each way: the estimate is within far less of
                    # the exact index
                    t = max(t, int(max(math.floor((centre - half - first) * inv) - 1.0,
                                       -1.0)))
                    last = min(last, int(min(math.ceil((centre + half - first) * inv) + 1.0,
                                             float(last))))
            while t <= last:
                if along_x:
                    i = t
                    j = jj
                    vx = value(fx, sx, ddx, t)
                    vy = fixed
                else:
                    i = ii
                    j = t
                    vx = fixed
                    vy = value(fy, sy, ddy, t)
                d2 = (vx - dx) * (vx - dx) + (vy - dy) * (vy - dy)
                if d2 > best2 * (1.0 + 1e-12):
                    t += 1  # cannot win (the exact distance decides within rounding)
                    continue
                c = _blocker(lines, e, ncone, vx, vy)
                if c >= 0:
                    if along_x:
                        t = _run_end(lines, e, c, True, fixed, t, last, fx, sx, ddx, ix) + 1
                    else:
                        t = _run_end(lines, e, c, False, fixed, t, last, fy, sy, ddy, iy) + 1
                    continue
                if d2 < best2 * (1.0 - 1e-12):
                    # clearly nearer: the exact distances (hypot) order them the same way
                    better = True
                else:
                    # a near tie (the wider ones were skipped above): the exact distances
                    # decide, then the grid's order, as IR-SIM's argmin does
                    d = np.hypot(vx - dx, vy - dy)
                    bd = np.hypot(value(fx, sx, ddx, best_i) - dx, value(fy, sy, ddy, best_j) - dy)
                    better = d < bd or (d == bd and i * ny + j < best_i * ny + best_j)
                if better:
                    best2 = d2
                    best_i = i
                    best_j = j
                t += 1
        if best2 < math.inf:
            # a candidate of ring k + 1 or beyond lies k + 1 or more steps from the centre
            # along one axis; along a sorted axis the distance to the desired component
            # only grows away from its nearest entry, so the ring's nearest entries on
            # either side bound that axis, and the other axis is no nearer than its best
            bx = _axis_bound(fx, sx, ddx, nx, i0, k + 1, dx)
            by = _axis_bound(fy, sy, ddy, ny, j0, k + 1, dy)
            if _ring_bound2(bx, by, ex, ey) > best2:
                break
    if best2 < math.inf:
        return value(fx, sx, ddx, best_i), value(fy, sy, ddy, best_j)
    # no free candidate: the least penalty over the whole grid, first in the grid's order
    gaps(e, b, B, nc)
    cost = math.inf
    best_i = 0
    best_j = 0
    if factor < 0.0:
        for i in range(nx):
            for j in range(ny):
                c = penalty(e, b, B, nc, ns, value(fx, sx, ddx, i), value(fy, sy, ddy, j), dx,
                            dy, factor)
                if c < cost:
                    cost = c
                    best_i = i
                    best_j = j
        return value(fx, sx, ddx, best_i), value(fy, sy, ddy, best_j)
    # the penalty is at least the distance to the desired velocity: rings outward from it,
    # until a ring's nearest candidate is farther than the least penalty found
    for k in range(reach + 1):
        for i in range(max(i0 - k, 0), min(i0 + k, nx - 1) + 1):
            step = 1 if abs(i - i0) == k else 2 * k
            for j in range(j0 - k, j0 + k + 1, step):
                if j < 0 or j >= ny:
                    continue
                c = penalty(e, b, B, nc, ns, value(fx, sx, ddx, i), value(fy, sy, ddy, j), dx,
                            dy, factor)
                if c < cost or (c == cost and i * ny + j < best_i * ny + best_j):
                    cost = c
                    best_i = i
                    best_j = j
        bx = _axis_bound(fx, sx, ddx, nx, i0, k + 1, dx)
        by = _axis_bound(fy, sy, ddy, ny, j0, k + 1, dy)
        # cost >= 0 here (factor >= 0), so comparing squares is comparing distances
        if _ring_bound2(bx, by, ex, ey) > cost * cost:
            break
    return value(fx, sx, ddx, best_i), value(fy, sy, ddy, best_j)


# LLVM-inlined: it takes W or B by value, ~100-400 words a call when not inlined
@compiled(inline="llvm")
def rvo(e, b, W, B):
    """Body b's rvo command in env e into ``W.cmd`` (zero without a goal)."""
    snap, bi, prm = B.snap, B.bi, B.prm
    has, _gx, _gy, _gt, _dims = goal_of(e, b, B.gq, B.gs)
    if not has:
        write_command(e, b, W, 0.0, 0.0, 0.0)
        return
    x, y, vx, vy, r = own_state(snap, e, b)
    th = snap[e, b, SN_T]
    mode = int(prm[b, P_MODE])
    thr2 = prm[b, P_THRESH] ** 2
    # neighbour discs within the threshold, cones and all; then every segment
    nc = 0
    for o in range(bi.shape[0]):
        if disc_in_reach(e, b, o, bi, snap, x, y, thr2):
            circle_cone(B.lines, e, nc, mode, x, y, vx, vy, r, snap[e, o, SN_CX],
                        snap[e, o, SN_CY], snap[e, o, SN_VX], snap[e, o, SN_VY],
                        snap[e, o, SN_R])
            B.nbi[e, nc] = o
            nc += 1
    ncone = nc
    # the penalty reads every segment (from nc on), the cones only the sound ones
    ns = segments_seen(e, b, B, nc)
    for k in range(nc, nc + ns):
        j = B.nbi[e, k]
        if segment_cone(B.lines, e, ncone, x, y, r, B.segw[e, j, 0], B.segw[e, j, 1],
                        B.segw[e, j, 2], B.segw[e, j, 3]):
            ncone += 1
    dx, dy = desired_omni(e, b, snap, bi, B.bf, B.gq, B.gs)
    wx, wy = choose(e, b, B, ncone, nc, ns, vx, vy, dx, dy, prm[b, P_VXMAX], prm[b, P_VYMAX],
                    prm[b, P_ACCE], prm[b, P_FACTOR])
    if bi[b, BI_KIN] == KIN_DIFF:
        c0, c1 = world_to_diff(th, wx, wy, DIFF_W_MAX, DIFF_TIME, DIFF_TOL, DIFF_MINI)
        if c0 == 0.0 and c1 == 0.0 and nc == 0 and ns == 0:
            # alone, with the goal behind: turn toward it in place instead of freezing
            _v, c1 = world_to_diff(th, dx, dy, DIFF_W_MAX, DIFF_TIME, DIFF_TOL, DIFF_MINI)
    else:
        c0, c1 = world_to_omni(th, wx, wy)
    command_in_range(e, b, W, B, c0, c1, 0.0)


def rvo_c(e, b, wp, bp):
    """The C function of rvo (signatures.BODY_SIG)."""
    rvo(e, b, load_world(wp), load_behaviour(bp))


RVO = CFunction(rvo_c, BODY_SIG)
