"""PushBox-v0: push a box to a goal region in a walled arena."""

from __future__ import annotations

from push_envs.core.env import task_envs
from push_envs.physics.jit import compiled
from push_envs.tasks.pushing import family as P


class PushBox(P.SingleObjectTask):
    id = "PushBox-v0"
    max_episode_steps = 200
    experts = {"diff": "expert:expert", "omni": "expert:omni_expert"}
    wall_margin = 0.3


# ------------------------------------------------------------------------------ hooks
@PushBox.hook
@compiled
def spawn(e, W, V, T):
    """Goal, box and robot drawn uniformly in the region (box and goal ``margin`` off the
    edges, the box at least ``goal_separation`` from the goal, the robot clear of the box)."""
    s = P.randomise_object(e, W, V, T)
    gx, gy = P.random_goal_xy(e, V, T, s)
    P.set_goal(e, T, gx, gy, 0.0)
    P.spawn_object_and_robot(e, W, V, T, s)


@PushBox.hook
@compiled
def observe(e, W, V, T):
    """The state row; the goal vectors: the box's (x, y) and the goal's [m]."""
    P.observe_goal_xy(e, W, V, T)


@PushBox.hook
@compiled
def evaluate(e, W, V, T):
    return P.evaluate_single(e, W, V, T, P.is_success(T.ag[e], T.dg[e], T.fp))


_DOC = """A robot pushes a box to a goal in a walled 4 m x 4 m arena.

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
    ``obs_mode="state"``: a flat float32 Box; ``M = max_contacts`` (default 4). R bounds a
    position by the scene's extent (2 x (2 x the larger world side + |offset|)); the robot
    traction is its mu m g [N].

{obs_table}

    ``obs_mode="goal"``: a Dict of ``observation`` (the vector above), ``achieved_goal`` (box
    x, y [m]) and ``desired_goal`` (goal x, y [m]); its reward is exactly
    ``compute_reward(achieved_goal, desired_goal, info)``: sparse 0 / -1, dense minus the
    distance [m] plus the success bonus.

    ## Rewards
    Dense: ``1.0 * (robot->push-pose progress) + 10.0 * (box->goal progress) + 10 * success
    - 0.01`` per step, distances in metres. The push pose is the point behind the object
    on the line to the goal (one robot radius plus the object's bounding radius from its
    centre), so approaching the object from the wrong side earns nothing. The terms are in
    ``info`` (``reward_robot_box``, ``reward_box_goal``, ``reward_success``). Sparse: 0 on
    success, -1 otherwise.
""" + P.BOX_AT_GOAL_END

PushBoxEnv, PushBoxVectorEnv = task_envs(PushBox, _DOC)
