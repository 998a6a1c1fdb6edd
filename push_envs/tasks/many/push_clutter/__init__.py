"""PushClutter-v0: push a target box to its goal through a field of movable clutter."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from push_envs.core.env import task_envs
from push_envs.core.obs_layout import Field
from push_envs.core.obs_layout import Repeat
from push_envs.core.task import Arg
from push_envs.core.task import columns
from push_envs.core.task import integer
from push_envs.core.task import number
from push_envs.core.task import optional_range
from push_envs.physics.jit import compiled
from push_envs.physics.layout import BF_BRAD
from push_envs.physics.layout import BF_HALF
from push_envs.physics.layout import EP_FRICTION
from push_envs.physics.layout import EP_MASS
from push_envs.physics.layout import EP_SCALE
from push_envs.physics.layout import PR_G
from push_envs.tasks.info import info_columns
from push_envs.tasks.info import info_row
from push_envs.tasks.info import write_info
from push_envs.tasks.many import family as M
from push_envs.tasks.many.family import IP
from push_envs.tasks.many.family import MEM
from push_envs.tasks.many.family import col
from push_envs.tasks.robot_view import put_heading_in_frame
from push_envs.tasks.robot_view import put_in_frame
from push_envs.tasks.shared import fill_ranges
from push_envs.tasks.shared import randomise_body

FP = columns(M.FP_NAMES, "mass_lo mass_hi fric_lo fric_hi scale_lo scale_hi c_mass_lo c_mass_hi "
             "c_fric_lo c_fric_hi c_size_lo c_size_hi goal_separation spread w_clutter")
MAX_CLUTTER = 16  # clutter bodies in push_envs/tasks/many/push_clutter/scene.yaml


def _size_range(name: str, value: Any) -> tuple[float, float] | None:
    """None, or a (low, high) size [m] within the scene's limits."""
    out = optional_range(0.0, strict=True)(name, value)
    if out is not None and out[1] > 1.0:
        raise ValueError(f"{name} must lie within (0, 1] m, got {value!r}")
    return out


class PushClutter(M.ManyObjectTask):
    id = "PushClutter-v0"
    max_episode_steps = 300
    experts = {"diff": "expert:expert"}
    numbered = (("clutter", "num_clutter"),)
    n_ip_extra = 1  # k_nearest, the last int
    fp_names = tuple(FP._fields)
    goal_fields = ("x", "y")
    info_fields = (("box_to_goal", float), ("clutter_contacts", int),
                   ("clutter_contacts_episode", int), ("box_touches_clutter", bool),
                   ("reward_robot_box", float), ("reward_box_goal", float),
                   ("reward_clutter", float), ("reward_success", float), ("contacts", int))
    arguments = {
        "num_clutter": Arg(8, integer(1, MAX_CLUTTER), "movable clutter bodies (half boxes, "
                           f"half discs; 1 to {MAX_CLUTTER})"),
        "k_nearest": Arg(4, integer(1, MAX_CLUTTER), "nearest clutter bodies in the "
                         "observation (<= num_clutter)"),
        "clutter_mass_range": Arg((0.1, 2.0), optional_range(0.0, strict=True),
                                  "each clutter body's mass drawn per episode [kg] (above "
                                  "1 kg the robot alone cannot move it), or None"),
        "clutter_size_range": Arg((0.1, 0.4), _size_range, "each clutter body's size (box "
                                  "side, disc diameter) drawn per episode [m], or None"),
        "clutter_friction_range": Arg(None, optional_range(0.0, strict=False),
                                      "each clutter body's ground friction drawn per episode, "
                                      "or None"),
        # Default 0 (a field over the whole arena): with every body within 0.6 m of the box
        # -> goal line, the straight push won 5 % of 40 seeds and PPO stayed at 0-1 % through
        # 1 M steps; spread over the arena the straight push wins 47 %, and the rest needs a
        # way around (docs/history.md).
        "clutter_spread": Arg(0.0, number(0.0, 4.0, unit=" [m]"),
                              "clutter within this distance [m] of the box -> goal line, or "
                              "0 for anywhere in the spawn region"),
        "goal_separation": Arg(1.5, number(0.0, 3.0, unit=" [m]"),
                               "least start distance of the box from its goal [m]"),
        **M.shared_arguments("box"),
        "box_size_range": Arg(None, optional_range(0.0, strict=True),
                              "the box's size factor drawn per episode, or None"),
    }

    def objects(self) -> list[str]:
        return ["box", *super().objects()]

    def __init__(self, args: Any) -> None:
        super().__init__(args)
        if args["k_nearest"] > args["num_clutter"]:
            raise ValueError(f"k_nearest ({args['k_nearest']}) must be <= num_clutter "
                             f"({args['num_clutter']})")

    def max_scale(self) -> float:
        size = self.args["box_size_range"]
        return max(size[1] if size else 1.0, 2.0)  # 0.2 m clutter up to 0.4 m

    spawn_args = ("clutter_size_range", "box_size_range", "clutter_spread", "goal_separation")

    def spawn_discs(self, sc: Any, robot_r: float, succ: float) -> list[tuple[float, float]]:
        """The goal and the box (the box's radius at its largest factor), every clutter body
        at the largest clutter size, and the robot."""
        size = self.args["box_size_range"]
        box_r = float(sc.bflt[sc.index["box"], BF_BRAD]) * (size[1] if size else 1.0)
        csize = self.args["clutter_size_range"]
        discs = [(box_r, self.spawn_gap), (box_r, self.spawn_gap)]
        for o in self.objects()[1:]:
            i = sc.index[o]
            scale = csize[1] / (2.0 * float(sc.bflt[i, BF_HALF])) if csize else 1.0
            discs.append((float(sc.bflt[i, BF_BRAD]) * scale, self.spawn_gap))
        return discs + [(robot_r, 0.05)]

    def size_checks(self, sc: Any) -> list[tuple[str, float, float, str]]:
        out = []
        size = self.args["box_size_range"]
        if size is not None:
            out.append(("box_size_range", size[0],
                        float(sc.bflt[sc.index["box"], BF_HALF]) * size[0], "box"))
        csize = self.args["clutter_size_range"]
        if csize is not None and len(self.objects()) > 1:
            # A clutter body of size L (box side, disc diameter) is L / 2 thick on each side.
            out.append(("clutter_size_range", csize[0], 0.5 * csize[0], self.objects()[1]))
        return out

    def build(self, env: Any):
        t = super().build(env)
        a = self.args
        fill_ranges(t.fp, FP, self.args, "", "box_mass_range", "box_friction_range",
                           "box_size_range")
        fill_ranges(t.fp, FP, self.args, "c_", "clutter_mass_range", "clutter_friction_range")
        size = a["clutter_size_range"]
        t.fp[[FP.c_size_lo, FP.c_size_hi]] = size if size else (0.0, 0.0)
        # The box starts farther from its goal than the success distance, so no episode
        # starts solved (goal_separation may be below it).
        t.fp[FP.goal_separation] = max(a["goal_separation"],
                                       env.success_distance * (1.0 + 1e-9) + 1e-9)
        t.fp[FP.spread] = a["clutter_spread"]
        t.fp[FP.w_clutter] = 0.01
        t.ip[-1] = a["k_nearest"]
        # One float per object after the named columns: 1 for a disc (its shape in the scene).
        sc = env.world.scene
        disc = [float(sc.spec.bodies[sc.index[o]].shape.get("name") == "circle")
                for o in self.objects()]
        return t._replace(fp=np.concatenate([t.fp, disc]))

    def observation(self) -> tuple:
        inf = np.inf

        def goal(c: Any) -> np.ndarray:
            return c.goal[:, :2]

        def near(c: Any, j: int) -> np.ndarray:
            """Object index (1 + clutter index) of the j-th nearest clutter body per env."""
            d = np.hypot(*(c.objs[:, 1:, :2] - c.robot[:, None, :2]).transpose(2, 0, 1))
            return 1 + np.argsort(d, axis=1, kind="stable")[:, j]

        def pick(c: Any, j: int, values: np.ndarray) -> np.ndarray:
            """values (E, n_obj, ...) at the j-th nearest clutter body."""
            return values[np.arange(len(values)), near(c, j)]

        def body_values(c: Any, what: str) -> np.ndarray:
            w = c.world
            idx = [w.index(o) for o in self.objects()]
            ep = w.epar[:, idx]
            if what == "half":
                return w.scene.bflt[idx, BF_HALF][None] * ep[:, :, EP_SCALE]
            if what == "load":
                return ep[:, :, EP_FRICTION] * ep[:, :, EP_MASS] * w.gravity / c.traction
            return np.array([float(w.scene.spec.bodies[i].shape.get("name") == "circle")
                             for i in idx])[None].repeat(len(ep), 0)

        return (*M.head_layout(),
                Field("box_rel", 2, "box origin relative to the robot (robot frame)", "m",
                      -inf, inf, lambda c: M.rel_xy(c, 0)),
                Field("box_heading_rel", 2, "cos, sin of the box heading relative to the robot",
                      "-", -1, 1, lambda c: M.rel_heading(c, 0)),
                Field("goal_minus_box", 2, "goal minus box (robot frame)", "m", -inf, inf,
                      lambda c: M.in_robot_frame(c, goal(c) - c.objs[:, 0, :2])),
                Field("goal_from_robot", 2, "goal relative to the robot (robot frame)", "m",
                      -inf, inf, lambda c: M.in_robot_frame(c, goal(c) - c.robot[:, :2])),
                Field("box_touches_robot", 1, "box touches the robot (0/1)", "-", 0, 1,
                      lambda c: c.touching[:, :1]),
                Field("box_touches_clutter", 1, "box touches a clutter body (0/1)", "-", 0, 1,
                      lambda c: c.box_clutter[:, None]),
                Repeat("k_nearest", "N", name="clutter", fields=(
                    Field("clutter_rel", 2, "j-th nearest clutter body relative to the robot "
                          "(robot frame)", "m", -inf, inf,
                          lambda c, j: M.in_robot_frame(c, pick(c, j, c.objs[:, :, :2])
                                              - c.robot[:, :2])),
                    Field("clutter_heading_rel", 2, "cos, sin of its heading relative to the "
                          "robot", "-", -1, 1,
                          lambda c, j: M.rel_heading_of(c, pick(c, j, c.objs[:, :, 2]))),
                    Field("clutter_half_size", 1, "its half size (box half side, disc radius)",
                          "m", 0, inf, lambda c, j: pick(c, j, body_values(c, "half"))[:, None]),
                    Field("clutter_is_disc", 1, "its shape: 1 disc, 0 box", "-", 0, 1,
                          lambda c, j: pick(c, j, body_values(c, "disc"))[:, None]),
                    Field("clutter_load", 1, "its ground friction mu m g / robot traction (> 1: "
                          "too heavy for the robot alone; clipped to 10)", "-", 0, 10,
                          lambda c, j: np.minimum(pick(c, j, body_values(c, "load")),
                                                  10.0)[:, None]),
                    Field("clutter_touches_robot", 1, "it touches the robot (0/1)", "-", 0, 1,
                          lambda c, j: pick(c, j, c.touching)[:, None]),
                )))

    def reading_context(self, env: Any) -> Any:
        ctx = super().reading_context(env)
        w = env.world
        clutter = set(self.objects()[1:])
        ctx.box_clutter = np.array([float(any(rep.other in clutter
                                              for rep in w.contacts("box", e)))
                                    for e in range(env.num_envs)])
        return ctx

    def goal_marks(self, env: Any) -> list:
        """The box's outline (unturned) and the success circle at the goal, in its colour."""
        from push_envs.core.render import GoalMark

        return [GoalMark(cols=(0, 1), body="box", radius=env.success_distance,
                         color=self.render_colours(env)[0])]


OBS = PushClutter.obs_names()  # the observation's columns by name, through T.at


# ------------------------------------------------------------------------------ hooks
@PushClutter.hook
@compiled
def spawn(e, W, V, T):
    """The box's and every clutter body's mass, friction and size drawn; the goal; the box at
    least ``goal_separation`` from it; the clutter anywhere free, or along the box -> goal
    line (at most ``spread`` [m] to either side) when ``spread`` > 0, or anywhere free when
    that strip is full; the robot anywhere free. If a body finds no clear spot, the goal and
    poses are drawn again (sizes kept, the robot before the clutter), up to
    ``M.RESPAWNS`` times."""
    fp = T.fp
    n = T.ip[IP.n_obj]
    box = M.obj(T, 0)
    s = randomise_body(e, W, V, box, fp[FP.mass_lo], fp[FP.mass_hi], fp[FP.fric_lo],
                    fp[FP.fric_hi], fp[FP.scale_lo], fp[FP.scale_hi])
    for i in range(1, n):
        b = M.obj(T, i)
        base = 2.0 * W.bflt[b, BF_HALF]  # the scene's size of the body [m]
        lo = fp[FP.c_size_lo] / base
        hi = fp[FP.c_size_hi] / base
        randomise_body(e, W, V, b, fp[FP.c_mass_lo], fp[FP.c_mass_hi], fp[FP.c_fric_lo],
                    fp[FP.c_fric_hi], lo, hi)
    rad = W.bflt[box, M.BF_BRAD] * s
    for attempt in range(M.RESPAWNS):
        M.clear_circles(e, T)
        gx, gy = M.free_spot(e, V, T, rad, fp[FP.gap], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                             0.0)
        T.goal[e, 0] = gx
        T.goal[e, 1] = gy
        bx, by = M.place_body(e, W, V, T, box, fp[FP.gap], 0.0, 0.0, 0.0, 0.0, 0.0, gx, gy,
                              fp[FP.goal_separation])
        if attempt > 0:
            M.place_robot(e, W, V, T)
        for i in range(1, n):
            M.place_body(e, W, V, T, M.obj(T, i), fp[FP.gap], bx, by, gx, gy, fp[FP.spread],
                         0.0, 0.0, 0.0)
        if attempt == 0:
            M.place_robot(e, W, V, T)
        if not M.spawn_failed(e, T):
            break


@PushClutter.hook
@compiled
def observe(e, W, V, T):
    """Robot head, the box block and the k nearest clutter bodies; counts the contacts of the
    robot and the box with clutter (``MEM.tally`` of this step)."""
    rx, ry, c, s = M.observe_robot(e, W, V, T)
    ip, fp, mem = T.ip, T.fp, T.mem
    row = V.obs[e]
    n = ip[IP.n_obj]
    r = ip[IP.robot]
    box = M.obj(T, 0)
    touches = 0
    box_clutter = False
    for k in range(W.ctn[e]):
        a = W.cti[e, k, 0]
        b = W.cti[e, k, 1]
        if W.cti[e, k, 2] >= 0:
            continue
        sa, sb = M.slot_of(T, a), M.slot_of(T, b)
        if (a == r or a == box) and sb >= 1 or (b == r or b == box) and sa >= 1:
            touches += 1
            if a == box or b == box:
                box_clutter = True
    mem[e, MEM.tally] = touches
    at = T.at
    ox, oy, co, so = M.object_pose(e, W, T, np.int64(0))
    gx, gy = T.goal[e, 0], T.goal[e, 1]
    put_in_frame(row, at[OBS.box_rel], c, s, ox - rx, oy - ry)
    put_heading_in_frame(row, at[OBS.box_heading_rel], c, s, co, so)
    put_in_frame(row, at[OBS.goal_minus_box], c, s, gx - ox, gy - oy)
    put_in_frame(row, at[OBS.goal_from_robot], c, s, gx - rx, gy - ry)
    row[at[OBS.box_touches_robot]] = mem[e, col(T, M.B_TOUCH, 0)]
    row[at[OBS.box_touches_clutter]] = 1.0 if box_clutter else 0.0
    T.ag[e, 0] = ox
    T.ag[e, 1] = oy
    T.dg[e, 0] = gx
    T.dg[e, 1] = gy
    # The k nearest clutter bodies (by origin distance; the lower index first on a tie).
    for i in range(1, n):
        cx, cy, _c, _s = M.object_pose(e, W, T, i)
        mem[e, col(T, M.B_KEY, i)] = (cx - rx) ** 2 + (cy - ry) ** 2
    trac = fp[FP.traction]
    g = W.prm[PR_G]
    disc0 = len(FP)
    w = at[OBS.clutter_width]
    for j in range(_k(T)):
        best = np.int64(-1)
        d_best = math.inf
        for i in range(1, n):
            d = mem[e, col(T, M.B_KEY, i)]
            if d < d_best:
                best, d_best = i, d
        mem[e, col(T, M.B_KEY, best)] = math.inf
        b = M.obj(T, best)
        cx, cy, cc, cs = M.object_pose(e, W, T, best)
        d = w * j
        put_in_frame(row, at[OBS.clutter_rel] + d, c, s, cx - rx, cy - ry)
        put_heading_in_frame(row, at[OBS.clutter_heading_rel] + d, c, s, cc, cs)
        row[at[OBS.clutter_half_size] + d] = W.bflt[b, BF_HALF] * W.epar[e, b, EP_SCALE]
        row[at[OBS.clutter_is_disc] + d] = fp[disc0 + best]
        load = W.epar[e, b, EP_FRICTION] * W.epar[e, b, EP_MASS] * g / trac
        row[at[OBS.clutter_load] + d] = min(load, 10.0)
        row[at[OBS.clutter_touches_robot] + d] = mem[e, col(T, M.B_TOUCH, best)]


@compiled
def _k(T):
    """How many nearest clutter bodies the observation holds (the task's int after the
    family's)."""
    return T.ip[T.ip.shape[0] - 1]


@PushClutter.hook
@compiled
def is_success(ag, dg, fp):
    """Box centre within ``success_distance`` [m] of the goal."""
    return M.pair_distance(ag, dg, 0) <= fp[FP.success_distance]


@PushClutter.hook
@compiled
def goal_reward(ag, dg, fp, success):
    """Dense HER reward: minus the box-to-goal distance [m], plus the success bonus."""
    return -M.pair_distance(ag, dg, 0) + (fp[FP.bonus] if success else 0.0)


@compiled
def _robot_distance(e, W, T):
    return M.push_pose_distance(e, W, T, M.obj(T, 0), T.goal[e, 0], T.goal[e, 1])


@PushClutter.hook
@compiled
def start(e, W, V, T):
    """Progress memory of a new episode and the episode's clutter-contact count."""
    d = M.pair_distance(T.ag[e], T.dg[e], 0)
    T.mem[e, col(T, M.B_DIST, 0)] = d
    T.mem[e, MEM.target] = 0
    T.mem[e, MEM.prev_robot] = _robot_distance(e, W, T)
    T.mem[e, MEM.total] = 0.0
    V.info[e, INFO.box_to_goal] = d


@PushClutter.hook
@compiled
def evaluate(e, W, V, T):
    """Dense reward: robot -> push-pose and box -> goal progress, minus ``w_clutter`` per
    contact of the robot or the box with clutter, the success bonus, minus the step
    penalty."""
    fp, mem, info = T.fp, T.mem, V.info
    success = is_success(T.ag[e], T.dg[e], fp)
    d = M.pair_distance(T.ag[e], T.dg[e], 0)
    r_obj = fp[FP.w_object] * (mem[e, col(T, M.B_DIST, 0)] - d)
    mem[e, col(T, M.B_DIST, 0)] = d
    r_robot = M.robot_progress(e, T, np.int64(0), _robot_distance(e, W, T))
    touches = mem[e, MEM.tally]
    total = mem[e, MEM.total] + touches
    mem[e, MEM.total] = total
    r_clutter = -fp[FP.w_clutter] * touches
    bonus = fp[FP.bonus] if success else 0.0
    write_info(info, e, InfoRow(box_to_goal=d, clutter_contacts=touches,
                                clutter_contacts_episode=total,
                                box_touches_clutter=V.obs[e, T.at[OBS.box_touches_clutter]],
                                reward_robot_box=r_robot, reward_box_goal=r_obj,
                                reward_clutter=r_clutter, reward_success=bonus,
                                contacts=mem[e, MEM.contacts]))
    return success, success, r_robot + r_obj + r_clutter + bonus - fp[FP.step_penalty]


# The info columns (PushClutter.info_fields) for the kernels, and the record evaluate fills.
INFO = info_columns(PushClutter)
InfoRow = info_row(PushClutter)

_DOC = """Push the red target box to its goal through ``num_clutter`` movable clutter bodies.

    ## Description
    A 1 kg disc robot (r = 0.15 m, traction mu m g = 4.9 N) pushes a 0.3 m, 0.5 kg box in a
    walled 4 m x 4 m arena. Each episode draws the goal, the box at least ``goal_separation``
    (1.5 m) from it, and ``num_clutter`` (default 8) clutter bodies anywhere in the arena
    clear of box and goal (``clutter_spread`` > 0 keeps them within that many metres of the
    box -> goal line instead, so they stand in the way: 0.6 m is a hard variant). Even-numbered
    clutter bodies are boxes, odd ones discs; each draws its size (box side or disc diameter,
    ``clutter_size_range`` 0.1-0.4 m) and mass (``clutter_mass_range`` 0.1-2 kg). By the
    traction rule the robot alone moves a load only while its ground friction mu m g is at
    most 4.9 N: clutter above 1 kg (about half of it), or the box with light clutter in front
    of it past that sum, stalls the robot, so it must go around. The observation gives each
    near clutter body's load ratio (``clutter_load`` > 1: too heavy). The scene holds 16 clutter
    bodies; the task keeps the first ``num_clutter`` before the scene compiles.

    ## Action Space
    As PushBox-v0: ``Box(-1, 1, (2,), float32)`` scaled to the drive's limits.

    ## Observation Space
    ``obs_mode="state"``: a flat float32 Box; ``M = max_contacts`` (default 4), ``N =
    k_nearest`` (default 4): the robot, its contacts, the box, then the N clutter bodies
    nearest the robot (origin distance), nearest first (7 + 24 + 10 + 32 = 73 numbers):

{obs_table}

    ``obs_mode="goal"``: ``achieved_goal`` box x, y [m], ``desired_goal`` goal x, y [m]; their
    reward is exactly ``compute_reward`` (dense: minus the distance plus the success bonus).

    ## Rewards
    Dense: ``1.0 * (robot -> push-pose progress) + 10 * (box -> goal progress) - 0.01 *
    (contacts of the robot or the box with clutter) + 10 * success - 0.01`` per step,
    distances in metres (terms in ``info``). Sparse: 0 on success, -1 otherwise.

    ## Episode End
    Terminates when the box centre is within ``success_distance`` (0.1 m) of the goal;
    truncates after ``max_episode_steps``
    ({max_episode_steps}). ``info["clutter_contacts"]`` counts this
    step's contacts of the robot and the box with clutter bodies,
    ``info["clutter_contacts_episode"]`` their sum over the episode.

    {arguments}

    {versions}
"""

PushClutterEnv, PushClutterVectorEnv = task_envs(PushClutter, _DOC)
