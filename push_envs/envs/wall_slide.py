"""WallSlide-v0: slide a box along a wall to a goal, keeping it against the wall."""

from __future__ import annotations

from .base import PushEnv, PushVectorEnv, Task
from .obs_doc import STATE_TABLE
from .spawn import TASK_WALL_SLIDE

WALL_SLIDE = Task(task_id=TASK_WALL_SLIDE, scene="wall_slide.yaml", max_episode_steps=300,
                  object_body="box", wall_body="wall", region=(0.0, 0.0, 5.0, 3.0),
                  success_distance=0.1, goal_distance=(1.5, 3.0), wall_face_y=0.0,
                  wall_margin=0.3)

_DOC = f"""Slide a box along a wall to a goal 1.5-3 m away, keeping it against the wall.

    ## Description
    The box (0.4 m along the wall, 0.3 m across, 0.5 kg) starts resting flat against the long
    wall (its face at y = 0, in a 5 m x 3 m arena), so the robot cannot get between box and
    wall. It starts at least ``wall_margin`` (0.3 m, one robot diameter) from the arena's end
    walls, so the robot can reach both end faces. The goal lies on the wall line 1.5-3 m to
    either side. The robot can push the box's end face, or push obliquely into the wall:
    outside the friction cone of box and wall (mean coefficient 0.5, half-angle atan 0.5 =
    26.6 deg from the wall normal) the box slides; a push too steep sticks. Body-to-body
    contacts are frictionless, so an oblique push acts through a corner of the box.

    ## Action Space
    As PushBox-v0.

    ## Observation Space
    {STATE_TABLE}
    Index 21 + 6M reads the box's contact sensor: 1 while it touches the wall.
    ``achieved_goal``: [box x, box y, touching wall]; ``desired_goal``: [goal x, goal y, 1].

    ## Rewards
    Dense: ``1.0 * (robot->push-pose progress) + 10.0 * (box->goal progress) + 10 * success
    - 0.01`` per step (terms in ``info``). Sparse: 0 on success, -1 otherwise.

    ## Episode End
    Terminates when the box centre is within 0.1 m of the goal AND the box's contact sensor
    reports it touching the wall; truncates after 300 steps.

    ## Arguments
    As PushBox-v0 (the scene default is configs/wall_slide.yaml).

    ## Version History
    * v0: initial release.
"""


class WallSlideVectorEnv(PushVectorEnv):
    task = WALL_SLIDE
    __doc__ = _DOC


class WallSlideEnv(PushEnv):
    vector_class = WallSlideVectorEnv
    __doc__ = _DOC
