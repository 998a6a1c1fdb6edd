"""PushT-v0: push the T block of the Push-T benchmark onto a goal pose."""

from __future__ import annotations

import math

from .base import PushEnv, PushVectorEnv, Task
from .obs_doc import STATE_TABLE
from .spawn import TASK_PUSH_T

PUSH_T = Task(task_id=TASK_PUSH_T, scene="push_t.yaml", max_episode_steps=300,
              object_body="tee", region=(0.0, 0.0, 3.0, 3.0), success_distance=0.02,
              success_angle=math.radians(5.0), w_angle=2.0, goal_separation=0.3,
              fixed_goal=(1.5, 1.6, math.pi / 4), default_robot="omni",
              wall_margin=0.2)

_DOC = f"""Push the T block onto a fixed goal pose, on real ground friction.

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
    {STATE_TABLE}
    ``achieved_goal`` / ``desired_goal``: [x, y, cos theta, sin theta] of the T / goal.

    ## Rewards
    Dense: ``1.0 * (robot->push-pose progress) + 10.0 * (T->goal progress, m) + 2.0 * (heading
    progress, rad) + 10 * success - 0.01`` per step (terms in ``info``). Sparse: 0 on
    success, -1 otherwise.

    ## Episode End
    Success is judged on the pose, not IoU: the T's origin within 2 cm of the goal AND its
    heading within 5 deg (computed in the kernel, no shapely per step). Terminates on
    success; truncates after 300 steps.

    ## Arguments
    As PushBox-v0 (the scene default is configs/push_t.yaml).

    ## Version History
    * v0: initial release.
"""


class PushTVectorEnv(PushVectorEnv):
    task = PUSH_T
    __doc__ = _DOC


class PushTEnv(PushEnv):
    vector_class = PushTVectorEnv
    __doc__ = _DOC
