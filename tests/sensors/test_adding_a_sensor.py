"""docs/adding_a_sensor.md builds a working sensor from its one code block: a module of its
own (no file of push_envs edited), registered on import, parsed from a scene, observed in a
task env, equal in a batch and single envs, drawn by render()."""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from push_envs import _numba_cache
from push_envs.core import obs_layout as L
from push_envs.physics import SceneError
from push_envs.physics import World
from push_envs.physics import sensor_registry
from push_envs.physics.layout import BF_BRAD
from push_envs.physics.layout import EP_SCALE
from push_envs.physics.safe_yaml import read_scene_yaml
from push_envs.tasks import spec

DOC = Path(__file__).resolve().parents[2] / "docs" / "adding_a_sensor.md"


@pytest.fixture(scope="module")
def nearest2d():
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S).group(1)
    # A folder of its own that outlives the session (in the kernel cache's), so numba finds
    # the sense function it compiled last time while the page's code is unchanged.
    folder = Path(_numba_cache.CACHE_DIR) / "doc_sensor"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "nearest2d.py"
    if not path.is_file() or path.read_text() != code:
        path.write_text(code)
    sys.path.insert(0, str(folder))
    try:
        import nearest2d

        yield nearest2d
    finally:
        sys.path.remove(str(folder))


def scene(**entry):
    raw = copy.deepcopy(read_scene_yaml(str(spec("PushBox-v0").scene_path())))
    raw["robot"][0]["sensors"] = [{"name": "contact2d"}, {"name": "nearest2d", **entry}]
    return raw


def reference(world, range_max):
    """The range from the world state, in plain Python: robot origin to the box's bounding
    circle (the only other movable body), clipped to [0, range_max]."""
    out = []
    sc = world.scene
    b = sc.index["box"]
    for e in range(world.num_envs):
        x, y = world.state("robot")[e, :2]
        cx, cy = world.com("box")[e]
        gap = float(np.hypot(cx - x, cy - y) - sc.bflt[b, BF_BRAD] * world.epar[e, b, EP_SCALE])
        out.append(min(range_max, max(gap, 0.0)))
    return np.array(out)


def test_it_registers_and_parses(nearest2d):
    assert sensor_registry.lookup("nearest2d") is nearest2d.Nearest2D
    assert "nearest2d" in sensor_registry.scene_names()
    w = World.from_config(scene(range_max=2.0))
    assert w.scene.spec.bodies[0].sensor_specs[1] == nearest2d.NearestSpec(2.0)
    with pytest.raises(SceneError, match=r"^<dict>: robot\[0\]\.sensors\[1\]\.range_max: "
                                         r"must be > 0"):
        World.from_config(scene(range_max=-1.0))
    with pytest.raises(SceneError, match=r"robot\[0\]\.sensors\[1\]: unknown key 'rnage_max'"):
        World.from_config(scene(rnage_max=1.0))


def test_it_is_observed_after_the_task_and_batch_equals_single(nearest2d):
    n = 6
    venv = gym.make_vec("PushBox-v0", num_envs=n, scene=scene(range_max=2.0))
    assert venv.observation_layout[-1].name == "nearest"
    k = L.offset(venv.observation_layout, venv.task.args, "nearest")
    assert k == gym.make_vec("PushBox-v0", num_envs=1).single_observation_space.shape[0]
    obs, _ = venv.reset(seed=9)
    single = gym.make("PushBox-v0", scene=scene(range_max=2.0))
    s_obs, _ = single.reset(seed=9 + 4)
    np.testing.assert_array_equal(s_obs, obs[4])
    rng = np.random.default_rng(0)
    values = []
    for _ in range(25):
        a = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
        obs, *_ = venv.step(a)
        np.testing.assert_array_equal(single.step(a[4])[0], obs[4])
        np.testing.assert_allclose(obs[:, k], reference(venv.world, 2.0) / 2.0, atol=1e-6)
        values.extend(obs[:, k])
    assert 0.0 < min(values) < max(values) <= 1.0  # the range changes as the bodies move
    ctx = venv.task.reading_context(venv)
    f = venv.observation_layout[-1]
    np.testing.assert_allclose(obs[:, k:k + 1], f.expect(ctx), atol=1e-6)


def test_render_draws_it(nearest2d):
    frames = []
    for raw in (scene(range_max=2.0), None):
        env = gym.make("PushBox-v0", render_mode="rgb_array", scene=raw)
        env.reset(seed=1)
        frames.append(env.render())
        env.close()
    assert np.any(frames[0] != frames[1], axis=2).sum() > 20
