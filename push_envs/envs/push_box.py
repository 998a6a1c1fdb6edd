"""PushBox-v0: push a box to a goal region in a walled arena."""

from __future__ import annotations

from .base import PushEnv, PushVectorEnv, Task
from .obs_doc import STATE_TABLE
from .spawn import TASK_PUSH_BOX

PUSH_BOX = Task(task_id=TASK_PUSH_BOX, scene="push_box.yaml", max_episode_steps=200,
                object_body="box", region=(0.0, 0.0, 4.0, 4.0), success_distance=0.1,
                wall_margin=0.3)

_DOC = f"""A robot pushes a box to a goal in a walled 4 m x 4 m arena.

    ## Description
    Each episode draws the goal, the box pose and the robot pose uniformly inside the arena.
    The box starts at least 0.5 m from the goal, and the box's bounding circle and the goal
    keep ``wall_margin`` (0.3 m, two robot radii) from the walls, so the robot can always
    reach the push pose behind the box; ``wall_margin=0`` draws them over the whole arena.
    The robot is a 1 kg disc (r = 0.15 m); the box is 0.3 m x 0.3 m, 0.5 kg, on ground
    friction 0.5, so the robot's traction (4.9 N) beats the box's ground friction (2.45 N).

    ## Action Space
    ``Box(-1, 1, (2,), float32)``, scaled to the drive's limits: diff [v in [-1, 1] m/s,
    omega in [-2, 2] rad/s]; omni [vx, vy] in [-1, 1] m/s (body frame); acker [v in [-1, 1]
    m/s, steer in [-0.6, 0.6] rad]. Out-of-range actions are clipped; NaN or inf raise
    ValueError.

    ## Observation Space
    {STATE_TABLE}
    ``achieved_goal`` / ``desired_goal``: box / goal position [x, y] (m).

    ## Rewards
    Dense: ``1.0 * (robot->push-pose progress) + 10.0 * (box->goal progress) + 10 * success
    - 0.01`` per step, distances in metres. The push pose is the point behind the object
    on the line to the goal (one robot radius plus the object's bounding radius from its
    centre), so approaching the object from the wrong side earns nothing. The terms are in ``info``
    (``reward_robot_box``, ``reward_box_goal``, ``reward_success``). Sparse: 0 on success,
    -1 otherwise.

    ## Episode End
    Terminates when the box centre is within ``success_distance`` (0.1 m) of the goal;
    truncates after ``max_episode_steps`` (200).

    ## Arguments
    ``robot`` ("diff" | "omni" | "acker"), ``reward_type`` ("dense" | "sparse"), ``obs_mode``
    ("state" | "goal"), ``scene`` (YAML path replacing configs/push_box.yaml),
    ``max_episode_steps``, ``max_contacts``, ``box_mass_range`` [kg], ``box_friction_range``,
    ``box_size_range`` (scale factor), ``spawn_region`` (x0, y0, x1, y1) [m],
    ``wall_margin`` [m], ``success_distance`` [m], ``render_mode``. Randomisation draws
    only from the stream seeded by ``reset(seed=...)``.

    ## Version History
    * v0: initial release.
"""


class PushBoxVectorEnv(PushVectorEnv):
    task = PUSH_BOX
    __doc__ = _DOC


class PushBoxEnv(PushEnv):
    vector_class = PushBoxVectorEnv
    __doc__ = _DOC
