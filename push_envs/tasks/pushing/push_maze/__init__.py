"""PushMaze-v1: push a box through doorways to a goal in a walled floor plan.

The plan is a grid map (IR-SIM's ``obstacle_map``, a PNG) split into ``layouts`` = (columns,
rows) equal tiles, each a walled layout; the default map holds the eight layouts of
:mod:`push_envs.tasks.pushing.push_maze.floor_plans`. Every episode draws a layout index and
places the goal, the
box and the robot inside that tile.

Why tiles: a batch is one compiled world with one static geometry (one broad-phase grid of
static pieces) shared by every env. Switching map cells per env would need per-env static
geometry in the broad and narrow phase; putting all layouts side by side keeps the world
static and lets any env be in any layout, so a single env and env i of a batch stay equal
bit for bit, and a layout costs only its static pieces (the broad phase looks at the cells
near the bodies). A user's own map (``scene=``) is one layout with ``layouts=(1, 1)``.

What is computed once per map, at construction (Python and numba; the tables of the last few
maps are cached per process):

* each free cell's clearance [m] to the nearest occupied cell (or the tile's edge);
* the largest 4-connected region of each tile where the box's bounding circle fits, and the
  robot cells connected to it: the box spawns and the goals lie there, so every goal is
  reachable for the box and the box for the robot;
* goal sites on a 0.4 m lattice of those cells (at least ``wall_margin`` plus the box's
  bounding radius from walls; at most ``MAX_FIELD_CELLS`` / map cells per tile, evenly
  spread), and for each site the geodesic distance field over its tile (8-connected, no
  corner cutting). The dense reward is the progress of the box along it.

The observation is the single-object one (see PushBox-v0) followed by the box's geodesic
distance, the direction of its path, and two occupancy patches of the map (around the robot
and around the box, world-aligned).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import io
import math
import os
import tempfile
import warnings
import weakref
import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numba
import numpy as np
from numba import njit

from push_envs.core.env import task_envs
from push_envs.core.obs_layout import Field
from push_envs.core.step import TaskArrays
from push_envs.core.task import Arg
from push_envs.core.task import columns
from push_envs.core.task import integer
from push_envs.core.task import number
from push_envs.core.task import optional_pair
from push_envs.physics import SceneError
from push_envs.physics.frames import place_origin
from push_envs.physics.jit import compiled
from push_envs.physics.layout import EP_SCALE
from push_envs.physics.rng import uniform
from push_envs.tasks.info import info_columns
from push_envs.tasks.info import info_row
from push_envs.tasks.info import write_info
from push_envs.tasks.pushing import family as P
from push_envs.tasks.pushing.family import GOAL
from push_envs.tasks.pushing.family import MEM
from push_envs.tasks.pushing.family import goal_distance
from push_envs.tasks.robot_view import put2
from push_envs.tasks.robot_view import put_in_frame

IP = columns(P.IP._fields, "nx ny tnx tny ntiles patch_k tab_tiles tab_cells tab_sites "
             "tab_rcells fp_occ fp_field")
FP = columns(P.FP_NAMES, "res mx0 my0 patch_res")
MEMZ = columns(P.MEM._fields, "tile site geo dirx diry")
TILE = columns("i0 j0 box_start box_count site_start site_count rob_start rob_count")
FAR = 1e9  # field value of cells the box cannot reach
SITE_STEP = 4  # goal sites every 4 cells (0.4 m at 0.1 m cells)
LOOK = 2  # the path direction looks this many cells ahead (a 5 x 5 neighbourhood)
PATH_CLIP = 100.0  # [m] the observed geodesic distance is clipped to this
TRIES = 64


# ------------------------------------------------------------------------- map tables
@njit(cache=True)
def clearance(occ, i0, j0, tnx, tny, reach, res, out):
    """Distance [m] from each cell centre of the tile at (i0, j0) to the nearest occupied
    cell or the tile's edge, capped at ``reach`` cells; 0 on occupied cells."""
    for i in range(tnx):
        for j in range(tny):
            if occ[i0 + i, j0 + j]:
                out[i, j] = 0.0
                continue
            best = reach * res
            for di in range(-reach, reach + 1):
                for dj in range(-reach, reach + 1):
                    a, b = i + di, j + dj
                    if 0 <= a < tnx and 0 <= b < tny and not occ[i0 + a, j0 + b]:
                        continue
                    dx = max(abs(di) - 0.5, 0.0)
                    dy = max(abs(dj) - 0.5, 0.0)
                    d = math.sqrt(dx * dx + dy * dy) * res
                    if d < best:
                        best = d
            out[i, j] = best


@njit(cache=True)
def distance_field(ok, si, sj, res, out):
    """Geodesic distance [m] from cell (si, sj) over the cells where ``ok``: 8-connected
    (a diagonal step only when both cells beside it are ok), by chamfer sweeps repeated until
    nothing changes. Cells not reached get FAR."""
    nx, ny = ok.shape
    out[:, :] = FAR
    out[si, sj] = 0.0
    diag = res * math.sqrt(2.0)
    changed = True
    while changed:
        changed = False
        for sweep in range(2):
            for a in range(nx):
                i = a if sweep == 0 else nx - 1 - a
                for b in range(ny):
                    j = b if sweep == 0 else ny - 1 - b
                    if not ok[i, j]:
                        continue
                    best = out[i, j]
                    for di in range(-1, 2):
                        for dj in range(-1, 2):
                            p, q = i + di, j + dj
                            if (di == 0 and dj == 0) or not (0 <= p < nx and 0 <= q < ny):
                                continue
                            if not ok[p, q]:
                                continue
                            if di != 0 and dj != 0 and not (ok[i + di, j] and ok[i, j + dj]):
                                continue
                            d = out[p, q] + (diag if di != 0 and dj != 0 else res)
                            if d < best - 1e-12:
                                best = d
                    if best < out[i, j]:
                        out[i, j] = best
                        changed = True


def _largest_region(ok: np.ndarray) -> np.ndarray:
    """Mask of the largest 4-connected region of ``ok`` (ties: the first found in index
    order)."""
    seen = np.zeros(ok.shape, bool)
    best = np.zeros(ok.shape, bool)
    for start in zip(*np.nonzero(ok), strict=True):
        if seen[start]:
            continue
        region = flood(ok, [start])
        seen |= region
        if region.sum() > best.sum():
            best = region
    return best


def flood(ok: np.ndarray, starts: list) -> np.ndarray:
    """Cells of ``ok`` 4-connected to any of ``starts`` ((i, j) cells)."""
    si = np.array([s[0] for s in starts], np.int64)
    sj = np.array([s[1] for s in starts], np.int64)
    out = np.zeros(ok.shape, np.bool_)
    _flood_cells(np.ascontiguousarray(ok, np.bool_), si, sj, out)
    return out


# Compiled: a map's tables flood every region of every tile, ~45 ms per new process in
# Python, part of PushMaze-v1's cached start.
@njit(cache=True)
def _flood_cells(ok, si, sj, out):
    """Breadth-first fill: set ``out`` on the cells of ``ok`` 4-connected to a seed cell
    (si[k], sj[k]); seeds outside ``ok`` are skipped."""
    nx, ny = ok.shape
    qi = np.empty(nx * ny, np.int64)
    qj = np.empty(nx * ny, np.int64)
    tail = 0
    for k in range(si.shape[0]):
        i, j = si[k], sj[k]
        if ok[i, j] and not out[i, j]:
            out[i, j] = True
            qi[tail], qj[tail] = i, j
            tail += 1
    head = 0
    while head < tail:
        i, j = qi[head], qj[head]
        head += 1
        for m in range(4):
            p = i + (1 if m == 0 else (-1 if m == 1 else 0))
            q = j + (1 if m == 2 else (-1 if m == 3 else 0))
            if 0 <= p < nx and 0 <= q < ny and ok[p, q] and not out[p, q]:
                out[p, q] = True
                qi[tail], qj[tail] = p, q
                tail += 1


MAX_FIELD_CELLS = 1 << 22
"""Most distance-field values [cells] a map's tables may hold (32 MiB of float64). Each goal
site keeps a geodesic field over its whole tile, so sites per tile are capped at this over
the map's cells, and a map whose tiles cannot hold two sites each (the least a spawn needs)
is refused before anything is built. The default map (eight 40 x 40 tiles, at most 100 sites
each) is far below it and keeps every site."""

class MapTables:
    """A map's tables (:func:`map_tables`), held by every task built on the map: the cache
    keeps them only while one of those lives, so a closed env's map is freed with it."""

    __slots__ = ("__weakref__", "value")

    def __init__(self, value: tuple) -> None:
        self.value = value


# Envs of the same map share its tables (the fields of a large map take seconds to build);
# nothing keeps a map no env uses.
_TABLES: weakref.WeakValueDictionary[str, MapTables] = weakref.WeakValueDictionary()


def _sites_cap(nx: int, ny: int, where: str) -> int:
    """Goal sites per tile that keep the fields within ``MAX_FIELD_CELLS`` (every tile may
    keep that many: the fields cost sites x tiles x tile cells = sites x map cells)."""
    cap = MAX_FIELD_CELLS // max(nx * ny, 1)
    if cap < 2:
        raise SceneError(f"{where}: the map's {nx} x {ny} = {nx * ny} cells are too many for "
                         f"PushMaze-v1's distance fields: two goal sites per layout need "
                         f"{2 * nx * ny} field values, more than the limit of "
                         f"{MAX_FIELD_CELLS} (push_maze.MAX_FIELD_CELLS); use a coarser "
                         f"map (at most {MAX_FIELD_CELLS // 2} cells)")
    return cap


def _spread(n: int, cap: int) -> np.ndarray:
    """Indices of at most ``cap`` of ``n`` items, evenly spread (all of them when n <= cap)."""
    if n <= cap:
        return np.arange(n)
    return np.unique(np.round(np.linspace(0.0, n - 1.0, cap)).astype(np.int64))


def map_tables(occ: np.ndarray, res: float, offset: tuple, layouts: tuple[int, int],
               box_r: float, robot_r: float, margin: float, region: tuple | None,
               where: str) -> MapTables:
    """The per-layout spawn cells, goal sites and distance fields of a map, shared by the
    tasks built on it while one of them holds the returned :class:`MapTables`.

    Its ``value`` is (tiles (ntiles, len(TILE)) int64, box cells, goal-site cells, robot
    cells (global cell indices i * ny + j, int64), fields (n_sites, tnx * tny) float64).
    Layouts without a goal site, a box cell or a robot cell are left out; none left is a
    SceneError.
    """
    occ = np.asarray(occ, bool)
    nx, ny = occ.shape
    cols, rows = layouts
    if nx % cols or ny % rows:
        raise ValueError(f"layouts {layouts} must divide the map's {nx} x {ny} cells into "
                         f"equal tiles (columns divide {nx}, rows divide {ny})")
    cap = _sites_cap(nx, ny, where)  # before anything is built
    key = hashlib.sha1(np.packbits(occ).tobytes() + repr(
        (occ.shape, res, offset, layouts, box_r, robot_r, margin, region)).encode()).hexdigest()
    held = _TABLES.get(key)
    if held is not None:
        return held
    out = _load_tables(key, occ, layouts, res)
    if out is None:
        out = _build_tables(occ, res, offset, layouts, box_r, robot_r, margin, region, where,
                            cap)
        _save_tables(key, out)
    held = _TABLES[key] = MapTables(out)
    return held


def _build_tables(occ: np.ndarray, res: float, offset: tuple, layouts: tuple[int, int],
                  box_r: float, robot_r: float, margin: float, region: tuple | None,
                  where: str, cap: int) -> tuple:
    """:func:`map_tables`' value, computed (seconds for a large map)."""
    nx, ny = occ.shape
    cols, rows = layouts
    tnx, tny = nx // cols, ny // rows
    reach = int(math.ceil((box_r + margin) / res)) + 2
    tiles, box_cells, sites, rob_cells, fields = [], [], [], [], []
    clear = np.zeros((tnx, tny))
    centres_x = offset[0] + (np.arange(nx) + 0.5) * res
    centres_y = offset[1] + (np.arange(ny) + 0.5) * res
    if region is None:
        inside = np.ones((nx, ny), bool)
    else:
        inside = (centres_x[:, None] >= region[0]) & (centres_x[:, None] <= region[2]) & \
            (centres_y[None, :] >= region[1]) & (centres_y[None, :] <= region[3])
    for r in range(rows):
        for c in range(cols):
            i0, j0 = c * tnx, r * tny
            clearance(occ, i0, j0, tnx, tny, reach, res, clear)
            box_ok = clear >= box_r
            region_box = _largest_region(box_ok)
            spawn = region_box & (clear >= box_r + margin) & inside[i0:i0 + tnx, j0:j0 + tny]
            li, lj = np.nonzero(spawn)
            lattice = (li % SITE_STEP == SITE_STEP // 2) & (lj % SITE_STEP == SITE_STEP // 2)
            # At most `cap` sites, evenly spread over the lattice (a large open tile has
            # thousands; each costs a field over the whole tile).
            on = np.flatnonzero(lattice)
            keep = on[_spread(len(on), cap)]
            lattice = np.zeros(len(li), bool)
            lattice[keep] = True
            robot_region = flood(clear >= robot_r + 0.02, list(zip(li, lj, strict=True)))
            ri, rj = np.nonzero(robot_region & (clear >= robot_r + 0.05))
            if lattice.sum() < 2 or len(ri) == 0:
                continue
            row = np.zeros(len(TILE), np.int64)
            row[TILE.i0], row[TILE.j0] = i0, j0
            row[[TILE.box_start, TILE.box_count]] = sum(map(len, box_cells)), len(li)
            row[[TILE.site_start, TILE.site_count]] = sum(map(len, sites)), lattice.sum()
            row[[TILE.rob_start, TILE.rob_count]] = sum(map(len, rob_cells)), len(ri)
            tiles.append(row)
            box_cells.append((i0 + li) * ny + (j0 + lj))
            sites.append((i0 + li[lattice]) * ny + (j0 + lj[lattice]))
            rob_cells.append((i0 + ri) * ny + (j0 + rj))
            field = np.zeros((tnx, tny))
            for si, sj in zip(li[lattice], lj[lattice], strict=True):
                distance_field(box_ok & region_box, si, sj, res, field)
                fields.append(field.ravel().copy())
    if not tiles:
        raise SceneError(f"{where}: no layout of the map has room for the box (bounding radius "
                         f"{box_r:.3g} m plus wall_margin {margin:.3g} m) at two goal sites "
                         f"and for the robot ({robot_r:.3g} m)")
    return (np.array(tiles, np.int64), np.concatenate(box_cells).astype(np.int64),
            np.concatenate(sites).astype(np.int64), np.concatenate(rob_cells).astype(np.int64),
            np.array(fields, np.float64).reshape(len(fields), tnx * tny))


# A map's tables are also kept on disk, beside the compiled kernels (the private, pruned
# numba cache folder, push_envs/_numba_cache.py), so a new process does not build them
# again: about a third of PushMaze-v1's cached start went into building the default map's.
# A file there is input, so it is trusted twice over only:
#
#   file = HMAC-SHA256(secret, map key + .npz bytes)  ||  .npz bytes (the five arrays)
#
# * signed: the secret is 32 random bytes made once per cache folder (tables.key, mode
#   0o600); a file that this installation did not write (crafted, copied from elsewhere,
#   damaged, or of another map) fails the signature and is never parsed;
# * checked: a file that passes is still checked value by value against the map
#   (check_tables: counts within the tables, cells in range, inside their layout and free,
#   sites among the box cells, fields finite, 0 at their site, finite over the layout's box
#   cells and changing by at most one cell size between neighbours), so even a leaked
#   secret cannot make the hooks read outside the arrays, spawn in a wall or observe NaN.
#
# A file that fails either is built again and replaced, with a warning. The tables' files
# take at most MAX_TABLE_BYTES of the folder together: saving one evicts the least recently
# used (a file read is marked used) until they fit. The file name carries the map's key and
# a digest of this module's source, which holds every function that builds them.
_TABLE_FIELDS = (("tiles", np.int64, 2), ("box_cells", np.int64, 1), ("sites", np.int64, 1),
                 ("rob_cells", np.int64, 1), ("fields", np.float64, 2))
MAX_TABLE_BYTES = 128 * 1024 * 1024
"""Most bytes the saved tables of all maps take in the cache folder together [bytes]; the
least recently used files are evicted first. Every map's fit (at most MAX_FIELD_CELLS field
values, 32 MiB, plus cell lists of at most the map's cells)."""
_MAC = 32  # bytes of the signature in front of a tables file
_SECRET = "tables.key"


@functools.cache
def _source_digest() -> str:
    """Digest of this module's source and numpy's version: the code that builds the tables
    (read once per process; a make looks the file up, then may save it)."""
    with open(__file__, "rb") as fh:
        return hashlib.sha1(fh.read() + np.__version__.encode()).hexdigest()[:16]


def _tables_dir() -> Path | None:
    folder = os.environ.get("NUMBA_CACHE_DIR") or numba.config.CACHE_DIR
    return Path(folder) / __name__ if folder else None


def _tables_path(key: str) -> Path | None:
    folder = _tables_dir()
    return None if folder is None else folder / f"tables-{key}-{_source_digest()}.bin"


def _secret(folder: Path, create: bool) -> bytes | None:
    """The folder's signing secret (made, with ``create``, when it has none: written aside
    and linked into place, so processes racing to make it all end up with the one that
    won); None when there is none and it cannot be made."""
    path = folder / _SECRET
    for _ in range(2):
        try:
            data = path.read_bytes()
            return data if len(data) == 32 else None
        except FileNotFoundError:
            if not create:
                return None
        except OSError:
            return None
        tmp = None
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, suffix=".key.tmp")  # mode 0o600
            with os.fdopen(fd, "wb") as fh:
                fh.write(os.urandom(32))
            with contextlib.suppress(FileExistsError):
                os.link(tmp, path)  # exclusive: the first process's secret stays
        except OSError:
            return None
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
    return None


def _signature(secret: bytes, key: str, blob: bytes) -> bytes:
    return hmac.new(secret, key.encode() + b"\0" + blob, hashlib.sha256).digest()


def check_tables(out: tuple, occ: np.ndarray, layouts: tuple[int, int], res: float) -> None:
    """Raise ValueError saying why ``out`` (:func:`map_tables`' value) is not a set of
    tables of map ``occ`` ([i, j] occupied) of ``res`` [m] cells split into ``layouts``:
    what the hooks rely on, checked in O(size)."""
    tiles, cells, sites, rcells, fields = out
    for a, (name, dtype, ndim) in zip(out, _TABLE_FIELDS, strict=True):
        if a.dtype != dtype or a.ndim != ndim:
            raise ValueError(f"{name}: {a.dtype} {a.ndim}-d, expected {np.dtype(dtype)} "
                             f"{ndim}-d")
    nx, ny = occ.shape
    cols, rows = layouts
    tnx, tny = nx // cols, ny // rows
    if tiles.shape[1] != len(TILE) or not 1 <= len(tiles) <= cols * rows:
        raise ValueError(f"tiles: shape {tiles.shape} for {cols * rows} layouts")
    i0, j0 = tiles[:, TILE.i0], tiles[:, TILE.j0]
    if (i0 < 0).any() or (i0 >= nx).any() or (i0 % tnx).any() or (j0 < 0).any() or \
            (j0 >= ny).any() or (j0 % tny).any() or len(np.unique(i0 * ny + j0)) != len(i0):
        raise ValueError("tiles: a layout's corner is not a distinct layout of the map")
    free = ~occ.ravel()
    for what, col, table, least in (("box_cells", TILE.box_start, cells, 1),
                                    ("sites", TILE.site_start, sites, 2),
                                    ("rob_cells", TILE.rob_start, rcells, 1)):
        starts, counts = tiles[:, col], tiles[:, col + 1]
        if (counts < least).any() or counts.sum() != len(table) or not np.array_equal(
                starts, np.concatenate([[0], np.cumsum(counts)[:-1]])):
            raise ValueError(f"{what}: the layouts' counts {counts.tolist()[:8]} do not "
                             f"cover its {len(table)} entries")
        if len(table) and (table.min() < 0 or table.max() >= nx * ny):
            raise ValueError(f"{what}: cell indices outside the map's {nx * ny} cells")
        tile = np.repeat(np.arange(len(tiles)), counts)
        ci, cj = np.divmod(table, ny)
        if not ((ci >= i0[tile]) & (ci < i0[tile] + tnx) & (cj >= j0[tile]) &
                (cj < j0[tile] + tny)).all():
            raise ValueError(f"{what}: a cell outside its layout")
        if not free[table].all():
            raise ValueError(f"{what}: a cell on an occupied (wall) cell of the map")
    if not np.isin(sites, cells).all():
        raise ValueError("sites: a goal site that is no box cell")
    if fields.shape != (len(sites), tnx * tny):
        raise ValueError(f"fields: shape {fields.shape}, expected {(len(sites), tnx * tny)}")
    if not np.isfinite(fields).all() or (fields < 0).any():
        raise ValueError("fields: values that are not finite distances >= 0")
    reach = fields < FAR
    site_tile = np.repeat(np.arange(len(tiles)), tiles[:, TILE.site_count])
    si, sj = np.divmod(sites, ny)
    local = (si - i0[site_tile]) * tny + (sj - j0[site_tile])
    if (fields[np.arange(len(sites)), local] != 0.0).any():
        raise ValueError("fields: a field that is not 0 at its own goal site")
    box_tile = np.repeat(np.arange(len(tiles)), tiles[:, TILE.box_count])
    bi, bj = np.divmod(cells, ny)
    box_local = (bi - i0[box_tile]) * tny + (bj - j0[box_tile])
    for t in range(len(tiles)):
        if not reach[np.ix_(site_tile == t, box_local[box_tile == t])].all():
            raise ValueError(f"fields: a box cell of layout {t} its goal sites cannot reach")
    # A step between two 4-neighbours that both reach the site is a path: their distances
    # differ by at most one cell size [m].
    grid = fields.reshape(len(sites), tnx, tny)
    ok = grid < FAR
    for axis in (1, 2):
        a, m = np.moveaxis(grid, axis, 1), np.moveaxis(ok, axis, 1)
        both = m[:, 1:] & m[:, :-1]
        if (np.abs(a[:, 1:] - a[:, :-1])[both] > res * (1 + 1e-9) + 1e-12).any():
            raise ValueError(f"fields: neighbouring cells more than one cell ({res:g} m) "
                             f"apart along a path")


def _load_tables(key: str, occ: np.ndarray, layouts: tuple[int, int],
                 res: float) -> tuple | None:
    """The tables saved under ``key`` for map ``occ``, or None (none saved, or a file that
    is not signed by this cache folder or does not check: built again, with a warning)."""
    path = _tables_path(key)
    if path is None or not path.is_file():
        return None
    try:
        if path.stat().st_size > MAX_TABLE_BYTES + _MAC:
            raise ValueError("larger than any map's tables")
        secret = _secret(path.parent, create=False)
        blob = path.read_bytes()
        if secret is None or len(blob) < _MAC or not hmac.compare_digest(
                blob[:_MAC], _signature(secret, key, blob[_MAC:])):
            raise ValueError("not written by this installation for this map (its "
                             "signature does not match)")
        with np.load(io.BytesIO(blob[_MAC:]), allow_pickle=False) as data:
            out = tuple(np.array(data[name]) for name, _, _ in _TABLE_FIELDS)
        check_tables(out, occ, layouts, res)
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: evicted last
        return out
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError, MemoryError) as exc:
        warnings.warn(f"push_envs: PushMaze-v1 map tables {path} did not load ({exc}); "
                      "building them again", stacklevel=3)
        return None


def _save_tables(key: str, out: tuple) -> None:
    """Save the tables under ``key``, signed (written to a temporary file, then renamed, so
    a reader never sees half a file), then evict the least recently used tables beyond
    MAX_TABLE_BYTES; a cache that cannot be written is skipped silently."""
    path = _tables_path(key)
    if path is None:
        return
    tmp = None
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        secret = _secret(path.parent, create=True)
        if secret is None:
            return
        buf = io.BytesIO()
        np.savez(buf, **{name: a for (name, _, _), a in zip(_TABLE_FIELDS, out,
                                                             strict=True)})
        blob = buf.getvalue()
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tables.tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(_signature(secret, key, blob) + blob)
        os.replace(tmp, path)
        tmp = None
        evict_tables(path.parent, keep=path)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def evict_tables(folder: Path, keep: Path | None = None,
                 limit: int = MAX_TABLE_BYTES) -> list[Path]:
    """Delete the least recently used (modification time) tables files of ``folder`` until
    they take at most ``limit`` bytes together, never ``keep``; returns those deleted.
    Files of other sources' digests (an older version) count and go first when oldest."""
    files = []
    for entry in folder.glob("tables-*"):
        with contextlib.suppress(OSError):
            info = entry.stat()
            files.append((info.st_mtime, info.st_size, entry))
    total = sum(size for _, size, _ in files)
    gone = []
    for _, size, entry in sorted(files, key=lambda f: f[0]):
        if total <= limit:
            break
        if entry == keep:
            continue
        with contextlib.suppress(OSError):
            entry.unlink()
            total -= size
            gone.append(entry)
    return gone


# ------------------------------------------------------------------------ the declaration
def _odd(name: str, value: Any) -> int:
    k = integer(1, 31)(name, value)
    if k % 2 == 0:
        raise ValueError(f"{name} must be an odd integer in [1, 31] (the patch is centred on "
                         f"a cell), got {value!r}")
    return k


class PushMaze(P.SingleObjectTask):
    id = "PushMaze-v1"
    max_episode_steps = 400
    versions = (
        "v0: initial release.",
        "v1: the engine's joints of static pieces (physics/joints.py): where the maze's "
        "wall cells meet, a contact follows their union, so a box or the robot sliding along "
        "a wall no longer catches on the seam between two cells. About one episode in 40 of "
        "random actions differs from v0.")
    retired = {"PushMaze-v0": "the box and the robot could catch on the seams between "
                              "the maze's wall cells"}
    experts = {"diff": "expert:expert"}
    region = (0.0, 0.0, 16.0, 8.0)
    wall_margin = 0.3
    goal_separation = 1.5
    region_spawn = False  # spawns on map cells (map_tables)
    layouts = (4, 2)
    fp_names = tuple(FP._fields)
    info_fields = (("box_to_goal", float), ("path_distance", float),
                   ("reward_robot_box", float), ("reward_box_goal", float),
                   ("reward_success", float), ("contacts", int), ("touching_wall", bool),
                   ("layout", int))
    arguments = {
        **P.shared_arguments(),
        "layouts": Arg(None, optional_pair(integer(1, 64), "(columns, rows) of layouts"),
                       "(columns, rows) of equal layouts the map is split into; None: (4, 2) "
                       "for the default map, (1, 1) for a scene's own"),
        "patch_size": Arg(9, _odd, "cells per side of each occupancy patch (odd)"),
        "patch_resolution": Arg(0.2, number(0.01, 1.0, unit=" [m]"),
                                "spacing of the occupancy patch samples [m]"),
    }

    def observation(self) -> tuple:
        k = self.args["patch_size"]
        step = self.args["patch_resolution"]
        return (*P.layout(), *extra_fields(k, step))

    def _tiles(self, env: Any) -> tuple[int, int]:
        if self.args["layouts"] is not None:
            return self.args["layouts"]
        return self.layouts if env.world.scene.spec.source == str(self.scene_path()) \
            else (1, 1)

    def build(self, env: Any) -> TaskArrays:
        size = self.args["box_size_range"]
        if size is not None and size[1] > 1.0:
            raise ValueError(f"box_size_range {size} must stay <= 1 in PushMaze-v1: the spawn "
                             f"cells and doorways are cleared for the scene's box")
        ip0, fp0, radii = self.pack(env)
        sc = env.world.scene
        wspec = sc.spec.world
        if wspec.obstacle_map is None:
            raise SceneError(f"{sc.spec.source}: world.obstacle_map is missing; {self.id} reads "
                             f"its floor plan from the grid map")
        occ = np.asarray(wspec.obstacle_map, bool)
        res = float(wspec.map_resolution)
        held = map_tables(
            occ, res, tuple(wspec.offset), self._tiles(env), radii["obj_r"], radii["robot_r"],
            env.wall_margin, self.args["spawn_region"], sc.spec.source)
        tiles, cells, sites, rcells, fields = held.value
        nx, ny = occ.shape
        check_start_distance(tiles, cells, sites, ny, res, env.success_distance, sc.spec.source)
        tables = [tiles.ravel(), cells, sites, rcells]
        ip = np.zeros(len(IP), np.int64)
        ip[:len(ip0)] = ip0
        ip[[IP.nx, IP.ny]] = nx, ny
        ip[[IP.tnx, IP.tny]] = nx // self._tiles(env)[0], ny // self._tiles(env)[1]
        ip[IP.ntiles] = len(tiles)
        ip[IP.patch_k] = self.args["patch_size"]
        at = len(IP)
        for col, tab in zip((IP.tab_tiles, IP.tab_cells, IP.tab_sites, IP.tab_rcells), tables,
                            strict=True):
            ip[col] = at
            at += len(tab)
        ip[IP.fp_occ] = len(FP)
        ip[IP.fp_field] = len(FP) + occ.size
        ip = np.concatenate([ip, *tables])
        fp = np.zeros(len(FP))
        fp[:len(fp0)] = fp0
        fp[FP.res] = res
        fp[FP.mx0], fp[FP.my0] = wspec.offset
        fp[FP.patch_res] = self.args["patch_resolution"]
        fp = np.concatenate([fp, occ.ravel().astype(np.float64), fields.ravel()])
        E = env.num_envs
        self.map_info = SimpleNamespace(occ=occ, res=res, offset=tuple(wspec.offset),
                                        tiles=tiles, sites=sites, fields=fields, held=held)
        return TaskArrays(ip=ip, fp=fp, goal=np.zeros((E, len(GOAL))),
                          mem=np.zeros((E, len(MEMZ))), ag=np.zeros((E, 2)),
                          dg=np.zeros((E, 2)))

    def close(self) -> None:
        # The map's tables are shared through a weak cache: a closed env stops holding them.
        self.map_info = None

    def reading_context(self, env: Any) -> Any:
        ctx = super().reading_context(env)
        t = env.task_arrays
        m = self.map_info
        k, step = self.args["patch_size"], self.args["patch_resolution"]
        geo = np.array([geodesic(t.ip, t.fp, int(t.mem[e, MEMZ.tile]), int(t.mem[e, MEMZ.site]),
                                  t.goal[e, GOAL.x], t.goal[e, GOAL.y],
                                  *env.world.com("box")[e])
                        for e in range(env.num_envs)])
        ctx.path = geo
        ctx.patch_robot = numpy_patch(m.occ, m.res, m.offset, ctx.robot[:, :2], k, step)
        ctx.patch_box = numpy_patch(m.occ, m.res, m.offset, ctx.obj[:, :2], k, step)
        return ctx


# ------------------------------------------------------------------------------ hooks
@compiled
def _tile(ip, t, col):
    return ip[ip[IP.tab_tiles] + t * len(TILE) + col]


@compiled
def cell_centre(ip, fp, cell):
    """World centre (x, y) [m] of global cell index ``cell``."""
    ny = ip[IP.ny]
    i, j = cell // ny, cell % ny
    return fp[FP.mx0] + (i + 0.5) * fp[FP.res], fp[FP.my0] + (j + 0.5) * fp[FP.res]


@compiled
def _cell_clear_of(e, rng, ip, fp, first, n, px, py, dist, tries):
    """The centre (x, y) [m] of one of the ``n`` cells listed from ``ip[first]``: up to
    ``tries`` uniform draws (env e's stream) for one at least ``dist`` [m] from (px, py), else
    the cell farthest from it, all of them scanned."""
    for _ in range(tries):
        c = min(int(uniform(rng, e, 0.0, float(n))), n - 1)
        x, y = cell_centre(ip, fp, ip[first + c])
        if (x - px) ** 2 + (y - py) ** 2 >= dist * dist:
            return x, y
    best, x, y = -1.0, 0.0, 0.0
    for c in range(n):
        cx, cy = cell_centre(ip, fp, ip[first + c])
        d2 = (cx - px) ** 2 + (cy - py) ** 2
        if d2 > best:
            best, x, y = d2, cx, cy
    return x, y


@compiled
def occupied(ip, fp, x, y):
    """1.0 where (x, y) [m] lies in an occupied map cell or off the map, else 0.0."""
    i = int(math.floor((x - fp[FP.mx0]) / fp[FP.res]))
    j = int(math.floor((y - fp[FP.my0]) / fp[FP.res]))
    if i < 0 or j < 0 or i >= ip[IP.nx] or j >= ip[IP.ny]:
        return 1.0
    return fp[ip[IP.fp_occ] + i * ip[IP.ny] + j]


@njit(cache=True)  # also called from Python (reading_context)
def geodesic(ip, fp, tile, site, gx, gy, px, py):
    """Geodesic distance [m] from (px, py) to the goal (gx, gy) of goal site ``site`` in
    layout ``tile``, and the unit direction of the path there.

    Over the 5 x 5 cells around the point: min of (field at the cell + straight distance to
    its centre); the direction points at the cell of least field value (the goal itself
    when the goal's cell is among them). Returns (-1, 0, 0) when no cell around is reachable.
    """
    res = fp[FP.res]
    tnx, tny = ip[IP.tnx], ip[IP.tny]
    ci = int(math.floor((px - fp[FP.mx0]) / res)) - _tile(ip, tile, TILE.i0)
    cj = int(math.floor((py - fp[FP.my0]) / res)) - _tile(ip, tile, TILE.j0)
    base = ip[IP.fp_field] + site * tnx * tny
    best = -1.0
    fmin = FAR
    tx = ty = 0.0
    for di in range(-LOOK, LOOK + 1):
        for dj in range(-LOOK, LOOK + 1):
            a, b = ci + di, cj + dj
            if a < 0 or b < 0 or a >= tnx or b >= tny:
                continue
            f = fp[base + a * tny + b]
            if f >= FAR:
                continue
            cx = fp[FP.mx0] + (_tile(ip, tile, TILE.i0) + a + 0.5) * res
            cy = fp[FP.my0] + (_tile(ip, tile, TILE.j0) + b + 0.5) * res
            d = f + math.sqrt((px - cx) ** 2 + (py - cy) ** 2)
            if best < 0.0 or d < best:
                best = d
            if f < fmin:
                fmin = f
                tx, ty = (gx, gy) if f == 0.0 else (cx, cy)
    if best < 0.0:
        return -1.0, 0.0, 0.0
    dx, dy = tx - px, ty - py
    n = math.sqrt(dx * dx + dy * dy)
    if n < 1e-9:
        return best, 0.0, 0.0
    return best, dx / n, dy / n


# The info columns (PushMaze.info_fields) for the kernels, and the record evaluate fills.
INFO = info_columns(PushMaze)
InfoRow = info_row(PushMaze)


@PushMaze.hook
@compiled
def spawn(e, W, V, T):
    """A layout, a goal site in it, the box on a spawn cell at least ``goal_separation`` from
    the goal (same region, so the goal is reachable), the robot on a robot cell clear of the
    box; headings uniform."""
    ip, fp, rng = T.ip, T.fp, V.rng
    s = P.randomise_object(e, W, V, T)
    t = min(int(uniform(rng, e, 0.0, float(ip[IP.ntiles]))), ip[IP.ntiles] - 1)
    k = min(int(uniform(rng, e, 0.0, float(_tile(ip, t, TILE.site_count)))),
            _tile(ip, t, TILE.site_count) - 1)
    site = _tile(ip, t, TILE.site_start) + k
    gx, gy = cell_centre(ip, fp, ip[ip[IP.tab_sites] + site])
    P.set_goal(e, T, gx, gy, 0.0)
    T.mem[e, MEMZ.tile] = t
    T.mem[e, MEMZ.site] = site
    # Up to TRIES + MORE_TRIES draws, then the box cell farthest from the goal: never the
    # last draw, which could lie on the goal, and construction (check_start_distance) keeps
    # that cell farther than the success distance.
    bx, by = _cell_clear_of(e, rng, ip, fp, ip[IP.tab_cells] + _tile(ip, t, TILE.box_start),
                            _tile(ip, t, TILE.box_count), gx, gy, fp[FP.goal_separation],
                            TRIES + P.MORE_TRIES)
    o = ip[IP.obj]
    W.pos[e, o, 0] = bx
    W.pos[e, o, 1] = by
    W.ang[e, o] = uniform(rng, e, -math.pi, math.pi)
    # Then the robot clear of the box, or the robot cell farthest from it: not the last
    # draw, which could overlap the box (the solver would shove them apart, possibly into a
    # wall).
    gap = fp[FP.robot_r] + fp[FP.obj_r] * s + 0.05
    rx, ry = _cell_clear_of(e, rng, ip, fp, ip[IP.tab_rcells] + _tile(ip, t, TILE.rob_start),
                            _tile(ip, t, TILE.rob_count), bx, by, gap, TRIES)
    place_origin(e, ip[IP.robot], rx, ry, uniform(rng, e, -math.pi, math.pi), W.pos, W.ang,
                 W.bflt, W.epar)


@compiled
def _patch(ip, fp, row, at, x, y):
    """The k x k occupancy patch centred on (x, y) [m] (a along x outer, b along y inner)."""
    k = ip[IP.patch_k]
    h = 0.5 * (k - 1)
    step = fp[FP.patch_res]
    for a in range(k):
        for b in range(k):
            row[at + a * k + b] = occupied(ip, fp, x + (a - h) * step, y + (b - h) * step)


@PushMaze.hook
@compiled
def observe(e, W, V, T):
    """The single-object observation, then the path and the two occupancy patches."""
    ip, fp, mem, goal = T.ip, T.fp, T.mem, T.goal
    P.observe_single(e, W, V, T)
    row, at = V.obs[e], T.at
    o = ip[IP.obj]
    geo, dx, dy = geodesic(ip, fp, int(mem[e, MEMZ.tile]), int(mem[e, MEMZ.site]),
                           goal[e, GOAL.x], goal[e, GOAL.y], W.pos[e, o, 0], W.pos[e, o, 1])
    if geo < 0.0:  # the box sits where no reachable cell is near: keep the last reading
        geo, dx, dy = mem[e, MEMZ.geo], mem[e, MEMZ.dirx], mem[e, MEMZ.diry]
    mem[e, MEMZ.geo] = geo
    mem[e, MEMZ.dirx] = dx
    mem[e, MEMZ.diry] = dy
    k = at[OBS.robot_heading]
    c, s = row[k], row[k + 1]
    row[at[OBS.path_distance]] = min(geo, PATH_CLIP)
    put2(row, at[OBS.path_dir], dx, dy)
    put_in_frame(row, at[OBS.path_dir_robot], c, s, dx, dy)
    k = at[OBS.robot_xy]
    _patch(ip, fp, row, at[OBS.patch_robot], row[k], row[k + 1])
    _patch(ip, fp, row, at[OBS.patch_box], mem[e, MEM.ox], mem[e, MEM.oy])
    T.ag[e, 0] = mem[e, MEM.ox]
    T.ag[e, 1] = mem[e, MEM.oy]
    T.dg[e, 0] = goal[e, GOAL.x]
    T.dg[e, 1] = goal[e, GOAL.y]


@compiled
def _push_distance(e, W, T):
    """Robot -> push pose [m]: behind the box along its path direction."""
    ip, fp, mem = T.ip, T.fp, T.mem
    o, r = ip[IP.obj], ip[IP.robot]
    stand = fp[FP.robot_r] + fp[FP.obj_r] * W.epar[e, o, EP_SCALE]
    px = W.pos[e, o, 0] - mem[e, MEMZ.dirx] * stand
    py = W.pos[e, o, 1] - mem[e, MEMZ.diry] * stand
    return math.sqrt((W.pos[e, r, 0] - px) ** 2 + (W.pos[e, r, 1] - py) ** 2)


@PushMaze.hook
@compiled
def evaluate(e, W, V, T):
    """``w_robot_object`` x (robot -> push pose progress [m]) + ``w_object_goal`` x (box
    progress along its path [m]) + bonus on success - step penalty."""
    fp, mem, info = T.fp, T.mem, V.info
    success = P.is_success(T.ag[e], T.dg[e], fp)
    d_rb = _push_distance(e, W, T)
    geo = mem[e, MEMZ.geo]
    r_rb, r_og, bonus = P.progress_terms(e, T, d_rb, geo, success)
    write_info(info, e, InfoRow(box_to_goal=goal_distance(T.ag[e], T.dg[e]), path_distance=geo,
                                reward_robot_box=r_rb, reward_box_goal=r_og,
                                reward_success=bonus, contacts=mem[e, MEM.contacts],
                                touching_wall=mem[e, MEM.touch_wall], layout=mem[e, MEMZ.tile]))
    return success, success, r_rb + r_og + bonus - fp[FP.step_penalty]


@PushMaze.hook
@compiled
def start(e, W, V, T):
    """First info, and the distances the progress rewards start from."""
    T.mem[e, MEM.prev_rb] = _push_distance(e, W, T)
    T.mem[e, MEM.prev_og] = T.mem[e, MEMZ.geo]
    V.info[e, INFO.box_to_goal] = goal_distance(T.ag[e], T.dg[e])
    V.info[e, INFO.path_distance] = T.mem[e, MEMZ.geo]
    V.info[e, INFO.layout] = T.mem[e, MEMZ.tile]


# ------------------------------------------------------------------------ Python side
def numpy_patch(occ: np.ndarray, res: float, offset: tuple, xy: np.ndarray, k: int,
                step: float) -> np.ndarray:
    """(E, k*k) occupancy of the world-aligned k x k patch around each (x, y) [m]."""
    h = 0.5 * (k - 1)
    a = (np.arange(k) - h) * step
    x = xy[:, 0, None, None] + a[None, :, None]
    y = xy[:, 1, None, None] + a[None, None, :]
    i = np.floor((x - offset[0]) / res).astype(np.int64)
    j = np.floor((y - offset[1]) / res).astype(np.int64)
    off = (i < 0) | (j < 0) | (i >= occ.shape[0]) | (j >= occ.shape[1])
    val = occ[np.clip(i, 0, occ.shape[0] - 1), np.clip(j, 0, occ.shape[1] - 1)]
    return np.where(off, 1.0, val.astype(float)).reshape(len(xy), k * k)


def check_start_distance(tiles: np.ndarray, cells: np.ndarray, sites: np.ndarray, ny: int,
                         res: float, succ: float, where: str) -> None:
    """Refuse a ``success_distance`` [m] that some goal site could start solved: the box
    spawns on its layout's box cells, at worst (the spawn's fallback) on the one farthest from
    the goal, so that cell must lie farther than ``succ`` from every goal site. The work is
    sites x box cells per layout, within the map's field budget (MAX_FIELD_CELLS)."""
    worst, at = math.inf, None
    for row in tiles:
        box = cells[row[TILE.box_start]:row[TILE.box_start] + row[TILE.box_count]]
        bx, by = np.divmod(box, ny)
        for site in sites[row[TILE.site_start]:row[TILE.site_start] + row[TILE.site_count]]:
            si, sj = divmod(int(site), ny)
            far = res * math.sqrt(float(np.max((bx - si) ** 2 + (by - sj) ** 2)))
            if far < worst:
                worst, at = far, (si, sj)
    if worst <= succ:
        raise ValueError(f"PushMaze-v1: success_distance {succ:g} m: in {where} the box can "
                         f"start at most {worst:.3g} m from the goal site at cell {at}, so "
                         f"its episodes would start solved; use a success_distance below "
                         f"{worst:.3g} m")


def extra_fields(k: int, step: float) -> tuple:
    """PushMaze's fields after the single-object layout."""
    def rot(c, v):
        return P.robot_frame(c.robot[:, 2], v)

    return (
        Field("path_distance", 1, "geodesic distance of the box to the goal along free cells "
              f"(clipped to {PATH_CLIP:g} m)", "m", 0.0, PATH_CLIP,
              lambda c: np.minimum(c.path[:, :1], PATH_CLIP)),
        Field("path_dir", 2, "unit direction of the box's path to the goal (world)", "-", -1, 1,
              lambda c: c.path[:, 1:3]),
        Field("path_dir_robot", 2, "that direction in the robot frame", "-", -1, 1,
              lambda c: rot(c, c.path[:, 1:3])),
        Field("patch_robot", k * k, f"occupancy (0/1, off the map 1) of a {k} x {k} patch "
              f"around the robot, world-aligned, {step:g} m apart, x outer, y inner", "-", 0, 1,
              lambda c: c.patch_robot),
        Field("patch_box", k * k, "occupancy of the same patch around the box", "-", 0, 1,
              lambda c: c.patch_box),
    )


OBS = PushMaze.obs_names()  # the observation's columns by name, through T.at (the
# family's P.OBS indices hold: the layout appends to the family's)


_DOC = """Push a box through doorways to a goal in a walled floor plan.

    ## Description
    The floor plan is a grid map in IR-SIM's ``obstacle_map`` format (a PNG, 0.1 m cells):
    the task's maze.png holds eight walled 4 m x 4 m layouts side by side (two rooms,
    two rooms with a side door, three rooms, four rooms, a serpentine, a ring around a block,
    T-shaped rooms, pillars and a spur; 0.8 m doorways). Each episode draws a layout, a goal
    site in it (a 0.4 m lattice of cells where the box fits ``wall_margin`` (0.3 m) off the
    walls), the box on such a cell at least ``goal_separation`` (1.5 m) from the goal, and
    the robot clear of the box; box, goal and robot lie in one connected region, so the goal
    is reachable. All layouts are one static world (any env can be in any layout, batches
    stay bit-identical to single envs); ``scene=`` takes a user's map, split into
    ``layouts=(columns, rows)`` tiles ((1, 1) by default for a user's scene). The robot is
    PushBox's 1 kg disc, the box 0.3 m x 0.3 m, 0.5 kg.

    ## Action Space
    As PushBox-v0: ``Box(-1, 1, (2,), float32)`` scaled to the drive's limits.

    ## Observation Space
    ``obs_mode="state"``: the single-object columns of PushBox-v0, then the box's geodesic
    distance and path direction and two occupancy patches (``k = patch_size``, default 9,
    samples ``patch_resolution`` (0.2 m) apart: a 1.6 m square; with M = 4, 220 numbers).
    The path direction points at the cell of least distance among the 5 x 5 cells around
    the box.

{obs_table}

    ``obs_mode="goal"``: ``achieved_goal`` / ``desired_goal`` are the box's and the goal's
    x, y [m]; HER's dense reward is minus their straight distance plus the success bonus.

    ## Rewards
    Dense: ``1.0 * (robot -> push-pose progress) + 10.0 * (box progress along its geodesic
    path, m) + 10 * success - 0.01`` per step; the push pose is behind the box along its path
    direction. Terms in ``info`` with ``path_distance`` [m] and ``layout`` (index). Sparse:
    0 on success, -1 otherwise.
""" + P.BOX_AT_GOAL_END

PushMazeEnv, PushMazeVectorEnv = task_envs(PushMaze, _DOC)
