"""Bounds on scene inputs, so that hostile or careless scenes fail fast with a clear error.

Every limit is checked before the work it protects (parsing, decoding, decomposing, building
arrays), and every error names the limit. README.md ("Limits and safety") lists them.

Units: metres, seconds, kilograms, radians, bytes, pixels.
"""

from __future__ import annotations

MAX_SCENE_BYTES = 1 << 20
"""Largest scene YAML file [bytes] (1 MiB); larger files are refused before parsing."""

MAX_YAML_NODES = 100_000
"""Most YAML nodes a scene may hold once every alias is expanded (alias bombs)."""

MAX_YAML_DEPTH = 100
"""Deepest nesting of YAML collections (PyYAML's composer recurses per level)."""

MAX_IMAGE_BYTES = 64 << 20
"""Largest obstacle-map image file [bytes] (64 MiB)."""

MAX_MAP_CELLS = 4_000_000
"""Most cells of an obstacle map (image pixels or inline array entries), checked from the
PNG header or the list lengths before anything is decoded or allocated."""

MAX_MAP_PIECES = 10_000
"""Most rectangles an obstacle map may need (counted before any is built): every one is a
static piece that each env's broad phase keeps scratch space for."""

MAX_POLYGON_VERTS = 2_000
"""Most vertices of one polygon or line string."""

MAX_COMPOUND_PARTS = 1_000
"""Most parts of one compound shape."""

MAX_BODIES = 10_000
"""Most robots plus obstacles in one scene."""

MIN_SIZE = 1e-4
"""Smallest length, width, radius, polygon thickness or edge, map cell and line segment [m]."""

MAX_SIZE = 1e4
"""Largest length, width, radius or polygon extent [m]."""

MAX_WORLD_SIZE = 1e4
"""Largest world width and height [m] (the observation bounds are float32)."""

MAX_COORD = 1e4
"""Largest magnitude of a coordinate: poses, vertices, offsets, shape centres [m], and of an
angle [rad]."""

MAX_MAGNITUDE = 1e6
"""Largest magnitude of any other finite scene number (mass [kg], inertia [kg m^2],
velocities [m/s, rad/s], limits, gravity [m/s^2], friction, time constants [s])."""

MIN_STEP_TIME = 1e-6
"""Shortest step time [s]."""

MIN_MASS = 1e-6
"""Smallest finite mass [kg]; the inverse mass enters every contact."""

MIN_INERTIA = 1e-12
"""Smallest moment of inertia [kg m^2]."""

MIN_SCALE = 1e-3
MAX_SCALE = 1e3
"""Range of a body's shape scale factor (``World.set_scale``)."""
