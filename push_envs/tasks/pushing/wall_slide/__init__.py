"""WallSlide-v0: slide a box along a wall to a goal, keeping it against the wall."""

from __future__ import annotations

import numpy as np

from push_envs.core.env import task_envs
from push_envs.core.task import columns
from push_envs.physics.jit import compiled
from push_envs.physics.rng import uniform
from push_envs.tasks.pushing import family as P
from push_envs.tasks.pushing.family import MEM
from push_envs.tasks.pushing.family import goal_distance

FP = columns(P.FP_NAMES, "goal_dmin goal_dmax wall_y obj_halfw obj_halfl")


class WallSlide(P.SingleObjectTask):
    id = "WallSlide-v0"
    max_episode_steps = 300
    # Its own expert (expert.py): PushBox's pusher overshot the goal and drove the box into
    # the end walls (87 % of 500 episodes).
    experts = {"diff": "expert:expert"}
    wall_body = "wall"
    region = (0.0, 0.0, 5.0, 3.0)
    wall_margin = 0.3
    region_spawn = False  # the box spawns flat against the wall, its goal on the wall line
    goal_distance = (1.5, 3.0)  # goal along the wall from the box [m]
    wall_face_y = 0.0  # y of the wall face [m]
    fp_names = tuple(FP._fields)
    goal_fields = ("x", "y", "touching_wall")

    def build(self, env):
        t = super().build(env)
        sc = env.world.scene
        info = sc.shapes[sc.index[self.object_body]]
        verts = np.concatenate([p.verts for p in info.pieces]) - info.centroid
        t.fp[FP.goal_dmin], t.fp[FP.goal_dmax] = self.goal_distance
        t.fp[FP.wall_y] = self.wall_face_y
        t.fp[FP.obj_halfw] = float(abs(verts[:, 1]).max())
        t.fp[FP.obj_halfl] = float(abs(verts[:, 0]).max())
        self.check_goal_room(t.fp)
        return t

    def check_goal_room(self, fp: np.ndarray) -> None:
        """Refuse arguments under which an episode could start solved or find no goal: the
        box starts ``goal_distance[0]`` to ``goal_distance[1]`` [m] from its goal along the
        wall, so ``success_distance`` must be below the least of them; and the region must
        hold the box (half length at the largest size factor), ``wall_margin`` and the least
        goal distance on one side, or no goal fits beside the box."""
        succ, dmin = float(fp[FP.success_distance]), float(fp[FP.goal_dmin])
        if succ >= dmin:
            raise ValueError(f"{self.id}: success_distance {succ:g} m must be below "
                             f"{dmin:g} m, the least distance the box starts from its goal "
                             f"along the wall (the episode would start solved)")
        size = self.args["box_size_range"]
        hl = float(fp[FP.obj_halfl]) * (size[1] if size else 1.0)
        length = float(fp[FP.x1] - fp[FP.x0])
        need = 2.0 * hl + float(fp[FP.margin]) + dmin
        if length < need:
            reg = tuple(float(v) for v in fp[[FP.x0, FP.y0, FP.x1, FP.y1]])
            raise ValueError(f"{self.id}: spawn_region {reg} is {length:.3g} m along the "
                             f"wall; with box_size_range "
                             f"{size!r} (box {2 * hl:.3g} m long) and wall_margin "
                             f"{float(fp[FP.margin]):g} m, the goal {dmin:g} m from the box "
                             f"needs {need:.3g} m")


# ------------------------------------------------------------------------------ hooks
@WallSlide.hook
@compiled
def spawn(e, W, V, T):
    """The box flat against the wall (``margin`` off the end walls), the goal on the wall
    line ``goal_dmin``-``goal_dmax`` [m] to either side, the robot anywhere clear of it."""
    s = P.randomise_object(e, W, V, T)
    fp, rng = T.fp, V.rng
    x0, x1 = fp[FP.x0], fp[FP.x1]
    hl = fp[FP.obj_halfl] * s
    oy = fp[FP.wall_y] + fp[FP.obj_halfw] * s + fp[FP.slop]
    ox = gx = 0.5 * (x0 + x1)
    # Off the end walls by the margin: flush against one, the box could only be pushed on its
    # long face, straight into the wall (body contacts are frictionless).
    m = fp[FP.margin]
    found = False
    for _ in range(P.TRIES):
        ox = uniform(rng, e, x0 + hl + m, x1 - hl - m)
        d = uniform(rng, e, fp[FP.goal_dmin], fp[FP.goal_dmax])
        right_ok = ox + d <= x1 - hl
        left_ok = ox - d >= x0 + hl
        if right_ok and left_ok:
            gx = ox + d if uniform(rng, e, 0.0, 1.0) < 0.5 else ox - d
            found = True
            break
        if right_ok or left_ok:
            gx = ox + d if right_ok else ox - d
            found = True
            break
    if not found:
        # Every draw put the goal past an end wall: the box at its leftmost start, the goal
        # the least distance to its right, which construction (check_goal_room) makes fit.
        # Never the region's middle, which could lie under the box (a start already solved).
        ox = x0 + hl + m
        gx = ox + fp[FP.goal_dmin]
    P.set_goal(e, T, gx, oy, 0.0)
    o = T.ip[P.IP.obj]
    P.place_origin(e, o, ox, oy, 0.0, W.pos, W.ang, W.bflt, W.epar)
    P.spawn_robot(e, W, V, T, W.pos[e, o, 0], W.pos[e, o, 1], s)


@WallSlide.hook
@compiled
def observe(e, W, V, T):
    """The state row; the goal vectors: the box's (x, y) [m] and its wall touch (0/1), the
    goal's (x, y) [m] and 1."""
    P.observe_goal_xy(e, W, V, T)
    T.ag[e, 2] = T.mem[e, MEM.touch_wall]
    T.dg[e, 2] = 1.0


@WallSlide.hook
@compiled
def is_success(ag, dg, fp):
    """Box within ``success_distance`` [m] of the goal AND touching the wall."""
    return goal_distance(ag, dg) <= fp[FP.success_distance] and ag[2] > 0.5


@WallSlide.hook
@compiled
def evaluate(e, W, V, T):
    return P.evaluate_single(e, W, V, T, is_success(T.ag[e], T.dg[e], T.fp))


_DOC = """Slide a box along a wall to a goal 1.5-3 m away, keeping it against the wall.

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
    As PushBox-v0; ``object_touches_wall`` reads the box's contact sensor: 1 while it
    touches the wall.

{obs_table}

    ``achieved_goal``: [box x, box y, touching wall]; ``desired_goal``: [goal x, goal y, 1].

    ## Rewards
    Dense: ``1.0 * (robot->push-pose progress) + 10.0 * (box->goal progress) + 10 * success
    - 0.01`` per step (terms in ``info``). Sparse: 0 on success, -1 otherwise.

    ## Episode End
    Terminates when the box centre is within 0.1 m of the goal AND the box's contact sensor
    reports it touching the wall; truncates after ``max_episode_steps`` ({max_episode_steps}).

    {arguments}

    {versions}
"""

WallSlideEnv, WallSlideVectorEnv = task_envs(WallSlide, _DOC)
