"""Compiled scene: a checked scene spec turned into the engine's arrays (setup time only).

Topology (which bodies, pieces, drives and sensors exist) is fixed here and shared by every
env of a batch. Movable bodies keep their pieces in the body frame about the centre of mass;
immovable bodies are flattened into world-frame static pieces, binned once into a uniform
grid for the broad phase. shapely is used here (through shapes.py) and never per step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import field

import numpy as np
import shapely

from .arrays import SceneConstants
from .config import BodySpec
from .config import LidarSpec
from .config import SceneSpec
from .errors import SceneError
from .errors import clip
from .grid import grid_boundary_segments
from .grid import grid_rectangles
from .joints import static_joints
from .kinematics import DRIVE_NAMES
from .kinematics import DRIVE_NONE
from .kinematics import DRIVE_OMNI_ANGULAR
from .layout import BF_ACC0
from .layout import BF_ACC1
from .layout import BF_ACC2
from .layout import BF_ALPHA0
from .layout import BF_BRAD
from .layout import BF_COMX
from .layout import BF_COMY
from .layout import BF_HALF
from .layout import BF_LEN
from .layout import BF_NOISE
from .layout import BF_REST
from .layout import BF_TAU
from .layout import BF_UNOBS
from .layout import BF_VMAX0
from .layout import BF_VMAX1
from .layout import BF_VMAX2
from .layout import BF_VMIN0
from .layout import BF_VMIN1
from .layout import BF_VMIN2
from .layout import BF_WHEELBASE
from .layout import BI_DRIVE
from .layout import BI_FLAGS
from .layout import BI_KIND
from .layout import BI_LEN
from .layout import BI_PCOUNT
from .layout import BI_PSTART
from .layout import BI_ROLE
from .layout import BODY_BULLET
from .layout import BODY_UNOBS
from .layout import COLLISION_MODE_CODES
from .layout import DRIVEN
from .layout import IMMOVABLE
from .layout import PASSIVE
from .layout import PF_BCX
from .layout import PF_BCY
from .layout import PF_BRAD
from .layout import PF_LEN
from .layout import PF_MAXX
from .layout import PF_MAXY
from .layout import PF_MINX
from .layout import PF_MINY
from .layout import PF_RAD
from .layout import PI_BODY
from .layout import PI_LEN
from .layout import PI_NV
from .layout import PS_LEN
from .layout import ROLE_OBSTACLE
from .layout import ROLE_ROBOT
from .narrowphase import CIRCLE
from .narrowphase import MAX_VERTS
from .narrowphase import POLYGON
from .narrowphase import SEGMENT
from .params import SolverParams
from .pieces import Piece
from .placement import CHECK_ENVS
from .placement import PlacementArrays
from .placement import place
from .rng import seed_states_of
from .shapes import ShapeInfo

_KIND_CODES = {"circle": CIRCLE, "polygon": POLYGON, "segment": SEGMENT}
MAP_NAME = "map"


@dataclass
class CompiledScene(SceneConstants):
    """Arrays of one scene (no env axis) plus the names and geometry the Python side needs.

    The packed constants (``bint`` ... ``movable``) are inherited from
    :class:`~push_envs.physics.arrays.SceneConstants`: they are declared once, in
    :class:`~push_envs.physics.arrays.WorldArrays`.
    """

    spec: SceneSpec
    params: SolverParams
    names: list[str]
    index: dict[str, int]
    shapes: list[ShapeInfo | None]  # None for the map body
    mass: np.ndarray  # [kg] per body (inf when immovable)
    inertia: np.ndarray  # [kg m^2] about the COM
    friction: np.ndarray
    pose0: np.ndarray  # (B, 3) initial origin pose x, y, theta
    vel0: np.ndarray  # (B, 2) initial COM velocity [m/s]
    omega0: np.ndarray  # (B,) [rad/s]
    steer0: np.ndarray  # (B,) initial steering angle of acker drives [rad]
    sensors: list[int]  # bodies with a contact2d sensor
    map_segments: np.ndarray  # (k, 2, 2) boundary of the grid map, for drawing
    # (body, spec) of every ray-casting sensor (lidar2d, fmcw_lidar2d), bodies in order
    lidars: list[tuple[int, LidarSpec]] = field(default_factory=list)
    drv0: np.ndarray | None = None  # (B, 3) initial drive state (IR-SIM's velocity; steer)
    goal0: np.ndarray | None = None  # (B, 3) goal drawn for env 0 (random groups), else NaN
    # Random groups drawn per env at a reset (placement.py), None when there are none; their
    # bodies are placement.gbody, in order.
    placement: PlacementArrays | None = None
    collision_mode: int = 0  # layout.CM_*

    @property
    def num_bodies(self) -> int:
        return len(self.names)


def _piece_arrays(piece: Piece, pose: tuple[float, float, float] | None, shift: np.ndarray):
    """(kind, nverts, verts(MAX_VERTS, 2), radius, bounding circle) of a piece.

    ``shift`` is subtracted in the body frame (to express pieces about the COM); ``pose``
    places them in the world (static pieces).
    """
    v = np.asarray(piece.verts, dtype=np.float64) - shift
    if pose is not None:
        c, s = math.cos(pose[2]), math.sin(pose[2])
        v = np.stack([pose[0] + c * v[:, 0] - s * v[:, 1], pose[1] + s * v[:, 0] + c * v[:, 1]], 1)
    out = np.zeros((MAX_VERTS, 2))
    out[: len(v)] = v
    if piece.kind == "circle":
        centre = v[0]
        brad = piece.radius
    else:
        centre = v.mean(axis=0)
        brad = float(np.max(np.hypot(*(v - centre).T)))
    return _KIND_CODES[piece.kind], len(v), out, float(piece.radius), centre, brad


def _body_kind(body: BodySpec) -> int:
    if body.static or not math.isfinite(body.mass):
        return IMMOVABLE
    return DRIVEN if body.kinematics is not None else PASSIVE


def _world_pieces(items: list[tuple[ShapeInfo, tuple]], rects: list[Piece]) -> PlacementArrays:
    """The fixed pieces (world frame) a random placement keeps clear of, with no group:
    each body's pieces at its pose, then the map's rectangles."""
    arrays = [_piece_arrays(p, pose, np.zeros(2)) for info, pose in items for p in info.pieces]
    arrays += [_piece_arrays(p, None, np.zeros(2)) for p in rects]
    n = len(arrays)
    fvert = np.zeros((n, MAX_VERTS, 2))
    fbox = np.zeros((n, 4))
    for j, (_kc, nv, verts, rad, _c, _r) in enumerate(arrays):
        fvert[j] = verts
        pts = verts[:nv]
        fbox[j] = (*(pts.min(axis=0) - rad), *(pts.max(axis=0) + rad))
    return PlacementArrays(
        gint=np.zeros((0, 2), np.int64), gflt=np.zeros((0, 7)), gbody=np.zeros(0, np.int64),
        brad=np.zeros(0), com=np.zeros((0, 2)),
        fkind=np.array([a[0] for a in arrays], np.int64).reshape(n),
        fnv=np.array([a[1] for a in arrays], np.int64).reshape(n), fvert=fvert,
        frad=np.array([a[3] for a in arrays], np.float64).reshape(n), fbox=fbox)


def _with_groups(fixed: PlacementArrays, spec: SceneSpec, groups: list[int],
                 infos: list[ShapeInfo]) -> PlacementArrays:
    """``fixed`` with the random groups ``groups`` (indices into spec.groups) to place."""
    gint, gflt, gbody, brad, com = [], [], [], [], []
    for g in groups:
        grp = spec.groups[g]
        gint.append((len(gbody), len(grp.bodies)))
        gflt.append((*grp.low, *grp.high, grp.min_distance))
        for b in grp.bodies:
            info = infos[b]
            c = np.asarray(info.centroid, float) if info.area > 0 else np.zeros(2)
            gbody.append(b)
            com.append(c)
            brad.append(max(float(np.hypot(*(np.asarray(p.verts, float) - c).T).max())
                            + p.radius for p in info.pieces))
    return fixed._replace(gint=np.array(gint, np.int64).reshape(-1, 2),
                          gflt=np.array(gflt, np.float64).reshape(-1, 7),
                          gbody=np.array(gbody, np.int64), brad=np.array(brad, np.float64),
                          com=np.array(com, np.float64).reshape(-1, 2))


def _draw_layouts(P: PlacementArrays, seeds: list[int], spec: SceneSpec, groups: list[int],
                  what: str) -> tuple[np.ndarray, np.ndarray]:
    """Poses and goals (len(seeds), R, 3) of the random groups drawn with one stream per
    seed; a SceneError naming the file and the group that cannot be placed."""
    n, r = len(seeds), len(P.gbody)
    pose = np.zeros((n, r, 3))
    goal = np.zeros((n, r, 3))
    status = np.zeros(n, np.int64)
    place(np.arange(n, dtype=np.int64), seed_states_of(seeds), P, pose, goal, status)
    bad = np.flatnonzero(status)
    if len(bad):
        grp = spec.groups[groups[int(status[bad[0]]) - 1]]
        raise SceneError(
            f"{grp.path}.distribution: cannot place the group's {len(grp.bodies)} objects "
            f"({what}): each needs a state in range_low {list(grp.low)} .. range_high "
            f"{list(grp.high)} at least min_distance {grp.min_distance:g} m from the group's "
            "others and clear of every other body (its bounding circle), and no draw of "
            f"{n} found one; widen the range, lower number or min_distance")
    return pose, goal


def _layout(spec: SceneSpec, infos: list[ShapeInfo], kinds: list[int], rects: list[Piece]
            ) -> tuple[np.ndarray, np.ndarray, PlacementArrays | None]:
    """Origin poses (B, 3) and drawn goals (B, 3, NaN when not drawn) of every body, and the
    placement of the random groups drawn per env (None when there are none).

    Groups of immovable bodies are drawn here, once, from the scene's seed (they become
    static pieces, shared by every env); the others for env 0 of a world seeded
    ``spec.seed`` (what its first reset draws), after checking that the first CHECK_ENVS
    envs' draws all succeed.
    """
    bodies = spec.bodies
    pose0 = np.array([b.state[:3] for b in bodies], np.float64).reshape(-1, 3)
    goal0 = np.full((len(bodies), 3), np.nan)
    if not spec.groups:
        return pose0, goal0, None
    per_env = [g for g, grp in enumerate(spec.groups)
               if all(kinds[b] != IMMOVABLE for b in grp.bodies)]
    at_load = [g for g in range(len(spec.groups)) if g not in per_env]
    placed = {b for grp in spec.groups for b in grp.bodies}

    def fixed(exclude: set[int]) -> PlacementArrays:
        keep = [(infos[i], tuple(pose0[i])) for i, b in enumerate(bodies)
                if i not in exclude and not b.unobstructed]
        return _world_pieces(keep, rects)

    P = None
    for groups, draws in ((at_load, None), (per_env, CHECK_ENVS)):
        if not groups:
            continue
        members = {b for g in groups for b in spec.groups[g].bodies}
        P = _with_groups(fixed(members | (placed if draws is None else members)), spec,
                         groups, infos)
        seeds = [spec.seed ^ 0x5EED] if draws is None else \
            [spec.seed + i for i in range(draws)]
        what = "drawn once, for every env" if draws is None else "drawn per env"
        pose, goal = _draw_layouts(P, seeds, spec, groups, what)
        for k, b in enumerate(P.gbody):
            pose0[b] = pose[0, k]
            goal0[b] = goal[0, k]
        if draws is None:
            placed -= members
    return pose0, goal0, (P if per_env else None)


def _static_grid(sflt: np.ndarray, smin: np.ndarray, smax: np.ndarray, cell_hint: float):
    """Uniform grid over the static pieces' boxes, as CSR (start offsets, piece indices)."""
    if len(sflt) == 0:
        return np.array([0.0, 0.0, 1.0, 1.0, 1.0]), np.zeros(2, np.int64), np.zeros(0, np.int64)
    lo = smin.min(axis=0)
    hi = smax.max(axis=0)
    span = np.maximum(hi - lo, 1e-9)
    cell = max(cell_hint, float(span.max()) / 256.0)
    nx, ny = (int(math.ceil(s / cell)) + 1 for s in span)
    cells: list[list[int]] = [[] for _ in range(nx * ny)]
    for sp in range(len(sflt)):
        i0, j0 = ((smin[sp] - lo) // cell).astype(int)
        i1, j1 = ((smax[sp] - lo) // cell).astype(int)
        for i in range(max(i0, 0), min(i1, nx - 1) + 1):
            for j in range(max(j0, 0), min(j1, ny - 1) + 1):
                cells[i * ny + j].append(sp)
    start = np.zeros(nx * ny + 1, np.int64)
    start[1:] = np.cumsum([len(c) for c in cells])
    items = np.array([sp for c in cells for sp in c], dtype=np.int64)
    return np.array([lo[0], lo[1], cell, nx, ny], dtype=np.float64), start, items


def compile_scene(spec: SceneSpec, params: SolverParams | None = None) -> CompiledScene:
    """Turn a checked scene spec into engine arrays; raises SceneError on bad spawns."""
    params = params or SolverParams()
    w = spec.world
    bodies = list(spec.bodies)
    names = [b.name for b in bodies]
    has_map = w.obstacle_map is not None and bool(np.any(w.obstacle_map))
    if has_map:
        if MAP_NAME in names:
            raise SceneError(f"{spec.source}: world.obstacle_map: the name '{MAP_NAME}' is "
                             "reserved for the grid map; rename that body")
        names.append(MAP_NAME)
    nb = len(names)
    contact = w.collision_mode == "contact"
    rects = grid_rectangles(w.obstacle_map, w.cell, origin=w.offset) if has_map else []
    infos = [body.shape_info(f"{spec.source}: {body.role}[{body.name}]") for body in bodies]
    kinds = [_body_kind(body) for body in bodies]
    layout_pose, goal_draw, placement = _layout(spec, infos, kinds, rects)
    shapes: list[ShapeInfo | None] = []
    bint = np.zeros((nb, BI_LEN), np.int64)
    bflt = np.zeros((nb, BF_LEN))
    mass = np.full(nb, np.inf)
    inertia = np.full(nb, np.inf)
    friction = np.full(nb, w.friction)
    pose0 = np.zeros((nb, 3))
    vel0 = np.zeros((nb, 2))
    omega0 = np.zeros(nb)
    steer0 = np.zeros(nb)
    drv0 = np.zeros((nb, 3))
    goal0 = np.full((nb, 3), np.nan)
    goal0[: len(bodies)] = goal_draw
    pieces_m: list[tuple] = []
    pieces_s: list[tuple] = []
    sensors: list[int] = []
    lidars: list[tuple[int, LidarSpec]] = []
    for i, body in enumerate(bodies):
        info = infos[i]  # built by load_scene; not built again
        shapes.append(info)
        kind = kinds[i]
        bint[i, BI_KIND] = kind
        bint[i, BI_DRIVE] = DRIVE_NAMES[body.kinematics.name] if body.kinematics else DRIVE_NONE
        bint[i, BI_ROLE] = ROLE_ROBOT if body.role == "robot" else ROLE_OBSTACLE
        kin = body.kinematics
        bflt[i, BF_WHEELBASE] = (kin.wheelbase or 1.0) if kin else 1.0
        bflt[i, BF_TAU] = kin.tau if kin is not None and kin.tau is not None else w.drive_tau
        bflt[i, [BF_VMIN0, BF_VMIN1]] = body.vel_min[:2]
        bflt[i, [BF_VMAX0, BF_VMAX1]] = body.vel_max[:2]
        bflt[i, [BF_ACC0, BF_ACC1]] = body.acce[:2]
        if len(body.vel_min) > 2 and bint[i, BI_DRIVE] == DRIVE_OMNI_ANGULAR:
            bflt[i, [BF_VMIN2, BF_VMAX2, BF_ACC2]] = (body.vel_min[2], body.vel_max[2],
                                                      body.acce[2])
        bflt[i, BF_REST] = body.restitution if body.restitution is not None else w.restitution
        bflt[i, BF_UNOBS] = 1.0 if body.unobstructed else 0.0
        if kin is not None and kin.noise:
            bflt[i, BF_NOISE] = 1.0
            bflt[i, BF_ALPHA0:BF_ALPHA0 + len(kin.alpha)] = kin.alpha
        friction[i] = body.friction if body.friction is not None else w.friction
        pose0[i] = layout_pose[i]
        if len(body.state) > 3 and kin is not None and kin.name == "acker":
            steer0[i] = body.state[3]
            drv0[i, 1] = body.state[3]
        if body.drive:
            drv0[i, : len(body.drive)] = body.drive
        vel0[i] = body.velocity
        omega0[i] = body.omega
        if body.bullet:
            bint[i, BI_FLAGS] |= BODY_BULLET
        if body.unobstructed:
            bint[i, BI_FLAGS] |= BODY_UNOBS
        if "contact2d" in body.sensors:
            sensors.append(i)
        specs = [x for x in body.sensor_specs if isinstance(x, LidarSpec)]
        if body.lidar is not None and not any(x is body.lidar for x in specs):
            specs.insert(0, body.lidar)  # a spec built by hand, with its lidar only
        lidars.extend((i, x) for x in specs)
        com = np.asarray(info.centroid, dtype=np.float64) if info.area > 0 else np.zeros(2)
        if kind == IMMOVABLE:
            bint[i, BI_PSTART] = len(pieces_s)
            if body.unobstructed:
                continue  # IR-SIM's unobstructed: no piece for anything to meet
            for p in info.pieces:
                pieces_s.append((_piece_arrays(p, pose0[i], np.zeros(2)), i))
            bint[i, BI_PCOUNT] = len(info.pieces)
            continue
        m = float(body.mass)
        mass[i] = m
        if body.inertia is not None:
            inertia[i] = body.inertia
        else:
            inertia[i] = m * info.gyration_sq if info.gyration_sq > 0 else m * 1e-4
        bflt[i, [BF_COMX, BF_COMY]] = com
        bint[i, BI_PSTART] = len(pieces_m)
        brad = 0.0
        for p in info.pieces:
            arr = _piece_arrays(p, None, com)
            pieces_m.append((arr, i))
            brad = max(brad, float(np.hypot(*arr[4])) + arr[5])
        bint[i, BI_PCOUNT] = len(info.pieces)
        bflt[i, BF_BRAD] = brad
        bflt[i, BF_HALF] = info.min_half_thickness
    map_segments = np.zeros((0, 2, 2))
    if has_map:
        i = nb - 1
        shapes.append(None)
        bint[i, BI_KIND] = IMMOVABLE
        bint[i, BI_ROLE] = ROLE_OBSTACLE
        bint[i, BI_PSTART] = len(pieces_s)
        for p in rects:
            pieces_s.append((_piece_arrays(p, None, np.zeros(2)), i))
        bint[i, BI_PCOUNT] = len(rects)
        map_segments = grid_boundary_segments(w.obstacle_map, w.cell, origin=w.offset)

    def pack(items, world):
        n = len(items)
        pi = np.zeros((n, PI_LEN), np.int64)
        pv = np.zeros((n, MAX_VERTS, 2))
        pf = np.zeros((n, PS_LEN if world else PF_LEN))
        for j, ((kc, nv, verts, rad, centre, brad), body) in enumerate(items):
            pi[j] = (kc, nv, body)
            pv[j] = verts
            pf[j, PF_RAD] = rad
            pf[j, [PF_BCX, PF_BCY]] = centre
            pf[j, PF_BRAD] = brad
            pts = verts[:nv]
            lo = pts.min(axis=0) - rad
            hi = pts.max(axis=0) + rad
            pf[j, [PF_MINX, PF_MINY, PF_MAXX, PF_MAXY]] = (lo[0], lo[1], hi[0], hi[1])
        return pi, pv, pf

    pint, pvert, pflt = pack(pieces_m, False)
    sint, svert, sflt = pack(pieces_s, True)
    movable = np.array([i for i in range(nb) if bint[i, BI_KIND] != IMMOVABLE], np.int64)
    smin = sflt[:, [PF_MINX, PF_MINY]]
    smax = sflt[:, [PF_MAXX, PF_MAXY]]
    hint = 2.0 * float(np.max(bflt[movable, BF_BRAD])) if len(movable) else 1.0
    grid, gstart, gitem = _static_grid(sflt, smin.reshape(-1, 2), smax.reshape(-1, 2),
                                       max(hint, 0.25))
    # where static pieces meet, which contacts their union allows (joints.py)
    static_joints(sint, svert, sflt, grid, gstart, gitem)
    scene = CompiledScene(
        spec=spec, params=params, names=names, index={n: i for i, n in enumerate(names)},
        shapes=shapes, bint=bint, bflt=bflt, pint=pint, pvert=pvert, pflt=pflt, sint=sint,
        svert=svert, sflt=sflt, grid=grid, gstart=gstart, gitem=gitem, movable=movable,
        mass=mass, inertia=inertia, friction=friction, pose0=pose0, vel0=vel0, omega0=omega0,
        steer0=steer0, sensors=sensors, map_segments=map_segments, lidars=lidars, drv0=drv0,
        goal0=goal0, placement=placement,
        collision_mode=COLLISION_MODE_CODES[w.collision_mode],
    )
    if contact:
        # IR-SIM's other modes let bodies overlap (they stop, or pass through): only the
        # contact solver needs clear spawns.
        check_spawn_overlaps(scene, params.rest_tolerance)
    return scene


def speed_bound(scene: CompiledScene, i: int) -> float:
    """Largest speed [m/s] of any point of movable body i: from its drive limits, or from its
    initial velocity for a passive body (what a push can add is bounded by the drives)."""
    b = scene.bflt[i]
    reach = float(b[BF_BRAD])
    drive = int(scene.bint[i, BI_DRIVE])
    v0 = max(abs(b[BF_VMIN0]), abs(b[BF_VMAX0]))
    v1 = max(abs(b[BF_VMIN1]), abs(b[BF_VMAX1]))
    if scene.bint[i, BI_KIND] != DRIVEN:
        return float(np.hypot(*scene.vel0[i]) + abs(scene.omega0[i]) * reach)
    if drive == DRIVE_NAMES["omni"]:
        return float(math.hypot(v0, v1))
    if drive == DRIVE_OMNI_ANGULAR:
        v2 = max(abs(b[BF_VMIN2]), abs(b[BF_VMAX2]))
        return float(math.hypot(v0, v1) + v2 * reach)
    if drive == DRIVE_NAMES["acker"]:
        return float(v0 * (1.0 + reach * abs(math.tan(min(v1, 1.5))) / b[BF_WHEELBASE]))
    return float(v0 + v1 * reach)


def _fastest_travel(scene: CompiledScene, mov: list[int]) -> float:
    """Farthest [m] any of the movable bodies ``mov`` (not empty) can move in one step: the
    fastest drive's limit times (1 + the largest restitution) for what a bounce adds, or a
    passive body's initial speed, times the step time."""
    dt = float(scene.spec.world.step_time)
    bounce = 1.0 + max(0.0, float(np.max(scene.bflt[mov, BF_REST])))
    fastest = max(speed_bound(scene, i) * (bounce if scene.bint[i, BI_KIND] == DRIVEN else 1.0)
                  for i in mov)
    return fastest * dt


def check_substeps(scene: CompiledScene) -> int:
    """Sub-steps [-] the fastest possible motion calls for (uncapped; a step takes at most
    ``SolverParams.max_substeps`` of them, and continuous collision keeps whatever then
    moves farther per sub-step from passing through anything).

    A body may travel at most ``substep_fraction`` of the thinnest movable body's
    half-thickness per sub-step (a robot pushes a thin body as far as it moves itself). The
    fastest motion is the fastest drive's limit, times (1 + the largest restitution) for what
    a bounce adds, or a passive body's initial speed. Bullets count for neither.
    """
    p = scene.params
    mov = [int(i) for i in scene.movable if not scene.bint[i, BI_FLAGS] & BODY_BULLET]
    if not mov:
        return 1
    travel = _fastest_travel(scene, mov)
    half = max(float(np.min(scene.bflt[mov, BF_HALF])), 1e-6)
    return max(1, math.ceil(travel / (p.substep_fraction * half)))


def thinnest_half_allowed(scene: CompiledScene) -> float:
    """Smallest half-thickness [m] a movable body may have (at any size factor) for the
    fastest motion of the scene to fit in ``SolverParams.max_substeps`` sub-steps (thinner
    bodies still never tunnel, through continuous collision, but they pause at their time
    of impact where sub-steps would have resolved the contact).

    The step needs ceil(v dt / (substep_fraction half)) sub-steps for a body of half-thickness
    ``half`` moving at v (a pushed body moves at its pusher's speed; substeps.count_substeps), so it
    fits when half >= v dt / (substep_fraction max_substeps). v is the fastest drive's limit
    times (1 + the largest restitution), as :func:`check_substeps` bounds it. Tasks that
    randomise sizes compare the thinnest body at the smallest factor of their ranges with
    this before anything is stepped.
    """
    p = scene.params
    mov = [int(i) for i in scene.movable]
    if not mov:
        return 0.0
    travel = _fastest_travel(scene, mov)
    # A hair above the exact bound: the kernel's ceil() must not round up past the cap.
    return travel / (p.substep_fraction * p.max_substeps) * (1.0 + 1e-9)


def body_geometry(scene: CompiledScene, i: int, pose) -> shapely.Geometry:
    """shapely geometry of body i at origin pose (x, y, theta) [m, m, rad] (setup/drawing)."""
    info = scene.shapes[i]
    if info is None:
        return shapely.union_all([shapely.Polygon(scene.svert[j, : scene.sint[j, PI_NV]])
                                  for j in range(len(scene.sint)) if scene.sint[j, PI_BODY] == i])
    return info.geometry(pose)


def _map_near(scene: CompiledScene, body: int, box: shapely.Geometry) -> shapely.Geometry:
    """Union of the grid map's static pieces that touch ``box`` (world frame)."""
    rows = scene.sint[:, PI_BODY] == body
    lo = scene.sflt[:, [PF_MINX, PF_MINY]]
    hi = scene.sflt[:, [PF_MAXX, PF_MAXY]]
    x0, y0, x1, y1 = box.bounds
    near = rows & (hi[:, 0] >= x0) & (lo[:, 0] <= x1) & (hi[:, 1] >= y0) & (lo[:, 1] <= y1)
    return shapely.union_all([shapely.Polygon(scene.svert[j, : scene.sint[j, PI_NV]])
                              for j in np.flatnonzero(near)])


def check_spawn_overlaps(scene: CompiledScene, tol: float) -> None:
    """Reject spawns that overlap by more than ``tol`` [m]; exact touching is allowed.

    Two shapes overlap by more than tol when, shrunk by tol/2 each, they still intersect
    (a line cannot shrink, so its partner shrinks by the whole tol).

    The grid map is not united and shrunk as a whole (thousands of cells touching at their
    corners take GEOS minutes): only its cells near the body are. Shrinking is local: the
    shrunk union agrees with the shrunk whole map within the body's box as long as every cell
    within a few tol of that box is included (mitred corners reach at most 5 shrink
    distances), hence the margin.
    """
    # IR-SIM's unobstructed bodies meet nothing, so their overlaps are no spawn error.
    movable = {int(b) for b in scene.movable if scene.bflt[b, BF_UNOBS] == 0.0}
    is_map = [info is None for info in scene.shapes]
    geoms: list[shapely.Geometry] = []
    for i in range(scene.num_bodies):
        if is_map[i]:
            rows = scene.sint[:, PI_BODY] == i
            lo = scene.sflt[rows][:, [PF_MINX, PF_MINY]].min(axis=0)
            hi = scene.sflt[rows][:, [PF_MAXX, PF_MAXY]].max(axis=0)
            geoms.append(shapely.box(lo[0], lo[1], hi[0], hi[1]))  # for the tree query only
        else:
            geoms.append(body_geometry(scene, i, scene.pose0[i]))
    shrunk = []
    for i, g in enumerate(geoms):
        area = is_map[i] or shapely.area(g) > 0
        shrunk.append((g.buffer(-tol / 2, join_style="mitre") if area and not is_map[i] else g,
                       area))
    margin = 6.0 * tol + 1e-9
    tree = shapely.STRtree(geoms)
    for i in sorted(movable):
        for j in tree.query(geoms[i]):
            j = int(j)
            if j == i or (j in movable and j < i) or scene.bflt[j, BF_UNOBS] != 0.0:
                continue
            gi, ai = shrunk[i]
            gj, aj = shrunk[j]
            if is_map[j]:
                near = _map_near(scene, j, geoms[i].envelope.buffer(margin, join_style="mitre"))
                if near.is_empty:
                    continue
                gj = near.buffer(-(tol if not ai else tol / 2), join_style="mitre")
            elif not ai:
                gj = geoms[j].buffer(-tol, join_style="mitre") if aj else geoms[j]
            if not aj:
                gi = geoms[i].buffer(-tol, join_style="mitre") if ai else geoms[i]
            if gi.intersects(gj):
                src = scene.spec.source
                wspec = scene.spec.world
                if is_map[j] and wspec.obstacle_map is not None and \
                        bool(np.all(wspec.obstacle_map)):
                    # The placeholder state is not what is wrong: no state could be right.
                    what = wspec.obstacle_map_source or "the occupancy grid"
                    raise SceneError(
                        f"{src}: world.obstacle_map {clip(what)} has no free cell (all "
                        f"{wspec.obstacle_map.size} cells are occupied), so "
                        f"'{clip(scene.names[i])}' has nowhere to stand; draw the free floor "
                        "light (or transparent) in the map")
                raise SceneError(
                    f"{src}: {clip(scene.names[i])}.state: spawn overlaps "
                    f"'{clip(scene.names[j])}' by more than the rest tolerance ({tol:g} m); "
                    "move one of them apart"
                )
