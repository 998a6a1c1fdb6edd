"""Obstacle maps as IR-SIM reads them: images stretched over the world, Perlin generators,
``mdownsample``, IR-SIM's bundled map images, and the large ones."""

from __future__ import annotations

import hashlib
import time
import tracemalloc

import numpy as np
import pygame
import pytest

from push_envs.physics import SceneError
from push_envs.physics import World
from push_envs.physics import load_scene
from push_envs.physics.grid import count_rectangles
from push_envs.physics.limits import MAX_MAP_PIECES
from push_envs.physics.maps import perlin_grid


def png(path, occ):
    """Write occ[i, j] (i along x, j up) as a black-on-white PNG."""
    img = np.where(occ[:, ::-1, None], 0, 255).astype(np.uint8).repeat(3, axis=2)
    pygame.image.save(pygame.surfarray.make_surface(img), str(path))
    return path


def sha(occ):
    return hashlib.sha256(np.packbits(np.ascontiguousarray(occ)).tobytes()).hexdigest()


@pytest.fixture()
def small_map(tmp_path):
    occ = np.zeros((4, 2), bool)
    occ[0, 0] = occ[3, 1] = True
    return png(tmp_path / "m.png", occ), occ


def test_a_png_is_stretched_over_the_world_as_in_irsim(small_map):
    path, occ = small_map
    spec = load_scene({"world": {"width": 8, "height": 3, "offset": [1, -1],
                                 "obstacle_map": str(path)}})
    np.testing.assert_array_equal(spec.world.obstacle_map, occ)
    assert spec.world.cell == (2.0, 1.5)  # width / 4, height / 2: not square
    w = World.from_config({"world": {"width": 8, "height": 3, "offset": [1, -1],
                                     "obstacle_map": str(path)}})
    boxes = sorted(tuple(np.round(w.scene.sflt[k, 4:8], 12)) for k in range(len(w.scene.sflt)))
    assert boxes == [(1.0, -1.0, 3.0, 0.5), (7.0, 0.5, 9.0, 2.0)]


def test_map_resolution_keeps_push_envs_square_cells(small_map):
    path, _ = small_map
    spec = load_scene({"world": {"width": 8, "height": 3, "obstacle_map": str(path),
                                 "map_resolution": 0.25, "mdownsample": 2}})
    assert spec.world.cell == (0.5, 0.5)  # a kept cell stands for mdownsample cells


def test_mdownsample_keeps_every_mth_cell_as_irsim():
    occ = np.random.default_rng(1).random((9, 7)) > 0.5
    spec = load_scene({"world": {"width": 9, "height": 7, "obstacle_map": occ.tolist(),
                                 "mdownsample": 3}})
    np.testing.assert_array_equal(spec.world.obstacle_map, occ[::3, ::3])
    assert spec.world.cell == (3.0, 7 / 3)


@pytest.mark.parametrize("nx, ny, args, digest", [
    # IR-SIM 2.12's PerlinGridGenerator for the same arguments (measured): its grid > 50
    (200, 200, dict(complexity=0.12, fill=0.32, fractal=1, attenuation=0.5, seed=48),
     "1dda5ff26dbf57b4b0f1dc85a7455d796918fadc5ad90548f10c0823eae2b51a"),
    (300, 200, dict(complexity=0.08, fill=0.15, fractal=3, attenuation=0.7, seed=56),
     "732a2e8c5a2dedd6688da3c29efd78a5884ef31f88497d2ac0f7c2a1e1534982"),
])
def test_perlin_map_is_irsims_cell_for_cell(nx, ny, args, digest):
    occ = perlin_grid(nx, ny, **args)
    assert occ.shape == (nx, ny) and sha(occ) == digest
    assert occ.sum() == pytest.approx(args["fill"] * nx * ny, abs=1)


def test_perlin_without_a_seed_draws_from_the_scene_seed():
    world = {"width": 6, "height": 4,
             "obstacle_map": {"name": "perlin", "resolution": 0.2, "fill": 0.3}}
    a = load_scene({"world": world}, seed=3).world.obstacle_map
    b = load_scene({"world": world}, seed=3).world.obstacle_map
    c = load_scene({"world": world}, seed=4).world.obstacle_map
    assert a.shape == (30, 20) and np.array_equal(a, b) and not np.array_equal(a, c)
    seeded = dict(world, obstacle_map=dict(world["obstacle_map"], seed=11))
    assert np.array_equal(load_scene({"world": seeded}, seed=3).world.obstacle_map,
                          load_scene({"world": seeded}, seed=4).world.obstacle_map)


@pytest.mark.parametrize("raw, text", [
    ({"name": "perlin"}, "needs 'resolution'"),
    ({"name": "perln", "resolution": 0.1}, "unknown map generator 'perln' (did you mean "
                                           "'perlin'?)"),
    ({"name": "perlin", "resolution": 0.1, "fractal": 0}, "fractal: must be an integer"),
    ({"name": "image"}, "path: must be a PNG file path"),
    ({"name": "perlin", "resolution": 1e-4}, "cells, more than the limit"),
])
def test_bad_generators_name_the_key(raw, text):
    with pytest.raises(SceneError, match=r"^w\.yaml: world\.obstacle_map") as err:
        load_scene({"world": {"obstacle_map": raw}}, source="w.yaml")
    assert text in str(err.value)


def test_irsims_map_images_are_found_by_name(tmp_path):
    spec = load_scene({"world": {"width": 50, "height": 50, "obstacle_map": "cave.png",
                                 "mdownsample": 2}}, base_dir=tmp_path)
    assert spec.world.obstacle_map.shape == (250, 250) and spec.world.cell == (0.2, 0.2)
    with pytest.raises(SceneError, match="map image not found: .*nowhere.png.* bundled maps"):
        load_scene({"world": {"obstacle_map": "nowhere.png"}}, base_dir=tmp_path)


def test_hm3d_loads_as_irsims_world_and_the_full_map_is_refused():
    """grid_map_hm3d.yaml's map (775 x 770 px, mdownsample 2): 6,428 rectangles, under the
    limit. The full-resolution map needs 12,607 (its walls are diagonal lines two or three
    pixels thick, and a rectangle inside a 45-degree band two cells thick covers at most two
    cells): it is refused, naming mdownsample."""
    world = {"width": 80, "height": 80, "obstacle_map": "hm3d_2.png", "mdownsample": 2}
    tracemalloc.start()
    t0 = time.perf_counter()
    w = World.from_config({"world": world, "robot": {"kinematics": {"name": "acker"},
                                                     "state": [63, 10, 1.57, 0],
                                                     "shape": {"name": "rectangle",
                                                               "length": 4.6, "width": 1.6,
                                                               "wheelbase": 3}}})
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(w.scene.sint) == count_rectangles(w.scene.spec.world.obstacle_map) == 6428
    assert seconds < 60 and peak < 200 << 20  # docs/limits.md gives the measured figures
    with pytest.raises(SceneError, match=r"needs 12607 rectangles, more than the limit of "
                                         rf"{MAX_MAP_PIECES}.*mdownsample"):
        load_scene({"world": dict(world, mdownsample=1)})
