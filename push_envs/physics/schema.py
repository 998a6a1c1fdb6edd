"""IR-SIM's world schema: every key a scene may hold, where, and the check that refuses the
rest (setup time only).

The tables follow IR-SIM 2.12 (``irsim.env.env_config.EnvConfig``, ``World._VALID_PARAMS``,
``ObjectBase._VALID_PARAMS``, ``ObjectFactory``, the geometry and kinematics handlers, the
plot options), plus the few keys push_envs adds (``world.map_resolution``, a body's
``omega``). ``docs/irsim.md`` has a row for each key: what it does here, and whether it
changes the physics. A key outside the tables is a SceneError naming the file, the key path
and the nearest allowed key, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .checks import fail
from .checks import keys
from .checks import suggestion
from .errors import short_repr

# The key check every parser uses (checks.keys: it names the nearest allowed key).
check_keys = keys

TOP_KEYS = ("world", "robot", "obstacle", "gui", "custom")
"""Top-level sections. ``custom`` is carried untouched (IR-SIM hands it to user code). A file
may also nest these under ``irsim:`` when it is shared with another simulator."""

WORLD_KEYS = (
    "name", "height", "width", "step_time", "sample_time", "offset", "step_mode",
    "control_mode", "collision_mode", "gravity", "friction", "restitution", "drive_tau",
    "obstacle_map", "mdownsample", "fog_map", "fog_map_resolution", "plot", "status",
    # push_envs: square map cells of this many metres instead of IR-SIM's stretch
    "map_resolution",
    # push_envs: how a contact's friction and restitution are made from its bodies' (mixing.py)
    "friction_mixing", "restitution_mixing",
)

COLLISION_MODES = ("contact", "stop", "unobstructed", "unobstructed_obstacles", "reactive")
"""``reactive`` is IR-SIM's alias of ``unobstructed`` ("to be further implemented")."""
CONTROL_MODES = ("auto", "keyboard")
STEP_MODES = ("internal", "external")

WORLD_PLOT_KEYS = ("saved_figure", "figure_pixels", "viewpoint", "title", "show_title",
                   "no_axis", "tight")
SAVED_FIGURE_KEYS = ("dpi", "format", "bbox_inches", "pad_inches", "transparent",
                     "facecolor", "edgecolor", "metadata", "orientation")

GUI_KEYS = {
    "keyboard": ("backend", "key_lv_max", "key_ang_max", "key_lv", "key_ang", "key_rot",
                 "key_id", "global_hook",
                 # in IR-SIM's grid_map_hm3d.yaml; IR-SIM reads no such key either
                 "vel_max"),
    "mouse": ("zoom_factor",),
}

BODY_KEYS = (
    "name", "role", "kinematics", "shape", "state", "velocity", "goal", "color", "static",
    "mass", "friction", "inertia", "restitution", "vel_min", "vel_max", "acce",
    "angle_range", "behavior", "group_behavior", "goal_threshold", "sensors", "arrive_mode",
    "description", "group", "group_name", "state_dim", "vel_dim", "unobstructed", "fov",
    "fov_radius", "plot",
    # consumed by the object factory (groups)
    "number", "distribution",
    # push_envs: the initial spin of a passive body [rad/s]
    "omega",
    # push_envs: swept continuously every sub-step (continuous.py)
    "bullet",
)

BODY_PLOT_KEYS = (
    "show_goal", "show_goal_text", "show_goals", "show_text", "show_arrow",
    "show_trajectory", "show_trail", "show_sensor", "show_fov",
    "obj_color", "obj_alpha", "obj_zorder", "obj_linestyle", "obj_linewidth",
    "goal_color", "goal_alpha", "goal_zorder",
    "traj_color", "traj_style", "traj_width", "traj_alpha", "traj_zorder", "keep_traj_length",
    "text_color", "text_size", "text_alpha", "text_zorder", "text_position",
    "trail_type", "trail_edgecolor", "trail_linewidth", "trail_alpha", "trail_fill",
    "trail_color", "trail_zorder", "trail_freq", "keep_trail_length",
    "arrow_color", "arrow_alpha", "arrow_zorder", "arrow_length", "arrow_width",
    "fov_color", "fov_edge_color", "fov_alpha", "fov_zorder",
)

KINEMATICS_KEYS = ("name", "noise", "alpha", "mode", "wheelbase", "tau")
KINEMATICS_NAMES = ("diff", "omni", "omni_angular", "acker", "static")
"""``static`` is IR-SIM's kinematics of an object that never drives itself."""

RANDOM_POLYGON_KEYS = ("center_range", "avg_radius_range", "irregularity_range",
                       "spikeyness_range", "num_vertices_range")
SHAPE_KEYS = {
    "circle": ("name", "radius", "center", "random_shape", "radius_range", "wheelbase"),
    "rectangle": ("name", "length", "width", "wheelbase"),
    "polygon": ("name", "vertices", "random_shape", "is_convex") + RANDOM_POLYGON_KEYS,
    "linestring": ("name", "vertices", "random_shape", "is_convex") + RANDOM_POLYGON_KEYS,
    "compound": ("name", "parts"),
}

DISTRIBUTION_KEYS = {
    "manual": ("name", "3d"),
    "circle": ("name", "center", "radius", "3d"),
    # non_overlapping: IR-SIM reads it only in env.random_obstacle_position; here a random
    # distribution never overlaps bodies, so either value means that.
    "random": ("name", "range_low", "range_high", "min_distance", "non_overlapping", "3d"),
}

MAP_GENERATOR_KEYS = {
    "image": ("name", "path"),
    "perlin": ("name", "resolution", "complexity", "fill", "fractal", "attenuation", "seed"),
}

ARRIVE_MODES = ("position", "state")


def choice(value: Any, choices: Iterable[str], where: str, what: str) -> str:
    """A string among ``choices`` (checked as a string first: a numpy array compared with
    ``in`` would raise instead of failing)."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise fail(where, f"unknown {what} {short_repr(value)}{suggestion(value, choices)}; "
                          f"choices: {', '.join(choices)}")
    return value
