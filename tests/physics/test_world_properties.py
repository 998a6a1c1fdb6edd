"""Property tests: a World setter either succeeds or raises ValueError/IndexError/KeyError and
leaves the world bit-for-bit unchanged (state hash and per-env parameters).

Default run: the ``fast`` profile of conftest.py; the ``slow``-marked twin runs ``slow``.
"""

import functools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from push_envs.physics import World
from push_envs.physics.layout import EP_FRICTION
from push_envs.physics.layout import EP_INERTIA
from push_envs.physics.layout import EP_MASS
from push_envs.physics.layout import EP_SCALE

SLOW = settings(settings.get_profile("slow"))
NUM_ENVS = 3
SETTERS = ("set_state", "set_velocity", "set_omega", "set_drive_state", "set_mass",
           "set_friction", "set_scale")


@functools.lru_cache(maxsize=1)
def make_world() -> World:
    """One shared world (hypothesis examples must not depend on function-scoped fixtures)."""
    scene = {
        "world": {"step_time": 0.1},
        "robot": [{"name": "car", "kinematics": {"name": "acker"}, "state": [0, 0, 0, 0.1]},
                  {"name": "bot", "kinematics": {"name": "diff"}, "state": [0, 2, 0]}],
        "obstacle": [{"name": "box", "mass": 1.0, "state": [2, 0, 0],
                      "shape": {"name": "rectangle", "length": 0.4, "width": 0.3}},
                     {"name": "wall", "static": True, "state": [-3, 0, 0],
                      "shape": {"name": "rectangle", "length": 0.1, "width": 2.0}}],
    }
    return World.from_config(scene, num_envs=NUM_ENVS)


numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-5, max_value=5),
    st.integers(min_value=-5, max_value=5),
    st.sampled_from([0.0, 1e-9, 1e9, 1e300, math.nan, math.inf, -math.inf]),
)
junk = st.one_of(st.none(), st.booleans(), st.text(max_size=4), st.just(object()),
                 st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
                 st.complex_numbers(max_magnitude=2))
rows = st.lists(st.one_of(numbers, numbers, junk), min_size=0, max_size=5)
values = st.one_of(
    numbers, junk, rows,
    st.lists(rows, min_size=0, max_size=4),
    st.integers(0, 4).flatmap(lambda n: st.lists(
        st.lists(numbers, min_size=n, max_size=n), min_size=1, max_size=4)),
    st.builds(lambda shape, fill: np.full(shape, fill),
              st.lists(st.integers(0, 4), max_size=3), numbers),
)
envs = st.one_of(
    st.none(), st.integers(-4, 4), st.lists(st.integers(-1, 3), max_size=4),
    st.lists(st.booleans(), min_size=0, max_size=4).map(np.array),
    junk, st.floats(-2, 4),
)
names = st.one_of(st.sampled_from(["car", "bot", "box", "wall", "ghost"]), junk,
                  st.lists(st.text(max_size=2), max_size=2))


def check_setter(method, name, value, env):
    w = make_world()
    hash_before, epar_before = w.state_hash(), w.epar.copy()
    try:
        getattr(w, method)(name, value, env=env)
    except (ValueError, IndexError, KeyError) as exc:
        assert len(str(exc)) < 600
        assert w.state_hash() == hash_before
        assert w.epar.tobytes() == epar_before.tobytes()
    else:
        # Whatever was written is finite and in range, so a later step cannot blow up.
        for arr in (w.pos, w.ang, w.vel, w.omg, w.drv):
            assert np.all(np.isfinite(arr))
        movable = [w.index(n) for n in ("car", "bot", "box")]
        assert np.all(np.isfinite(w.epar[:, movable]))
        assert np.all(w.epar[:, movable][..., [EP_MASS, EP_INERTIA, EP_SCALE]] > 0)
        assert np.all(np.isfinite(w.epar[:, :, EP_FRICTION]))
        assert np.all(w.epar[:, :, EP_FRICTION] >= 0)
    finally:
        w.reset()  # every example starts from the scene's initial state


@given(st.sampled_from(SETTERS), names, values, envs)
def test_setters_succeed_or_fail_cleanly(method, name, value, env):
    check_setter(method, name, value, env)


@pytest.mark.slow
@SLOW
@given(st.sampled_from(SETTERS), names, values, envs)
def test_setters_succeed_or_fail_cleanly_slow(method, name, value, env):
    check_setter(method, name, value, env)
