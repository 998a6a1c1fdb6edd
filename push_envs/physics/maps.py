"""``world.obstacle_map``: IR-SIM's forms of an occupancy map, resolved to a bool grid and the
size of its cells (setup time only).

An obstacle map is given as (IR-SIM's ``irsim.world.map.resolve_obstacle_map``):

* a PNG path, the same as ``{name: image, path: <png>}``: dark pixels (gray < 50 %) are
  occupied, the top row is the largest y;
* ``{name: perlin, resolution: <m per cell>, complexity, fill, fractal, attenuation, seed}``:
  a Perlin-noise map of round(width / resolution) x round(height / resolution) cells whose
  ``fill`` fraction is occupied (``perlin_grid``);
* an inline 2-D array of 0-100 values or bools (push_envs; indexed [i along x, j along y]).

Then ``world.mdownsample`` keeps every m-th cell along each axis (IR-SIM's
``grid[::m, ::m]``), and the cells are sized. IR-SIM stretches the map over the world:
cell (i, j) covers ``width / nx`` x ``height / ny`` metres from ``offset``. push_envs' own
scenes may give ``world.map_resolution`` instead: square cells of that many metres
(times ``mdownsample``), whatever the world's size. A file that does not set
``map_resolution`` gets IR-SIM's stretch.

A generator without a ``seed`` draws a new map each run in IR-SIM. Here it draws from the
scene's seed (``load_scene(..., seed=...)``, ``World.from_config(..., seed=...)``; 0 by
default): one map for the whole batch, the same every run for a given seed. Static geometry
is compiled once and shared by every env of a batch (one broad-phase grid, one set of
static pieces), so a map per env would multiply the static pieces by the number of envs;
envs that need different maps are different worlds (one ``World`` per seed).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .errors import SceneError
from .errors import short_repr
from .grid import count_rectangles
from .grid import load_occupancy
from .limits import MAX_MAP_CELLS
from .limits import MAX_MAP_PIECES
from .schema import MAP_GENERATOR_KEYS
from .schema import check_keys
from .schema import choice

__all__ = ["MapSpec", "resolve_map", "perlin_grid", "BUNDLED_MAPS"]

BUNDLED_MAPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "maps")
"""IR-SIM's own map images (``cave.png``, ``hm3d_1.png`` ... ``hm3d_9.png``; MIT, see the
folder's README): a map path found neither as given nor beside the scene file is looked up
here by its file name, as IR-SIM looks in its package's map folder."""

PERLIN_DEFAULTS = {"complexity": 0.142857, "fill": 0.38, "fractal": 1, "attenuation": 0.5}
_MAX_FRACTAL = 16  # octaves of a Perlin map (each doubles the frequency; 2^16 is beyond any grid)


@dataclass(frozen=True, eq=False)
class MapSpec:
    """A resolved obstacle map: ``occ[i, j]`` (i along x) True where occupied, cell (i, j)
    covering ``[ox + i cell_x, ox + (i + 1) cell_x] x [oy + j cell_y, ...]`` [m]."""

    occ: np.ndarray
    cell: tuple[float, float]  # [m] (x, y)
    source: str | None  # the PNG path as given, for messages


def _find_image(path: str, where: str, base_dir: str | None) -> str:
    """The file a map path names: as given (absolute), beside the scene file, else IR-SIM's
    bundled maps by file name; SceneError naming the places looked in."""
    tried = []
    if os.path.isabs(path):
        tried.append(path)
    else:
        tried.append(os.path.join(base_dir, path) if base_dir is not None else path)
        tried.append(os.path.join(BUNDLED_MAPS, os.path.basename(path)))
    for candidate in tried:
        if os.path.isfile(candidate):
            return candidate
    raise SceneError(f"{where}: map image not found: {short_repr(tried[0], 300)}"
                     + (f" (nor among the bundled maps in {BUNDLED_MAPS})" if len(tried) > 1
                        else ""))


# --------------------------------------------------------------------------------------------
# Perlin maps (IR-SIM's PerlinGridGenerator, after GCOPTER's map_gen)
# --------------------------------------------------------------------------------------------
# Sketch: a permutation table P (0..255 shuffled, then repeated) hashes each integer lattice
# corner (xi, yi) to one of 8 unit gradients g = G[P[P[xi] + yi] % 8]; the noise at (x, y) is
# the bilinear blend, with weights fade(t) = 6t^5 - 15t^4 + 10t^3 of the fractional part, of
# the four corners' g . (offset from the corner). Octave k samples at complexity * 2^k with
# amplitude attenuation / (k + 1); the sum is normalised to [0, 1]. A cell is occupied when
# its noise is above the (1 - fill) quantile, so a fraction ``fill`` of the map is occupied.

_R = 1.0 / math.sqrt(2.0)
_GRADIENTS = np.array([[1, 0], [-1, 0], [0, 1], [0, -1], [_R, _R], [-_R, _R], [_R, -_R],
                       [-_R, -_R]], dtype=np.float64)


def _fade(t: np.ndarray) -> np.ndarray:
    return t * t * t * (t * (t * 6 - 15) + 10)


def _noise(x: np.ndarray, y: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """2-D gradient noise at (x, y) (same shape), about [-1, 1]."""
    xi = x.astype(np.int32) & 255
    yi = y.astype(np.int32) & 255
    xf = x - np.floor(x)
    yf = y - np.floor(y)
    u = _fade(xf)
    v = _fade(yf)
    g00 = _GRADIENTS[perm[perm[xi] + yi] % 8]
    g01 = _GRADIENTS[perm[perm[xi] + yi + 1] % 8]
    g10 = _GRADIENTS[perm[perm[xi + 1] + yi] % 8]
    g11 = _GRADIENTS[perm[perm[xi + 1] + yi + 1] % 8]
    d00 = g00[..., 0] * xf + g00[..., 1] * yf
    d01 = g01[..., 0] * xf + g01[..., 1] * (yf - 1)
    d10 = g10[..., 0] * (xf - 1) + g10[..., 1] * yf
    d11 = g11[..., 0] * (xf - 1) + g11[..., 1] * (yf - 1)
    lo = d00 + u * (d10 - d00)
    hi = d01 + u * (d11 - d01)
    return lo + v * (hi - lo)


def perlin_grid(nx: int, ny: int, *, complexity: float = 0.142857, fill: float = 0.38,
                fractal: int = 1, attenuation: float = 0.5, seed: int | None = None
                ) -> np.ndarray:
    """Occupancy (nx, ny) bool of a Perlin map, the cells IR-SIM 2.12's ``perlin`` generator
    marks occupied for the same arguments and seed (``numpy.random.default_rng(seed)``
    shuffles the permutation table)."""
    perm = np.arange(256, dtype=np.int32)
    np.random.default_rng(seed).shuffle(perm)
    perm = np.concatenate([perm, perm])
    xx, yy = np.meshgrid(np.linspace(0, nx, nx, endpoint=False),
                         np.linspace(0, ny, ny, endpoint=False), indexing="ij")
    noise = np.zeros((nx, ny), dtype=np.float64)
    total = 0.0
    for k in range(fractal):
        amplitude = attenuation / (k + 1)
        frequency = complexity * 2**k
        noise += amplitude * _noise(xx * frequency, yy * frequency, perm)
        total += amplitude
    noise /= total
    noise = np.clip((noise + 1) / 2, 0, 1)
    flat = np.sort(noise.ravel())
    threshold = float(flat[min(int((1.0 - fill) * flat.size), flat.size - 1)])
    return noise > threshold


def _generator_seed(scene_seed: int, where: str, raw: Any) -> int:
    if raw is None:
        # No seed: drawn from the scene's seed (one map for the batch; see the module doc).
        return int(np.random.default_rng([int(scene_seed), 0x6D6170]).integers(2**32))
    if isinstance(raw, (bool, np.bool_)) or not isinstance(raw, (int, np.integer)) or raw < 0:
        raise checks.fail(where, f"must be an integer >= 0, got {short_repr(raw)}")
    return int(raw)


def _perlin(spec: dict, where: str, width: float, height: float, scene_seed: int
            ) -> np.ndarray:
    if spec.get("resolution") is None:
        raise checks.fail(where, "a generator map needs 'resolution' (metres per cell)")
    res = checks.size(spec["resolution"], f"{where}.resolution")
    nx, ny = max(1, round(width / res)), max(1, round(height / res))
    if nx * ny > MAX_MAP_CELLS:
        raise checks.fail(f"{where}.resolution", f"{width:g} m x {height:g} m at {res:g} m "
                                                 f"per cell is {nx} x {ny} cells, more than "
                                                 f"the limit of {MAX_MAP_CELLS}")
    values = dict(PERLIN_DEFAULTS)
    for key in ("complexity",):
        if spec.get(key) is not None:
            values[key] = checks.bounded(spec[key], f"{where}.{key}", low=0.0, strict=True)
    if spec.get("fill") is not None:
        values["fill"] = checks.bounded(spec["fill"], f"{where}.fill", low=0.0, high=1.0)
    if spec.get("attenuation") is not None:
        values["attenuation"] = checks.bounded(spec["attenuation"], f"{where}.attenuation",
                                               low=0.0, strict=True)
    if spec.get("fractal") is not None:
        f = spec["fractal"]
        if isinstance(f, (bool, np.bool_)) or not isinstance(f, (int, np.integer)) \
                or not 1 <= f <= _MAX_FRACTAL:
            raise checks.fail(f"{where}.fractal", f"must be an integer in [1, {_MAX_FRACTAL}], "
                                                  f"got {short_repr(f)}")
        values["fractal"] = int(f)
    seed = _generator_seed(scene_seed, f"{where}.seed", spec.get("seed"))
    return perlin_grid(nx, ny, seed=seed, **values)


def _downsample(value: Any, where: str) -> int:
    if value is None:
        return 1
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value < 1:
        raise checks.fail(where, f"must be an integer >= 1, got {short_repr(value)}")
    return int(value)


def resolve_map(raw: Any, where: str, base_dir: str | None, *, width: float, height: float,
                mdownsample: Any = None, map_resolution: float | None = None,
                scene_seed: int = 0) -> MapSpec:
    """The occupancy and cell size of ``world.obstacle_map`` (``where`` is its key path).

    ``width``, ``height`` [m]: the world's size, over which the map is stretched unless
    ``map_resolution`` [m] is given. Raises SceneError for an unknown generator, a missing
    image, more than ``MAX_MAP_CELLS`` cells or ``MAX_MAP_PIECES`` rectangles after
    ``mdownsample``.
    """
    step = _downsample(mdownsample, where.rsplit(".", 1)[0] + ".mdownsample")
    source = None
    if isinstance(raw, (str, os.PathLike)):
        raw = {"name": "image", "path": os.fspath(raw)}
    if isinstance(raw, Mapping):
        name = choice(raw.get("name"), tuple(MAP_GENERATOR_KEYS), f"{where}.name",
                      "map generator")
        spec = check_keys(raw, MAP_GENERATOR_KEYS[name], where)
        if name == "image":
            path = spec.get("path")
            if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
                raise checks.fail(f"{where}.path", f"must be a PNG file path, got "
                                                   f"{short_repr(path)}")
            source = os.fspath(path)
            occ = load_occupancy(_find_image(source, where, base_dir), where, None)
        else:
            occ = _perlin(spec, where, width, height, scene_seed)
    else:
        occ = load_occupancy(raw, where, base_dir)
    if step > 1:
        occ = np.ascontiguousarray(occ[::step, ::step])
    pieces = count_rectangles(occ)
    if pieces > MAX_MAP_PIECES:
        raise SceneError(f"{where}: the map needs {pieces} rectangles, more than the limit of "
                         f"{MAX_MAP_PIECES} (MAX_MAP_PIECES); use coarser or simpler maps "
                         "(world.mdownsample keeps every m-th cell, as in IR-SIM)")
    if map_resolution is not None:
        cell = (map_resolution * step, map_resolution * step)
    else:
        cell = (width / occ.shape[0], height / occ.shape[1])
    for axis, c in zip("xy", cell, strict=True):
        checks.size(c, f"{where} (cell size along {axis}, width or height / cells)")
    return MapSpec(occ=occ, cell=(float(cell[0]), float(cell[1])), source=source)
