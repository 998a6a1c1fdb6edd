"""PushT-v0: push the T block of the Push-T benchmark onto a goal pose."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from push_envs.core.env import task_envs
from push_envs.core.task import Arg
from push_envs.core.task import choice
from push_envs.core.task import columns
from push_envs.core.task import number
from push_envs.physics.jit import compiled
from push_envs.physics.layout import BF_COMX
from push_envs.physics.layout import BF_COMY
from push_envs.physics.layout import BI_PCOUNT
from push_envs.physics.layout import BI_PSTART
from push_envs.physics.layout import EP_SCALE
from push_envs.physics.layout import PI_NV
from push_envs.physics.rng import uniform
from push_envs.tasks.pushing import family as P
from push_envs.tasks.pushing.family import GOAL
from push_envs.tasks.pushing.family import MEM
from push_envs.tasks.pushing.family import goal_distance
from push_envs.tasks.pushing.family import heading_error

from .coverage import PC_NV
from .coverage import PIECE_LEN
from .coverage import coverage
from .coverage import piece_table
from .coverage import table_area
from .coverage import vertex

# success_mode: 0 pose, 1 coverage; area [m^2] of the object; shaping: 0 progress, 1
# keypoints; w_coverage: reward per unit of coverage progress (keypoints shaping); the
# object's convex pieces in its origin frame follow the named columns (coverage.piece_table).
FP = columns(P.FP_NAMES, "goal_x goal_y goal_t success_mode coverage_min area shaping "
             "w_coverage")
FP_PIECES = len(FP)  # the piece table starts here
INFO = columns(P.INFO._fields, "coverage")
# The family's memory, then the last coverage and the poses it was computed for: the achieved
# goal (key_ag*) and the desired goal (key_dg*), each x, y, cos, sin.
MEMT = columns(P.MEM._fields, "cov key_ag0 key_ag1 key_ag2 key_ag3 key_dg0 key_dg1 key_dg2 "
               "key_dg3")
SUCCESS_MODES = ("pose", "coverage")
SHAPINGS = ("progress", "keypoints")


class PushT(P.SingleObjectTask):
    id = "PushT-v0"
    max_episode_steps = 300
    experts = {"omni": "expert:expert"}
    object_body = "tee"
    region = (0.0, 0.0, 3.0, 3.0)
    success_distance = 0.02
    success_angle = math.radians(5.0)
    w_angle = 2.0
    goal_separation = 0.3
    fixed_goal = (1.5, 1.6, math.pi / 4)  # goal pose (x [m], y [m], theta [rad]); None: drawn
    default_robot = "omni"
    wall_margin = 0.2
    fp_names = tuple(FP._fields)
    goal_fields = ("x", "y", "cos", "sin")
    info_fields = P.SingleObjectTask.info_fields + (("coverage", float),)
    arguments = {
        **P.shared_arguments(),
        "success": Arg("pose", choice(*SUCCESS_MODES),
                       "success test: 'pose' (origin within success_distance and heading "
                       "within 5 deg) or 'coverage' (gym-pusht's: the T covers at least "
                       "coverage_threshold of the goal's area)"),
        "coverage_threshold": Arg(0.95, number(0.0, 1.0, strict=True),
                                  "share of the goal area the T must cover, success='coverage'"),
        "shaping": Arg("progress", choice(*SHAPINGS),
                       "dense reward: 'progress' (push pose, position and heading progress) "
                       "or 'keypoints' (the T's vertices toward their goal places, coverage "
                       "progress, robot toward the T)"),
        "w_coverage": Arg(5.0, number(0.0, unit=""),
                          "reward per unit of coverage progress, shaping='keypoints'"),
    }

    def build(self, env):
        a = self.args
        if a["success"] == "coverage" and a["box_size_range"] is not None:
            raise ValueError("success='coverage' compares the T with a goal outline of the "
                             "scene's size, so it cannot be combined with box_size_range="
                             f"{a['box_size_range']!r}; pass box_size_range=None")
        t = super().build(env)
        tab = piece_table(self.object_pieces(env))
        fp = np.concatenate([t.fp, tab])
        fp[[FP.goal_x, FP.goal_y, FP.goal_t]] = self.fixed_goal or (math.nan,) * 3
        fp[FP.success_mode] = SUCCESS_MODES.index(a["success"])
        fp[FP.coverage_min] = a["coverage_threshold"]
        fp[FP.area] = table_area(tab)
        fp[FP.shaping] = SHAPINGS.index(a["shaping"])
        fp[FP.w_coverage] = a["w_coverage"]
        return t._replace(fp=fp, mem=np.zeros((env.num_envs, len(MEMT))))

    def object_pieces(self, env) -> list[np.ndarray]:
        """The object's convex pieces, vertices [m] in its origin frame (scene size)."""
        sc = env.world.scene
        o = sc.index[self.object_body]
        com = sc.bflt[o, [BF_COMX, BF_COMY]]
        p0, n = sc.bint[o, BI_PSTART], sc.bint[o, BI_PCOUNT]
        pieces = [sc.pvert[p, : sc.pint[p, PI_NV]] + com for p in range(p0, p0 + n)]
        if any(sc.pint[p, PI_NV] < 3 for p in range(p0, p0 + n)):
            raise ValueError(f"{sc.spec.source}: PushT's coverage needs a polygon object; "
                             f"'{self.object_body}' has a circle or segment piece")
        return pieces


# ------------------------------------------------------------------------------ hooks
@PushT.hook
@compiled
def spawn(e, W, V, T):
    """The fixed goal pose (or one drawn in the region), the T anywhere in the region at least
    ``goal_separation`` from it, the robot clear of the T."""
    s = P.randomise_object(e, W, V, T)
    fp = T.fp
    if not math.isnan(fp[FP.goal_x]):
        P.set_goal(e, T, fp[FP.goal_x], fp[FP.goal_y], fp[FP.goal_t])
    else:
        gx, gy = P.random_goal_xy(e, V, T, s)
        P.set_goal(e, T, gx, gy, uniform(V.rng, e, -math.pi, math.pi))
    P.spawn_object_and_robot(e, W, V, T, s)


@PushT.hook
@compiled
def observe(e, W, V, T):
    """The state row; the goal vectors: [x, y, cos theta, sin theta] of the T and the goal."""
    P.observe_goal_xy(e, W, V, T)
    T.ag[e, 2] = T.mem[e, MEM.co]
    T.ag[e, 3] = T.mem[e, MEM.so]
    T.dg[e, 2] = T.goal[e, GOAL.cos]
    T.dg[e, 3] = T.goal[e, GOAL.sin]


@compiled
def goal_coverage(ag, dg, fp):
    """Share of the goal pose's area covered by the T at its achieved pose, in [0, 1]."""
    return coverage(fp[FP_PIECES:], fp[FP.area], ag[0], ag[1], ag[2], ag[3],
                    dg[0], dg[1], dg[2], dg[3])


# The coverage is a pure function of the two poses, and the T stands still in most steps (it
# slides only while pushed; under random actions its pose is bitwise unchanged in 97.6 % of
# env-steps), so the step reuses the last value while both poses are bitwise the same. Same
# inputs, same bits: rollouts do not change.
@compiled
def _store_coverage(e, T, cov):
    m, ag, dg = T.mem[e], T.ag[e], T.dg[e]
    m[MEMT.cov] = cov
    for i in range(4):
        m[MEMT.key_ag0 + i] = ag[i]
        m[MEMT.key_dg0 + i] = dg[i]
    return cov


@compiled
def step_coverage(e, T):
    """:func:`goal_coverage` of env e's poses, reused from the last step when neither pose
    changed by a bit (the key is refreshed at every reset)."""
    m, ag, dg = T.mem[e], T.ag[e], T.dg[e]
    for i in range(4):
        if ag[i] != m[MEMT.key_ag0 + i] or dg[i] != m[MEMT.key_dg0 + i]:
            return _store_coverage(e, T, goal_coverage(ag, dg, T.fp))
    return m[MEMT.cov]


@compiled
def _judge(ag, dg, fp, cov):
    if fp[FP.success_mode] == 1.0:
        return cov >= fp[FP.coverage_min]
    return goal_distance(ag, dg) <= fp[FP.success_distance] and \
        heading_error(ag[2], ag[3], dg[2], dg[3]) <= fp[FP.success_angle]


@PushT.hook
@compiled
def is_success(ag, dg, fp):
    """success='pose': the T's origin within ``success_distance`` [m] of the goal AND its
    heading within ``success_angle`` [rad]; success='coverage': the T covers at least
    ``coverage_min`` of the goal's area."""
    return _judge(ag, dg, fp, goal_coverage(ag, dg, fp))


@PushT.hook
@compiled
def goal_reward(ag, dg, fp, success):
    """Dense HER reward: minus the distance [m] and w_angle / w_object_goal x the heading
    error [rad], plus the success bonus."""
    err = heading_error(ag[2], ag[3], dg[2], dg[3])
    return -goal_distance(ag, dg) - fp[FP.w_angle] / fp[FP.w_object_goal] * err + \
        (fp[FP.bonus] if success else 0.0)


@njit(cache=True)
def keypoint_distance(ag, dg, fp):
    """Mean distance [m] between the T's piece vertices at the achieved pose and the same
    vertices at the goal pose: position and heading error in one length (a vertex r from
    the origin moves about r x the heading error)."""
    tab = fp[FP_PIECES:]
    total = 0.0
    count = 0
    k = 1
    for _ in range(int(tab[0])):
        for j in range(int(tab[k + PC_NV])):
            ax, ay = vertex(tab, k, j, ag[0], ag[1], ag[2], ag[3])
            bx, by = vertex(tab, k, j, dg[0], dg[1], dg[2], dg[3])
            total += math.sqrt((ax - bx) ** 2 + (ay - by) ** 2)
            count += 1
        k += PIECE_LEN
    return total / count


@compiled
def _robot_gap(e, W, T):
    """Distance [m] from the robot to the T's bounding circle (0 when inside it)."""
    r, o = T.ip[P.IP.robot], T.ip[P.IP.obj]
    dx, dy = W.pos[e, r, 0] - W.pos[e, o, 0], W.pos[e, r, 1] - W.pos[e, o, 1]
    reach = T.fp[FP.robot_r] + T.fp[FP.obj_r] * W.epar[e, o, EP_SCALE]
    return max(math.sqrt(dx * dx + dy * dy) - reach, 0.0)


@compiled
def _keypoint_reward(e, W, V, T, cov, success):
    """shaping='keypoints': ``w_robot_object`` x (robot -> T gap progress) +
    ``w_object_goal`` x (keypoint distance progress, m) + ``w_coverage`` x (coverage
    progress) + ``bonus`` on success - ``step_penalty``. The terms land in the info columns
    reward_robot_box, reward_box_goal and reward_angle; box_to_goal and angle_error stay the
    pose errors."""
    fp, mem = T.fp, T.mem
    _, d_og, d_ang = P.distances(e, W, T)
    gap = _robot_gap(e, W, T)
    kp = keypoint_distance(T.ag[e], T.dg[e], fp)
    r_rb = fp[FP.w_robot_object] * (mem[e, MEM.prev_rb] - gap)
    r_kp = fp[FP.w_object_goal] * (mem[e, MEM.prev_og] - kp)
    r_cov = fp[FP.w_coverage] * (cov - mem[e, MEM.prev_ang])
    mem[e, MEM.prev_rb] = gap
    mem[e, MEM.prev_og] = kp
    mem[e, MEM.prev_ang] = cov
    return P.report_terms(e, V, T, d_og, d_ang, r_rb, r_kp, r_cov, success)


@PushT.hook
@compiled
def evaluate(e, W, V, T):
    ag, dg = T.ag[e], T.dg[e]
    cov = step_coverage(e, T)
    V.info[e, INFO.coverage] = cov
    success = _judge(ag, dg, T.fp, cov)
    if T.fp[FP.shaping] == 1.0:
        return _keypoint_reward(e, W, V, T, cov, success)
    return P.evaluate_single(e, W, V, T, success)


@PushT.hook
@compiled
def start(e, W, V, T):
    P.start(e, W, V, T)
    cov = _store_coverage(e, T, goal_coverage(T.ag[e], T.dg[e], T.fp))
    V.info[e, INFO.coverage] = cov
    if T.fp[FP.shaping] == 1.0:
        T.mem[e, MEM.prev_rb] = _robot_gap(e, W, T)
        T.mem[e, MEM.prev_og] = keypoint_distance(T.ag[e], T.dg[e], T.fp)
        T.mem[e, MEM.prev_ang] = cov


_DOC = """Push the T block onto a fixed goal pose, on real ground friction.

    ## Description
    The T of the Push-T benchmark (bar 0.6 m x 0.15 m over a 0.45 m x 0.15 m stem, 0.8 kg) is
    a non-convex polygon split into convex pieces by constrained Delaunay triangulation.
    Unlike gym-pusht it slides on ground friction (0.5) and cannot pass through the arena's
    walls. The T starts at a random pose in a 3 m x 3 m arena, its bounding circle at least
    ``wall_margin`` (0.2 m, two robot radii) from the walls; the goal pose is fixed at
    (1.5 m, 1.6 m, 45 deg), the origin being the bar's lower-edge centre. The default robot is
    an omni drive (a 0.1 m disc), like Push-T's holonomic agent.

    ## Action Space
    As PushBox-v0 (default robot "omni": [vx, vy] in [-1, 1] m/s, body frame).

    ## Observation Space
    As PushBox-v0:

{obs_table}

    ``achieved_goal`` / ``desired_goal``: [x, y, cos theta, sin theta] of the T / goal.

    ## Rewards
    Dense, ``shaping="progress"`` (default): ``1.0 * (robot->push-pose progress, m) + 10.0 *
    (T->goal progress, m) + 2.0 * (heading progress, rad) + 10 * success - 0.01`` per step.
    Dense, ``shaping="keypoints"``: ``1.0 * (robot->T progress, m: the robot's distance to the
    T's centre of mass less both radii, 0 once within reach) + 10.0 * (keypoint progress, m:
    the mean distance between the T's vertices and their places at the goal pose, which
    weighs position and heading in one length) + w_coverage (5.0) * (coverage progress) +
    10 * success - 0.01``. The terms are in ``info`` (``reward_robot_box``,
    ``reward_box_goal``, ``reward_angle``: the coverage term under keypoints). Sparse: 0 on
    success, -1 otherwise. Goal mode's dense reward: minus the distance [m] minus 0.2 x the
    heading error [rad], plus the success bonus.

    ## Episode End
    Two success tests (``success=``), both computed in the kernel (no shapely per step):

    * ``"pose"`` (default): the T's origin within 2 cm of the goal AND its heading within
      5 deg;
    * ``"coverage"``: gym-pusht's, the T covers at least ``coverage_threshold`` (0.95) of the
      goal pose's area (the T's convex pieces at both poses, clipped pairwise).

    ``info["coverage"]`` carries the covered share on every step and at reset, whichever test
    is used. Terminates on success; truncates after ``max_episode_steps`` ({max_episode_steps}).

    {arguments}

    {versions}
"""

PushTEnv, PushTVectorEnv = task_envs(PushT, _DOC)
