"""Ray-casting sensors (lidar2d, fmcw_lidar2d): compiled ray casting against every shape of
the engine, per env.

A body's lidar (IR-SIM's keys and defaults, see :class:`LidarSpec`; its YAML entry is parsed
by its sensor module, ``push_envs/sensors/lidar2d.py`` or ``fmcw_lidar2d.py``) casts
``number`` beams from its origin moved by ``offset``; beam ``k`` points along the body heading
plus ``offset[2]`` plus ``angles[k]`` (``numpy.linspace(-angle_range / 2, angle_range / 2,
number)``; a single beam points straight ahead, as IR-SIM's). Each beam's range is the exact
distance to the first surface it meets:

* circles (movable or static): the quadratic's near root, in its cancellation-free form;
* convex polygon pieces (boxes, the convex pieces of any polygon, grid-map cells): clipping
  of the ray by the edges' half-planes (Cyrus-Beck);
* segments (line strings, zero thickness): the ray-segment crossing.

Movable bodies (robots included, except the sensing body itself) are tested in their own
frame, after a bounding-circle rejection; static pieces (walls, the grid map) are walked in
ray order through the broad phase's uniform grid (a DDA), stopping at the first cell that
ends beyond the nearest hit, or tested one by one when there are few. A beam that meets
nothing within ``range_max`` reads ``range_max``; a return nearer than ``range_min`` reads
``range_min``; a beam starting inside a shape reads ``range_min``. Noise (angle, then range)
draws from the caller's per-env stream (``push_envs.physics.rng``), so a batch and a single env
seeded alike read alike. Units: metres, radians, m/s.

An FMCW lidar (IR-SIM's ``FMCWLidar2D``) scans the same beams and also reports each beam's
radial velocity: the velocity of the hit point relative to the sensor's origin, projected on
the beam's direction (positive: the target moves away, IR-SIM's sign), or, with
``motion_compensate``, the hit point's own velocity projected so (the sensor's motion
removed). As IR-SIM's: a return pushed beyond ``range_max`` by noise is lost (``range_max``,
velocity 0); one nearer than ``range_min`` reads ``range_min`` with velocity 0 and draws no
velocity noise; a valid return draws its range noise, then its velocity noise (deviation
``velocity_noise_std`` [m/s]). Velocities are rigid-body point velocities (v + w x r); IR-SIM
uses the objects' translational velocities, the same for bodies that do not turn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from typing import NamedTuple

import numpy as np
from numba import njit
from numba import prange

from .frames import origin_pose_seen
from .jit import compiled
from .layout import BF_BRAD
from .layout import BI_PCOUNT
from .layout import BI_PSTART
from .layout import EP_SCALE
from .layout import PF_BCX
from .layout import PF_BCY
from .layout import PF_BRAD
from .layout import PF_RAD
from .layout import PI_BODY
from .layout import PI_KIND
from .layout import PI_NV
from .narrowphase import CIRCLE
from .narrowphase import SEGMENT
from .rng import normal


@dataclass(frozen=True)
class LidarSpec:
    """A ray-casting sensor, with IR-SIM's keys and defaults (``irsim.world.sensors.Lidar2D``,
    ``FMCWLidar2D``).

    ``name`` is the YAML sensor name (``"lidar2d"`` or ``"fmcw_lidar2d"``); ``fmcw``: the beams
    also report radial velocities (see the module doc), with ``motion_compensate`` and
    ``velocity_noise_std`` [m/s].

    ``number`` beams spread evenly from ``-angle_range / 2`` to ``+angle_range / 2``
    (inclusive, ``numpy.linspace``; one beam points straight ahead) about the body heading
    plus ``offset[2]``; the beams start at the body origin moved by ``offset[:2]`` (body frame)
    [m]. A beam that hits nothing reads ``range_max`` [m]; a return nearer than ``range_min``
    [m] reads ``range_min``. With ``noise``, each beam's angle is perturbed by a normal draw
    of deviation ``angle_std`` [rad] and each return's range by one of deviation ``std`` [m]
    (then clipped to [range_min, range_max]; a miss still reads range_max).
    ``has_velocity`` (lidar2d): the reading also carries the world velocity [m/s] of the hit
    body at the hit point.

    Accepted for IR-SIM's files and without effect on the readings: ``scan_time`` [s]
    (push_envs scans at every step), ``reso`` [rad] (IR-SIM 2.12 ignores it too: ``number``
    sets the beams, 100 when absent). Drawing only: ``alpha``, ``color`` and the ``plot``
    mapping (IR-SIM's ``plot:`` keys, as (key, value) pairs), which ``render()`` follows where
    it has a counterpart (the beams' colour and opacity; an FMCW lidar's velocity colours).
    """

    range_min: float = 0.0
    range_max: float = 10.0
    angle_range: float = math.pi
    number: int = 100
    noise: bool = False
    std: float = 0.2
    angle_std: float = 0.0
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    has_velocity: bool = False
    scan_time: float = 0.1
    alpha: float = 0.3
    name: str = "lidar2d"
    fmcw: bool = False
    motion_compensate: bool = False
    velocity_noise_std: float = 0.0  # [m/s]
    reso: float | None = None  # [rad], accepted and ignored (as IR-SIM 2.12)
    color: str | None = None
    plot: tuple[tuple[str, Any], ...] = ()

    def plot_value(self, key: str, default: Any) -> Any:
        """A drawing key: from ``plot`` (IR-SIM's preferred place), else ``default``."""
        return dict(self.plot).get(key, default)

    def beam_angles(self) -> np.ndarray:
        """The beams' angles about the sensor heading [rad], as IR-SIM spreads them."""
        if self.number == 1:
            return np.zeros(1)
        half = self.angle_range / 2.0
        return np.linspace(-half, half, num=self.number)


# prm[S, :] per-sensor parameters
LP_RMIN = 0  # [m]
LP_RMAX = 1  # [m]
LP_STD = 2  # range noise deviation [m]
LP_ASTD = 3  # angle noise deviation [rad]
LP_OFFX = 4  # sensor offset in the body frame [m]
LP_OFFY = 5
LP_OFFT = 6  # [rad]
LP_NOISE = 7  # 1: noisy
LP_FMCW = 8  # 1: an FMCW lidar (radial velocities)
LP_COMP = 9  # 1: motion-compensated radial velocities
LP_VSTD = 10  # radial velocity noise deviation [m/s]
LP_LEN = 11

_BRUTE_STATIC = 32  # up to this many static pieces, test them all instead of walking the grid
_INF = np.inf


class LidarArrays(NamedTuple):
    """The ray-casting sensors of a scene (``S`` sensors, at most ``NB`` beams) and their
    readings.

    body:   (S,) index of the sensing body
    nbeam:  (S,) beams of each sensor
    prm:    (S, LP_LEN) range limits [m], noise deviations, offset (x, y [m], theta [rad]),
            the FMCW flags
    angles: (S, NB) beam angles about the sensor heading [rad]
    ranges: (E, S, NB) latest ranges [m]
    vels:   (E, S, NB, 2) world velocity [m/s] of the hit body at the hit point (0 on a miss)
    radial: (E, S, NB) an FMCW lidar's radial velocities [m/s] (0 on a miss or an invalid
            return; 0 for a lidar2d)
    """

    body: np.ndarray
    nbeam: np.ndarray
    prm: np.ndarray
    angles: np.ndarray
    ranges: np.ndarray
    vels: np.ndarray
    radial: np.ndarray


LIDAR_FIELDS = {"body": ("i8", 1), "nbeam": ("i8", 1), "prm": ("f8", 2), "angles": ("f8", 2),
                "ranges": ("f8", 3), "vels": ("f8", 4), "radial": ("f8", 3)}
"""LidarArrays' fields: (dtype code, ndim) each (``push_envs.physics.abi.AbiType``)."""


def lidar_arrays(lidars, num_envs: int) -> LidarArrays:
    """LidarArrays of ``lidars`` [(body index, LidarSpec)] for ``num_envs`` envs."""
    S = len(lidars)
    nb = max([spec.number for _, spec in lidars], default=0)
    body = np.array([b for b, _ in lidars], np.int64)
    nbeam = np.array([spec.number for _, spec in lidars], np.int64)
    prm = np.zeros((S, LP_LEN))
    angles = np.zeros((S, nb))
    for s, (_, spec) in enumerate(lidars):
        prm[s, LP_RMIN] = spec.range_min
        prm[s, LP_RMAX] = spec.range_max
        prm[s, LP_STD] = spec.std
        prm[s, LP_ASTD] = spec.angle_std
        prm[s, [LP_OFFX, LP_OFFY, LP_OFFT]] = spec.offset
        prm[s, LP_NOISE] = 1.0 if spec.noise else 0.0
        prm[s, LP_FMCW] = 1.0 if spec.fmcw else 0.0
        prm[s, LP_COMP] = 1.0 if spec.motion_compensate else 0.0
        prm[s, LP_VSTD] = spec.velocity_noise_std
        angles[s, :spec.number] = spec.beam_angles()
    ranges = np.zeros((num_envs, S, nb))
    ranges[:] = prm[None, :, LP_RMAX, None]
    return LidarArrays(body=body, nbeam=nbeam, prm=prm, angles=angles, ranges=ranges,
                       vels=np.zeros((num_envs, S, nb, 2)), radial=np.zeros((num_envs, S, nb)))


# --------------------------------------------------------------------------- ray vs piece
@compiled
def ray_circle(ox, oy, dx, dy, cx, cy, r):
    """Distance along the unit ray (o, d) to the circle (c, r) [m]; 0 from inside, inf on a
    miss. The near root -b - sqrt(b^2 - c) is taken as c / (-b + sqrt(b^2 - c)) (no
    cancellation for small circles far away)."""
    fx, fy = ox - cx, oy - cy
    c = fx * fx + fy * fy - r * r
    if c <= 0.0:
        return 0.0
    b = fx * dx + fy * dy
    if b >= 0.0:
        return _INF
    disc = b * b - c
    if disc < 0.0:
        return _INF
    return c / (-b + math.sqrt(disc))


@compiled
def ray_polygon(v, nv, ox, oy, dx, dy):
    """Distance along the ray (o, d) into the convex CCW polygon v[:nv] (Cyrus-Beck clipping
    by the edges' half-planes); 0 from inside, inf on a miss."""
    te = -_INF
    tl = _INF
    for i in range(nv):
        j = i + 1 if i + 1 < nv else 0
        nx = v[j, 1] - v[i, 1]  # outward normal (unnormalised) of a CCW edge
        ny = v[i, 0] - v[j, 0]
        num = nx * (v[i, 0] - ox) + ny * (v[i, 1] - oy)
        den = nx * dx + ny * dy
        if den == 0.0:
            if num < 0.0:
                return _INF
            continue
        t = num / den
        if den < 0.0:
            if t > te:
                te = t
        elif t < tl:
            tl = t
        if te > tl:
            return _INF
    if tl < 0.0:
        return _INF
    return te if te > 0.0 else 0.0


@compiled
def ray_segment(ax, ay, bx, by, ox, oy, dx, dy):
    """Distance along the ray (o, d) to the segment a-b; inf on a miss (or when parallel)."""
    ex, ey = bx - ax, by - ay
    den = dx * ey - dy * ex
    if den == 0.0:
        return _INF
    wx, wy = ax - ox, ay - oy
    t = (wx * ey - wy * ex) / den
    u = (wx * dy - wy * dx) / den
    if t < 0.0 or u < 0.0 or u > 1.0:
        return _INF
    return t


@compiled
def ray_piece(kind, v, nv, rad, ox, oy, dx, dy):
    """Distance along the ray to one piece (vertices ``v`` in the ray's frame)."""
    if kind == CIRCLE:
        return ray_circle(ox, oy, dx, dy, v[0, 0], v[0, 1], rad)
    if kind == SEGMENT:
        return ray_segment(v[0, 0], v[0, 1], v[1, 0], v[1, 1], ox, oy, dx, dy)
    return ray_polygon(v, nv, ox, oy, dx, dy)


# ---------------------------------------------------------------------------- one beam
@compiled
def _static_piece(sp, self_body, W, ox, oy, dx, dy, best):
    """Distance to static piece sp when it beats ``best`` (else ``best``)."""
    if W.sint[sp, PI_BODY] == self_body:
        return best
    tb = ray_circle(ox, oy, dx, dy, W.sflt[sp, PF_BCX], W.sflt[sp, PF_BCY],
                    W.sflt[sp, PF_BRAD] * (1.0 + 1e-12) + 1e-12)
    if tb >= best:
        return best
    t = ray_piece(W.sint[sp, PI_KIND], W.svert[sp], W.sint[sp, PI_NV], W.sflt[sp, PF_RAD],
                  ox, oy, dx, dy)
    return t if t < best else best


@compiled(inline="llvm")
def _slab(o, d, lo, hi, t0, t1):
    """The interval [t0, t1] of the ray o + t d (one axis, [m]) clipped to the slab
    lo <= x <= hi: empty (t0 > t1) where the ray misses it."""
    if d != 0.0:
        a, b = (lo - o) / d, (hi - o) / d
        if a > b:
            a, b = b, a
        return max(t0, a), min(t1, b)
    if o < lo or o > hi:
        return _INF, -_INF
    return t0, t1


@compiled
def _cast_static(self_body, W, ox, oy, dx, dy, tmax):
    """Nearest static hit within tmax (tmax when none)."""
    ns = W.sint.shape[0]
    best = tmax
    if ns <= _BRUTE_STATIC:
        for sp in range(ns):
            best = _static_piece(sp, self_body, W, ox, oy, dx, dy, best)
        return best
    g = W.grid
    lox, loy, cell = g[0], g[1], g[2]
    nx, ny = int(g[3]), int(g[4])
    hix, hiy = lox + nx * cell, loy + ny * cell
    # Clip the ray to the grid's box (slabs).
    t0, t1 = _slab(ox, dx, lox, hix, 0.0, tmax)
    t0, t1 = _slab(oy, dy, loy, hiy, t0, t1)
    if t0 > t1:
        return best
    px, py = ox + t0 * dx, oy + t0 * dy
    i = min(max(int(math.floor((px - lox) / cell)), 0), nx - 1)
    j = min(max(int(math.floor((py - loy) / cell)), 0), ny - 1)
    si = 1 if dx > 0.0 else -1
    sj = 1 if dy > 0.0 else -1
    tx = ((lox + (i + 1) * cell - ox) / dx if dx > 0.0 else (lox + i * cell - ox) / dx) \
        if dx != 0.0 else _INF
    ty = ((loy + (j + 1) * cell - oy) / dy if dy > 0.0 else (loy + j * cell - oy) / dy) \
        if dy != 0.0 else _INF
    ddx = cell / abs(dx) if dx != 0.0 else _INF
    ddy = cell / abs(dy) if dy != 0.0 else _INF
    for _ in range(nx + ny + 2):
        c = i * ny + j
        for q in range(W.gstart[c], W.gstart[c + 1]):
            best = _static_piece(W.gitem[q], self_body, W, ox, oy, dx, dy, best)
        t_exit = min(tx, ty)
        if best <= t_exit or t_exit > t1:
            break
        if tx < ty:
            i += si
            tx += ddx
            if i < 0 or i >= nx:
                break
        else:
            j += sj
            ty += ddy
            if j < 0 or j >= ny:
                break
    return best


@compiled
def cast_ray(e, self_body, W, ox, oy, dx, dy, tmax):
    """Nearest hit of the unit ray (o, d) within tmax in env e: (distance [m], hit body or
    -1). Every movable body but ``self_body`` and every static piece is tested."""
    best = _cast_static(self_body, W, ox, oy, dx, dy, tmax)
    hit = -1
    if best < tmax:
        hit = -2  # a static piece (its body is looked up only when needed)
    mov = W.movable
    for m in range(mov.shape[0]):
        b = mov[m]
        if b == self_body:
            continue
        sc = W.epar[e, b, EP_SCALE]
        cx, cy = W.pos[e, b, 0], W.pos[e, b, 1]
        tb = ray_circle(ox, oy, dx, dy, cx, cy, W.bflt[b, BF_BRAD] * sc * (1.0 + 1e-12) + 1e-12)
        if tb >= best:
            continue
        # The ray in the body frame about its centre of mass, lengths divided by the scale.
        th = W.ang[e, b]
        c, s = math.cos(th), math.sin(th)
        rx, ry = (ox - cx) / sc, (oy - cy) / sc
        lox, loy = c * rx + s * ry, -s * rx + c * ry
        ldx, ldy = c * dx + s * dy, -s * dx + c * dy
        p0 = W.bint[b, BI_PSTART]
        for p in range(p0, p0 + W.bint[b, BI_PCOUNT]):
            t = sc * ray_piece(W.pint[p, PI_KIND], W.pvert[p], W.pint[p, PI_NV],
                               W.pflt[p, PF_RAD], lox, loy, ldx, ldy)
            if t < best:
                best = t
                hit = b
    return best, hit


@compiled
def scan_sensor(e, s, W, L, rng):
    """Cast every beam of sensor s in env e into ``L.ranges[e, s]``, ``L.vels[e, s]`` and
    (an FMCW lidar) ``L.radial[e, s]``."""
    b = L.body[s]
    prm = L.prm[s]
    x, y, th, c, sn = origin_pose_seen(e, b, W.pos, W.ang, W.bflt, W.epar, W.cbuf)
    ox = x + c * prm[LP_OFFX] - sn * prm[LP_OFFY]
    oy = y + sn * prm[LP_OFFX] + c * prm[LP_OFFY]
    head = th + prm[LP_OFFT]
    rmin, rmax = prm[LP_RMIN], prm[LP_RMAX]
    noisy = prm[LP_NOISE] != 0.0
    fmcw = prm[LP_FMCW] != 0.0
    # The sensor origin's own velocity (rigid with its body), removed from an FMCW lidar's
    # radial velocities unless they are motion-compensated.
    sx = sy = 0.0
    if fmcw and prm[LP_COMP] == 0.0:
        w = W.omg[e, b]
        sx = W.vel[e, b, 0] - w * (oy - W.pos[e, b, 1])
        sy = W.vel[e, b, 1] + w * (ox - W.pos[e, b, 0])
    for k in range(L.nbeam[s]):
        a = head + L.angles[s, k]
        if noisy:
            a += normal(rng, e, 0.0, prm[LP_ASTD])
        dx, dy = math.cos(a), math.sin(a)
        t, hit = cast_ray(e, b, W, ox, oy, dx, dy, rmax)
        vx = vy = 0.0
        if hit >= 0:
            wx = ox + t * dx - W.pos[e, hit, 0]
            wy = oy + t * dy - W.pos[e, hit, 1]
            w = W.omg[e, hit]
            vx = W.vel[e, hit, 0] - w * wy
            vy = W.vel[e, hit, 1] + w * wx
        if fmcw:
            t, L.radial[e, s, k] = _fmcw_return(e, rng, prm, hit, t, noisy, vx - sx, vy - sy,
                                                dx, dy)
        elif hit != -1:
            if noisy:
                t += normal(rng, e, 0.0, prm[LP_STD])
            t = rmin if t < rmin else (rmax if t > rmax else t)
        else:
            t = rmax
        L.ranges[e, s, k] = t
        L.vels[e, s, k, 0] = vx
        L.vels[e, s, k, 1] = vy


@compiled
def _fmcw_return(e, rng, prm, hit, t, noisy, rvx, rvy, dx, dy):
    """An FMCW beam's (range [m], radial velocity [m/s]) from its cast (distance ``t``, body
    ``hit``: -1 none) and the hit point's velocity relative to the sensor (rvx, rvy) [m/s],
    as IR-SIM resolves a hit: range noise, then a return beyond range_max is lost and one
    inside range_min is blocked without a measurement; a valid one draws its velocity noise."""
    rmin, rmax = prm[LP_RMIN], prm[LP_RMAX]
    if hit == -1:
        return rmax, 0.0
    if noisy:
        t += normal(rng, e, 0.0, prm[LP_STD])
    if t > rmax:
        return rmax, 0.0
    if t < rmin:
        return rmin, 0.0
    v = rvx * dx + rvy * dy
    if prm[LP_VSTD] > 0.0:
        v += normal(rng, e, 0.0, prm[LP_VSTD])
    return t, v


@njit(cache=True)
def scan_env(e, W, L, rng):
    """Every ray-casting sensor of env e."""
    for s in range(L.body.shape[0]):
        scan_sensor(e, s, W, L, rng)


@njit(cache=True)
def scan_serial(W, L, rng):
    """Every lidar of every env, one env after the other (``World.lidar_array`` below
    PARALLEL_MIN_ENVS envs)."""
    for e in range(W.pos.shape[0]):
        scan_env(e, W, L, rng)


@njit(cache=True, parallel=True)
def scan_parallel(W, L, rng):
    """Every lidar of every env, prange over envs (same readings as scan_serial)."""
    for i in prange(W.pos.shape[0]):
        e = np.int64(i)  # as in pipeline.step_parallel: one compile of scan_env, not two
        scan_env(e, W, L, rng)
