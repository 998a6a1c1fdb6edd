"""orca: optimal reciprocal collision avoidance, as a group (the algorithm of RVO2, which
IR-SIM's group orca runs through pyrvo).

Each agent of the group gets the velocity nearest its preferred one that keeps it free of
collisions with its neighbours for ``timeHorizon`` [s] (and of obstacle edges for
``timeHorizonObst``), assuming each neighbour takes half of the avoidance::

    neighbours   the members within neighborDist [m], the maxNeighbors nearest, nearest first
                 (at equal distances, in the order RVO2's k-d tree offers them)
                 (obstacle edges: those the agent sees from outside, within
                 timeHorizonObst * maxSpeed + radius, nearest first)
    half-planes  per obstacle edge, the velocities that do not reach it within
                 timeHorizonObst: the truncated cone of the edge, or of the vertex seen
                 obliquely, with legs replaced by the neighbouring edges where the polygon
                 turns away ("foreign" legs), and skipped when an earlier half-plane
                 already excludes the whole edge;
                 per neighbour, with relative position p, relative velocity v, summed radius
                 r and horizon tau: w = v - p / tau; if the velocity obstacle's nearest
                 boundary point to v is on the cutoff circle (w . p < 0 and (w . p)^2 > r^2
                 |w|^2) the half-plane is normal to w; else it leans on the nearer leg; when
                 the two already overlap, the cutoff is the circle reached in one time step.
                 The agent takes half of the change u that leaves the velocity obstacle: the
                 half-plane's boundary passes through v_agent + u / 2
    solve        the 2-D linear program: the point of the half-planes' intersection inside
                 the maxSpeed disc nearest the preferred velocity, adding one half-plane at a
                 time (each addition solves a 1-D program on its boundary line:
                 linearProgram2 / linearProgram1); when the half-planes leave nothing, the 3-D
                 program: the velocity that least violates the agents' half-planes (the
                 obstacles' stay hard), found on the boundary of each half-plane violated
                 more than the current result (linearProgram3)

The agents' own velocities persist between steps (RVO2's agent velocity: the last step's
result, zero at a reset) and are what the half-planes are built around; positions are the
bodies' origins, read each step. IR-SIM's group orca feeds no obstacles to RVO2, so neither
does the stage (the edge half-planes are checked against pyrvo in the tests).

IR-SIM's use: the radius is the body's bounding radius plus ``safe_radius``; the speed cap is
the linear limit (diff) or the smaller component limit (omni), lowered to ``maxSpeed``; the
preferred velocity points at the goal at that cap (diff: always, from the goal's bearing;
omni: IR-SIM's desired velocity, zero within 0.1 m); a diff member follows the result through
vel_world2diff (its angular limit, the step time), an omni member takes it rotated.

Parameters: neighborDist [m] (15), maxNeighbors (10), timeHorizon [s] (20), timeHorizonObst
[s] (10), safe_radius [m] (0.1), maxSpeed [m/s] (none).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..abi import CFunction
from ..arrays import load_world
from ..jit import compiled
from ..layout import EP_SCALE
from .arrays import GR_COUNT
from .arrays import GR_START
from .arrays import load_behaviour
from .common import desired_omni
from .common import follow_velocity
from .common import goal_of
from .common import step_time
from .layout import AG_LEN
from .layout import AG_NX
from .layout import AG_NY
from .layout import AG_PX
from .layout import AG_PY
from .layout import AG_R
from .layout import AG_VMAX
from .layout import AG_VX
from .layout import AG_VY
from .layout import AG_X
from .layout import AG_Y
from .layout import BF_RADIUS
from .layout import BF_VMAX
from .layout import BI_KIN
from .layout import KIN_DIFF
from .layout import KT_BEGIN
from .layout import KT_BODY
from .layout import KT_END
from .layout import KT_LEFT
from .layout import KT_LEN
from .layout import KT_MAXX
from .layout import KT_MAXY
from .layout import KT_MEM
from .layout import KT_MINX
from .layout import KT_MINY
from .layout import KT_PX
from .layout import KT_PY
from .layout import KT_QD
from .layout import KT_RIGHT
from .layout import SN_X
from .layout import SN_Y
from .signatures import GROUP_SIG

P_NDIST = 0  # neighborDist [m]
P_MAXN = 1  # maxNeighbors
P_TH = 2  # timeHorizon [s]
P_THO = 3  # timeHorizonObst [s]
P_SAFE = 4  # safe_radius [m]
P_MAXSPEED = 5  # maxSpeed [m/s] (NaN: none)
PARAMS = {"neighborDist": 15.0, "maxNeighbors": 10, "timeHorizon": 20.0,
          "timeHorizonObst": 10.0, "safe_radius": 0.1, "maxSpeed": None}
"""orca's parameters, in column order, with IR-SIM's defaults."""

EPS = 1e-5  # RVO2's RVO_EPSILON

# RVO2 computes in float32, IR-SIM's pyrvo included: every quantity of the agents' half-planes
# and of the linear programs is a float32 here too, each operation in RVO2's order (its
# Vector2 divides by multiplying with the reciprocal), so a velocity is RVO2's to the bit and
# a crowd does not part from IR-SIM's at its first near-tie. Stored in the float64 arrays,
# a float32 value is exact.
F = np.float32
_EPS32 = F(EPS)
_HALF = F(0.5)
_ONE = F(1.0)
_ZERO = F(0.0)

# a half-plane in lines[e, k, :] / proj[e, k, :]: a point of its boundary and the boundary's
# direction; the allowed side is to the left of the direction
LN_PX = 0
LN_PY = 1
LN_DX = 2
LN_DY = 3

# an obstacle vertex, ob[v, :]: its point, the unit direction to the next vertex, convexity,
# the next and previous vertices (obstacles are counter-clockwise polygons or 2-point lines)
OB_X = 0
OB_Y = 1
OB_UX = 2
OB_UY = 3
OB_CONVEX = 4
OB_NEXT = 5
OB_PREV = 6
OB_LEN = 7


@compiled(inline="llvm")
def det(ax, ay, bx, by):
    """2-D cross product a x b."""
    return ax * by - ay * bx


@compiled
def _set_line(lines, e, k, px, py, dx, dy):
    lines[e, k, LN_PX] = px
    lines[e, k, LN_PY] = py
    lines[e, k, LN_DX] = dx
    lines[e, k, LN_DY] = dy


@compiled
def legs(rx, ry, dsq, radius):
    """The two tangents from the agent to a disc of ``radius`` [m] about the point
    (rx, ry) [m] (relative, at squared distance ``dsq`` > radius^2): the left and the right
    leg's unit directions (llx, lly, rlx, rly)."""
    leg = math.sqrt(dsq - radius * radius)
    return ((rx * leg - ry * radius) / dsq, (rx * radius + ry * leg) / dsq,
            (rx * leg + ry * radius) / dsq, (-rx * radius + ry * leg) / dsq)


@compiled
def _cutoff_circle(lines, e, n, cx, cy, vx, vy, radius, inv):
    """Half-plane n bounded by the cutoff circle about (cx, cy) (of radius radius * inv),
    at its point nearest the velocity (vx, vy)."""
    wx = vx - cx
    wy = vy - cy
    wn = math.sqrt(wx * wx + wy * wy)
    wx /= wn
    wy /= wn
    _set_line(lines, e, n, cx + radius * inv * wx, cy + radius * inv * wy, wy, -wx)


@compiled
def lp1(lines, e, line_no, radius, optx, opty, direction_opt):
    """Optimise on the boundary of half-plane ``line_no``, within the disc of ``radius``
    [m/s] and the half-planes before it: (feasible, vx, vy), float32 as RVO2's
    linearProgram1. With ``direction_opt`` the optimum is the farthest point along
    (optx, opty), else the point nearest it."""
    px = F(lines[e, line_no, LN_PX])
    py = F(lines[e, line_no, LN_PY])
    dx = F(lines[e, line_no, LN_DX])
    dy = F(lines[e, line_no, LN_DY])
    dot = px * dx + py * dy
    disc = dot * dot + radius * radius - (px * px + py * py)
    if disc < _ZERO:
        return False, _ZERO, _ZERO  # the disc misses this boundary line
    sq = F(math.sqrt(disc))
    t_left = -dot - sq
    t_right = -dot + sq
    for i in range(line_no):
        qdx = F(lines[e, i, LN_DX])
        qdy = F(lines[e, i, LN_DY])
        den = det(dx, dy, qdx, qdy)
        num = det(qdx, qdy, px - F(lines[e, i, LN_PX]), py - F(lines[e, i, LN_PY]))
        if abs(den) <= _EPS32:
            if num < _ZERO:
                return False, _ZERO, _ZERO  # parallel, and on the wrong side of line i
            continue
        t = num / den
        if den >= _ZERO:
            t_right = min(t_right, t)
        else:
            t_left = max(t_left, t)
        if t_left > t_right:
            return False, _ZERO, _ZERO
    if direction_opt:
        t = t_right if optx * dx + opty * dy > _ZERO else t_left
    else:
        t = dx * (optx - px) + dy * (opty - py)
        t = t_left if t < t_left else (t_right if t > t_right else t)
    return True, px + t * dx, py + t * dy


@compiled
def lp2(lines, e, n, radius, optx, opty, direction_opt):
    """The 2-D program over half-planes 0..n-1 and the disc of ``radius`` (float32, as
    RVO2's linearProgram2): (the first half-plane that could not be met, or n; vx, vy), the
    result so far when one fails."""
    if direction_opt:
        rx = optx * radius
        ry = opty * radius
    elif optx * optx + opty * opty > radius * radius:
        inv = _ONE / F(math.sqrt(optx * optx + opty * opty))  # normalize, then scale
        rx = optx * inv * radius
        ry = opty * inv * radius
    else:
        rx = optx
        ry = opty
    for i in range(n):
        if det(F(lines[e, i, LN_DX]), F(lines[e, i, LN_DY]), F(lines[e, i, LN_PX]) - rx,
               F(lines[e, i, LN_PY]) - ry) > _ZERO:
            ok, tx, ty = lp1(lines, e, i, radius, optx, opty, direction_opt)
            if not ok:
                return i, rx, ry
            rx = tx
            ry = ty
    return n, rx, ry


@compiled
def lp3(lines, proj, e, n, n_obst, begin, radius, rx, ry):
    """The 3-D program when half-plane ``begin`` left the 2-D one infeasible (float32, as
    RVO2's linearProgram3): the velocity that minimises the largest violation of the agents'
    half-planes, the obstacles' (0..n_obst-1) kept hard. Returns (vx, vy)."""
    distance = _ZERO
    for i in range(begin, n):
        dix = F(lines[e, i, LN_DX])
        diy = F(lines[e, i, LN_DY])
        pix = F(lines[e, i, LN_PX])
        piy = F(lines[e, i, LN_PY])
        if det(dix, diy, pix - rx, piy - ry) <= distance:
            continue  # the result violates line i no more than it violates others
        for j in range(n_obst):
            for c in range(4):
                proj[e, j, c] = lines[e, j, c]
        m = n_obst
        for j in range(n_obst, i):
            djx = F(lines[e, j, LN_DX])
            djy = F(lines[e, j, LN_DY])
            pjx = F(lines[e, j, LN_PX])
            pjy = F(lines[e, j, LN_PY])
            dd = det(dix, diy, djx, djy)
            if abs(dd) <= _EPS32:
                if dix * djx + diy * djy > _ZERO:
                    continue  # parallel, same direction
                qx = _HALF * (pix + pjx)
                qy = _HALF * (piy + pjy)
            else:
                s = det(djx, djy, pix - pjx, piy - pjy) / dd
                qx = pix + s * dix
                qy = piy + s * diy
            ux = djx - dix
            uy = djy - diy
            inv = _ONE / F(math.sqrt(ux * ux + uy * uy))
            _set_line(proj, e, m, qx, qy, ux * inv, uy * inv)
            m += 1
        fail, tx, ty = lp2(proj, e, m, radius, -diy, dix, True)
        if fail >= m:  # else keep the result (only rounding can fail here)
            rx = tx
            ry = ty
        distance = det(dix, diy, pix - rx, piy - ry)
    return rx, ry


@compiled
def obstacle_lines(lines, e, ob, nbi, nobst, x, y, vx, vy, radius, tho):
    """Half-planes of the obstacle edges nbi[e, 0..nobst-1] (indices of their first vertex in
    ``ob``) for an agent at (x, y) [m] moving at (vx, vy) [m/s]: written from row 0 of
    ``lines[e]``; returns how many."""
    inv = 1.0 / tho
    rsq = radius * radius
    n = 0
    for k in range(nobst):
        o1 = nbi[e, k]
        o2 = int(ob[o1, OB_NEXT])
        r1x = ob[o1, OB_X] - x
        r1y = ob[o1, OB_Y] - y
        r2x = ob[o2, OB_X] - x
        r2y = ob[o2, OB_Y] - y
        # skip an edge an earlier half-plane already keeps the agent from
        covered = False
        for j in range(n):
            pjx = lines[e, j, LN_PX]
            pjy = lines[e, j, LN_PY]
            djx = lines[e, j, LN_DX]
            djy = lines[e, j, LN_DY]
            if det(inv * r1x - pjx, inv * r1y - pjy, djx, djy) - inv * radius >= -EPS and \
                    det(inv * r2x - pjx, inv * r2y - pjy, djx, djy) - inv * radius >= -EPS:
                covered = True
                break
        if covered:
            continue
        d1 = r1x * r1x + r1y * r1y
        d2 = r2x * r2x + r2y * r2y
        ovx = ob[o2, OB_X] - ob[o1, OB_X]
        ovy = ob[o2, OB_Y] - ob[o1, OB_Y]
        s = (-r1x * ovx - r1y * ovy) / (ovx * ovx + ovy * ovy)
        lx = -r1x - s * ovx
        ly = -r1y - s * ovy
        dline = lx * lx + ly * ly
        if s < 0.0 and d1 <= rsq:
            # colliding with the left vertex
            if ob[o1, OB_CONVEX] != 0.0:
                nrm = math.sqrt(d1)
                _set_line(lines, e, n, 0.0, 0.0, -r1y / nrm, r1x / nrm)
                n += 1
            continue
        if s > 1.0 and d2 <= rsq:
            # colliding with the right vertex (left to the next edge when the agent is on
            # its inner side)
            if ob[o2, OB_CONVEX] != 0.0 and det(r2x, r2y, ob[o2, OB_UX], ob[o2, OB_UY]) >= 0.0:
                nrm = math.sqrt(d2)
                _set_line(lines, e, n, 0.0, 0.0, -r2y / nrm, r2x / nrm)
                n += 1
            continue
        if 0.0 <= s <= 1.0 and dline <= rsq:
            # colliding with the edge
            _set_line(lines, e, n, 0.0, 0.0, -ob[o1, OB_UX], -ob[o1, OB_UY])
            n += 1
            continue
        # no collision: the legs of the truncated cone
        if s < 0.0 and dline <= rsq:
            # seen obliquely, the left vertex alone makes the cone
            if ob[o1, OB_CONVEX] == 0.0:
                continue
            o2 = o1
            llx, lly, rlx, rly = legs(r1x, r1y, d1, radius)
        elif s > 1.0 and dline <= rsq:
            # seen obliquely, the right vertex alone makes the cone
            if ob[o2, OB_CONVEX] == 0.0:
                continue
            o1 = o2
            llx, lly, rlx, rly = legs(r2x, r2y, d2, radius)
        else:
            # each vertex's outer tangent, or, at a reflex vertex, the edge itself
            llx = -ob[o1, OB_UX]
            lly = -ob[o1, OB_UY]
            rlx = ob[o1, OB_UX]
            rly = ob[o1, OB_UY]
            if ob[o1, OB_CONVEX] != 0.0:
                llx, lly, _x, _y = legs(r1x, r1y, d1, radius)
            if ob[o2, OB_CONVEX] != 0.0:
                _x, _y, rlx, rly = legs(r2x, r2y, d2, radius)
        # a leg pointing into the neighbouring edge is replaced by that edge ("foreign")
        prev = int(ob[o1, OB_PREV])
        left_foreign = False
        right_foreign = False
        if ob[o1, OB_CONVEX] != 0.0 and det(llx, lly, -ob[prev, OB_UX], -ob[prev, OB_UY]) >= 0.0:
            llx = -ob[prev, OB_UX]
            lly = -ob[prev, OB_UY]
            left_foreign = True
        if ob[o2, OB_CONVEX] != 0.0 and det(rlx, rly, ob[o2, OB_UX], ob[o2, OB_UY]) <= 0.0:
            rlx = ob[o2, OB_UX]
            rly = ob[o2, OB_UY]
            right_foreign = True
        # the cutoff segment between the two vertices, scaled by the horizon
        lcx = inv * (ob[o1, OB_X] - x)
        lcy = inv * (ob[o1, OB_Y] - y)
        rcx = inv * (ob[o2, OB_X] - x)
        rcy = inv * (ob[o2, OB_Y] - y)
        cvx = rcx - lcx
        cvy = rcy - lcy
        same = o1 == o2
        t = 0.5 if same else ((vx - lcx) * cvx + (vy - lcy) * cvy) / (cvx * cvx + cvy * cvy)
        t_left = (vx - lcx) * llx + (vy - lcy) * lly
        t_right = (vx - rcx) * rlx + (vy - rcy) * rly
        if (t < 0.0 and t_left < 0.0) or (same and t_left < 0.0 and t_right < 0.0):
            _cutoff_circle(lines, e, n, lcx, lcy, vx, vy, radius, inv)  # the left one
            n += 1
            continue
        if t > 1.0 and t_right < 0.0:
            _cutoff_circle(lines, e, n, rcx, rcy, vx, vy, radius, inv)  # the right one
            n += 1
            continue
        inf = math.inf
        dcut = inf
        if not (t < 0.0 or t > 1.0 or same):
            dcut = (vx - lcx - t * cvx) ** 2 + (vy - lcy - t * cvy) ** 2
        dleft = inf
        if t_left >= 0.0:
            dleft = (vx - lcx - t_left * llx) ** 2 + (vy - lcy - t_left * lly) ** 2
        dright = inf
        if t_right >= 0.0:
            dright = (vx - rcx - t_right * rlx) ** 2 + (vy - rcy - t_right * rly) ** 2
        if dcut <= dleft and dcut <= dright:
            # nearest the cutoff segment
            dx = -ob[o1, OB_UX]
            dy = -ob[o1, OB_UY]
            _set_line(lines, e, n, lcx + radius * inv * (-dy), lcy + radius * inv * dx, dx, dy)
            n += 1
            continue
        if dleft <= dright:
            # nearest the left leg
            if left_foreign:
                continue
            _set_line(lines, e, n, lcx + radius * inv * (-lly), lcy + radius * inv * llx,
                      llx, lly)
            n += 1
            continue
        # nearest the right leg
        if right_foreign:
            continue
        dx = -rlx
        dy = -rly
        _set_line(lines, e, n, rcx + radius * inv * (-dy), rcy + radius * inv * dx, dx, dy)
        n += 1
    return n


@compiled
def agent_line(lines, e, k, px, py, vx, vy, ox, oy, ovx, ovy, r, inv_th, dt):
    """Half-plane k for an agent at (px, py) moving at (vx, vy) against a neighbour at
    (ox, oy) moving at (ovx, ovy), summed radius r [m], inverse horizon ``inv_th`` [1/s]:
    float32, each operation in the order of RVO2's computeNewVelocity."""
    rpx = ox - px
    rpy = oy - py
    rvx = vx - ovx
    rvy = vy - ovy
    dsq = rpx * rpx + rpy * rpy
    rsq = r * r
    # w: the relative velocity seen from the centre of the circle of radius r / horizon that
    # cuts the cone off (no collision yet: horizon th; overlapping: one time step, to leave
    # the overlap within it)
    if dsq > rsq:
        inv = inv_th
        wx = rvx - inv * rpx
        wy = rvy - inv * rpy
        wsq = wx * wx + wy * wy
        dot1 = wx * rpx + wy * rpy
        on_circle = dot1 < _ZERO and dot1 * dot1 > rsq * wsq
    else:
        inv = _ONE / F(dt)
        wx = rvx - inv * rpx
        wy = rvy - inv * rpy
        wsq = wx * wx + wy * wy
        on_circle = True
    if on_circle:
        # nearest the cutoff circle: the line's direction is w's normal
        wl = F(math.sqrt(wsq))
        iw = _ONE / wl
        ux_ = wx * iw
        uy_ = wy * iw
        dx = uy_
        dy = -ux_
        ux = (r * inv - wl) * ux_
        uy = (r * inv - wl) * uy_
    else:
        # nearest a leg: the left one when w passes left of p, else the right, reversed
        leg = F(math.sqrt(dsq - rsq))
        idsq = _ONE / dsq
        if det(rpx, rpy, wx, wy) > _ZERO:
            dx = (rpx * leg - rpy * r) * idsq
            dy = (rpx * r + rpy * leg) * idsq
        else:
            dx = -((rpx * leg + rpy * r) * idsq)
            dy = -((-rpx * r + rpy * leg) * idsq)
        dot2 = rvx * dx + rvy * dy
        ux = dot2 * dx - rvx
        uy = dot2 * dy - rvy
    _set_line(lines, e, k, vx + _HALF * ux, vy + _HALF * uy, dx, dy)


@compiled
def insert_neighbour(nbi, nbd, e, count, cap, j, dsq):
    """Insert j at squared distance dsq into the sorted neighbour list of ``count`` entries
    holding at most ``cap``; returns the new count."""
    if count < cap:
        count += 1
    i = count - 1
    while i != 0 and dsq < nbd[e, i - 1]:
        nbi[e, i] = nbi[e, i - 1]
        nbd[e, i] = nbd[e, i - 1]
        i -= 1
    nbi[e, i] = j
    nbd[e, i] = dsq
    return count


# RVO2's agent k-d tree, which decides the order of an agent's neighbours at equal distances
# (a crowd on a circle is full of them) and so the order of its half-planes:
#
#   build   a node holds places begin .. end-1 of the agent list korder and their bounding
#           box; above MAX_LEAF agents it splits at the middle of its box's longer side
#           (x when its width exceeds its height), moving the agents below the split value
#           to its front by swaps from both ends (the list stays so for the next step's
#           build); the left child is node + 1, the right node + 2 * (left's size); then
#           the list's positions, members and bodies are packed in the tree's rows, in
#           list order, for the leaves' scans
#   query   from the root: a leaf offers its agents in list order; an inner node visits its
#           nearer child first (by the squared distance to its box), each only while that
#           distance is below the range, which shrinks to the farthest kept neighbour once
#           maxNeighbors are kept (the distance is kept with the child when measured, for
#           the check when it is popped)
#
# Both in float32, as RVO2's. The set of neighbours is the brute force's; only the order of
# ties is the tree's.
MAX_LEAF = 10  # RVO2's RVO_MAX_LEAF_SIZE


@compiled
def build_tree(e, first, m, agt, members, korder, tree, stack):
    """RVO2's buildAgentTree over the m members of the group whose places start at ``first``
    in ``korder`` (reordered in place), into ``tree[e]``; ``stack[e]`` is scratch."""
    top = 0
    stack[e, 0] = 0  # node; its range below
    tree[e, 0, KT_BEGIN] = 0
    tree[e, 0, KT_END] = m
    while top >= 0:
        node = stack[e, top]
        top -= 1
        begin = int(tree[e, node, KT_BEGIN])
        end = int(tree[e, node, KT_END])
        a = members[korder[e, first + begin]]
        minx = maxx = F(agt[e, a, AG_X])
        miny = maxy = F(agt[e, a, AG_Y])
        for p in range(begin + 1, end):
            a = members[korder[e, first + p]]
            x = F(agt[e, a, AG_X])
            y = F(agt[e, a, AG_Y])
            maxx = max(maxx, x)
            minx = min(minx, x)
            maxy = max(maxy, y)
            miny = min(miny, y)
        tree[e, node, KT_MINX] = minx
        tree[e, node, KT_MAXX] = maxx
        tree[e, node, KT_MINY] = miny
        tree[e, node, KT_MAXY] = maxy
        if end - begin <= MAX_LEAF:
            continue
        vertical = maxx - minx > maxy - miny
        split = _HALF * (maxx + minx if vertical else maxy + miny)
        left = begin
        right = end
        while left < right:
            while left < right and _coord(agt, e, members[korder[e, first + left]],
                                          vertical) < split:
                left += 1
            while right > left and _coord(agt, e, members[korder[e, first + right - 1]],
                                          vertical) >= split:
                right -= 1
            if left < right:
                t = korder[e, first + left]
                korder[e, first + left] = korder[e, first + right - 1]
                korder[e, first + right - 1] = t
                left += 1
                right -= 1
        if left == begin:
            left += 1
            right += 1
        lnode = node + 1
        rnode = node + 2 * (left - begin)
        tree[e, node, KT_LEFT] = lnode
        tree[e, node, KT_RIGHT] = rnode
        tree[e, lnode, KT_BEGIN] = begin
        tree[e, lnode, KT_END] = left
        tree[e, rnode, KT_BEGIN] = left
        tree[e, rnode, KT_END] = end
        stack[e, top + 1] = rnode
        stack[e, top + 2] = lnode
        top += 2
    # the agent list in the tree's order, packed where the leaves' scan reads it in a row
    for p in range(m):
        q = korder[e, first + p]
        a = members[q]
        tree[e, p, KT_PX] = F(agt[e, a, AG_X])
        tree[e, p, KT_PY] = F(agt[e, a, AG_Y])
        tree[e, p, KT_MEM] = q
        tree[e, p, KT_BODY] = a


@compiled(inline="llvm")
def _coord(agt, e, a, vertical):
    """An agent's float32 x (``vertical``) or y [m]."""
    return F(agt[e, a, AG_X]) if vertical else F(agt[e, a, AG_Y])


@compiled(inline="llvm")
def _box_dsq(tree, e, node, x, y):
    """Squared distance [m^2] from (x, y) to node's box, float32 as RVO2's."""
    dx0 = max(_ZERO, F(tree[e, node, KT_MINX]) - x)
    dx1 = max(_ZERO, x - F(tree[e, node, KT_MAXX]))
    dy0 = max(_ZERO, F(tree[e, node, KT_MINY]) - y)
    dy1 = max(_ZERO, y - F(tree[e, node, KT_MAXY]))
    return dx0 * dx0 + dx1 * dx1 + dy0 * dy0 + dy1 * dy1


@compiled
def tree_neighbours(nbi, nbd, e, i, x, y, tree, stack, maxn, range_sq):
    """RVO2's computeAgentNeighbors for member i at (x, y) (float32): the nearest maxn
    members within sqrt(range_sq) into nbi/nbd[e], nearest first, ties in the tree's order;
    returns how many. ``tree[e]`` is :func:`build_tree`'s; ``stack[e]`` holds node * 2 +
    (1: visit only if its box is in range)."""
    count = 0
    top = 0
    stack[e, 0] = 0  # the root, unconditionally
    while top >= 0:
        item = stack[e, top]
        top -= 1
        node = item >> 1
        # the box's distance as its parent measured it (the same float32 value)
        if item & 1 and not F(tree[e, node, KT_QD]) < range_sq:
            continue
        begin = int(tree[e, node, KT_BEGIN])
        end = int(tree[e, node, KT_END])
        if end - begin <= MAX_LEAF:
            for p in range(begin, end):
                if int(tree[e, p, KT_MEM]) == i:
                    continue
                ddx = x - F(tree[e, p, KT_PX])
                ddy = y - F(tree[e, p, KT_PY])
                dsq = ddx * ddx + ddy * ddy
                if dsq < range_sq:
                    count = insert_neighbour(nbi, nbd, e, count, maxn, int(tree[e, p, KT_BODY]),
                                             dsq)
                    if count == maxn:
                        range_sq = F(nbd[e, count - 1])
            continue
        lnode = int(tree[e, node, KT_LEFT])
        rnode = int(tree[e, node, KT_RIGHT])
        # the nearer child is popped first; the other is checked against the range as it
        # stands once the first is done (it may have shrunk)
        dl = _box_dsq(tree, e, lnode, x, y)
        dr = _box_dsq(tree, e, rnode, x, y)
        tree[e, lnode, KT_QD] = dl
        tree[e, rnode, KT_QD] = dr
        if dl < dr:
            stack[e, top + 1] = rnode * 2 + 1
            stack[e, top + 2] = lnode * 2 + 1
        else:
            stack[e, top + 1] = lnode * 2 + 1
            stack[e, top + 2] = rnode * 2 + 1
        top += 2
    return count


@compiled
def obstacle_neighbours(nbi, nbd, e, ob, nv, x, y, range_sq):
    """The obstacle edges (first vertices in ``ob[0..nv-1]``) an agent at (x, y) sees from
    outside within sqrt(range_sq) [m], nearest first, into nbi/nbd[e]; returns how many."""
    n = 0
    for v in range(nv):
        w = int(ob[v, OB_NEXT])
        ax = ob[v, OB_X]
        ay = ob[v, OB_Y]
        bx = ob[w, OB_X]
        by = ob[w, OB_Y]
        if det(ax - x, ay - y, bx - ax, by - ay) >= 0.0:
            continue  # the agent is on the inner side of the edge
        ex = bx - ax
        ey = by - ay
        r = ((x - ax) * ex + (y - ay) * ey) / (ex * ex + ey * ey)
        if r < 0.0:
            dsq = (x - ax) ** 2 + (y - ay) ** 2
        elif r > 1.0:
            dsq = (x - bx) ** 2 + (y - by) ** 2
        else:
            dsq = (x - ax - r * ex) ** 2 + (y - ay - r * ey) ** 2
        if dsq < range_sq:
            n = insert_neighbour(nbi, nbd, e, n, nbi.shape[1], v, dsq)
    return n


@compiled
def new_velocity(lines, proj, nbi, nbd, e, i, agt, members, ob, nv, ndist, maxn, th, tho, dt,
                 tree, stack):
    """RVO2's computeNewVelocity for agent i of the agents ``members``, each body a's
    position, velocity, radius, speed cap and preferred velocity in ``agt[e, a]``
    (AG_* columns): its new velocity (vx, vy) [m/s]."""
    a = members[i]
    x = F(agt[e, a, AG_X])
    y = F(agt[e, a, AG_Y])
    vx = F(agt[e, a, AG_VX])
    vy = F(agt[e, a, AG_VY])
    r = F(agt[e, a, AG_R])
    vmax = F(agt[e, a, AG_VMAX])
    # obstacle half-planes first: the 3-D program keeps them hard
    reach = tho * vmax + r
    nob = obstacle_neighbours(nbi, nbd, e, ob, nv, x, y, reach * reach)
    n = obstacle_lines(lines, e, ob, nbi, nob, x, y, vx, vy, r, tho)
    n_obst = n
    # then the nearest maxNeighbors agents within neighborDist, from RVO2's k-d tree (built
    # for the group's step by build_tree: its order of neighbours at equal distances)
    count = 0
    if maxn > 0:
        count = tree_neighbours(nbi, nbd, e, i, x, y, tree, stack, maxn, F(ndist) * F(ndist))
    inv_th = _ONE / F(th)
    for k in range(count):
        o = nbi[e, k]
        agent_line(lines, e, n, x, y, vx, vy, F(agt[e, o, AG_X]), F(agt[e, o, AG_Y]),
                   F(agt[e, o, AG_VX]), F(agt[e, o, AG_VY]), r + F(agt[e, o, AG_R]), inv_th, dt)
        n += 1
    fail, rx, ry = lp2(lines, e, n, vmax, F(agt[e, a, AG_PX]), F(agt[e, a, AG_PY]), False)
    if fail < n:
        rx, ry = lp3(lines, proj, e, n, n_obst, fail, vmax, rx, ry)
    return float(rx), float(ry)


@compiled
def agent_speed(b, kin, bf, max_speed):
    """A member's speed cap [m/s]: the speed it can hold in every direction (diff: its
    linear limit; omni: its smaller component limit), lowered to maxSpeed when given."""
    v = bf[b, BF_VMAX]
    if kin != KIN_DIFF:
        v = min(v, bf[b, BF_VMAX + 1])
    if not math.isnan(max_speed):
        v = min(v, max_speed)
    return v


@compiled
def orca_group(e, g, W, B):
    """The commands of orca group g's members in env e, all from one snapshot; the
    members' orca velocities move on to the new ones."""
    snap, bi, bf, prm, agt = B.snap, B.bi, B.bf, B.prm, B.agt
    first = B.grp[g, GR_START]
    m = B.grp[g, GR_COUNT]
    members = B.gmem[first:first + m]
    b0 = members[0]
    dt = step_time(W)
    for k in range(m):
        b = members[k]
        kin = bi[b, BI_KIN]
        speed = agent_speed(b, kin, bf, prm[b0, P_MAXSPEED])
        px = 0.0
        py = 0.0
        if kin == KIN_DIFF:
            has, gx, gy, _gt, _d = goal_of(e, b, B.gq, B.gs)
            if has:
                bearing = math.atan2(gy - snap[e, b, SN_Y], gx - snap[e, b, SN_X])
                px = speed * math.cos(bearing)
                py = speed * math.sin(bearing)
        else:
            dx, dy = desired_omni(e, b, snap, bi, bf, B.gq, B.gs)
            norm = math.hypot(dx, dy)
            if norm >= 1e-9:
                px = speed * dx / norm
                py = speed * dy / norm
        agt[e, b, AG_X] = snap[e, b, SN_X]
        agt[e, b, AG_Y] = snap[e, b, SN_Y]
        agt[e, b, AG_VX] = B.ovel[e, b, 0]
        agt[e, b, AG_VY] = B.ovel[e, b, 1]
        agt[e, b, AG_R] = bf[b, BF_RADIUS] * W.epar[e, b, EP_SCALE] + prm[b0, P_SAFE]
        agt[e, b, AG_VMAX] = speed
        agt[e, b, AG_PX] = px
        agt[e, b, AG_PY] = py
    ndist = prm[b0, P_NDIST]
    maxn = int(prm[b0, P_MAXN])
    th = prm[b0, P_TH]
    tho = prm[b0, P_THO]
    build_tree(e, first, m, agt, members, B.korder, B.ktree, B.kstack)
    for k in range(m):
        # no obstacles: IR-SIM's group orca gives RVO2 none (an empty view of the right type)
        wx, wy = new_velocity(B.lines, B.proj, B.nbi, B.nbd, e, k, agt, members,
                              agt[e, 0:0], 0, ndist, maxn, th, tho, dt, B.ktree, B.kstack)
        agt[e, members[k], AG_NX] = wx
        agt[e, members[k], AG_NY] = wy
    for k in range(m):
        b = members[k]
        wx = agt[e, b, AG_NX]
        wy = agt[e, b, AG_NY]
        B.ovel[e, b, 0] = wx
        B.ovel[e, b, 1] = wy
        if B.manual[b] != 0:
            continue
        follow_velocity(e, b, W, B, wx, wy, bf[b, BF_VMAX + 1], dt, 0.1, 0.02)


def orca_group_c(e, g, wp, bp):
    """The C function of the orca group behaviour (signatures.GROUP_SIG)."""
    orca_group(e, g, load_world(wp), load_behaviour(bp))


ORCA = CFunction(orca_group_c, GROUP_SIG)


@njit(cache=True)
def orca_velocities(pos, vel, radius, max_speed, pref, ob, ndist, maxn, th, tho, dt):
    """One RVO2 step for m agents, for the tests (pyrvo is the reference): positions (m, 2)
    [m], velocities (m, 2) [m/s], radii (m,) [m], speed caps (m,) [m/s], preferred
    velocities (m, 2), obstacle vertices ``ob`` (V, OB_LEN) (see :func:`obstacle_array`).
    Returns the new velocities (m, 2) [m/s]."""
    m = pos.shape[0]
    k = m + ob.shape[0] + 1
    lines = np.zeros((1, k, 6))
    proj = np.zeros((1, k, 4))
    nbi = np.zeros((1, k), np.int64)
    nbd = np.zeros((1, k))
    agt = np.zeros((1, m, AG_LEN))
    members = np.arange(m)
    for a in range(m):
        agt[0, a, AG_X] = pos[a, 0]
        agt[0, a, AG_Y] = pos[a, 1]
        agt[0, a, AG_VX] = vel[a, 0]
        agt[0, a, AG_VY] = vel[a, 1]
        agt[0, a, AG_R] = radius[a]
        agt[0, a, AG_VMAX] = max_speed[a]
        agt[0, a, AG_PX] = pref[a, 0]
        agt[0, a, AG_PY] = pref[a, 1]
    korder = np.arange(m).reshape(1, m)  # a new simulator: the agents in the order added
    tree = np.zeros((1, 2 * m, KT_LEN))
    stack = np.zeros((1, 2 * m), np.int64)
    build_tree(0, 0, m, agt, members, korder, tree, stack)
    out = np.zeros((m, 2))
    for i in range(m):
        out[i, 0], out[i, 1] = new_velocity(lines, proj, nbi, nbd, 0, i, agt, members, ob,
                                            ob.shape[0], ndist, maxn, th, tho, dt, tree,
                                            stack)
    return out


def obstacle_array(polygons: list) -> np.ndarray:
    """RVO2's obstacle vertices from polygons (each a list of (x, y) [m], counter-clockwise;
    a 2-point list is a line seen from both sides): (V, OB_LEN) rows of point, unit
    direction to the next vertex, convexity, next and previous vertex."""
    rows: list[list[float]] = []
    for poly in polygons:
        pts = np.asarray(poly, dtype=float)
        n = len(pts)
        start = len(rows)
        for i in range(n):
            nxt = (i + 1) % n
            prv = (i - 1) % n
            u = pts[nxt] - pts[i]
            u = u / np.hypot(*u)
            if n == 2:
                convex = 1.0
            else:
                a, b, c = pts[prv], pts[i], pts[nxt]
                convex = 1.0 if (a[0] - c[0]) * (b[1] - a[1]) - (a[1] - c[1]) * (b[0] - a[0]) \
                    >= 0.0 else 0.0
            rows.append([pts[i, 0], pts[i, 1], u[0], u[1], convex, start + nxt, start + prv])
    return np.array(rows, dtype=float).reshape(-1, OB_LEN)
