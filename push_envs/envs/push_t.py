"""PushT-v0: push the T block of the Push-T benchmark onto a goal pose."""

from __future__ import annotations

import math

from numba import njit

from . import pushing as P
from .base import task_envs
from .pushing import (
    GOAL,
    MEM,
    goal_distance,
    heading_error,
    start,  # noqa: F401 (a hook shared with the family)
)
from .rng import uniform
from .task import columns

FP = columns(P.FP_NAMES, "goal_x goal_y goal_t")


class PushT(P.SingleObjectTask):
    id = "PushT-v0"
    hooks = __name__
    scene = "push_t.yaml"
    max_episode_steps = 300
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

    def build(self, env):
        t = super().build(env)
        t.fp[[FP.goal_x, FP.goal_y, FP.goal_t]] = self.fixed_goal or (math.nan,) * 3
        return t


# ------------------------------------------------------------------------------ hooks
@njit(cache=True)
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
    ocx, ocy = P.spawn_object_free(e, W, V, T, s)
    P.spawn_robot(e, W, V, T, ocx, ocy, s)


@njit(cache=True)
def observe(e, W, V, T):
    P.observe_single(e, W, V, T)
    T.ag[e, 0] = T.mem[e, MEM.ox]
    T.ag[e, 1] = T.mem[e, MEM.oy]
    T.ag[e, 2] = T.mem[e, MEM.co]
    T.ag[e, 3] = T.mem[e, MEM.so]
    T.dg[e, 0] = T.goal[e, GOAL.x]
    T.dg[e, 1] = T.goal[e, GOAL.y]
    T.dg[e, 2] = T.goal[e, GOAL.cos]
    T.dg[e, 3] = T.goal[e, GOAL.sin]


@njit(cache=True)
def is_success(ag, dg, fp):
    """The T's origin within ``success_distance`` [m] of the goal AND its heading within
    ``success_angle`` [rad]."""
    return goal_distance(ag, dg) <= fp[FP.success_distance] and \
        heading_error(ag[2], ag[3], dg[2], dg[3]) <= fp[FP.success_angle]


@njit(cache=True)
def goal_reward(ag, dg, fp, success):
    """Dense HER reward: minus the distance [m] and w_angle / w_object_goal x the heading
    error [rad], plus the success bonus."""
    err = heading_error(ag[2], ag[3], dg[2], dg[3])
    return -goal_distance(ag, dg) - fp[FP.w_angle] / fp[FP.w_object_goal] * err + \
        (fp[FP.bonus] if success else 0.0)


@njit(cache=True)
def evaluate(e, W, V, T):
    return P.evaluate_single(e, W, V, T, is_success(T.ag[e], T.dg[e], T.fp))


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
    Dense: ``1.0 * (robot->push-pose progress) + 10.0 * (T->goal progress, m) + 2.0 * (heading
    progress, rad) + 10 * success - 0.01`` per step (terms in ``info``). Sparse: 0 on
    success, -1 otherwise. Goal mode's dense reward: minus the distance [m] minus 0.2 x the
    heading error [rad], plus the success bonus.

    ## Episode End
    Success is judged on the pose, not IoU: the T's origin within 2 cm of the goal AND its
    heading within 5 deg (computed in the kernel, no shapely per step). Terminates on
    success; truncates after 300 steps.

    ## Arguments
    As PushBox-v0 (the scene default is configs/push_t.yaml).

    ## Version History
    * v0: initial release.
"""

PushTEnv, PushTVectorEnv = task_envs(PushT, _DOC)
