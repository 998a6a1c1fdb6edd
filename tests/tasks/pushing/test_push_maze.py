"""PushMaze-v1: the floor plans, collision-free and reachable spawns, the geodesic distance,
a user's own map, bad arguments, and the scripted policy."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from push_envs.experts import expert
from push_envs.physics import SceneError
from push_envs.physics.grid import load_grid
from push_envs.tasks import spec
from push_envs.tasks.pushing.push_maze import FAR
from push_envs.tasks.pushing.push_maze import MEMZ
from push_envs.tasks.pushing.push_maze import flood
from push_envs.tasks.pushing.push_maze import geodesic
from push_envs.tasks.pushing.push_maze.floor_plans import LAYOUTS
from push_envs.tasks.pushing.push_maze.floor_plans import encode_png
from push_envs.tasks.pushing.push_maze.floor_plans import plan_map
from push_envs.tasks.pushing.push_maze.floor_plans import png_bytes

BOX_R = 0.15 * np.sqrt(2)  # bounding radius of the 0.3 m box [m]


@pytest.fixture(scope="module")
def venv():
    env = gym.make_vec("PushMaze-v1", num_envs=400)
    env.reset(seed=9)
    yield env
    env.close()


def _wall_distance(occ, res, xy):
    """Distance [m] from each point (E, 2) to the nearest occupied cell (brute force)."""
    cells = np.argwhere(occ)
    lo = cells * res
    d = np.maximum(np.maximum(lo[None] - xy[:, None], xy[:, None] - (lo[None] + res)), 0.0)
    return np.sqrt((d ** 2).sum(-1)).min(1)


def test_shipped_map_is_the_floor_plans():
    occ = load_grid(str(spec("PushMaze-v1").folder() / "maze.png"), "test", None)
    assert occ.shape == (160, 80) and np.array_equal(occ, plan_map())
    assert (spec("PushMaze-v1").folder() / "maze.png").read_bytes() == png_bytes(plan_map())
    assert len(LAYOUTS) == 8


def test_every_layout_is_drawn_and_spawns_are_clear_and_reachable(venv):
    w = venv.world
    t = venv.task_arrays
    m = venv.task.map_info
    assert len(m.tiles) == 8
    layouts = t.mem[:, MEMZ.tile].astype(int)
    assert set(layouts) == set(range(8))
    box, robot, goal = w.com("box"), w.com("robot"), t.goal[:, :2]
    # The box's bounding circle keeps wall_margin (0.3 m) off every wall, the robot its
    # radius; the box starts >= 1.5 m from the goal, the robot clear of the box.
    assert _wall_distance(m.occ, m.res, box).min() >= BOX_R + 0.3 - 1e-9
    assert _wall_distance(m.occ, m.res, goal).min() >= BOX_R + 0.3 - 1e-9
    assert _wall_distance(m.occ, m.res, robot).min() >= 0.15 + 0.05 - 1e-9
    assert np.linalg.norm(box - goal, axis=1).min() >= 1.5 - 1e-9
    assert np.linalg.norm(box - robot, axis=1).min() >= 0.15 + BOX_R + 0.05 - 1e-9
    # Each stays inside its own layout's 4 m x 4 m tile.
    for xy in (box, robot, goal):
        tile = (xy[:, 0] // 4.0).astype(int) + 4 * (xy[:, 1] // 4.0).astype(int)
        assert np.array_equal(tile, layouts)
    # Reachable: the box starts at a finite geodesic distance from its goal.
    _, info = venv.reset(seed=9)
    assert np.all(info["path_distance"] < 100.0) and np.all(info["path_distance"] > 1.5 - 1e-9)
    assert np.all(info["path_distance"] >= info["box_to_goal"] - 1e-9)


def _site(m, x, y):
    """Index of the goal site whose cell centre is (x, y) [m]."""
    ny = m.occ.shape[1]
    cells = np.stack([(m.sites // ny + 0.5) * m.res, (m.sites % ny + 0.5) * m.res], 1)
    return int(np.flatnonzero(np.all(np.abs(cells - [x, y]) < 1e-9, axis=1))[0])


def test_geodesic_distance_goes_through_the_doorway(venv):
    # Layout 0: two rooms split by the wall x in [2.0, 2.1] m, doorway y in [1.6, 2.4] m; the
    # box's centre fits through it for y in [1.81, 2.19] m. Goal site at (3.05, 1.85).
    t, m = venv.task_arrays, venv.task.map_info
    site = _site(m, 3.05, 1.85)

    def geo(x, y):
        return geodesic(t.ip, t.fp, 0, site, 3.05, 1.85, x, y)

    d, dx, dy = geo(1.05, 1.85)  # straight through the doorway
    assert d == pytest.approx(2.0, abs=1e-9) and (dx, dy) == pytest.approx((1.0, 0.0))
    # From (1.05, 0.65) the straight line is blocked: the centre must pass over both corners
    # of the wall's end with the bounding radius to spare.
    y = 1.6 + BOX_R
    via = np.hypot(2.0 - 1.05, y - 0.65) + 0.1 + np.hypot(3.05 - 2.1, 1.85 - y)
    d, dx, dy = geo(1.05, 0.65)
    assert via - 0.01 < d < 1.08 * via  # 8-connected cells overestimate by at most 8 %
    assert dy > 0.5  # the path leads up toward the doorway first
    assert geo(3.05, 1.85)[0] == pytest.approx(0.0, abs=1e-12)
    # A cell inside the wall is not reachable.
    tnx = 40
    field = m.fields[site].reshape(tnx, tnx)
    assert field[20, 5] == FAR and field[20, 20] < FAR


def _user_scene(tmp_path):
    """A user's own 3 m x 3 m map (one wall, a 0.8 m doorway) as a scene file; returns its
    path and the occupancy."""
    occ = np.zeros((30, 30), bool)
    occ[0, :] = occ[-1, :] = occ[:, 0] = occ[:, -1] = True
    occ[15, :12] = occ[15, 20:] = True
    (tmp_path / "mine.png").write_bytes(png_bytes(occ))
    text = spec("PushMaze-v1").scene_path().read_text()
    text = text.replace("obstacle_map: maze.png", "obstacle_map: mine.png")
    text = text.replace("width: 16.0", "width: 3.0").replace("height: 8.0", "height: 3.0")
    (tmp_path / "mine.yaml").write_text(text.replace("[1.0, 2.0, 0.0]", "[1.0, 1.6, 0.0]"))
    return str(tmp_path / "mine.yaml"), occ


def test_a_users_own_map_works_through_scene(tmp_path):
    scene, _ = _user_scene(tmp_path)
    env = gym.make("PushMaze-v1", scene=scene)
    obs, info = env.reset(seed=0)
    assert info["layout"] == 0 and obs.shape == env.observation_space.shape
    assert len(env.unwrapped.core.task.map_info.tiles) == 1
    for _ in range(20):
        obs, *_ = env.step(env.action_space.sample())
    assert env.observation_space.contains(obs)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"layouts": (3, 2)}, "layouts.*divide"),
    ({"layouts": "4x2"}, "layouts"),
    ({"patch_size": 4}, "patch_size.*odd"),
    ({"patch_resolution": 0.0}, "patch_resolution"),
    ({"box_size_range": (1.0, 1.5)}, "box_size_range"),
    ({"wall_margin": 1.5}, "no layout"),
])
def test_bad_arguments_name_themselves(kwargs, match):
    with pytest.raises((ValueError, SceneError), match=match):
        gym.make("PushMaze-v1", **kwargs)


def test_scene_without_a_map_is_refused():
    with pytest.raises(SceneError, match="push_box/scene.yaml.*obstacle_map"):
        gym.make("PushMaze-v1", scene=str(spec("PushBox-v0").scene_path()))


def test_scripted_policy_pushes_through_doorways():
    env = gym.make("PushMaze-v1")
    policy = expert("PushMaze-v1", "diff")
    wins, layouts = 0, set()
    for seed in range(12):
        obs, info = env.reset(seed=seed)
        layouts.add(info["layout"])
        for _ in range(400):
            obs, _, term, trunc, info = env.step(policy(obs[None])[0])
            if term or trunc:
                break
        wins += info["is_success"]
    assert len(layouts) >= 5
    assert wins >= 8, wins


# ------------------------------------------------------------ map tables: cost and cache
def _open_map(n: int, pillar: int = -1) -> np.ndarray:
    """An n x n open map with a one-cell wall around it (and one pillar cell in row 5)."""
    occ = np.zeros((n, n), bool)
    occ[0, :] = occ[-1, :] = occ[:, 0] = occ[:, -1] = True
    if pillar >= 0:
        occ[pillar, 5] = True
    return occ


def _tables(occ, where="test map"):
    from push_envs.tasks.pushing.push_maze import map_tables

    return map_tables(occ, 0.1, (0.0, 0.0), (1, 1), BOX_R, 0.15, 0.3, None, where).value


def test_large_open_map_tables_are_bounded_and_linear():
    # 300 x 300 open cells: 5,476 lattice sites, each a 90,000-cell field, took 7.3 GB and
    # 46 s before; now at most MAX_FIELD_CELLS field values in all.
    from push_envs.tasks.pushing.push_maze import MAX_FIELD_CELLS

    tables = _tables(_open_map(300))
    tiles, cells, sites, rcells, fields = tables
    assert fields.size <= MAX_FIELD_CELLS
    assert fields.shape == (len(sites), 300 * 300)
    assert len(sites) == MAX_FIELD_CELLS // (300 * 300) == int(tiles[0, 5])  # site_count
    total = sum(a.nbytes for a in tables)
    assert total <= 8 * MAX_FIELD_CELLS + 3 * 8 * 300 * 300  # fields + cell lists
    # The kept sites are spread over the whole tile, not bunched in one corner.
    ij = np.stack([sites // 300, sites % 300], 1) * 0.1
    assert ij.min(0).max() < 1.0 and ij.max(0).min() > 28.0
    # Every field is a real geodesic one: 0 at its site, straight-line distances in the open.
    for k in (0, len(sites) - 1):
        f = fields[k].reshape(300, 300)
        si, sj = divmod(int(sites[k]), 300)
        assert f[si, sj] == 0.0
        assert f[si, 150] == pytest.approx(0.1 * abs(150 - sj), abs=1e-9)


def test_default_map_keeps_every_lattice_site():
    # The cap is far above the default map's sites: its tables (and golden hash) are as before.
    from push_envs.tasks.pushing.push_maze import SITE_STEP
    from push_envs.tasks.pushing.push_maze import map_tables

    tiles, _, sites, _, fields = map_tables(plan_map(), 0.1, (0.0, 0.0), (4, 2), BOX_R, 0.15,
                                            0.3, None, "default map").value
    from push_envs.tasks.pushing.push_maze import MAX_FIELD_CELLS

    assert len(sites) == fields.shape[0] == int(tiles[:, 5].sum())
    assert np.all(sites // 80 % SITE_STEP == SITE_STEP // 2)
    assert np.all(sites % 80 % SITE_STEP == SITE_STEP // 2)
    # No tile reaches the cap, so no site was dropped.
    assert int(tiles[:, 5].max()) < MAX_FIELD_CELLS // plan_map().size


def test_map_over_the_field_limit_is_refused_before_building():
    from push_envs.tasks.pushing.push_maze import MAX_FIELD_CELLS

    occ = np.zeros((1500, 1500), bool)  # 2.25 M cells: two fields need 4.5 M values
    assert 2 * occ.size > MAX_FIELD_CELLS
    with pytest.raises(SceneError, match=rf"big.png.*{MAX_FIELD_CELLS}"):
        _tables(occ, "big.png")


def test_a_closed_env_frees_its_maps_tables_and_open_envs_share_them(tmp_path):
    import gc

    from push_envs.tasks.pushing import push_maze

    text = spec("PushMaze-v1").scene_path().read_text()
    text = text.replace("width: 16.0", "width: 3.0").replace("height: 8.0", "height: 3.0")
    text = text.replace("[1.0, 2.0, 0.0]", "[1.0, 1.6, 0.0]")
    gc.collect()
    before = set(push_maze._TABLES)
    envs = []
    for k in range(8):  # eight distinct maps (a pillar cell moved along a row)
        (tmp_path / f"m{k}.png").write_bytes(png_bytes(_open_map(30, 20 + k)))
        (tmp_path / f"m{k}.yaml").write_text(
            text.replace("obstacle_map: maze.png", f"obstacle_map: m{k}.png"))
        envs.append(gym.make("PushMaze-v1", scene=str(tmp_path / f"m{k}.yaml")))
    assert len(set(push_maze._TABLES) - before) == 8  # all eight held while their envs are open
    # A second env of an open map shares its tables rather than building them again.
    twin = gym.make("PushMaze-v1", scene=str(tmp_path / "m3.yaml"))
    assert twin.unwrapped.core.task.map_info.fields is envs[3].unwrapped.core.task.map_info.fields
    twin.close()
    for env in envs:
        env.close()  # the env objects stay referenced by the list: close alone lets go
    gc.collect()
    assert set(push_maze._TABLES) - before == set()


# -------------------------------------------------------------------- map images
def _rgba_png(rgba: np.ndarray) -> bytes:
    """An 8-bit RGBA PNG of ``rgba[i, j]`` (i along x, j up; top row = max j)."""
    return encode_png(np.transpose(rgba, (1, 0, 2))[::-1], 6)


def test_transparent_pixels_are_free(tmp_path):
    # Walls opaque black, the floor fully transparent (its colour bytes black too, as image
    # editors write it): before, the whole map read as wall.
    occ = _open_map(20)
    rgba = np.zeros((20, 20, 4), np.uint8)
    rgba[..., 3] = np.where(occ, 255, 0)
    rgba[3, 4] = (255, 255, 255, 128)  # translucent white: by its colour, free
    rgba[5, 6] = (0, 0, 0, 128)  # translucent black: by its colour, occupied
    (tmp_path / "alpha.png").write_bytes(_rgba_png(rgba))
    got = load_grid("alpha.png", "test", str(tmp_path))
    want = occ.copy()
    want[5, 6] = True
    np.testing.assert_array_equal(got, want)


def test_map_without_a_free_cell_says_so(tmp_path):
    (tmp_path / "solid.png").write_bytes(png_bytes(np.ones((30, 30), bool)))
    text = spec("PushMaze-v1").scene_path().read_text()
    (tmp_path / "solid.yaml").write_text(
        text.replace("obstacle_map: maze.png", "obstacle_map: solid.png"))
    with pytest.raises(SceneError, match=r"solid.yaml: world.obstacle_map solid.png has no "
                                         r"free cell \(all 900 cells are occupied\)"):
        gym.make("PushMaze-v1", scene=str(tmp_path / "solid.yaml"))


def _reference_fill(ok: np.ndarray, starts: list) -> np.ndarray:
    """4-connected fill by repeated growth: every cell of ``ok`` beside a filled cell joins,
    until nothing changes (slow, and plainly right)."""
    out = np.zeros(ok.shape, bool)
    for i, j in starts:
        out[i, j] = ok[i, j]
    while True:
        grown = out.copy()
        grown[1:] |= out[:-1]
        grown[:-1] |= out[1:]
        grown[:, 1:] |= out[:, :-1]
        grown[:, :-1] |= out[:, 1:]
        grown &= ok
        if (grown == out).all():
            return out
        out = grown


@pytest.mark.parametrize("seed", range(6))
def test_the_region_fill_is_the_4_connected_region_of_its_seeds(seed):
    # Random open cells (about 60 %), seeds both open and walled, one seed twice.
    rng = np.random.default_rng(seed)
    ok = rng.random((23, 17)) < 0.6
    starts = [tuple(int(v) for v in rng.integers(0, (23, 17))) for _ in range(3)]
    starts.append(starts[0])
    region = flood(ok, starts)
    np.testing.assert_array_equal(region, _reference_fill(ok, starts))
    assert region.dtype == bool and not (region & ~ok).any()
    assert not flood(ok, []).any()


def test_map_tables_are_kept_on_disk_and_read_back_without_building(tmp_path, monkeypatch):
    import gc

    from push_envs.tasks.pushing import push_maze

    monkeypatch.setattr(push_maze, "_tables_path", lambda key: tmp_path / f"{key}.npz")
    occ = _open_map(40, 7)
    gc.collect()
    built = _tables(occ)  # built, then saved
    assert len(list(tmp_path.glob("*.npz"))) == 1
    kept = [a.copy() for a in built]
    del built
    gc.collect()

    def refuse(*args):
        raise AssertionError("built again")

    # A new process's first make: nothing in memory, the file read instead of a build.
    with monkeypatch.context() as m:
        m.setattr(push_maze, "_build_tables", refuse)
        again = _tables(occ)
    for a, b in zip(kept, again, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    del again
    gc.collect()
    # A damaged file is reported, built again and replaced.
    (path,) = tmp_path.glob("*.npz")
    path.write_bytes(path.read_bytes()[:100])
    with pytest.warns(UserWarning, match="did not load"):
        rebuilt = _tables(occ)
    for a, b in zip(kept, rebuilt, strict=True):
        assert np.array_equal(a, b)
    del rebuilt
    gc.collect()
    with monkeypatch.context() as m:
        m.setattr(push_maze, "_build_tables", refuse)
        assert np.array_equal(_tables(occ)[4], kept[4])


# --------------------------------------------------- map tables on disk: signed and checked
def _signed(path, key, out):
    """Write ``out`` as the tables file at ``path``, signed with the folder's secret: what a
    file with wrong values looks like to a reader that trusts the signature."""
    import io

    from push_envs.tasks.pushing import push_maze as M

    buf = io.BytesIO()
    np.savez(buf, **{name: a for (name, _, _), a in zip(M._TABLE_FIELDS, out, strict=True)})
    blob = buf.getvalue()
    secret = M._secret(path.parent, create=True)
    path.write_bytes(M._signature(secret, key, blob) + blob)


def _on_disk(tmp_path, monkeypatch):
    """Tables files in ``tmp_path``; returns the list the map keys are appended to."""
    from push_envs.tasks.pushing import push_maze as M

    keys = []

    def where(key):
        keys.append(key)
        return tmp_path / f"tables-{key}.bin"
    monkeypatch.setattr(M, "_tables_path", where)
    return keys


def _bad(kind, out, occ):
    tiles, cells, sites, rcells, fields = (a.copy() for a in out)
    ny = occ.shape[1]
    walls = np.flatnonzero(occ.ravel())
    if kind == "box cells in walls":
        cells[:] = walls[:len(cells)] if len(walls) >= len(cells) else walls[0]
    elif kind == "robot cells in walls":
        rcells[:] = walls[0]
    elif kind == "a NaN field":
        fields[0, 5] = np.nan
    elif kind == "cells past the map":
        rcells[-1] = occ.size + 40 * ny
    elif kind == "negative cells":
        cells[0] = -3
    elif kind == "counts past the tables":
        from push_envs.tasks.pushing.push_maze import TILE
        tiles[0, TILE.box_count] = 10 ** 9
    elif kind == "a site that is no box cell":
        free = np.flatnonzero(~occ.ravel())
        sites[0] = free[~np.isin(free, cells)][0]
    elif kind == "a field not 0 at its site":
        fields[:, :] += 0.5
    elif kind == "a field with a jump":
        fields[0, fields[0] < FAR] *= 3.0
    elif kind == "fields of another shape":
        fields = fields[:, :-1].copy()
    return tiles, cells, sites, rcells, fields


BAD_TABLES = ["box cells in walls", "robot cells in walls", "a NaN field", "cells past the map",
              "negative cells", "counts past the tables", "a site that is no box cell",
              "a field not 0 at its site", "a field with a jump", "fields of another shape"]


@pytest.mark.parametrize("kind", BAD_TABLES)
def test_signed_tables_with_wrong_values_are_rebuilt_with_a_warning(tmp_path, monkeypatch,
                                                                    kind):
    import gc

    keys = _on_disk(tmp_path, monkeypatch)
    occ = _open_map(30, 7)
    occ[15, 3:27] = True  # a wall across, two doorways at the ends
    gc.collect()
    good = [a.copy() for a in _tables(occ)]
    gc.collect()
    path = tmp_path / f"tables-{keys[-1]}.bin"
    _signed(path, keys[-1], _bad(kind, good, occ))
    with pytest.warns(UserWarning, match=f"{path} did not load"):
        again = _tables(occ)
    for a, b in zip(good, again, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)


def test_a_tables_file_this_installation_did_not_sign_is_never_read(tmp_path, monkeypatch):
    import gc

    from push_envs.tasks.pushing import push_maze as M

    keys = _on_disk(tmp_path, monkeypatch)
    occ = _open_map(24)
    good = [a.copy() for a in _tables(occ)]
    gc.collect()
    path = tmp_path / f"tables-{keys[-1]}.bin"
    # The old format (a bare .npz), the file of another map, random bytes, another secret.
    import io

    buf = io.BytesIO()
    np.savez(buf, **{n: a for (n, _, _), a in zip(M._TABLE_FIELDS, good, strict=True)})
    blob = buf.getvalue()
    for data in (blob, M._signature(M._secret(tmp_path, False), "other map", blob) + blob,
                 bytes(range(256)), M._signature(b"x" * 32, keys[-1], blob) + blob):
        path.write_bytes(data)
        monkeypatch.setattr(np, "load", lambda *a, **k: pytest.fail("an unsigned file was "
                                                                    "parsed"))
        with pytest.warns(UserWarning, match="signature does not match"):
            again = _tables(occ)
        monkeypatch.undo()
        _on_disk(tmp_path, monkeypatch)
        assert all(np.array_equal(a, b) for a, b in zip(good, again, strict=True))
        del again
        gc.collect()


def test_tables_in_walls_never_reach_an_episode(tmp_path, monkeypatch):
    """The campaign's case through gym.make: a signed file whose box and robot cells are
    wall cells. It is rebuilt, and every spawn is on a free cell."""
    import gc

    keys = _on_disk(tmp_path, monkeypatch)
    scene, occ = _user_scene(tmp_path)
    env = gym.make("PushMaze-v1", scene=scene)
    good = [a.copy() for a in env.unwrapped.core.task.map_info.held.value]
    env.close()
    del env
    gc.collect()
    bad = _bad("robot cells in walls", _bad("box cells in walls", good, occ), occ)
    _signed(tmp_path / f"tables-{keys[-1]}.bin", keys[-1], bad)
    with pytest.warns(UserWarning, match="a cell on an occupied"):
        env = gym.make("PushMaze-v1", scene=scene)
    core = env.unwrapped.core
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        assert np.isfinite(obs).all() and env.observation_space.contains(obs)
        for body in ("robot", "box"):
            x, y = core.world.com(body)[0]
            assert not occ[int(x / 0.1), int(y / 0.1)], (seed, body)
    env.close()


def test_the_tables_share_of_the_cache_is_bounded_least_recently_used_first(tmp_path,
                                                                         monkeypatch):
    import gc
    import os

    from push_envs.tasks.pushing import push_maze as M

    keys = _on_disk(tmp_path, monkeypatch)
    sizes = []
    for n in range(20, 26):
        _tables(_open_map(n))
        gc.collect()
        sizes.append((tmp_path / f"tables-{keys[-1]}.bin").stat().st_size)
        # the files' ages: one second apart (mtime is what "recently used" reads)
        os.utime(tmp_path / f"tables-{keys[-1]}.bin", (1000.0 + n, 1000.0 + n))
    files = sorted(tmp_path.glob("tables-*"))
    assert len(files) == 6
    # Reading the first map's file marks it used; a limit of three files then keeps it.
    monkeypatch.setattr(M, "_build_tables", lambda *a: pytest.fail("built again"))
    _tables(_open_map(20))
    gc.collect()
    limit = sum(sizes[-2:]) + sizes[0]
    gone = M.evict_tables(tmp_path, limit=limit)
    left = {p.name for p in tmp_path.glob("tables-*")}
    maps = list(dict.fromkeys(keys))  # one key per map, in the order they were made
    assert len(gone) == 3 and {p.name for p in gone} == {f"tables-{k}.bin" for k in maps[1:4]}
    assert left == {f"tables-{k}.bin" for k in (maps[0], maps[4], maps[5])}
    assert sum(p.stat().st_size for p in tmp_path.glob("tables-*")) <= limit
    assert (tmp_path / M._SECRET).exists()  # the secret is never evicted
    assert M.MAX_TABLE_BYTES == 128 * 1024 * 1024
