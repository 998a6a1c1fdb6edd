"""Hostile or careless inputs end in a clear error (naming the input and the reason) or in a
correct result, fast and without side effects (issue 11, physics/config half)."""

import ast
import copy
import dataclasses
import math
import os
import pathlib
import struct
import time
import warnings
import zlib

import numpy as np
import pytest
import shapely

import push_envs.physics.config as config_mod
import push_envs.physics.safe_yaml as safe_yaml_mod
from push_envs.physics import SceneError
from push_envs.physics import World
from push_envs.physics import load_scene
from push_envs.physics.decompose import MAX_VERTS
from push_envs.physics.decompose import convex_pieces
from push_envs.physics.decompose import try_merge
from push_envs.physics.errors import MAX_EXCERPT
from push_envs.physics.errors import short_repr
from push_envs.physics.grid import count_rectangles
from push_envs.physics.grid import grid_rectangles
from push_envs.physics.grid import load_grid
from push_envs.physics.limits import MAX_MAP_CELLS
from push_envs.physics.limits import MAX_MAP_PIECES
from push_envs.physics.limits import MAX_POLYGON_VERTS
from push_envs.physics.limits import MAX_SCENE_BYTES
from push_envs.physics.limits import MAX_YAML_NODES
from push_envs.physics.scene import compile_scene
from push_envs.physics.shapes import build_shape
from push_envs.tasks import spec

PHYSICS = pathlib.Path(config_mod.__file__).parent
ROOT = PHYSICS.parent.parent


def elapsed(fn, *args, **kwargs):
    """(exception raised by fn, CPU seconds it took: CPU time, so a loaded machine does not
    fail the bound; an expanded attack would take minutes, far beyond it)."""
    start = time.process_time()
    try:
        fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 (returned for the caller to check)
        return exc, time.process_time() - start
    return None, time.process_time() - start


# ------------------------------------------------------------------ 1. SceneError's module
def test_scene_error_lives_in_errors_and_is_re_exported():
    from push_envs.physics import errors
    from push_envs.physics.config import SceneError as from_config

    assert SceneError is from_config is errors.SceneError
    assert issubclass(SceneError, ValueError)


@pytest.mark.parametrize("module, forbidden", [("shapes", "config"), ("config", None)])
def test_shapes_does_not_import_config(module, forbidden):
    tree = ast.parse((PHYSICS / f"{module}.py").read_text())
    imported = set()
    for node in ast.walk(tree):  # lazy (function-level) imports included
        if isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").rsplit(".", 1)[-1])
    assert "errors" in imported
    if forbidden:
        assert forbidden not in imported


def test_short_repr_bounds_length_and_work():
    nested = [1] * 9
    for _ in range(12):  # 9**13 elements if expanded
        nested = [nested] * 9
    start = time.process_time()
    text = short_repr(nested)
    assert time.process_time() - start < 0.5
    assert len(text) <= MAX_EXCERPT and text.startswith("[[[")
    assert short_repr("x" * 10_000).endswith("...") and len(short_repr("x" * 10_000)) == 80
    assert len(short_repr(10 ** 10_000)) <= 80  # repr() itself refuses such an int


# ------------------------------------------------------------------ 2. YAML alias bombs
def bomb_text(levels, key="width"):
    """Alias bomb as ``world.<key>``: the anchors are defined in a list before the use."""
    body = ['[&a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for k in range(1, levels + 1):
        body.append(f"&a{k} [{', '.join([f'*a{k - 1}'] * 9)}]")
    return f"world:\n  {key}: {', '.join(body)}]\n"


@pytest.mark.parametrize("levels", [8, 9])
@pytest.mark.parametrize("key", ["width", "obstacle_map"])
def test_alias_bomb_is_refused_fast_with_a_short_message(tmp_path, levels, key):
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb_text(levels, key))
    assert path.stat().st_size < 1500  # the whole attack is ~1.4 KB
    exc, seconds = elapsed(load_scene, path)
    assert isinstance(exc, SceneError)
    assert seconds < 5.0
    message = str(exc)
    assert message.startswith(f"{path}: ")
    assert f"more than {MAX_YAML_NODES} YAML nodes" in message
    assert len(message) < len(str(path)) + 200


def test_aliases_within_budget_give_the_correct_scene(tmp_path):
    path = tmp_path / "shared.yaml"
    path.write_text(
        "obstacle:\n"
        "  - {name: a, shape: &box {name: rectangle, length: 0.4, width: 0.2}, state: [0, 0]}\n"
        "  - {name: b, shape: *box, state: [1, 0]}\n")
    a, b = load_scene(path).bodies
    assert a.shape == b.shape == {"name": "rectangle", "length": 0.4, "width": 0.2}
    assert a.shape is not b.shape  # each spec owns its copy


def test_recursive_alias_and_deep_nesting_are_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("world: &w {width: *w}\n")
    with pytest.raises(SceneError, match=r"loop\.yaml: an alias refers to its own"):
        load_scene(path)
    deep = tmp_path / "deep.yaml"
    deep.write_text("world: {width: " + "[" * 5000 + "]" * 5000 + "}\n")
    exc, seconds = elapsed(load_scene, deep)
    assert isinstance(exc, SceneError) and seconds < 5.0
    assert "nested more than 100 levels" in str(exc)


def test_merge_key_bomb_is_refused(tmp_path):
    lines = ["a0: &a0 {k0: 1, k1: 2, k2: 3, k3: 4, k4: 5, k5: 6, k6: 7, k7: 8, k8: 9}"]
    for k in range(1, 9):
        lines.append(f"a{k}: &a{k} {{<<: [{', '.join([f'*a{k - 1}'] * 9)}]}}")
    path = tmp_path / "merge.yaml"
    path.write_text("world:\n  friction:\n" + "".join(f"    {x}\n" for x in lines))
    exc, seconds = elapsed(load_scene, path)
    assert isinstance(exc, SceneError) and seconds < 5.0
    assert "YAML nodes" in str(exc)


def test_error_messages_quote_short_excerpts():
    huge = list(range(100_000))
    for path, value in ((["world", "width"], huge), (["robot", 0, "name"], [["n" * 10_000] * 100]),
                        (["robot", 0, "state"], huge), (["robot", 0, "sensors"], "s" * 9999)):
        scene = {"robot": [{"name": "r"}]}
        node = scene
        for key in path[:-1]:
            node = node.setdefault(key, {}) if isinstance(key, str) else node[key]
        node[path[-1]] = value
        with pytest.raises(SceneError) as err:
            load_scene(scene)
        assert len(str(err.value)) < 200, str(err.value)[:300]


# ------------------------------------------------------------------ 3. file size
def test_scene_file_over_the_size_limit_is_refused_before_parsing(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(safe_yaml_mod.yaml, "load", lambda *a, **k: calls.append(1))
    path = tmp_path / "big.yaml"
    with open(path, "w") as handle:
        handle.write("world: {}\n" + "#" * (MAX_SCENE_BYTES - 10) + "\n")
    assert path.stat().st_size == MAX_SCENE_BYTES + 1
    with pytest.raises(SceneError, match=rf"big\.yaml: .*limit of {MAX_SCENE_BYTES} bytes"):
        load_scene(path)
    assert calls == []


def test_scene_file_at_the_size_limit_loads(tmp_path):
    path = tmp_path / "edge.yaml"
    text = "world: {width: 3}\n#"
    path.write_text(text + "x" * (MAX_SCENE_BYTES - len(text)))
    assert path.stat().st_size == MAX_SCENE_BYTES
    assert load_scene(path).world.width == 3.0


def test_non_utf8_scene_file(tmp_path):
    path = tmp_path / "latin.yaml"
    path.write_bytes("world: {width: 3}  # caf\xe9\n".encode("latin-1"))
    with pytest.raises(SceneError, match=r"latin\.yaml: scene file is not UTF-8"):
        load_scene(path)


# ------------------------------------------------------------------ 4. obstacle-map images
def png_bytes(width, height, bit_depth, compressed_rows):
    """A grayscale PNG file's bytes around already compressed (filter byte + row) data."""
    def chunk(kind, payload):
        return (struct.pack(">I", len(payload)) + kind + payload
                + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF))

    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", compressed_rows)
            + chunk(b"IEND", b""))


def write_png(path, rows):
    """An 8-bit grayscale PNG from rows of pixel values (top row first), without pygame."""
    raw = b"".join(b"\x00" + bytes(row) for row in rows)
    path.write_bytes(png_bytes(len(rows[0]), len(rows), 8, zlib.compress(raw)))


def png_bomb(path, side=20_000):
    """A real side x side 1-bit PNG, compressed to a few hundred KB, streamed row by row."""
    comp = zlib.compressobj(9)
    row = b"\x00" + b"\xff" * (side // 8)
    data = b"".join(comp.compress(row) for _ in range(side)) + comp.flush()
    path.write_bytes(png_bytes(side, side, 1, data))


def test_png_bomb_is_refused_from_its_header(tmp_path):
    png_bomb(tmp_path / "bomb.png")
    assert (tmp_path / "bomb.png").stat().st_size < 1_000_000
    exc, seconds = elapsed(load_grid, "bomb.png", "s.yaml: world.obstacle_map", str(tmp_path))
    assert isinstance(exc, SceneError) and seconds < 0.5
    assert str(exc).startswith("s.yaml: world.obstacle_map: map image 20000 x 20000")
    assert f"limit of {MAX_MAP_CELLS}" in str(exc)


def test_png_is_decoded_exactly_and_leaves_the_environment_alone(tmp_path, monkeypatch):
    monkeypatch.delenv("SDL_VIDEODRIVER", raising=False)
    # 3 columns x 2 rows, top row first: black, white, 30 % gray / white, 55 % gray, black.
    write_png(tmp_path / "m.png", [[0, 255, 179], [255, 115, 0]])
    occ = load_grid("m.png", "w", str(tmp_path))
    assert "SDL_VIDEODRIVER" not in os.environ
    # occ[i, j]: i along x (columns), j up (bottom row is j = 0); dark (< 50 %) occupied.
    np.testing.assert_array_equal(occ, [[False, True], [True, False], [True, False]])


@pytest.mark.parametrize("content, text", [
    (b"BM" + b"\x00" * 60, "is not a PNG file"),
    (b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIHDR" + struct.pack(">II", 4, 4) + b"junk",
     "cannot decode map image"),
])
def test_bad_map_images(tmp_path, content, text):
    (tmp_path / "x.png").write_bytes(content)
    with pytest.raises(SceneError, match=text):
        load_grid("x.png", "w", str(tmp_path))


@pytest.mark.parametrize("grid", [
    np.zeros((2001, 2000), bool),
    [[0] * 2000] * 2001,  # 4 M entries, one row object shared
    [[0]] * (MAX_MAP_CELLS + 1),
])
def test_inline_map_over_the_cell_limit(grid):
    exc, seconds = elapsed(load_grid, grid, "w", None)
    assert isinstance(exc, SceneError) and seconds < 0.5
    assert f"limit of {MAX_MAP_CELLS}" in str(exc)


@pytest.mark.parametrize("grid, text", [
    ([[True, 0], [0, 100]], "mixes bools and numbers"),
    ([[0, [1, 2]], [0, 0]], "numbers 0-100 or bools"),
    ([[0, "a"]], "numbers 0-100 or bools"),
    ("", "map image not found"),
    (5, "a PNG path or a 2-D list"),
])
def test_inline_map_bad_values(grid, text):
    with pytest.raises(SceneError, match=text):
        load_grid(grid, "w", None)


def checkerboard(n):
    return (np.add.outer(np.arange(n), np.arange(n)) % 2).astype(bool)


def test_map_needing_too_many_rectangles_is_refused_before_building():
    exc, seconds = elapsed(load_grid, checkerboard(150), "w", None)  # 11,250 rectangles
    assert isinstance(exc, SceneError) and seconds < 0.5
    assert str(exc) == (f"w: the map needs 11250 rectangles, more than the limit of "
                        f"{MAX_MAP_PIECES} (MAX_MAP_PIECES); use coarser or simpler maps")


@pytest.mark.parametrize("seed", range(5))
def test_rectangle_count_matches_the_rectangles_built(seed):
    rng = np.random.default_rng(seed)
    occ = rng.uniform(size=(int(rng.integers(1, 40)), int(rng.integers(1, 40)))) < 0.5
    occ[:, 5:9] = occ[:, 5:6]  # runs repeated over rows merge into one rectangle
    assert count_rectangles(occ) == len(grid_rectangles(occ, 0.1))


def test_large_map_compiles_fast_and_still_checks_spawns(scn):
    occ = checkerboard(140)  # 9,800 one-cell rectangles touching at their corners
    occ[40:44, 40:44] = False  # a free hole at x, y in [4.0, 4.4] m
    robot = scn.robot("robot", 4.2, 4.2, radius=0.15)
    # Untimed warm-up on a small free map: on a fresh cache the first World compiles the
    # engine's kernels, which is not what this bound is about.
    World.from_config({"world": {"obstacle_map": np.zeros((10, 10), bool),
                                 "map_resolution": 0.1},
                       "robot": [scn.robot("robot", 0.5, 0.5, radius=0.15)]})
    # CPU time of this process: the bound is about the algorithm, not about what else the
    # (shared, 2-core) machine runs meanwhile.
    start = time.process_time()
    w = World.from_config({"world": {"obstacle_map": occ, "map_resolution": 0.1},
                           "robot": [robot]})
    assert time.process_time() - start < 10.0  # the whole-map union took minutes
    assert len(w.scene.sint) == 9800 - 8
    robot["state"] = [4.1, 4.2, 0.0]  # now 0.05 m into the cells left of the hole
    with pytest.raises(SceneError, match=r"robot\.state: spawn overlaps 'map'"):
        World.from_config({"world": {"obstacle_map": occ, "map_resolution": 0.1},
                           "robot": [robot]})


# ------------------------------------------------------------------ 5. polygons
def star(n_points, r_out=1.0, r_in=0.4):
    angles = np.linspace(0.0, 2.0 * math.pi, 2 * n_points, endpoint=False)
    radii = np.where(np.arange(2 * n_points) % 2 == 0, r_out, r_in)
    return np.stack([radii * np.cos(angles), radii * np.sin(angles)], axis=1)


def test_1000_vertex_star_builds_fast_and_exactly():
    verts = star(500)
    start = time.process_time()  # CPU time: other processes on the machine do not count
    info = build_shape({"name": "polygon", "vertices": verts.tolist()}, "s")
    assert time.process_time() - start < 1.0
    exact = shapely.Polygon(verts)
    union = shapely.union_all([shapely.Polygon(p.verts) for p in info.pieces])
    assert info.area == pytest.approx(exact.area, rel=1e-12)
    assert sum(shapely.Polygon(p.verts).area for p in info.pieces) == pytest.approx(exact.area)
    assert union.symmetric_difference(exact).area < 1e-9
    for piece in info.pieces:
        assert 3 <= len(piece.verts) <= MAX_VERTS
        assert shapely.Polygon(piece.verts).convex_hull.area == pytest.approx(
            shapely.Polygon(piece.verts).area, rel=1e-9)
    # Every spike is its own convex piece: 500 spikes cannot merge into fewer pieces.
    assert 500 <= len(info.pieces) < 1000


@pytest.mark.parametrize("count", [MAX_POLYGON_VERTS + 1, 30_000])
def test_vertex_limit_checked_before_any_work(count):
    verts = star(count // 2 + 1)[:count].tolist()
    for name in ("polygon", "linestring"):
        exc, seconds = elapsed(build_shape, {"name": name, "vertices": verts}, "f: o.shape")
        assert isinstance(exc, SceneError) and seconds < 0.1
        assert str(exc) == (f"f: o.shape.vertices: {count} points, more than the limit of "
                            f"{MAX_POLYGON_VERTS} (MAX_POLYGON_VERTS)")


def test_push_t_pieces_are_unchanged():
    """The golden rollout hashes depend on these pieces (and their order)."""
    (tee,) = [b for b in load_scene(spec("PushT-v0").scene_path()).bodies if b.name == "tee"]
    pieces = [p.verts.tolist() for p in tee.shape_info("t").pieces]
    assert pieces == [[[0.3, 0.15], [-0.3, 0.15], [-0.3, 0.0], [0.3, 0.0]],
                      [[-0.075, -0.45], [0.075, -0.45], [0.075, 0.0], [-0.075, 0.0]]]


def reference_merge(pieces):
    """The original greedy merge (about n³): merge the first mergeable pair, rescan."""
    pieces = list(pieces)
    changed = True
    while changed:
        changed = False
        for i in range(len(pieces)):
            for j in range(i + 1, len(pieces)):
                merged = try_merge(pieces[i], pieces[j])
                if merged is not None:
                    pieces[i] = merged
                    del pieces[j]
                    changed = True
                    break
            if changed:
                break
    return pieces


def random_polygon(seed):
    """A simple polygon: star-shaped from random radii (even seeds), or a staircase with
    right angles and collinear vertices on a coarse grid (odd seeds)."""
    rng = np.random.default_rng(seed)
    if seed % 2 == 0:
        n = int(rng.integers(8, 40))
        angles = np.sort(rng.choice(np.linspace(0, 2 * math.pi, 360, endpoint=False), n,
                                    replace=False))
        radii = rng.uniform(0.3, 1.0, n)
        return np.stack([radii * np.cos(angles), radii * np.sin(angles)], axis=1)
    steps = int(rng.integers(2, 8))
    points, x, y = [[0.0, 0.0]], 0.0, 0.0
    for _ in range(steps):
        dx, dy = rng.integers(1, 4, size=2) * 0.125
        points += [[x + dx / 2, y], [x + dx, y]]  # a collinear midpoint on every run
        x += dx
        points.append([x, y + dy])
        y += dy
    points += [[x / 2, y], [0.0, y]]
    return np.array(points)


@pytest.mark.parametrize("seed", range(8))
def test_merge_matches_the_original_greedy_order(seed):
    from push_envs.physics.decompose import triangulate
    from push_envs.physics.shapes import _normalise_polygon

    verts = _normalise_polygon(random_polygon(seed), "p")
    expected = reference_merge(triangulate(verts))
    got = convex_pieces(verts)
    assert len(got) == len(expected) >= 2
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------ 6. build once
def two_body_scene(scn):
    return scn.scene([scn.robot("robot", 0.0, 0.0)],
                     [scn.polygon("tri", [(0, 0), (0.3, 0), (0, 0.3)], (1.0, 0.0, 0.0), mass=1.0),
                      scn.box("box", -1.0, 0.0, mass=1.0)])


def test_each_shape_is_built_once(scn, monkeypatch):
    calls = []
    real = config_mod.build_shape

    def counting(spec, where):
        calls.append(where)
        return real(spec, where)

    monkeypatch.setattr(config_mod, "build_shape", counting)
    w = World.from_config(two_body_scene(scn))
    assert len(calls) == 3 and w.names == ["robot", "tri", "box"]
    # A replaced shape is rebuilt (and used) by compile_scene.
    spec = load_scene(two_body_scene(scn))
    box = spec.bodies[2]
    bigger = dataclasses.replace(box, shape={"name": "rectangle", "length": 0.8, "width": 0.8})
    scene = compile_scene(dataclasses.replace(spec, bodies=spec.bodies[:2] + (bigger,)))
    assert scene.shapes[2].area == pytest.approx(0.64)


def test_yaml_is_parsed_once(monkeypatch):
    calls = []
    real = safe_yaml_mod.read_scene_yaml

    def counting(path):
        calls.append(path)
        return real(path)

    monkeypatch.setattr(config_mod, "read_scene_yaml", counting)
    World.from_config(spec("PushBox-v0").scene_path())
    assert len(calls) == 1


def test_load_scene_source_and_base_dir_for_an_edited_dict(tmp_path):
    write_png(tmp_path / "map.png", [[0, 255], [255, 255]])
    raw = {"world": {"obstacle_map": "map.png", "map_resolution": 0.5}}
    spec = load_scene(raw, source="orig.yaml", base_dir=tmp_path)
    assert spec.source == "orig.yaml" and spec.base_dir == str(tmp_path)
    np.testing.assert_array_equal(spec.world.obstacle_map, [[False, True], [False, False]])
    raw["world"]["friction"] = -1
    with pytest.raises(SceneError, match=r"^orig\.yaml: world\.friction: must be >= 0"):
        load_scene(raw, source="orig.yaml", base_dir=tmp_path)
    with pytest.raises(SceneError, match=r"^orig\.yaml: world\.obstacle_map: map image not"):
        load_scene({"world": {"obstacle_map": "map.png"}}, source="orig.yaml",
                   base_dir=tmp_path / "elsewhere")
    path = tmp_path / "s.yaml"
    path.write_text("world: {friction: -2}\n")
    with pytest.raises(SceneError, match=r"^shown\.yaml: world\.friction"):
        load_scene(path, source="shown.yaml")


# ------------------------------------------------------------------ 7. World setters
def setter_world(scn):
    return World.from_config(scn.scene(
        [scn.robot("car", 0.0, 0.0, kin={"name": "acker", "wheelbase": 0.3}),
         scn.robot("bot", 0.0, 2.0)],
        [scn.box("box", 2.0, 0.0, mass=1.0), scn.wall("wall", -3.0, 0.0)]), num_envs=3)


def snapshot(w):
    return w.state_hash(), w.epar.copy()


BAD_CALLS = [
    ("set_omega", "box", np.nan, None), ("set_omega", "box", np.inf, None),
    ("set_omega", "box", [1.0, 2.0], None), ("set_omega", "box", True, None),
    ("set_omega", "box", "1", None), ("set_omega", "box", None, None),
    ("set_drive_state", "bot", [np.nan, 0.0], None), ("set_drive_state", "bot", [1.0], None),
    ("set_drive_state", "bot", [[1.0, 0.0]] * 2, None), ("set_drive_state", "box", [1, 0], None),
    ("set_state", "box", [1.0, 2.0, 0.0, 0.3], None), ("set_state", "box", [1.0, 2.0], None),
    ("set_state", "box", [1e300, 0.0, 0.0], None), ("set_state", "box", [[1, 2, 3]] * 2, None),
    ("set_state", "box", [[1, 2, 3]] * 3, [0, 1]), ("set_state", "box", [1, 2, 3], 3),
    ("set_state", "box", [1, 2, 3], -1), ("set_state", "box", [1, 2, 3], 1.0),
    ("set_state", "box", [1, 2, 3], "0"), ("set_state", "box", [1, 2, 3], [True, False]),
    ("set_state", "box", [True, 2, 3], None), ("set_state", "car", [0, 0, 0, np.inf], None),
    ("set_state", "wall", [0, 0, 0], None), ("set_state", "ghost", [0, 0, 0], None),
    ("set_state", ["box"], [0, 0, 0], None),
    ("set_velocity", "box", [1.0, np.nan], None), ("set_velocity", "bot", [1.0, 0.0], None),
    ("set_velocity", "box", [[1.0, 0.0]] * 2, None),
    ("set_mass", "box", 0.0, None), ("set_mass", "box", [1.0, -1.0, 1.0], None),
    ("set_mass", "box", np.inf, None), ("set_mass", "box", [1.0, 2.0], None),
    ("set_mass", "box", False, None), ("set_mass", "wall", 1.0, None),
    ("set_friction", "box", -0.1, None), ("set_friction", "box", np.nan, None),
    ("set_friction", "box", "0.5", None), ("set_friction", "box", [0.1, 0.2], [0]),
    ("set_scale", "box", 0.0, None), ("set_scale", "box", 1e9, None),
    ("set_scale", "box", [1.0, np.inf, 1.0], None), ("set_scale", "box", [[1.0]] * 3, None),
]


@pytest.mark.parametrize("method, name, value, env", BAD_CALLS)
def test_failing_setter_leaves_the_world_unchanged(scn, method, name, value, env):
    w = setter_world(scn)
    w.set_state("box", [[2.0, 0.0, 0.1], [2.0, 0.5, 0.2], [2.0, 1.0, 0.3]])
    w.set_mass("box", [1.0, 2.0, 3.0])
    before_hash, before_epar = snapshot(w)
    with pytest.raises((ValueError, IndexError, KeyError)) as err:
        getattr(w, method)(name, value, env=env)
    assert len(str(err.value)) < 400
    after_hash, after_epar = snapshot(w)
    assert after_hash == before_hash
    assert after_epar.tobytes() == before_epar.tobytes()


def test_setters_broadcast_over_the_selected_envs(scn):
    w = setter_world(scn)
    w.set_omega("box", [0.1, 0.2], env=[0, 2])
    np.testing.assert_array_equal(w.omega("box"), [0.1, 0.0, 0.2])
    w.set_omega("box", 0.5, env=np.array([False, True, False]))
    np.testing.assert_array_equal(w.omega("box"), [0.1, 0.5, 0.2])
    w.set_drive_state("car", [0.3, 0.1], env=1)
    np.testing.assert_array_equal(w.drive_state("car")[1], [0.3, 0.1])
    w.set_state("car", [1.0, 1.0, 0.0, 0.2])
    np.testing.assert_array_equal(w.state("car")[:, 3], [0.2, 0.2, 0.2])
    w.set_mass("box", [2.0, 4.0, 8.0])
    np.testing.assert_allclose(w.inertia("box") / w.mass("box"), w.inertia("box")[0] / 2.0)
    w.set_scale("box", 2.0, env=0)
    assert w.inertia("box")[0] == pytest.approx(4.0 * w.inertia("box")[1] / 2.0)
    w.set_friction("wall", [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(w.epar[:, w.index("wall"), 2], [0.1, 0.2, 0.3])
    before = w.state_hash()
    w.set_omega("box", [], env=[])  # an empty selection is a no-op
    assert w.state_hash() == before


def test_nan_omega_no_longer_reaches_the_contacts(scn):
    w = setter_world(scn)
    with pytest.raises(ValueError, match=r"World\.set_omega: value for 'box' has NaN"):
        w.set_omega("box", math.nan)
    w.step()
    assert np.all(np.isfinite(w.pos)) and np.all(np.isfinite(w.ctf))


# ------------------------------------------------------------------ 8. degenerate sizes
@pytest.mark.parametrize("path, value, text", [
    (["obstacle", 0, "shape"], {"name": "rectangle", "length": 1e-300, "width": 0.3},
     r"shape\.length: must be at least 0\.0001 m"),
    (["obstacle", 0, "shape"], {"name": "rectangle", "length": 1e5, "width": 0.3},
     r"shape\.length: must be at most 10000 m"),
    (["obstacle", 0, "shape"], {"name": "circle", "radius": 1e-9},
     r"shape\.radius: must be at least 0\.0001 m"),
    (["obstacle", 0, "shape"], {"name": "circle", "radius": 10 ** 400},
     r"shape\.radius: must be at most 10000 m"),
    (["obstacle", 0, "shape"], {"name": "polygon", "vertices": [[0, 0], [1, 0], [0, 1e-7]]},
     r"vertices: edge 2 is 1e-07 m long, shorter than the minimum size of 0\.0001 m"),
    (["obstacle", 0, "shape"], {"name": "polygon",
                                "vertices": [[0, 0], [1, 0], [2, 1e-5], [1, 1e-5]]},
     r"vertices: polygon is .* m thin, less than the minimum size of 0\.0001 m"),
    (["obstacle", 0, "shape"], {"name": "linestring", "vertices": [[0, 0], [1e-6, 0]]},
     r"vertices: segment 0 is 1e-06 m long, shorter than the minimum"),
    (["obstacle", 0, "shape"], {"name": "polygon", "vertices": [[0, 0], [1, 0], [0, 2e4]]},
     r"vertices\[2\]\[1\]: must be at most 10000 m in magnitude"),
    (["world", "width"], 1e300, r"world\.width: must be at most 10000 m"),
    (["world", "map_resolution"], 1e-9, r"world\.map_resolution: must be at least 0\.0001 m"),
    (["world", "offset"], [0, -1e5], r"world\.offset\[1\]: must be at most 10000 m"),
    (["obstacle", 0, "state"], [1e300, 0, 0], r"obstacle\[0\]\.state\[0\]: must be at most"),
    (["obstacle", 0, "mass"], 1e-300, r"obstacle\[0\]\.mass: must be at least 1e-06 kg"),
    (["obstacle", 0, "mass"], 1e300, r"obstacle\[0\]\.mass: must be at most 1e\+06"),
    (["world", "step_time"], 1e-300, r"world\.step_time: must be at least 1e-06 s"),
    (["obstacle", 0, "friction"], 10 ** 400, r"obstacle\[0\]\.friction: must be at most"),
])
def test_degenerate_and_huge_sizes_are_refused(path, value, text):
    scene = {"world": {}, "obstacle": [{"shape": {"name": "circle", "radius": 0.1}}]}
    node = scene
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide-by-zero or overflow on the way
        with pytest.raises(SceneError, match=r"^<dict>: ") as err:
            load_scene(scene)
    assert err.match(text)
    assert len(str(err.value)) < 200


def test_sizes_at_the_limits_are_accepted():
    spec = load_scene({"world": {"width": 1e4, "map_resolution": 1e-4},
                       "obstacle": [{"shape": {"name": "rectangle", "length": 1e-4,
                                               "width": 1e4}, "state": [-1e4, 1e4, 0]}]})
    info = spec.bodies[0].shape_info("x")
    assert info.min_half_thickness == pytest.approx(5e-5)
    assert math.isfinite(info.gyration_sq)


# ------------------------------------------------------------------ 9. clear type errors
@pytest.mark.parametrize("source", [[1, 2], 3, None, 1.5])
def test_scene_of_the_wrong_type(source):
    with pytest.raises(TypeError, match=r"World\.from_config: a scene is a path .* or a "
                                        r"mapping, got " + type(source).__name__):
        World.from_config(source)
    with pytest.raises(TypeError, match=r"load_scene: a scene is a path"):
        load_scene(source)


def test_dict_and_path_scenes_still_work(scn):
    assert World.from_config(two_body_scene(scn)).names == ["robot", "tri", "box"]
    assert World.from_config(str(spec("PushT-v0").scene_path())).names[:2] == ["robot", "tee"]
    assert load_scene(os.fsencode(spec("PushBox-v0").scene_path())).bodies[0].name == "robot"


def test_input_dict_is_not_shared_with_the_spec(scn):
    raw = two_body_scene(scn)
    original = copy.deepcopy(raw)
    spec = load_scene(raw)
    raw["obstacle"][0]["shape"]["vertices"][0][0] = 99.0
    assert spec.bodies[1].shape == original["obstacle"][0]["shape"]
