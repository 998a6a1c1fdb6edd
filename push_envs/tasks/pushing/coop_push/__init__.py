"""CoopPush-v0: two robots push one box that is too heavy for either alone.

The box's ground friction (0.5 x 1.5 kg x 9.81 = 7.36 N) is more than one robot's traction
(0.5 x 1 kg x 9.81 = 4.905 N) and less than two robots' (9.81 N); the engine adds the traction
of drives that push one load the same way, so one robot alone stalls against the box and the
two together move it. The action is the joint command of both robots (4 numbers for SB3);
``push_envs.multiagent.coop_push_v0`` is the PettingZoo face of the same env.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from push_envs.core import Field
from push_envs.core import obs_names
from push_envs.core.env import task_envs
from push_envs.core.obs_layout import columns as layout_columns
from push_envs.core.task import columns
from push_envs.physics.frames import origin_pose_seen
from push_envs.physics.frames import place_origin
from push_envs.physics.jit import compiled
from push_envs.physics.layout import BF_BRAD
from push_envs.physics.layout import BI_KIND
from push_envs.physics.layout import EP_SCALE
from push_envs.physics.layout import IMMOVABLE
from push_envs.physics.rng import uniform
from push_envs.tasks.info import info_columns
from push_envs.tasks.info import info_row
from push_envs.tasks.info import write_info
from push_envs.tasks.pushing import family as P
from push_envs.tasks.pushing.family import GOAL
from push_envs.tasks.pushing.family import goal_distance
from push_envs.tasks.pushing.family import object_contacts
from push_envs.tasks.robot_view import FORCE_CLIP
from push_envs.tasks.robot_view import VEL_CLIP
from push_envs.tasks.robot_view import clip
from push_envs.tasks.robot_view import contact_block
from push_envs.tasks.robot_view import cos_sin
from push_envs.tasks.robot_view import head_fields
from push_envs.tasks.robot_view import put2
from push_envs.tasks.robot_view import put_heading_in_frame
from push_envs.tasks.robot_view import put_in_frame
from push_envs.tasks.robot_view import relative
from push_envs.tasks.robot_view import robot_frame
from push_envs.tasks.robot_view import write_contacts
from push_envs.tasks.robot_view import write_head

IP = columns(P.IP._fields, "robot1")
FP = columns(P.FP_NAMES, "spot_lateral half_x half_y")
# The family's memory (its progress terms write prev_rb, prev_og), then the task's own;
# ``contacts`` holds robot 0's count.
MEM = columns(P.MEM._fields, "contacts1 on_box d_rb")
TRIES = 64


# ------------------------------------------------------------------------ the declaration
class CoopPush(P.SingleObjectTask):
    id = "CoopPush-v0"
    max_episode_steps = 300
    experts = {"diff": "expert:expert"}
    robot_body = "r0"
    robot_bodies = ("r0", "r1")
    region = (0.0, 0.0, 5.0, 5.0)
    wall_margin = 0.35
    spot_lateral = 0.16  # [m] push spots to either side of the pushed face's centre
    fp_names = tuple(FP._fields)
    info_fields = (("box_to_goal", float), ("reward_robots_box", float),
                   ("reward_box_goal", float), ("reward_success", float), ("contacts", int),
                   ("contacts_r1", int), ("robots_on_box", int), ("touching_wall", bool))

    def observation(self) -> tuple:
        return layout()

    def build(self, env: Any) -> Any:
        from push_envs.core.step import TaskArrays
        from push_envs.physics import SceneError

        ip0, fp, _ = self.pack(env)
        sc = env.world.scene
        if "r1" not in sc.index:
            raise SceneError(f"{sc.spec.source}: robot body 'r1' is missing; {self.id} needs it")
        ip = np.zeros(len(IP), np.int64)
        ip[:len(ip0)] = ip0
        ip[IP.robot1] = sc.index["r1"]
        fp[FP.spot_lateral] = self.spot_lateral
        fp[FP.half_x], fp[FP.half_y] = box_half_extents(sc, self.object_body)
        E = env.num_envs
        return TaskArrays(ip=ip, fp=fp, goal=np.zeros((E, len(GOAL))),
                          mem=np.zeros((E, len(MEM))), ag=np.zeros((E, 2)),
                          dg=np.zeros((E, 2)))

    def reading_context(self, env: Any) -> Any:
        """The world state the layout's readers compare with (see test_observation.py)."""
        w = env.world
        sc = w.scene
        m = self.args["max_contacts"]
        names = ("r0", "r1")
        touching = [np.zeros(env.num_envs), np.zeros(env.num_envs)]
        touching_wall = np.zeros(env.num_envs)
        for e in range(env.num_envs):
            for rep in w.contacts("box", e):
                if rep.other in names:
                    touching[names.index(rep.other)][e] = 1.0
                if sc.bint[rep.pair_index, BI_KIND] == IMMOVABLE:
                    touching_wall[e] = 1.0
        robots = [w.state(n)[:, :3] for n in names]
        obj = w.state("box")[:, :3]
        goal = env.task_arrays.goal[:, [GOAL.x, GOAL.y, GOAL.theta]]
        fp = env.task_arrays.fp
        box = np.concatenate([w.com("box"), obj[:, 2:3]], 1)
        spots = numpy_push_spots(box, goal[:, :2], [w.com(n) for n in names],
                                 (fp[FP.half_x], fp[FP.half_y]), fp[FP.robot_r],
                                 self.spot_lateral)
        return SimpleNamespace(
            world=w, names=names, robots=robots, others=robots[::-1], obj=obj, goal=goal,
            traction=float(w.traction("r0")[0]), spots=spots,
            slots=[w.contact_array(n, m)[0] for n in names], touching=touching,
            touching_wall=touching_wall)


# The info columns (CoopPush.info_fields) for the kernels, and the record evaluate fills.
INFO = info_columns(CoopPush)
InfoRow = info_row(CoopPush)


# ------------------------------------------------------------------------------ hooks
@CoopPush.hook
@compiled
def spawn(e, W, V, T):
    """Goal and box as in PushBox; each robot anywhere in the region, 5 cm clear of the box's
    bounding circle and of the other robot."""
    s = P.randomise_object(e, W, V, T)
    gx, gy = P.random_goal_xy(e, V, T, s)
    P.set_goal(e, T, gx, gy, 0.0)
    ocx, ocy = P.spawn_object_free(e, W, V, T, s)
    fp, rng = T.fp, V.rng
    rr = fp[FP.robot_r]
    gap_box = rr + fp[FP.obj_r] * s + 0.05
    gap_robot = 2.0 * rr + 0.05
    x0, y0, x1, y1 = fp[FP.x0], fp[FP.y0], fp[FP.x1], fp[FP.y1]
    px = py = 1e9  # the first robot is placed; the second keeps clear of it
    for k in range(2):
        rx = ry = 0.0
        # Up to TRIES draws (the spawns of earlier versions), then more; if every one
        # overlaps, the one with the most slack (construction bounds the crowding).
        best = -math.inf
        bx, by = rx, ry
        found = False
        for _ in range(TRIES + P.MORE_TRIES):
            rx = uniform(rng, e, x0 + rr, x1 - rr)
            ry = uniform(rng, e, y0 + rr, y1 - rr)
            dbx, dby = rx - ocx, ry - ocy
            drx, dry = rx - px, ry - py
            if dbx * dbx + dby * dby >= gap_box * gap_box and \
                    drx * drx + dry * dry >= gap_robot * gap_robot:
                found = True
                break
            sl = min(math.sqrt(dbx * dbx + dby * dby) - gap_box,
                     math.sqrt(drx * drx + dry * dry) - gap_robot)
            if sl > best:
                best, bx, by = sl, rx, ry
        if not found:
            rx, ry = bx, by
        rth = uniform(rng, e, -math.pi, math.pi)
        b = T.ip[IP.robot] if k == 0 else T.ip[IP.robot1]
        place_origin(e, b, rx, ry, rth, W.pos, W.ang, W.bflt, W.epar)
        px, py = rx, ry


@compiled
def push_face(c, s, ux, uy, hx, hy):
    """The box face to push toward direction (ux, uy): the one whose outward normal points
    most against it. Box heading (c, s), half extents hx, hy [m] along its own x, y. Returns
    (outward normal x, y, half extent along it [m])."""
    d1 = c * ux + s * uy
    d2 = -s * ux + c * uy
    if abs(d1) >= abs(d2):
        sg = -1.0 if d1 >= 0.0 else 1.0
        return sg * c, sg * s, hx
    sg = -1.0 if d2 >= 0.0 else 1.0
    return -sg * s, sg * c, hy


@compiled
def push_spots(e, W, T):
    """The two push spots of env e: one robot radius (and 5 cm) out from the box face that
    points most away from the goal, ``spot_lateral`` [m] to either side of its centre. Two
    robots pushing that face push the same way, so their traction adds (on two adjacent
    faces their pushes are perpendicular and do not). The spots are assigned to the robots
    for the least summed distance. Returns (spot of robot 0 x, y, of robot 1 x, y [m], that
    summed distance [m])."""
    ip, fp, goal, pos = T.ip, T.fp, T.goal, W.pos
    o, r0, r1 = ip[IP.obj], ip[IP.robot], ip[IP.robot1]
    bx, by = pos[e, o, 0], pos[e, o, 1]
    ux, uy = goal[e, GOAL.x] - bx, goal[e, GOAL.y] - by
    sc = W.epar[e, o, EP_SCALE]
    nx, ny, h = push_face(math.cos(W.ang[e, o]), math.sin(W.ang[e, o]), ux, uy,
                          fp[FP.half_x] * sc, fp[FP.half_y] * sc)
    stand = h + fp[FP.robot_r] + 0.05
    lat = fp[FP.spot_lateral]
    cx, cy = bx + nx * stand, by + ny * stand
    ax, ay = cx - ny * lat, cy + nx * lat
    bx2, by2 = cx + ny * lat, cy - nx * lat
    d0a = math.hypot(pos[e, r0, 0] - ax, pos[e, r0, 1] - ay)
    d1b = math.hypot(pos[e, r1, 0] - bx2, pos[e, r1, 1] - by2)
    d0b = math.hypot(pos[e, r0, 0] - bx2, pos[e, r0, 1] - by2)
    d1a = math.hypot(pos[e, r1, 0] - ax, pos[e, r1, 1] - ay)
    if d0a + d1b <= d0b + d1a:
        return ax, ay, bx2, by2, d0a + d1b
    return bx2, by2, ax, ay, d0b + d1a


@compiled
def _robot_block(e, W, T, row, q, qc, r, other, ox, oy, co, so, sx, sy, touch):
    """Write robot r's block from column q (its fields: :func:`_robot_fields`, offsets
    ``RB``): its head, the box, the goal, the other robot and its push spot (sx, sy) seen
    from it, whether it touches the box; its contact slots from column qc. Returns its
    contact count."""
    pos, ang, bflt, epar, goal = W.pos, W.ang, W.bflt, W.epar, T.goal
    rx, ry, c, s = write_head(e, W, row, q + RB.xy, r)
    qx, qy, _qth, cq, sq = origin_pose_seen(e, other, pos, ang, bflt, epar, W.cbuf)
    dx, dy = ox - rx, oy - ry
    put_in_frame(row, q + RB.box_rel, c, s, dx, dy)
    put_heading_in_frame(row, q + RB.box_heading_rel, c, s, co, so)
    gx, gy = goal[e, GOAL.x] - rx, goal[e, GOAL.y] - ry
    put_in_frame(row, q + RB.goal_rel, c, s, gx, gy)
    gx, gy = goal[e, GOAL.x] - ox, goal[e, GOAL.y] - oy
    put_in_frame(row, q + RB.goal_from_box, c, s, gx, gy)
    dx, dy = qx - rx, qy - ry
    put_in_frame(row, q + RB.other_rel, c, s, dx, dy)
    put_heading_in_frame(row, q + RB.other_heading_rel, c, s, cq, sq)
    dx, dy = sx - rx, sy - ry
    put_in_frame(row, q + RB.spot_rel, c, s, dx, dy)
    row[q + RB.touches_box] = 1.0 if touch else 0.0
    return write_contacts(e, W, row, qc, T.ip[IP.max_contacts], r, rx, ry, c, s,
                          T.fp[FP.traction])


@CoopPush.hook
@compiled
def observe(e, W, V, T):
    """Env e's observation row: the shared block, then one block per robot."""
    ip, fp, goal, mem, at = T.ip, T.fp, T.goal, T.mem, T.at
    o, r0, r1 = ip[IP.obj], ip[IP.robot], ip[IP.robot1]
    ox, oy, _oth, co, so = origin_pose_seen(e, o, W.pos, W.ang, W.bflt, W.epar, W.cbuf)
    trac = fp[FP.traction]
    fx, fy, touch_wall, t0, t1 = object_contacts(e, W, o, ip[IP.wall], r0, r1)
    row = V.obs[e]
    put2(row, at[OBS.box_xy], ox, oy)
    put2(row, at[OBS.box_heading], co, so)
    put2(row, at[OBS.box_vel], clip(W.vel[e, o, 0], VEL_CLIP), clip(W.vel[e, o, 1], VEL_CLIP))
    put2(row, at[OBS.goal_xy], goal[e, GOAL.x], goal[e, GOAL.y])
    put2(row, at[OBS.goal_minus_box], goal[e, GOAL.x] - ox, goal[e, GOAL.y] - oy)
    row[at[OBS.box_touches_wall]] = 1.0 if touch_wall else 0.0
    put2(row, at[OBS.box_force], clip(fx / trac, FORCE_CLIP), clip(fy / trac, FORCE_CLIP))
    s0x, s0y, s1x, s1y, d_rb = push_spots(e, W, T)
    n0 = _robot_block(e, W, T, row, at[OBS.r0_xy], at[OBS.r0_contacts], r0, r1, ox, oy, co,
                      so, s0x, s0y, t0)
    n1 = _robot_block(e, W, T, row, at[OBS.r1_xy], at[OBS.r1_contacts], r1, r0, ox, oy, co,
                      so, s1x, s1y, t1)
    P.remember(e, T, ox, oy, co, so, n0, touch_wall)
    mem[e, MEM.contacts1] = n1
    mem[e, MEM.on_box] = (1.0 if t0 else 0.0) + (1.0 if t1 else 0.0)
    mem[e, MEM.d_rb] = d_rb
    P.goal_vectors_xy(e, T)


@CoopPush.hook
@compiled
def evaluate(e, W, V, T):
    """``w_robot_object`` x (progress of both robots to their push spots, summed [m]) +
    ``w_object_goal`` x (box -> goal progress [m]) + bonus on success - step penalty."""
    fp, mem, info = T.fp, T.mem, V.info
    success = P.is_success(T.ag[e], T.dg[e], fp)
    d_rb = mem[e, MEM.d_rb]
    d_og = goal_distance(T.ag[e], T.dg[e])
    r_rb, r_og, bonus = P.progress_terms(e, T, d_rb, d_og, success)
    write_info(info, e, InfoRow(box_to_goal=d_og, reward_robots_box=r_rb, reward_box_goal=r_og,
                                reward_success=bonus, contacts=mem[e, MEM.contacts],
                                contacts_r1=mem[e, MEM.contacts1],
                                robots_on_box=mem[e, MEM.on_box],
                                touching_wall=mem[e, MEM.touch_wall]))
    return success, success, r_rb + r_og + bonus - fp[FP.step_penalty]


@CoopPush.hook
@compiled
def start(e, W, V, T):
    """First info, and the distances the progress rewards start from."""
    d_og = goal_distance(T.ag[e], T.dg[e])
    T.mem[e, MEM.prev_rb] = T.mem[e, MEM.d_rb]
    T.mem[e, MEM.prev_og] = d_og
    V.info[e, INFO.box_to_goal] = d_og


# ------------------------------------------------------------------------ Python side
def _robot_fields(k: int) -> tuple:
    """Fields of robot k's block before its contact slots (readers: ctx.robots[k] ...): its
    head (push_envs.tasks.robot_view), then what it sees of the box, the goal, the other
    robot and its push spot."""
    inf = np.inf
    p = f"r{k}_"
    who = f"robot {k}"

    def me(c):
        return c.robots[k]

    def rot(c, v):
        return robot_frame(me(c)[:, 2], v)

    return (
        *head_fields(p, who, pose=me, name=lambda c: c.names[k]),
        Field(p + "box_rel", 2, f"box origin relative to {who}, its frame", "m", -inf, inf,
              lambda c: rot(c, c.obj[:, :2] - me(c)[:, :2])),
        Field(p + "box_heading_rel", 2, f"cos, sin of the box heading relative to {who}", "-",
              -1, 1, lambda c: cos_sin(c.obj[:, 2] - me(c)[:, 2])),
        Field(p + "goal_rel", 2, f"goal relative to {who}, its frame", "m", -inf, inf,
              lambda c: rot(c, c.goal[:, :2] - me(c)[:, :2])),
        Field(p + "goal_from_box", 2, f"goal minus box position, {who} frame", "m", -inf, inf,
              lambda c: rot(c, c.goal[:, :2] - c.obj[:, :2])),
        Field(p + "other_rel", 2, f"the other robot's origin relative to {who}, its frame", "m",
              -inf, inf, lambda c: rot(c, c.robots[1 - k][:, :2] - me(c)[:, :2])),
        Field(p + "other_heading_rel", 2, f"cos, sin of the other robot's heading relative to "
              f"{who}", "-", -1, 1, lambda c: cos_sin(c.robots[1 - k][:, 2] - me(c)[:, 2])),
        Field(p + "spot_rel", 2, f"{who}'s push spot relative to it, its frame (spots: off the "
              "box face pointing most away from the goal, assigned for the least summed "
              "distance)", "m", -inf, inf, lambda c: rot(c, c.spots[k] - me(c)[:, :2])),
        Field(p + "touches_box", 1, f"{who} touches the box (0/1)", "-", 0, 1,
              lambda c: c.touching[k][:, None]),
    )


def _robot_block_fields(k: int) -> tuple:
    """Robot k's whole block: its fields, then its contact slots."""
    return (*_robot_fields(k), contact_block(f"r{k}_", f"robot {k}",
                                             pose=lambda c: c.robots[k],
                                             slots=lambda c: c.slots[k]))


RB = relative(_robot_fields(0), "r0_")
"""Columns of a robot block before its contact slots, from its first (xy, heading, ...)."""


def layout() -> tuple:
    """CoopPush's state observation: the shared block, then robot 0's and robot 1's."""
    inf = np.inf
    return (
        Field("box_xy", 2, "box origin x, y (world)", "m", -inf, inf, lambda c: c.obj[:, :2]),
        Field("box_heading", 2, "cos, sin of the box heading", "-", -1, 1,
              lambda c: cos_sin(c.obj[:, 2])),
        Field("box_vel", 2, "box velocity vx, vy (world, clipped)", "m/s", -VEL_CLIP, VEL_CLIP,
              lambda c: np.clip(c.world.velocity("box"), -VEL_CLIP, VEL_CLIP)),
        Field("goal_xy", 2, "goal x, y (world)", "m", -inf, inf, lambda c: c.goal[:, :2]),
        Field("goal_minus_box", 2, "goal minus box position (world)", "m", -inf, inf,
              lambda c: c.goal[:, :2] - c.obj[:, :2]),
        Field("box_touches_wall", 1, "box touches an immovable body (0/1)", "-", 0, 1,
              lambda c: c.touching_wall[:, None]),
        Field("box_force", 2, "net contact force on the box (world) / robot traction", "-",
              -FORCE_CLIP, FORCE_CLIP,
              lambda c: np.clip(c.world.net_force("box") / c.traction, -FORCE_CLIP,
                                FORCE_CLIP)),
        *_robot_block_fields(0),
        *_robot_block_fields(1),
    )


OBS = obs_names(layout())
"""CoopPush's observation names (index into ``T.at``)."""


def agent_columns(args: dict, k: int) -> np.ndarray:
    """Columns of the joint observation that robot k's agent sees: the shared block and its
    own block (which holds the other robot as seen from it)."""
    cols = []
    for f, at, _ in layout_columns(layout(), args):
        if not f.name.startswith(("r0_", "r1_")) or f.name.startswith(f"r{k}_"):
            cols.extend(range(at, at + f.size))
    return np.array(cols, np.int64)


def box_half_extents(sc: Any, name: str) -> tuple[float, float]:
    """Half extents [m] of body ``name`` along its own x and y: a rectangle's, or its
    bounding radius for any other shape."""
    shape = sc.spec.bodies[sc.index[name]].shape
    if shape.get("name") == "rectangle":
        return 0.5 * float(shape["length"]), 0.5 * float(shape["width"])
    r = float(sc.bflt[sc.index[name], BF_BRAD])
    return r, r


def numpy_push_spots(box: np.ndarray, goal: np.ndarray, robots: list, half: tuple,
                     robot_r: float, lateral: float) -> list[np.ndarray]:
    """numpy form of :func:`push_spots` (box size factor 1): each robot's spot (E, 2) [m].
    ``box`` is (E, 3): centre x, y [m] and heading [rad]; ``half`` the box's half extents."""
    spots_a, spots_b = [], []
    for e in range(len(box)):
        c, s = np.cos(box[e, 2]), np.sin(box[e, 2])
        nx, ny, h = push_face.py_func(c, s, *(goal[e] - box[e, :2]), *half)
        centre = box[e, :2] + np.array([nx, ny]) * (h + robot_r + 0.05)
        side = np.array([-ny, nx]) * lateral
        spots_a.append(centre + side)
        spots_b.append(centre - side)
    a, b = np.array(spots_a), np.array(spots_b)
    da = np.linalg.norm(robots[0] - a, axis=1) + np.linalg.norm(robots[1] - b, axis=1)
    db = np.linalg.norm(robots[0] - b, axis=1) + np.linalg.norm(robots[1] - a, axis=1)
    keep = (da <= db)[:, None]
    return [np.where(keep, a, b), np.where(keep, b, a)]


_DOC = """Two robots push one box, too heavy for either alone, to a goal in a 5 m x 5 m arena.

    ## Description
    Two 1 kg disc robots (r = 0.15 m, ``r0`` and ``r1``) and a 0.6 m x 0.6 m box of 1.5 kg on
    ground friction 0.5. By the traction rule a robot pushes while its traction mu m g covers
    the ground friction of what it carries, and drives pushing one load the same way add
    their traction: one robot (4.905 N) stalls against the box (7.36 N), both (9.81 N) move it.
    The mass sits midway between those thresholds, so neither margin (2.45 N) is a rounding
    matter; a ``box_mass_range`` reaching 1 kg or less lets one robot push alone, and one
    beyond 2 kg stops both. Goal, box and robots are drawn each episode (box and goal
    ``wall_margin`` (0.35 m) off the walls, so both push spots behind the box are reachable).

    ## Action Space
    ``Box(-1, 1, (4,), float32)``: robot 0's command then robot 1's, each scaled as in
    PushBox-v0 (diff [v in [-1, 1] m/s, omega in [-2, 2] rad/s]; omni [vx, vy] in [-1, 1]
    m/s; acker [v in [-1, 1] m/s, steer in [-0.6, 0.6] rad]). Both robots get the ``robot``
    variant. Out-of-range actions are clipped; NaN or inf raise ValueError.

    ## Observation Space
    ``obs_mode="state"``: a flat float32 Box, the shared block then one block per robot
    (``M = max_contacts``, default 4, so 105 numbers). R bounds a position by the scene's
    extent; the robot traction is mu m g = 4.905 N. The PettingZoo face gives agent k the
    shared block and robot k's block (which sees the other robot from robot k).

{obs_table}

    ``obs_mode="goal"``: a Dict of ``observation``, ``achieved_goal`` (box x, y [m]) and
    ``desired_goal`` (goal x, y [m]); its reward is exactly ``compute_reward(achieved_goal,
    desired_goal, info)``.

    ## Rewards
    Dense: ``1.0 * (progress of both robots to their push spots, summed, m) + 10.0 * (box ->
    goal progress, m) + 10 * success - 0.01`` per step. The push spots lie one robot radius
    (plus 5 cm) out from the box face whose outward normal points most away from the goal,
    0.16 m to either side of its centre, assigned to the robots for the least summed
    distance. Both robots must push the same face: pushes on two adjacent faces are
    perpendicular, so their traction does not add (nor would it in the plane: 2 x 4.905 N at
    right angles is 6.94 N < 7.36 N). Terms in ``info``
    (``reward_robots_box``, ``reward_box_goal``, ``reward_success``), with ``robots_on_box``
    (0, 1, 2), ``contacts`` / ``contacts_r1`` (each robot's contact count). Sparse: 0 on
    success, -1 otherwise.
""" + P.BOX_AT_GOAL_END

CoopPushEnv, CoopPushVectorEnv = task_envs(CoopPush, _DOC)
