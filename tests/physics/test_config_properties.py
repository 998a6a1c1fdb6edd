"""Property tests: any scene dict gives a checked spec or a SceneError, never another exception
and never slowly.

Default run: a fixed small example budget (the ``fast`` profile in conftest.py). The
``slow``-marked twins run the ``slow`` profile (``pytest -m slow``); ``HYPOTHESIS_PROFILE=slow``
runs the default tests with it too.
"""

import copy
import math
import time

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from push_envs.physics import SceneError
from push_envs.physics import load_scene
from push_envs.physics.config import BODY_KEYS
from push_envs.physics.config import KINEMATICS_KEYS
from push_envs.physics.config import SHAPE_KEYS
from push_envs.physics.config import TOP_KEYS
from push_envs.physics.config import WORLD_KEYS
from push_envs.physics.config import SceneSpec
from push_envs.physics.scene import compile_scene

SLOW = settings(settings.get_profile("slow"))
PER_EXAMPLE_S = 2.0  # generous: a single load should take milliseconds

KEY_WORDS = sorted({*TOP_KEYS, *WORLD_KEYS, *BODY_KEYS, *KINEMATICS_KEYS,
                    *(k for keys in SHAPE_KEYS.values() for k in keys), *SHAPE_KEYS,
                    "pose", "type", "contact2d", "diff", "omni", "acker"})

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10 ** 30), max_value=10 ** 30),
    st.integers(min_value=-3, max_value=3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e-300, max_value=1e-300),
    st.sampled_from([0.0, -0.0, 1e-5, 1e300, -1e300, math.inf, -math.inf, math.nan, 0.15]),
    st.text(max_size=12),
    st.sampled_from(KEY_WORDS + ["inf", ".inf", "-inf", "nan"]),
)
keys = st.one_of(st.sampled_from(KEY_WORDS), st.text(max_size=8))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(keys, inner, max_size=5)),
    max_leaves=25,
)
random_scenes = st.dictionaries(keys, values, max_size=4)

TEMPLATE = {
    "world": {"width": 4.0, "height": 4.0, "step_time": 0.1, "friction": 0.5,
              "obstacle_map": [[0, 100], [0, 0]], "map_resolution": 0.25, "offset": [-3, -3]},
    "robot": [{"name": "r", "kinematics": {"name": "acker", "wheelbase": 0.3},
               "shape": {"name": "circle", "radius": 0.15}, "state": [0.0, 0.0, 0.0, 0.1],
               "vel_min": [-1, -0.5], "vel_max": [1, 0.5], "acce": [2, ".inf"],
               "sensors": [{"name": "contact2d"}]}],
    "obstacle": [
        {"name": "box", "shape": {"name": "rectangle", "length": 0.3, "width": 0.2},
         "state": [1.0, 0.0, 0.5], "mass": 0.5, "friction": 0.4, "restitution": 0.2,
         "velocity": [0.1, 0], "omega": 0.2},
        {"name": "tee", "shape": {"name": "polygon", "vertices": [
            [-0.3, 0], [-0.075, 0], [-0.075, -0.45], [0.075, -0.45], [0.075, 0], [0.3, 0],
            [0.3, 0.15], [-0.3, 0.15]]}, "state": [2.0, 1.0, 0.0], "mass": 0.8,
         "inertia": 0.01},
        {"name": "arena", "static": True, "state": [0, 0, 0],
         "shape": {"name": "compound", "parts": [
            {"name": "rectangle", "length": 4, "width": 0.1, "pose": [0, 2.5, 0]},
            {"name": "linestring", "vertices": [[-2, -2.5], [2, -2.5]]},
            {"name": "circle", "radius": 0.1, "center": [0, 0], "pose": [2.5, 2.5]}]}},
    ],
}


def leaf_paths(node, prefix=()):
    """Every key path of the template, leaves and containers alike."""
    yield prefix
    items = node.items() if isinstance(node, dict) else (
        enumerate(node) if isinstance(node, list) else ())
    for key, child in items:
        yield from leaf_paths(child, (*prefix, key))


PATHS = [p for p in leaf_paths(TEMPLATE) if p]


@st.composite
def mutated_scenes(draw):
    """The valid template with one to three values (or keys) replaced by random ones."""
    scene = copy.deepcopy(TEMPLATE)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS))
        node = scene
        try:
            for key in path[:-1]:
                node = node[key]
            if draw(st.booleans()) or not isinstance(node, dict):
                node[path[-1]] = draw(values)
            else:
                node[draw(keys)] = node.pop(path[-1])  # a renamed key
        except (KeyError, IndexError, TypeError):
            pass  # an earlier mutation removed this path
    return scene


def check_load(scene, compile_too=False):
    start = time.process_time()  # CPU time: other processes on the machine do not count
    try:
        spec = load_scene(scene)
    except SceneError as exc:
        assert str(exc).startswith("<dict>")
        assert len(str(exc)) < 500
    else:
        assert isinstance(spec, SceneSpec)
        if compile_too:
            try:
                compile_scene(spec)
            except SceneError as exc:
                assert any(s in str(exc) for s in ("spawn overlaps", "reserved",
                                                   "cannot place"))
    assert time.process_time() - start < PER_EXAMPLE_S


def test_template_is_valid():
    spec = load_scene(TEMPLATE)
    assert [b.name for b in spec.bodies] == ["r", "box", "tee", "arena"]
    compile_scene(spec)


@given(random_scenes)
def test_random_dicts_load_or_raise_scene_error(scene):
    check_load(scene)


@given(mutated_scenes())
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_mutated_scenes_load_or_raise_scene_error(scene):
    check_load(scene, compile_too=True)


@pytest.mark.slow
@SLOW
@given(random_scenes)
def test_random_dicts_load_or_raise_scene_error_slow(scene):
    check_load(scene)


@pytest.mark.slow
@SLOW
@given(mutated_scenes())
def test_mutated_scenes_load_or_raise_scene_error_slow(scene):
    check_load(scene, compile_too=True)
