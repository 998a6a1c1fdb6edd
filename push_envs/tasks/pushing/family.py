"""Building blocks of single-object pushing tasks: one robot pushes one object to a goal.

PushBox, WallSlide and PushT are this family. They share the observation layout, the dense
progress reward, the info columns and most of the spawn; each task module writes its own
``spawn``, goal vectors and ``is_success`` from these pieces.

Columns of the task arrays (``T``, see step.TaskArrays):

* ``IP`` ints: robot and object body indices, the body the object must touch (or -1), contact
  slots;
* ``FP`` floats: spawn region [m], thresholds, reward weights, randomisation ranges, radii [m],
  the robot's traction [N]; a task appends its own with ``columns(FP_NAMES, "...")``;
* ``GOAL``: goal x, y [m], heading [rad] and its cos and sin;
* ``MEM``: the previous distances (progress rewards), and what ``observe`` found for
  ``evaluate`` (object origin pose, robot contacts, whether the object touches the wall).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from push_envs.core import Field
from push_envs.core import obs_names
from push_envs.core.step import TaskArrays
from push_envs.core.task import Arg
from push_envs.core.task import TaskSpec
from push_envs.core.task import columns
from push_envs.core.task import integer
from push_envs.core.task import number
from push_envs.core.task import optional_range
from push_envs.core.task import region
from push_envs.physics import SceneError
from push_envs.physics.frames import origin_pose_seen
from push_envs.physics.frames import place_origin
from push_envs.physics.jit import compiled
from push_envs.physics.layout import BF_BRAD
from push_envs.physics.layout import BF_HALF
from push_envs.physics.layout import BI_KIND
from push_envs.physics.layout import CT_FN
from push_envs.physics.layout import CT_FT
from push_envs.physics.layout import CT_NX
from push_envs.physics.layout import CT_NY
from push_envs.physics.layout import EP_SCALE
from push_envs.physics.layout import IMMOVABLE
from push_envs.physics.rng import uniform
from push_envs.physics.scene import thinnest_half_allowed
from push_envs.tasks.info import info_columns
from push_envs.tasks.info import info_row
from push_envs.tasks.info import write_info
from push_envs.tasks.robot_view import FORCE_CLIP
from push_envs.tasks.robot_view import VEL_CLIP
from push_envs.tasks.robot_view import clip
from push_envs.tasks.robot_view import contact_block
from push_envs.tasks.robot_view import cos_sin
from push_envs.tasks.robot_view import head_fields
from push_envs.tasks.robot_view import put2
from push_envs.tasks.robot_view import put_heading_in_frame
from push_envs.tasks.robot_view import put_in_frame
from push_envs.tasks.robot_view import robot_frame
from push_envs.tasks.robot_view import write_contacts
from push_envs.tasks.robot_view import write_head
from push_envs.tasks.shared import common_parameters
from push_envs.tasks.shared import fill_common
from push_envs.tasks.shared import fill_ranges
from push_envs.tasks.shared import randomise_body

IP = columns("robot obj wall max_contacts")
FP_NAMES = ("x0 y0 x1 y1 success_distance success_angle w_robot_object w_object_goal w_angle "
            "bonus step_penalty mass_lo mass_hi fric_lo fric_hi scale_lo scale_hi robot_r obj_r "
            "traction goal_separation slop margin").split()
FP = columns(FP_NAMES)
GOAL = columns("x y theta cos sin")
MEM = columns("prev_rb prev_og prev_ang ox oy co so contacts touch_wall")

# The end of the env docstring (push_envs.core.env.task_envs fills its fields) of a task that
# keeps the family's success test (is_success): the object's centre near the goal.
BOX_AT_GOAL_END = """
    ## Episode End
    Terminates when the box centre is within ``success_distance`` (0.1 m) of the goal;
    truncates after ``max_episode_steps`` ({max_episode_steps}).

    {arguments}

    {versions}
"""

TRIES = 64  # rejection-sampling attempts of a spawn draw
MORE_TRIES = 4032  # further attempts when the first TRIES fail (never changes a spawn that
#                     the first TRIES placed)
SPAWN_DENSITY_MAX = 0.5  # share of the spawn area the object's and robots' discs may cover


# ------------------------------------------------------------------------------ observe
@compiled
def object_contacts(e, W, o, wall, r0, r1):
    """What env e's contacts tell about object o: (net contact force x, y [N, world], touches
    the wall body (or, with wall < 0, any immovable body), touches robot r0, touches r1)."""
    cti, ctf = W.cti, W.ctf
    fx = fy = 0.0
    touch_wall = False
    touch_r0 = False
    touch_r1 = False
    for k in range(W.ctn[e]):
        a = cti[e, k, 0]
        b = cti[e, k, 1]
        if a == o or b == o:
            sgn = 1.0 if a == o else -1.0
            q = b if a == o else a
            nx, ny = sgn * ctf[e, k, CT_NX], sgn * ctf[e, k, CT_NY]
            fn, ft = ctf[e, k, CT_FN], ctf[e, k, CT_FT]
            fx += fn * nx - ft * ny
            fy += fn * ny + ft * nx
            if q == r0:
                touch_r0 = True
            if q == r1:
                touch_r1 = True
            if wall >= 0:
                if q == wall:
                    touch_wall = True
            elif cti[e, k, 2] >= 0 or W.bint[q, BI_KIND] == IMMOVABLE:
                touch_wall = True
    return fx, fy, touch_wall, touch_r0, touch_r1


# LLVM-inlined: a call passes W, V and T flattened (~300 words). LLVM inlined it on its own
# while V had 53 fields (its cost model credits the arguments a call would pass); with the
# 20 of today it kept a call, and PushBox-v0 make_vec(4096) ran at 0.8 of the inlined form.
@compiled(inline="llvm")
def observe_single(e, W, V, T):
    """Write env e's state observation row (:func:`layout`, columns by name through ``T.at``)
    and remember the object's origin pose, the robot's contact count and the wall touch in
    ``T.mem`` (:func:`remember`)."""
    ip, fp, goal, at = T.ip, T.fp, T.goal, T.at
    r = ip[IP.robot]
    o = ip[IP.obj]
    row = V.obs[e]
    rx, ry, c, s = write_head(e, W, row, at[OBS.robot_xy], r)
    ox, oy, _oth, co, so = origin_pose_seen(e, o, W.pos, W.ang, W.bflt, W.epar, W.cbuf)
    cg, sg = goal[e, GOAL.cos], goal[e, GOAL.sin]
    dx, dy = ox - rx, oy - ry
    put_in_frame(row, at[OBS.object_rel], c, s, dx, dy)
    # Angle differences by identities: cos(a - b) = ca cb + sa sb, sin(a - b) = sa cb - ca sb.
    put_heading_in_frame(row, at[OBS.object_heading_rel], c, s, co, so)
    put2(row, at[OBS.goal_minus_object], goal[e, GOAL.x] - ox, goal[e, GOAL.y] - oy)
    put_heading_in_frame(row, at[OBS.goal_heading_rel], co, so, cg, sg)
    put2(row, at[OBS.goal_xy], goal[e, GOAL.x], goal[e, GOAL.y])
    put2(row, at[OBS.goal_heading], cg, sg)
    put2(row, at[OBS.object_vel], clip(W.vel[e, o, 0], VEL_CLIP), clip(W.vel[e, o, 1], VEL_CLIP))
    trac = fp[FP.traction]
    fx, fy, touch_wall, touch_robot, _ = object_contacts(e, W, o, ip[IP.wall], r, -1)
    n = write_contacts(e, W, row, at[OBS.contacts], ip[IP.max_contacts], r, rx, ry, c, s,
                       trac)
    row[at[OBS.object_touches_wall]] = 1.0 if touch_wall else 0.0
    put2(row, at[OBS.object_force], clip(fx / trac, FORCE_CLIP), clip(fy / trac, FORCE_CLIP))
    row[at[OBS.object_touches_robot]] = 1.0 if touch_robot else 0.0
    # The goal seen from the robot: a policy would otherwise have to learn the rotation by the
    # robot heading (a product of inputs) from the world-frame columns above.
    gx, gy = goal[e, GOAL.x] - rx, goal[e, GOAL.y] - ry
    put_in_frame(row, at[OBS.goal_from_robot], c, s, gx, gy)
    gx, gy = goal[e, GOAL.x] - ox, goal[e, GOAL.y] - oy
    put_in_frame(row, at[OBS.goal_from_object], c, s, gx, gy)
    remember(e, T, ox, oy, co, so, n, touch_wall)


@compiled(inline="llvm")  # as observe_single, for the same reason
def observe_goal_xy(e, W, V, T):
    """:func:`observe_single`, then the goal vectors' (x, y) (:func:`goal_vectors_xy`)."""
    observe_single(e, W, V, T)
    goal_vectors_xy(e, T)


# LLVM-inlined, as the observe hooks that call these (observe_single)
@compiled(inline="llvm")
def remember(e, T, ox, oy, co, so, contacts, touch_wall):
    """Keep in ``T.mem`` what env e's observe found for the reward and the goal vectors: the
    object's origin (ox, oy) [m] and heading (cos co, sin so), the robot's contact count,
    whether the object touches the wall (bool)."""
    mem = T.mem
    mem[e, MEM.ox] = ox
    mem[e, MEM.oy] = oy
    mem[e, MEM.co] = co
    mem[e, MEM.so] = so
    mem[e, MEM.contacts] = contacts
    mem[e, MEM.touch_wall] = 1.0 if touch_wall else 0.0


@compiled(inline="llvm")
def goal_vectors_xy(e, T):
    """The goal-env vectors' first columns: ``T.ag[e, 0:2]`` the object's origin (x, y) [m]
    that :func:`remember` kept, ``T.dg[e, 0:2]`` the goal's (x, y) [m]."""
    T.ag[e, 0] = T.mem[e, MEM.ox]
    T.ag[e, 1] = T.mem[e, MEM.oy]
    T.dg[e, 0] = T.goal[e, GOAL.x]
    T.dg[e, 1] = T.goal[e, GOAL.y]


# ------------------------------------------------------------------------------- reward
@compiled
def heading_error(c, s, cg, sg):
    """|angle between headings (c, s) and (cg, sg)| [rad], in [0, pi]."""
    return abs(math.atan2(sg * c - cg * s, cg * c + sg * s))


@compiled
def distances(e, W, T):
    """(robot -> push pose, object -> goal [m], heading error [rad]) of env e, from the
    object pose ``observe_single`` stored.

    The push pose is where the robot must stand to push the object straight at the goal:
    behind the object's centre, on the goal line, one robot radius plus the object's
    bounding radius away. Shaping toward it (rather than toward the object's centre) does
    not reward touching the object from the wrong side.
    """
    ip, fp, goal, mem, pos = T.ip, T.fp, T.goal, T.mem, W.pos
    r = ip[IP.robot]
    o = ip[IP.obj]
    gx, gy = goal[e, GOAL.x] - pos[e, o, 0], goal[e, GOAL.y] - pos[e, o, 1]
    d_goal = math.sqrt(gx * gx + gy * gy)
    stand = fp[FP.robot_r] + fp[FP.obj_r] * W.epar[e, o, EP_SCALE]
    if d_goal > 1e-9:
        px = pos[e, o, 0] - gx / d_goal * stand
        py = pos[e, o, 1] - gy / d_goal * stand
    else:
        px, py = pos[e, o, 0], pos[e, o, 1]
    dx, dy = pos[e, r, 0] - px, pos[e, r, 1] - py
    ex, ey = mem[e, MEM.ox] - goal[e, GOAL.x], mem[e, MEM.oy] - goal[e, GOAL.y]
    err = heading_error(mem[e, MEM.co], mem[e, MEM.so], goal[e, GOAL.cos], goal[e, GOAL.sin])
    return math.sqrt(dx * dx + dy * dy), math.sqrt(ex * ex + ey * ey), err


@compiled
def evaluate_single(e, W, V, T, success):
    """Dense progress reward and info of env e for this step, given its success.

    ``w_robot_object`` [1/m] x (robot -> push-pose progress) + ``w_object_goal`` [1/m] x
    (object -> goal progress) + ``w_angle`` [1/rad] x (heading progress) + ``bonus`` on
    success - ``step_penalty``. Returns (success, terminated = success, reward).
    """
    fp, mem = T.fp, T.mem
    d_rb, d_og, d_ang = distances(e, W, T)
    r_rb = fp[FP.w_robot_object] * (mem[e, MEM.prev_rb] - d_rb)
    r_og = fp[FP.w_object_goal] * (mem[e, MEM.prev_og] - d_og)
    r_ang = fp[FP.w_angle] * (mem[e, MEM.prev_ang] - d_ang) if fp[FP.w_angle] != 0.0 else 0.0
    mem[e, MEM.prev_rb] = d_rb
    mem[e, MEM.prev_og] = d_og
    mem[e, MEM.prev_ang] = d_ang
    return report_terms(e, V, T, d_og, d_ang, r_rb, r_og, r_ang, success)


@compiled
def report_terms(e, V, T, d_og, d_ang, r_rb, r_og, r_ang, success):
    """Write env e's info columns (pose errors d_og [m] and d_ang [rad], the three reward
    terms, the bonus, contacts) and return (success, terminated = success, reward): the sum
    of the terms and the bonus less ``step_penalty``. Shared by every dense shaping of the
    family, so the info and the reward cannot drift apart."""
    fp, mem = T.fp, T.mem
    bonus = fp[FP.bonus] if success else 0.0
    write_info(V.info, e, InfoRow(box_to_goal=d_og, angle_error=d_ang, reward_robot_box=r_rb,
                                  reward_box_goal=r_og, reward_angle=r_ang,
                                  reward_success=bonus, contacts=mem[e, MEM.contacts],
                                  touching_wall=mem[e, MEM.touch_wall]))
    return success, success, r_rb + r_og + r_ang + bonus - fp[FP.step_penalty]


@compiled
def progress_terms(e, T, d_rb, d_og, success):
    """(robot progress, object progress, bonus) reward terms of env e for the new distances
    d_rb (robot -> where it should push) and d_og (object -> goal) [m], which replace the
    previous ones in ``T.mem``. For tasks whose ``MEM`` and ``FP`` extend the family's."""
    fp, mem = T.fp, T.mem
    r_rb = fp[FP.w_robot_object] * (mem[e, MEM.prev_rb] - d_rb)
    r_og = fp[FP.w_object_goal] * (mem[e, MEM.prev_og] - d_og)
    mem[e, MEM.prev_rb] = d_rb
    mem[e, MEM.prev_og] = d_og
    return r_rb, r_og, fp[FP.bonus] if success else 0.0


@compiled
def start(e, W, V, T):
    """First info of an episode, and the distances its progress rewards start from."""
    d_rb, d_og, d_ang = distances(e, W, T)
    T.mem[e, MEM.prev_rb] = d_rb
    T.mem[e, MEM.prev_og] = d_og
    T.mem[e, MEM.prev_ang] = d_ang
    V.info[e, INFO.box_to_goal] = d_og
    V.info[e, INFO.angle_error] = d_ang


@compiled
def goal_distance(ag, dg):
    """Distance [m] between the (x, y) of an achieved and a desired goal vector."""
    dx, dy = ag[0] - dg[0], ag[1] - dg[1]
    return math.sqrt(dx * dx + dy * dy)


@compiled
def is_success(ag, dg, fp):
    """The family's success test: the object's origin (x, y) within ``success_distance``
    [m] of the goal's (the first two columns of the achieved and desired goal vectors)."""
    return goal_distance(ag, dg) <= fp[FP.success_distance]


@compiled
def goal_reward(ag, dg, fp, success):
    """Dense HER reward: minus the distance [m], plus the success bonus."""
    return -goal_distance(ag, dg) + (fp[FP.bonus] if success else 0.0)


# ------------------------------------------------------------------------------- spawn
@compiled
def set_goal(e, T, x, y, th):
    """The episode's goal: origin (x, y) [m] of the object at heading th [rad]."""
    T.goal[e, GOAL.x] = x
    T.goal[e, GOAL.y] = y
    T.goal[e, GOAL.theta] = th
    T.goal[e, GOAL.cos] = math.cos(th)
    T.goal[e, GOAL.sin] = math.sin(th)


@compiled
def random_goal_xy(e, V, T, s):
    """A goal point [m] drawn uniformly in the region, ``margin`` plus the object's bounding
    radius (at size factor s) off its edges."""
    fp = T.fp
    rm = fp[FP.obj_r] * s + fp[FP.margin]
    gx = uniform(V.rng, e, fp[FP.x0] + rm, fp[FP.x1] - rm)
    gy = uniform(V.rng, e, fp[FP.y0] + rm, fp[FP.y1] - rm)
    return gx, gy


@compiled
def randomise_object(e, W, V, T):
    """Domain randomisation of the object's mass [kg], ground friction and size factor
    (each drawn only when its range is set); returns the size factor."""
    fp = T.fp
    return randomise_body(e, W, V, T.ip[IP.obj], fp[FP.mass_lo], fp[FP.mass_hi],
                          fp[FP.fric_lo], fp[FP.fric_hi], fp[FP.scale_lo], fp[FP.scale_hi])


@compiled
def spawn_object_free(e, W, V, T, s):
    """Object centre of mass anywhere in the region (its bounding circle and the goal kept
    ``margin`` off the edges), at least ``goal_separation`` from the goal; returns it.

    Up to ``TRIES`` draws (the spawns of earlier versions), then ``MORE_TRIES`` more; if
    all fail, the corner of the allowed area farthest from the goal, which construction
    (``SingleObjectTask.pack``) guarantees is far enough: it is at least half the area's
    diagonal away from any point."""
    fp, rng = T.fp, V.rng
    o = T.ip[IP.obj]
    rm = fp[FP.obj_r] * s + fp[FP.margin]
    x0, y0, x1, y1 = fp[FP.x0], fp[FP.y0], fp[FP.x1], fp[FP.y1]
    ocx = ocy = 0.0
    found = False
    gx, gy = T.goal[e, GOAL.x], T.goal[e, GOAL.y]
    for _ in range(TRIES + MORE_TRIES):
        ocx = uniform(rng, e, x0 + rm, x1 - rm)
        ocy = uniform(rng, e, y0 + rm, y1 - rm)
        dgx, dgy = ocx - gx, ocy - gy
        if dgx * dgx + dgy * dgy >= fp[FP.goal_separation] ** 2:
            found = True
            break
    if not found:
        ocx = x0 + rm if gx - (x0 + rm) > (x1 - rm) - gx else x1 - rm
        ocy = y0 + rm if gy - (y0 + rm) > (y1 - rm) - gy else y1 - rm
    th = uniform(rng, e, -math.pi, math.pi)
    # The sampled point is the centre of mass; the origin follows from the COM offset.
    W.pos[e, o, 0] = ocx
    W.pos[e, o, 1] = ocy
    W.ang[e, o] = th
    return ocx, ocy


@compiled
def spawn_object_and_robot(e, W, V, T, s):
    """Once the goal is set: the object anywhere free in the region
    (:func:`spawn_object_free`), then the robot clear of it (:func:`spawn_robot`)."""
    ocx, ocy = spawn_object_free(e, W, V, T, s)
    spawn_robot(e, W, V, T, ocx, ocy, s)


@compiled
def spawn_robot(e, W, V, T, ocx, ocy, s):
    """Robot anywhere in the region, clear of the object (centre ocx, ocy) by 5 cm.

    Up to ``TRIES`` draws, then ``MORE_TRIES`` more; if all fail, the draw farthest from
    the object (construction bounds how much of the region the discs cover)."""
    fp, rng = T.fp, V.rng
    rr = fp[FP.robot_r]
    gap = rr + fp[FP.obj_r] * s + 0.05
    x0, y0, x1, y1 = fp[FP.x0], fp[FP.y0], fp[FP.x1], fp[FP.y1]
    rx = ry = 0.0
    best = -1.0
    bx, by = rx, ry
    found = False
    for _ in range(TRIES + MORE_TRIES):
        rx = uniform(rng, e, x0 + rr, x1 - rr)
        ry = uniform(rng, e, y0 + rr, y1 - rr)
        dx, dy = rx - ocx, ry - ocy
        d2 = dx * dx + dy * dy
        if d2 >= gap * gap:
            found = True
            break
        if d2 > best:
            best, bx, by = d2, rx, ry
    if not found:
        rx, ry = bx, by
    rth = uniform(rng, e, -math.pi, math.pi)
    place_origin(e, T.ip[IP.robot], rx, ry, rth, W.pos, W.ang, W.bflt, W.epar)


# ------------------------------------------------------------------------ Python side
def _rot(ctx: Any, v: np.ndarray) -> np.ndarray:
    """World vectors (E, 2) into the robot frame."""
    return robot_frame(ctx.robot[:, 2], v)


def layout() -> tuple:
    """The family's state observation (``ctx`` readers: see tests/tasks/test_observation.py):
    the robot's head, the object and the goal, the robot's contact slots, then what the
    object touches and the goal seen from the robot."""
    inf = np.inf
    return (
        *head_fields(),
        Field("object_rel", 2, "object origin relative to the robot, robot frame", "m", -inf,
              inf, lambda c: _rot(c, c.obj[:, :2] - c.robot[:, :2])),
        Field("object_heading_rel", 2, "cos, sin of the object heading relative to the robot",
              "-", -1, 1, lambda c: cos_sin(c.obj[:, 2] - c.robot[:, 2])),
        Field("goal_minus_object", 2, "goal minus object position (world)", "m", -inf, inf,
              lambda c: c.goal[:, :2] - c.obj[:, :2]),
        Field("goal_heading_rel", 2, "cos, sin of the goal heading relative to the object", "-",
              -1, 1, lambda c: cos_sin(c.goal[:, 2] - c.obj[:, 2])),
        Field("goal_xy", 2, "goal x, y (world)", "m", -inf, inf, lambda c: c.goal[:, :2]),
        Field("goal_heading", 2, "cos, sin of the goal heading", "-", -1, 1,
              lambda c: cos_sin(c.goal[:, 2])),
        Field("object_vel", 2, "object velocity vx, vy (world, clipped)", "m/s", -VEL_CLIP,
              VEL_CLIP, lambda c: np.clip(c.world.velocity(c.obj_name), -VEL_CLIP, VEL_CLIP)),
        contact_block(),
        Field("object_touches_wall", 1, "object touches the task's wall, else any immovable "
              "body (0/1)", "-", 0, 1, lambda c: c.touching_wall[:, None]),
        Field("object_force", 2, "net contact force on the object (world) / robot traction",
              "-", -FORCE_CLIP, FORCE_CLIP,
              lambda c: np.clip(c.world.net_force(c.obj_name) / c.traction, -FORCE_CLIP,
                                FORCE_CLIP)),
        Field("object_touches_robot", 1, "object touches the robot (0/1)", "-", 0, 1,
              lambda c: c.touching_robot[:, None]),
        Field("goal_from_robot", 2, "goal relative to the robot origin, robot frame", "m",
              -inf, inf, lambda c: _rot(c, c.goal[:, :2] - c.robot[:, :2])),
        Field("goal_from_object", 2, "goal minus object position, robot frame", "m", -inf, inf,
              lambda c: _rot(c, c.goal[:, :2] - c.obj[:, :2])),
    )


OBS = obs_names(layout())
"""The family's observation names (index into ``T.at``); a task that appends fields to
:func:`layout` keeps these indices."""


def _optional(check):
    def inner(name: str, value: Any) -> Any:
        return None if value is None else check(name, value)
    return inner


def shared_arguments() -> dict[str, Arg]:
    """The constructor arguments every single-object task takes."""
    return {
        "max_contacts": Arg(4, integer(1, 64), "robot contact slots in the observation"),
        "box_mass_range": Arg(None, optional_range(0.0, strict=True),
                              "object mass drawn per episode [kg], or None"),
        "box_friction_range": Arg(None, optional_range(0.0, strict=False),
                                  "object ground friction drawn per episode, or None"),
        "box_size_range": Arg(None, optional_range(0.0, strict=True),
                              "object size factor drawn per episode, or None"),
        "spawn_region": Arg(None, region(), "(x0, y0, x1, y1) spawn area [m], inside "
                            "the walls; None: the task's"),
        "success_distance": Arg(None, _optional(number(0.0, strict=True, unit=" [m]")),
                                "object-to-goal distance that counts as success [m]"),
        "wall_margin": Arg(None, _optional(number(0.0, unit=" [m]")),
                           "clearance of the object and a random goal from the region "
                           "edges [m]"),
    }



def check_thin(sc: Any, arg: str, lo: float, half_lo: float, body: str) -> None:
    """Refuse a size range whose low end ``lo`` makes ``body`` only ``half_lo`` [m] thick on
    each side, thinner than the step's sub-step bound allows (the fastest drive would need
    more than ``SolverParams.max_substeps`` sub-steps to push it without tunnelling; see
    :func:`push_envs.physics.scene.thinnest_half_allowed`). A ValueError names ``arg`` and
    the smallest low end that works (sizes scale the half-thickness linearly)."""
    need = thinnest_half_allowed(sc)
    if half_lo < need:
        raise ValueError(
            f"{arg}: its low end {lo:g} makes '{body}' {2 * half_lo:.3g} m thick, too thin for "
            f"the step: at the fastest drive speed a step of {sc.spec.world.step_time:g} s "
            f"would need more than SolverParams.max_substeps={sc.params.max_substeps} "
            f"sub-steps (a body may travel {sc.params.substep_fraction:g} of its "
            f"half-thickness per sub-step); the smallest {arg} low end that works is "
            f"{lo * need / half_lo:.4g}")


def check_separation(task_id: str, size: tuple | None, reg: tuple, margin: float, obj_r: float,
                     far: float) -> None:
    """Refuse a spawn whose object cannot start ``far`` [m] (goal separation, success
    distance) from its goal: the object's centre is drawn in the region shrunk by its bounding
    radius ``obj_r`` [m] (at the largest size factor) plus ``margin`` [m], and it needs the
    area's half diagonal to reach ``far`` (then some corner is always far enough). The
    ValueError names box_size_range and its largest high end that works, or the region."""
    x0, y0, x1, y1 = reg
    hi = size[1] if size else 1.0

    def reach(scale: float) -> float:
        u = obj_r * scale + margin
        return 0.5 * math.hypot(max(x1 - x0 - 2 * u, 0.0), max(y1 - y0 - 2 * u, 0.0))

    if reach(hi) >= far:
        return
    if size is None or reach(0.0) < far:
        raise ValueError(f"{task_id}: spawn_region {reg} with wall_margin {margin:g} m leaves "
                         f"the object (bounding radius {obj_r * hi:.3g} m) too little room to "
                         f"start {far:.3g} m (goal separation, success_distance) from its goal")
    lo_s, hi_s = 0.0, hi
    for _ in range(60):  # bisection for the largest factor that still reaches `far`
        mid = 0.5 * (lo_s + hi_s)
        lo_s, hi_s = (mid, hi_s) if reach(mid) >= far else (lo_s, mid)
    raise ValueError(f"box_size_range {size}: at the size factor {hi:g} the object (bounding "
                     f"radius {obj_r * hi:.3g} m) cannot start {far:.3g} m (goal separation, "
                     f"success_distance) from its goal inside spawn_region {reg} with "
                     f"wall_margin {margin:g} m (the episode would start solved); the largest "
                     f"high end that works is {lo_s:.4g}")


class SingleObjectTask(TaskSpec):
    """Shared declaration of the single-object tasks; subclasses set the class attributes.

    The defaults are PushBox-v0's (a box pushed within 0.1 m of its goal, in a 4 m x 4 m
    region, success by :func:`is_success`); a task states only what differs."""

    object_body: str = "box"
    wall_body: str | None = None  # body the object must touch to succeed
    region: tuple[float, float, float, float] = (0.0, 0.0, 4.0, 4.0)  # spawn area [m]
    success_distance: float = 0.1  # [m]
    success_angle: float = math.pi  # [rad]
    w_robot_object: float = 1.0  # dense reward per metre of robot -> push-pose progress
    w_object_goal: float = 10.0  # per metre of object -> goal progress
    w_angle: float = 0.0  # per radian of heading progress
    success_bonus: float = 10.0
    step_penalty: float = 0.01
    goal_separation: float = 0.5  # least start distance object -> goal [m]
    # The spawn draws goal, object and robot uniformly in the region (spawn_object_free,
    # spawn_robot), so construction checks that the region holds them apart; a task that
    # spawns otherwise (along a wall, on map cells) checks its own.
    region_spawn: bool = True
    wall_margin: float = 0.0  # object's bounding circle and random goal to region edges [m]
    fp_names: tuple[str, ...] = tuple(FP_NAMES)  # float parameter columns (tasks append)
    goal_fields = ("x", "y")
    info_fields = (("box_to_goal", float), ("angle_error", float),
                   ("reward_robot_box", float), ("reward_box_goal", float),
                   ("reward_angle", float), ("reward_success", float), ("contacts", int),
                   ("touching_wall", bool))

    arguments = shared_arguments()

    def observation(self) -> tuple:
        return layout()

    # ---------------------------------------------------------------------------- build
    def pack(self, env: Any) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
        """ip, fp and the scene figures spawns need (radii [m], region [m])."""
        w = env.world
        sc = w.scene
        a = self.args
        names = {"robot": self.robot_body, "object": self.object_body}
        if self.wall_body is not None:
            names["wall"] = self.wall_body
        for role, name in names.items():
            if name not in sc.index:
                raise SceneError(f"{sc.spec.source}: {role} body '{name}' is missing; the "
                                 f"{self.id} task needs it (bodies: {sc.names})")
        r, o = sc.index[self.robot_body], sc.index[self.object_body]
        ip = np.zeros(len(IP), np.int64)
        ip[IP.robot], ip[IP.obj] = r, o
        ip[IP.wall] = -1 if self.wall_body is None else sc.index[self.wall_body]
        ip[IP.max_contacts] = a["max_contacts"]
        reg, succ, margin, robot_r = common_parameters(self, env)
        obj_r = float(sc.bflt[o, BF_BRAD])
        size = a["box_size_range"]
        obj_r_max = obj_r * (size[1] if size else 1.0)
        x0, y0, x1, y1 = reg
        if 2 * (obj_r_max + margin) > min(x1 - x0, y1 - y0) or 2 * robot_r > min(x1 - x0,
                                                                                 y1 - y0):
            raise SceneError(f"{sc.spec.source}: spawn_region {reg} is too small for the "
                             f"object (bounding radius {obj_r_max:.3g} m, wall_margin "
                             f"{margin:.3g} m) or the robot ({robot_r:.3g} m)")
        if size is not None:
            check_thin(sc, "box_size_range", size[0], float(sc.bflt[o, BF_HALF]) * size[0],
                       self.object_body)
        # No episode may start solved: the object starts farther than the success distance.
        far = max(self.goal_separation, succ * (1.0 + 1e-9) + 1e-9)
        robots = len(self.driven_bodies())
        covered = math.pi * ((obj_r_max + 0.025) ** 2 + robots * (robot_r + 0.025) ** 2)
        if self.region_spawn:
            check_separation(self.id, size, reg, margin, obj_r, far)
        if self.region_spawn and covered > SPAWN_DENSITY_MAX * (x1 - x0) * (y1 - y0):
            raise ValueError(f"{self.id}: box_size_range={size!r}, spawn_region={reg!r}: the "
                             f"object (bounding radius {obj_r_max:.3g} m) and {robots} robot(s) "
                             f"cover more than {SPAWN_DENSITY_MAX:g} of the spawn region, too "
                             f"crowded to spawn them apart")
        fp, fpc = fill_common(self, env, reg, succ, margin, robot_r,
                              ("success_angle", "w_robot_object", "w_object_goal", "w_angle"))
        fill_ranges(fp, fpc, a, "", "box_mass_range", "box_friction_range", "box_size_range")
        fp[fpc.obj_r] = obj_r
        fp[fpc.goal_separation] = far
        fp[fpc.slop] = 2.0 * w.params.slop
        return ip, fp, {"obj_r": obj_r, "robot_r": robot_r}

    def build(self, env: Any) -> TaskArrays:
        ip, fp, _ = self.pack(env)
        E = env.num_envs
        g = len(self.goal_fields)
        return TaskArrays(ip=ip, fp=fp, goal=np.zeros((E, len(GOAL))),
                          mem=np.zeros((E, len(MEM))), ag=np.zeros((E, g)),
                          dg=np.zeros((E, g)))

    def reading_context(self, env: Any) -> Any:
        """What the layout's ``expect`` readers read: the world state in plain numpy, after
        the last step (robot / object origin poses, goal, contacts, wall touch)."""
        from types import SimpleNamespace

        w = env.world
        sc = w.scene
        m = self.args["max_contacts"]
        wall = self.wall_body
        touching_wall = np.zeros(env.num_envs)
        touching_robot = np.zeros(env.num_envs)
        for e in range(env.num_envs):
            for rep in w.contacts(self.object_body, e):
                if rep.other == self.robot_body:
                    touching_robot[e] = 1.0
                if (rep.other == wall) if wall else \
                        sc.bint[rep.pair_index, BI_KIND] == IMMOVABLE:
                    touching_wall[e] = 1.0
        return SimpleNamespace(
            world=w, robot_name=self.robot_body, obj_name=self.object_body,
            robot=w.state(self.robot_body)[:, :3], obj=w.state(self.object_body)[:, :3],
            goal=env.task_arrays.goal[:, [GOAL.x, GOAL.y, GOAL.theta]],
            traction=float(w.traction(self.robot_body)[0]),
            robot_slots=w.contact_array(self.robot_body, m)[0],
            touching_wall=touching_wall, touching_robot=touching_robot)

    def goal_marks(self, env: Any) -> list:
        """The object's outline at the goal pose and the success circle."""
        from push_envs.core.render import GoalMark

        return [GoalMark(cols=(GOAL.x, GOAL.y, GOAL.theta), body=self.object_body,
                         radius=float(env.success_distance))]


# The family's info columns (after the generic ones) and the record report_terms fills.
INFO = info_columns(SingleObjectTask)
InfoRow = info_row(SingleObjectTask)

# The family's hooks: every task of it has them unless it declares its own.
SingleObjectTask.hook(start, is_success, goal_reward)

