"""Building blocks of many-object tasks: one robot among several movable bodies.

PushMulti (boxes, each to its own goal), PushClutter (a target box through movable clutter)
and Sweep (pucks into a goal circle) are this family, as PushBox, WallSlide and PushT are the
single-object family of ``pushing.py``. They share:

* the body list built from the arguments: the scene holds numbered bodies (``box_0`` ...
  ``box_5``) and :meth:`ManyObjectTask.edit_scene` keeps the first ``num_objects`` of them
  before the scene compiles, so an unused body costs nothing in the step (a parked body
  would still be swept by the broad phase every sub-step);
* the robot's observation head and contact slots (the single-object family's fields);
* spawns that draw bodies, goals and the robot clear of each other (circles kept in
  ``T.mem``), and the domain randomisation of each body;
* the progress terms of the dense reward (toward a push pose, toward a goal).

Columns of the task arrays (``T``, see step.TaskArrays):

* ``IP`` ints: the robot, contact slots, the number of objects, where the object body indices
  start in ``ip`` and where the body -> object-slot map starts (``-1`` for other bodies); a
  task appends its own ints after those;
* ``FP`` floats: spawn region [m], success distance [m], reward weights, radii [m], the
  robot's traction [N], the spawn clearances [m]; a task appends with
  ``columns(FP_NAMES, "...")``;
* ``MEM`` per env: a head (see ``MEM``), then per-object blocks of ``n_obj`` columns
  (``B_*``) and the spawn circles (``3 x n_circ``).
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from push_envs.core import obs_names
from push_envs.core.step import TaskArrays
from push_envs.core.task import Arg
from push_envs.core.task import TaskSpec
from push_envs.core.task import columns
from push_envs.core.task import integer
from push_envs.core.task import optional_range
from push_envs.core.task import region
from push_envs.physics import SceneError
from push_envs.physics.frames import origin_pose_seen
from push_envs.physics.frames import place_origin
from push_envs.physics.jit import compiled
from push_envs.physics.layout import BF_BRAD
from push_envs.physics.layout import BF_HALF
from push_envs.physics.layout import EP_SCALE
from push_envs.physics.rng import uniform
from push_envs.tasks.pushing import family as P
from push_envs.tasks.robot_view import contact_block
from push_envs.tasks.robot_view import cos_sin
from push_envs.tasks.robot_view import head_fields
from push_envs.tasks.robot_view import robot_frame
from push_envs.tasks.robot_view import write_contacts
from push_envs.tasks.robot_view import write_head
from push_envs.tasks.shared import common_parameters
from push_envs.tasks.shared import fill_common

IP = columns("robot max_contacts n_obj obj0 slot0")
FP_NAMES = ("x0 y0 x1 y1 success_distance w_robot w_object w_place w_disturb bonus "
            "step_penalty robot_r traction margin gap").split()
FP = columns(FP_NAMES)
MEM = columns("n_circ target prev_robot contacts tally total spawn_fail")
# MEM.spawn_fail: 1 when a body of this env's last spawn found no clear spot (see free_spot);
# the task's spawn then draws again (``RESPAWNS`` times) and Python refuses the arguments
# should the last attempt fail too (ManyObjectTask.spawn_failures).
# Per-object blocks of T.mem after the head, each n_obj columns wide.
B_DIST = 0  # previous progress distance of the object [m]
B_FLAG = 1  # object at its goal / inside the region (0/1) after the last step
B_TOUCH = 2  # object touches the robot (0/1), written by observe_robot
B_X = 3  # object origin x, y [m] at the last evaluation (what a step moved it by)
B_Y = 4
B_KEY = 5  # task scratch (e.g. distances for a nearest-k selection)
N_BLOCKS = 6
TRIES = 64  # rejection-sampling attempts of a spawn draw
MORE_TRIES = 4032  # further attempts when the first TRIES fail (a crowded spawn)
RESPAWNS = 16  # whole-spawn draws of an env before its arguments are refused
SPAWN_DENSITY_MAX = 0.5
"""Largest share of the spawn area (the region shrunk by ``wall_margin``) that the spawn's
bounding discs, each widened by half the spawn gap, may cover at the largest sizes of the
randomisation ranges. Random sequential placement of discs jams near 0.55 of the area
(random sequential adsorption), so spawns above this bound are refused at construction."""


# ------------------------------------------------------------------------------ columns
@compiled
def obj(T, i):
    """Body index of object i."""
    return T.ip[T.ip[IP.obj0] + i]


@compiled
def col(T, block, i):
    """Column of object i's entry in the per-object memory block ``block``."""
    return len(MEM) + block * T.ip[IP.n_obj] + i


@compiled
def slot_of(T, b):
    """Object slot of body b, or -1."""
    return T.ip[T.ip[IP.slot0] + b]


# ------------------------------------------------------------------------------ observe
@compiled
def observe_robot(e, W, V, T):
    """Write env e's robot head and contact slots (:func:`head_layout`, columns by name
    through ``T.at``) and mark in ``B_TOUCH`` which objects touch the robot; returns (rx, ry,
    c, s) of its origin."""
    ip, mem, at = T.ip, T.mem, T.at
    r = ip[IP.robot]
    row = V.obs[e]
    rx, ry, c, s = write_head(e, W, row, at[OBS.robot_xy], r)
    n_obj = ip[IP.n_obj]
    for i in range(n_obj):
        mem[e, col(T, B_TOUCH, i)] = 0.0
    cti = W.cti
    for k in range(W.ctn[e]):
        a = cti[e, k, 0]
        b = cti[e, k, 1]
        if (a == r or b == r) and cti[e, k, 2] < 0:
            i = slot_of(T, b if a == r else a)
            if i >= 0:
                mem[e, col(T, B_TOUCH, i)] = 1.0
    mem[e, MEM.contacts] = write_contacts(e, W, row, at[OBS.contacts], ip[IP.max_contacts], r,
                                          rx, ry, c, s, T.fp[FP.traction])
    return rx, ry, c, s


@compiled
def object_pose(e, W, T, i):
    """Origin pose (x, y [m], cos, sin) of object i."""
    ox, oy, _th, co, so = origin_pose_seen(e, obj(T, i), W.pos, W.ang, W.bflt, W.epar, W.cbuf)
    return ox, oy, co, so


# ------------------------------------------------------------------------------- reward
@compiled
def push_pose_distance(e, W, T, b, gx, gy):
    """Distance [m] from the robot to the push pose of body b toward (gx, gy): behind b's
    centre on that line, one robot radius plus b's bounding radius away (the single-object
    family's push pose, for any body)."""
    pos = W.pos
    r = T.ip[IP.robot]
    dx, dy = gx - pos[e, b, 0], gy - pos[e, b, 1]
    d = math.sqrt(dx * dx + dy * dy)
    stand = T.fp[FP.robot_r] + W.bflt[b, BF_BRAD] * W.epar[e, b, EP_SCALE]
    if d > 1e-9:
        px, py = pos[e, b, 0] - dx / d * stand, pos[e, b, 1] - dy / d * stand
    else:
        px, py = pos[e, b, 0], pos[e, b, 1]
    ex, ey = pos[e, r, 0] - px, pos[e, r, 1] - py
    return math.sqrt(ex * ex + ey * ey)


@compiled
def robot_progress(e, T, target, d):
    """``w_robot`` x the robot's progress [m] toward its push pose ``d``; a change of target
    object (``-1``: none) earns nothing that step, so switching cannot be farmed."""
    mem = T.mem
    out = 0.0
    if target >= 0 and mem[e, MEM.target] == target:
        out = T.fp[FP.w_robot] * (mem[e, MEM.prev_robot] - d)
    mem[e, MEM.target] = target
    mem[e, MEM.prev_robot] = d
    return out


@compiled
def pair_distance(ag, dg, i):
    """Distance [m] between the i-th (x, y) pairs of two goal vectors."""
    dx, dy = ag[2 * i] - dg[2 * i], ag[2 * i + 1] - dg[2 * i + 1]
    return math.sqrt(dx * dx + dy * dy)


@compiled
def count_within(ag, dg, radius):
    """How many (x, y) pairs of ``ag`` lie within ``radius`` [m] of those of ``dg``."""
    k = 0
    for i in range(ag.shape[0] // 2):
        if pair_distance(ag, dg, i) <= radius:
            k += 1
    return k


@compiled
def distance_sum(ag, dg):
    """Sum of the distances [m] of the (x, y) pairs of two goal vectors."""
    out = 0.0
    for i in range(ag.shape[0] // 2):
        out += pair_distance(ag, dg, i)
    return out


# ------------------------------------------------------------------------------- spawn
@compiled
def clear_circles(e, T):
    """Start a spawn attempt: no kept circles, no failed placement."""
    T.mem[e, MEM.n_circ] = 0.0
    T.mem[e, MEM.spawn_fail] = 0.0


@compiled
def spawn_failed(e, T):
    """True when a body of env e's current spawn attempt found no clear spot."""
    return T.mem[e, MEM.spawn_fail] != 0.0


@compiled
def add_circle(e, T, x, y, rad):
    """Keep a circle (x, y, rad) [m] that later spawn draws stay clear of."""
    mem = T.mem
    n = int(mem[e, MEM.n_circ])
    k = col(T, N_BLOCKS, 0) + 3 * n
    if k + 3 > mem.shape[1]:
        return  # out of circle slots: later draws ignore this one (sized in build)
    mem[e, k] = x
    mem[e, k + 1] = y
    mem[e, k + 2] = rad
    mem[e, MEM.n_circ] = n + 1


@compiled
def _clear(e, T, x, y, rad, gap):
    mem = T.mem
    k0 = col(T, N_BLOCKS, 0)
    for j in range(int(mem[e, MEM.n_circ])):
        k = k0 + 3 * j
        dx, dy = x - mem[e, k], y - mem[e, k + 1]
        need = rad + mem[e, k + 2] + gap
        if dx * dx + dy * dy < need * need:
            return False
    return True


@compiled
def _slack(e, T, x, y, rad, gap, fx, fy, far):
    """How far [m] the circle (x, y, rad) is from violating its spawn constraints: the least
    of (distance - needed distance) over the kept circles and the ``far`` point; negative
    when it overlaps. Ranks the draws when none was clear."""
    mem = T.mem
    k0 = col(T, N_BLOCKS, 0)
    out = math.sqrt((x - fx) ** 2 + (y - fy) ** 2) - far
    for j in range(int(mem[e, MEM.n_circ])):
        k = k0 + 3 * j
        d = math.sqrt((x - mem[e, k]) ** 2 + (y - mem[e, k + 1]) ** 2)
        out = min(out, d - (rad + mem[e, k + 2] + gap))
    return out


@compiled
def free_spot(e, V, T, rad, gap, ax, ay, bx, by, spread, fx, fy, far):
    """A point [m] whose circle of radius ``rad`` lies in the spawn region (``margin`` off its
    edges), clears every kept circle by ``gap`` and lies at least ``far`` from (fx, fy); kept
    itself. Drawn uniformly in the region, or, when ``spread`` > 0, along the segment
    (ax, ay)-(bx, by) (its middle 80 %) at most ``spread`` [m] to either side.

    Rejection sampling: up to ``TRIES`` draws, then up to ``MORE_TRIES`` more (a crowded
    but feasible spawn; the first ``TRIES`` are the draws of earlier versions, so spawns that
    found a spot there are unchanged). When ``spread`` > 0 and no draw along the segment is
    clear (the strip is full), as many more are drawn in the whole region. An overlap is
    never left for the solver to separate: squeezed between crowded bodies, it pushed them
    through the walls. Should every draw fail, the one with the most slack is kept (so the
    attempt can finish) and ``MEM.spawn_fail`` is set: the task's spawn draws the env again,
    and Python refuses the arguments if its last attempt fails too."""
    fp, rng = T.fp, V.rng
    m = fp[FP.margin]
    x0, y0 = fp[FP.x0] + rad + m, fp[FP.y0] + rad + m
    x1, y1 = fp[FP.x1] - rad - m, fp[FP.y1] - rad - m
    x = 0.5 * (x0 + x1)
    y = 0.5 * (y0 + y1)
    ux, uy = bx - ax, by - ay
    L = math.sqrt(ux * ux + uy * uy)
    best = -math.inf
    best_x, best_y = x, y
    found = False
    along = spread > 0.0 and L > 1e-9
    for k in range((2 if along else 1) * (TRIES + MORE_TRIES)):
        if along and k < TRIES + MORE_TRIES:
            t = uniform(rng, e, 0.1, 0.9)
            w = uniform(rng, e, -spread, spread)
            x = ax + t * ux - w * uy / L
            y = ay + t * uy + w * ux / L
            if x < x0 or x > x1 or y < y0 or y > y1:
                continue
        else:
            x = uniform(rng, e, x0, x1)
            y = uniform(rng, e, y0, y1)
        if (x - fx) ** 2 + (y - fy) ** 2 >= far * far and _clear(e, T, x, y, rad, gap):
            found = True
            break
        sl = _slack(e, T, x, y, rad, gap, fx, fy, far)
        if sl > best:
            best, best_x, best_y = sl, x, y
    if not found:
        x, y = best_x, best_y
        T.mem[e, MEM.spawn_fail] = 1.0
    add_circle(e, T, x, y, rad)
    return x, y


@compiled
def place_body(e, W, V, T, b, gap, ax, ay, bx, by, spread, fx, fy, far):
    """Body b's centre at a free spot (see :func:`free_spot`), heading drawn uniformly."""
    rad = W.bflt[b, BF_BRAD] * W.epar[e, b, EP_SCALE]
    x, y = free_spot(e, V, T, rad, gap, ax, ay, bx, by, spread, fx, fy, far)
    W.pos[e, b, 0] = x
    W.pos[e, b, 1] = y
    W.ang[e, b] = uniform(V.rng, e, -math.pi, math.pi)
    return x, y


@compiled
def place_robot(e, W, V, T):
    """The robot at a free spot (5 cm clear of every kept circle), heading drawn uniformly."""
    r = T.ip[IP.robot]
    x, y = free_spot(e, V, T, T.fp[FP.robot_r], 0.05, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                     0.0)
    place_origin(e, r, x, y, uniform(V.rng, e, -math.pi, math.pi), W.pos, W.ang, W.bflt,
                 W.epar)


# LLVM-inlined, as LLVM chose itself while V had 53 fields (a call passes W, V and T
# flattened; its cost model credits those arguments): as a call, PushMulti-v0's and Sweep-v1's
# hook wrapper came out 5 kB larger and its observe and evaluate slower.
@compiled(inline="llvm")
def place_all(e, W, V, T, robot_first):
    """Every object at a free spot anywhere in the region (clear of the kept circles and of
    each other by ``gap``), then the robot; the robot first when ``robot_first`` (a spawn
    drawn again: a large robot placed last among many small bodies is what fails)."""
    if robot_first:
        place_robot(e, W, V, T)
    for i in range(T.ip[IP.n_obj]):
        place_body(e, W, V, T, obj(T, i), T.fp[FP.gap], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                   0.0)
    if not robot_first:
        place_robot(e, W, V, T)


@compiled
def half_size(W, e, b):
    """Smallest half-thickness of body b at its size factor [m] (a disc's radius)."""
    return W.bflt[b, BF_HALF] * W.epar[e, b, EP_SCALE]


# ------------------------------------------------------------------------ Python side
def in_robot_frame(ctx: Any, v: np.ndarray) -> np.ndarray:
    """World vectors (E, 2) into the robot frame."""
    return robot_frame(ctx.robot[:, 2], v)


def head_layout() -> tuple:
    """The robot's head and its contact slots, the first fields of every task of the family
    (each appends its own)."""
    return (*head_fields(), contact_block())


OBS = obs_names(head_layout())
"""The family's observation names (index into ``T.at``); the tasks' layouts extend
:func:`head_layout`, so these indices hold in each."""


def shared_arguments(object_word: str = "box") -> dict[str, Arg]:
    """Constructor arguments every many-object task takes (ranges apply to each object)."""
    return {
        "max_contacts": Arg(4, integer(1, 64), "robot contact slots in the observation"),
        f"{object_word}_mass_range": Arg(None, optional_range(0.0, strict=True),
                                         f"each {object_word}'s mass drawn per episode [kg], "
                                         "or None"),
        f"{object_word}_friction_range": Arg(None, optional_range(0.0, strict=False),
                                             f"each {object_word}'s ground friction drawn per "
                                             "episode, or None"),
        "spawn_region": Arg(None, region(), "(x0, y0, x1, y1) spawn area [m], inside the "
                            "walls; None: the task's"),
        "success_distance": P.shared_arguments()["success_distance"],
        "wall_margin": P.shared_arguments()["wall_margin"],
    }


class ManyObjectTask(TaskSpec):
    """Shared declaration of the many-object tasks; subclasses set the class attributes.

    ``numbered``: (scene name prefix, argument) pairs: the scene holds bodies ``prefix_0``,
    ``prefix_1`` ... and the task keeps the first ``args[argument]`` of them.
    """

    numbered: tuple[tuple[str, str], ...] = ()
    region: tuple[float, float, float, float] = (0.0, 0.0, 4.0, 4.0)  # spawn area [m]
    success_distance: float = 0.1  # [m]
    wall_margin: float = 0.3  # [m]
    w_robot: float = 1.0  # dense reward per metre of robot -> push-pose progress
    w_object: float = 10.0  # per metre of object -> goal progress
    w_place: float = 0.0  # per object entering its goal (minus per object leaving it)
    w_disturb: float = 0.0  # per metre that an object already at its goal is moved
    success_bonus: float = 10.0
    step_penalty: float = 0.01
    spawn_gap: float = 0.1  # [m] least clearance between spawned bodies and goals
    fp_names: tuple[str, ...] = tuple(FP_NAMES)
    n_ip_extra: int = 0  # task ints after the objects' slot map
    info_fields = ()

    # -------------------------------------------------------------------- the body list
    def objects(self) -> list[str]:
        """Scene names of the objects, in slot order."""
        return [f"{p}_{i}" for p, arg in self.numbered for i in range(self.args[arg])]

    def edit_scene(self, raw: dict, source: str) -> dict:
        """Keep the first ``args[arg]`` of each numbered body list; refuse a scene that holds
        fewer, naming the file and the missing bodies."""
        obstacles = raw.get("obstacle") or []
        if not isinstance(obstacles, list):
            return raw  # the scene checker reports the bad section with its key path
        names = [b.get("name") if isinstance(b, dict) else None for b in obstacles]
        keep = set(self.objects())
        missing = [n for n in self.objects() if n not in names]
        if missing:
            raise SceneError(f"{source}: obstacle bodies {missing} are missing; {self.id} with "
                             + ", ".join(f"{a}={self.args[a]}" for _, a in self.numbered)
                             + f" needs them (bodies: {[n for n in names if n]})")
        prefixes = tuple(f"{p}_" for p, _ in self.numbered)

        def unused(n: Any) -> bool:
            return isinstance(n, str) and n.startswith(prefixes) and \
                n[n.rindex("_") + 1:].isdigit() and n not in keep

        return dict(raw, obstacle=[b for b, n in zip(obstacles, names, strict=True)
                                   if not unused(n)])

    # ---------------------------------------------------------------------------- build
    def mem_width(self) -> int:
        """Head, per-object blocks, and spawn circles for every object, goal and the robot."""
        n = len(self.objects())
        return len(MEM) + N_BLOCKS * n + 3 * (2 * n + 2)

    def pack(self, env: Any) -> tuple[np.ndarray, np.ndarray]:
        """ip and fp of the family (a task fills its own appended columns)."""
        w = env.world
        sc = w.scene
        a = self.args
        objs = self.objects()
        r = sc.index[self.robot_body]
        n = len(objs)
        ip = np.zeros(len(IP) + n + sc.num_bodies + self.n_ip_extra, np.int64)
        ip[IP.robot] = r
        ip[IP.max_contacts] = a["max_contacts"]
        ip[IP.n_obj] = n
        ip[IP.obj0] = len(IP)
        ip[IP.slot0] = len(IP) + n
        idx = [sc.index[o] for o in objs]
        ip[len(IP):len(IP) + n] = idx
        slots = np.full(sc.num_bodies, -1, np.int64)
        slots[idx] = np.arange(n)
        ip[len(IP) + n:len(IP) + n + sc.num_bodies] = slots
        reg, succ, margin, robot_r = common_parameters(self, env)
        x0, y0, x1, y1 = reg
        biggest = max(float(sc.bflt[i, BF_BRAD]) for i in idx) * self.max_scale()
        if 2 * (biggest + margin) > min(x1 - x0, y1 - y0):
            raise SceneError(f"{sc.spec.source}: spawn_region {reg} is too small for the "
                             f"objects (bounding radius up to {biggest:.3g} m) with wall_margin "
                             f"{margin:.3g} m")
        self.check_spawn(sc, reg, margin, robot_r, succ)
        for arg, lo, half_lo, body in self.size_checks(sc):
            P.check_thin(sc, arg, lo, half_lo, body)
        fp, fpc = fill_common(self, env, reg, succ, margin, robot_r,
                              ("w_robot", "w_object", "w_place", "w_disturb"))
        fp[fpc.gap] = self.spawn_gap
        return ip, fp

    def max_scale(self) -> float:
        """Largest size factor a spawn may draw (sizes the region check)."""
        return 1.0

    # Arguments that decide how crowded a spawn is, named when it is refused.
    spawn_args: tuple[str, ...] = ()

    def spawn_discs(self, sc: Any, robot_r: float, succ: float) -> list[tuple[float, float]]:
        """(radius [m], gap [m]) of every disc the spawn keeps apart, at the largest sizes of
        the randomisation ranges: by default the objects (``spawn_gap``) and the robot (5 cm);
        tasks add their goals."""
        scale = self.max_scale()
        out = [(float(sc.bflt[sc.index[o], BF_BRAD]) * scale, self.spawn_gap)
               for o in self.objects()]
        return out + [(robot_r, 0.05)]

    def check_spawn(self, sc: Any, reg: tuple, margin: float, robot_r: float,
                    succ: float) -> None:
        """Refuse, before anything is drawn, arguments whose spawn cannot be placed without
        overlap: the bounding discs (each widened by half its gap) may cover at most
        ``SPAWN_DENSITY_MAX`` of the spawn region shrunk by ``wall_margin``, the area where
        the discs must lie. A ValueError names the arguments that set the crowding."""
        x0, y0, x1, y1 = reg
        area = max(x1 - x0 - 2 * margin, 0.0) * max(y1 - y0 - 2 * margin, 0.0)
        discs = self.spawn_discs(sc, robot_r, succ)
        biggest = max(r for r, _ in discs)
        covered = sum(math.pi * (r + 0.5 * g) ** 2 for r, g in discs)
        if 2 * (biggest + margin) > min(x1 - x0, y1 - y0) or \
                covered > SPAWN_DENSITY_MAX * area:
            raise ValueError(
                f"{self.id}: {self.crowding_args()} cannot be spawned without overlap: "
                f"its {len(discs)} bounding discs (up to {biggest:.3g} m, at the largest "
                f"sizes) cover {covered:.3g} m^2, more than {SPAWN_DENSITY_MAX:g} of the "
                f"{area:.3g} m^2 spawn area (spawn_region {reg} shrunk by wall_margin "
                f"{margin:g} m); use fewer or smaller bodies or a larger spawn_region")

    def crowding_args(self) -> str:
        """``name=value`` of the arguments that decide how crowded a spawn is."""
        names = [a for _, a in self.numbered] + list(self.spawn_args) + \
            ["spawn_region", "wall_margin"]
        return ", ".join(f"{a}={self.args.get(a)!r}" for a in dict.fromkeys(names))

    def spawn_failures(self, task_arrays: Any) -> np.ndarray:
        return task_arrays.mem[:, MEM.spawn_fail] != 0.0

    def spawn_refusal(self, e: int, count: int) -> str:
        return (f"{self.id}: {self.crowding_args()} cannot be spawned without overlap: in "
                f"{count} env(s) (env {e} first) a body found no spot clear of the bodies "
                f"and goals placed before it (nor far enough from its goal) in {RESPAWNS} "
                f"draws of the whole spawn; an overlap is never left for the solver, which "
                f"would push bodies through the walls. Use fewer or smaller bodies or a "
                f"larger spawn_region")

    def size_checks(self, sc: Any) -> list[tuple[str, float, float, str]]:
        """(argument, its low end, the thinnest half-thickness [m] it gives, body) of each
        size range, checked against the step's sub-step bound (``pushing.check_thin``)."""
        return []

    def goal_width(self) -> int:
        """Columns of ``T.goal``."""
        return 2

    def build(self, env: Any) -> TaskArrays:
        ip, fp = self.pack(env)
        E = env.num_envs
        g = len(self.goal_fields)
        return TaskArrays(ip=ip, fp=fp, goal=np.zeros((E, self.goal_width())),
                          mem=np.zeros((E, self.mem_width())), ag=np.zeros((E, g)),
                          dg=np.zeros((E, g)))

    # ------------------------------------------------------------------------ test readers
    def reading_context(self, env: Any) -> Any:
        """What the layout's ``expect`` readers read: the world state in plain numpy."""
        w = env.world
        m = self.args["max_contacts"]
        objs = self.objects()
        touching = np.zeros((env.num_envs, len(objs)))
        for e in range(env.num_envs):
            for rep in w.contacts(self.robot_body, e):
                if rep.other in objs:
                    touching[e, objs.index(rep.other)] = 1.0
        return SimpleNamespace(
            world=w, env=env, robot_name=self.robot_body,
            robot=w.state(self.robot_body)[:, :3],
            objs=np.stack([w.state(o)[:, :3] for o in objs], 1),
            goal=env.task_arrays.goal.copy(),
            traction=float(w.traction(self.robot_body)[0]),
            robot_slots=w.contact_array(self.robot_body, m)[0],
            touching=touching)

    def render_colours(self, env: Any) -> list[tuple[int, int, int] | None]:
        """The drawn fill of each object (its scene colour), for goals in the same colour."""
        from push_envs.core.render import PASSIVE_FILL

        sc = env.world.scene
        out = []
        for name in self.objects():
            c = sc.spec.bodies[sc.index[name]].color
            if c is None:
                out.append(PASSIVE_FILL)
                continue
            import pygame

            col_ = pygame.Color(c)
            out.append((col_.r, col_.g, col_.b))
        return out


def rel_xy(ctx: Any, i: int) -> np.ndarray:
    """Object i's origin relative to the robot, robot frame [m]."""
    return in_robot_frame(ctx, ctx.objs[:, i, :2] - ctx.robot[:, :2])


def rel_heading(ctx: Any, i: int) -> np.ndarray:
    """cos, sin of object i's heading relative to the robot's."""
    return rel_heading_of(ctx, ctx.objs[:, i, 2])


def rel_heading_of(ctx: Any, th: np.ndarray) -> np.ndarray:
    """cos, sin of headings ``th`` (E,) [rad] relative to the robot's."""
    return cos_sin(th - ctx.robot[:, 2])
