"""Occupancy-grid obstacle maps: loading (PNG or array) and covering with rectangles.

Setup time only. Sizes are checked before anything is decoded or allocated: a PNG's width
and height come from its header, an inline array's from its list lengths.

Units: cells of ``resolution`` metres (one number, or x and y apart: IR-SIM stretches a map
over the world, so its cells need not be square); world coordinates in metres.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import SceneError
from .errors import short_repr
from .limits import MAX_IMAGE_BYTES
from .limits import MAX_MAP_CELLS
from .limits import MAX_MAP_PIECES
from .pieces import Piece

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_GRAY_WEIGHTS = np.array([0.299, 0.587, 0.114])  # ITU-R 601 luma of an RGB pixel
_DECODE_COLUMNS = 256  # image columns converted to float at a time (bounds the float copy)
_PATH_EXCERPT = 300  # [characters] of a file path quoted in a message


def _quote(path: str) -> str:
    return short_repr(path, _PATH_EXCERPT)


def png_size(path: str, where: str) -> tuple[int, int]:
    """(width, height) in pixels from a PNG file's header, without decoding the image."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(24)
    except OSError as exc:
        raise SceneError(f"{where}: cannot read map image {_quote(path)}: "
                         f"{exc.strerror or exc}") from exc
    # Signature (8 bytes), then the IHDR chunk: length (4), type (4), width (4), height (4).
    if len(head) < 24 or head[:8] != _PNG_SIGNATURE or head[12:16] != b"IHDR":
        raise SceneError(f"{where}: map image {_quote(path)} is not a PNG file "
                         "(obstacle maps are PNG images or arrays)")
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def _check_cells(width: int, height: int, where: str, what: str) -> None:
    if width < 1 or height < 1:
        raise SceneError(f"{where}: occupancy grid must be a non-empty 2-D array, got "
                         f"{what} {width} x {height}")
    if width * height > MAX_MAP_CELLS:
        raise SceneError(f"{where}: {what} {width} x {height} has {width * height} cells, "
                         f"more than the limit of {MAX_MAP_CELLS}")


def _load_png(path: str, where: str) -> np.ndarray:
    """Occupancy ``occ[i, j]`` (i along x, j up) of a PNG: dark (gray < 50 %) = occupied;
    fully transparent pixels (alpha 0) are free."""
    try:
        file_bytes = os.path.getsize(path)
    except OSError as exc:
        raise SceneError(f"{where}: cannot read map image {_quote(path)}: "
                         f"{exc.strerror or exc}") from exc
    if file_bytes > MAX_IMAGE_BYTES:
        raise SceneError(f"{where}: map image {_quote(path)} is {file_bytes} bytes, more "
                         f"than the limit of {MAX_IMAGE_BYTES} bytes")
    width, height = png_size(path, where)
    _check_cells(width, height, where, "map image")
    # pygame decodes without a display (no SDL video driver is needed for image.load), so
    # the process environment is left alone: a later window still opens.
    import pygame  # heavy and only needed for image maps, so imported lazily

    try:
        surface = pygame.image.load(path)
        rgb = pygame.surfarray.array3d(surface)  # uint8 (W, H, 3), indexed [col, row]
        # A PNG with an alpha channel: a fully transparent pixel shows the background (free
        # floor), whatever its colour bytes hold (often black, 0, 0, 0, 0). Without per-pixel
        # alpha the whole image is opaque.
        alpha = pygame.surfarray.array_alpha(surface) \
            if surface.get_flags() & pygame.SRCALPHA else None
    except (pygame.error, OSError, ValueError) as exc:
        raise SceneError(f"{where}: cannot decode map image {_quote(path)}: "
                         f"{short_repr(str(exc))}") from exc
    if rgb.shape[:2] != (width, height):
        raise SceneError(f"{where}: map image {_quote(path)} decodes to {rgb.shape[:2]}, "
                         f"not the {width} x {height} of its header")
    occ = np.empty((width, height), dtype=bool)
    # Converted a few columns at a time: a float64 copy of the whole (W, H, 3) image is 24
    # bytes per pixel. The arithmetic per pixel is unchanged, so the maps are too.
    for i0 in range(0, width, _DECODE_COLUMNS):
        gray = rgb[i0:i0 + _DECODE_COLUMNS].astype(np.float64) @ _GRAY_WEIGHTS
        occ[i0:i0 + _DECODE_COLUMNS] = 100.0 * (1.0 - gray / 255.0) > 50.0
    if alpha is not None:
        occ[alpha == 0] = False
    # surfarray rows run top-down; flip them so that j grows upward.
    return occ[:, ::-1].copy()


def _array_occupancy(obstacle_map: Any, where: str) -> np.ndarray:
    """Occupancy of an inline grid: 0-100 values (> 50 occupied) or bools, indexed [i, j]."""
    if isinstance(obstacle_map, np.ndarray):
        if obstacle_map.ndim != 2:
            raise SceneError(f"{where}: occupancy grid must be a non-empty 2-D array, got "
                             f"shape {obstacle_map.shape}")
        _check_cells(*obstacle_map.shape, where, "occupancy grid")
        arr = obstacle_map
    else:
        arr = _nested_grid(obstacle_map, where)
    if arr.dtype == np.bool_:
        return arr.astype(bool, copy=True)
    if arr.dtype.kind not in "iuf":
        raise SceneError(f"{where}: occupancy grid must hold numbers 0-100 or bools")
    values = arr.astype(np.float64)
    # Out-of-range values usually mean a 0-255 image passed as an array by mistake.
    if not np.all(np.isfinite(values)) or values.min() < 0 or values.max() > 100:
        raise SceneError(f"{where}: occupancy values must lie in [0, 100]")
    return values > 50.0


def _nested_grid(rows: Any, where: str) -> np.ndarray:
    """A list of equal-length rows of scalars as an array, sized before it is built."""
    if not isinstance(rows, (list, tuple)):
        raise SceneError(f"{where}: must be a PNG path or a 2-D list of numbers, got "
                         f"{short_repr(rows)}")
    if len(rows) > MAX_MAP_CELLS:
        raise SceneError(f"{where}: occupancy grid has {len(rows)} rows, more than the limit "
                         f"of {MAX_MAP_CELLS} cells")
    if not rows or not all(isinstance(row, (list, tuple)) for row in rows):
        raise SceneError(f"{where}: occupancy grid must be a non-empty 2-D array (a list of "
                         f"rows), got {short_repr(rows)}")
    width = len(rows[0])
    if any(len(row) != width for row in rows):
        raise SceneError(f"{where}: occupancy grid is not a rectangular array (rows differ "
                         "in length)")
    _check_cells(len(rows), width, where, "occupancy grid")
    # Scalars only: a nested value would make numpy build (and walk) a deeper array.
    bools = 0
    for row in rows:
        for cell in row:
            if isinstance(cell, (bool, np.bool_)):
                bools += 1
            elif not isinstance(cell, (int, float, np.integer, np.floating)):
                raise SceneError(f"{where}: occupancy grid must hold numbers 0-100 or bools, "
                                 f"got {short_repr(cell)}")
    if 0 < bools < len(rows) * width:
        # np.asarray would turn True into 1 (a free cell): refuse the mix instead.
        raise SceneError(f"{where}: occupancy grid mixes bools and numbers; use one kind")
    try:
        return np.asarray(rows)
    except (ValueError, OverflowError) as exc:
        raise SceneError(f"{where}: occupancy grid is not a rectangular array of numbers") \
            from exc


def count_rectangles(occ: np.ndarray) -> int:
    """Number of pieces :func:`grid_rectangles` makes of ``occ``, in O(cells) numpy.

    A piece starts at every run of occupied cells along x (in a row j) that is not the very
    same run [a, b) in row j - 1; those are counted without building any piece.
    """
    occ = np.asarray(occ, dtype=bool)
    padded = np.pad(occ, ((1, 1), (1, 0)))  # a free cell before/after each row, a free row 0
    starts = padded[1:-1] & ~padded[:-2]  # (nx, ny + 1): a run begins at cell i of row j
    ends = padded[1:-1] & ~padded[2:]  # ... or ends at cell i
    # Label every run of a row by the number of run starts up to it (0 on free cells).
    label = np.cumsum(starts, axis=0) * padded[1:-1]
    # A run [a, b) of row j repeats row j - 1 iff a starts and b - 1 ends a run there, and
    # both belong to the same run of row j - 1.
    run_start = starts[:, 1:]
    same_start = run_start & starts[:, :-1]
    begin = np.flatnonzero(same_start.T.ravel())  # ordered by row, then by cell
    ends_now = np.flatnonzero((ends[:, 1:]).T.ravel())
    # For each run of row j starting at a, its end b - 1 is the first end >= a in that row.
    stop = ends_now[np.searchsorted(ends_now, begin)] if len(begin) else begin
    nx = occ.shape[0]
    row, a = np.divmod(begin, nx)
    last = stop - row * nx
    prev_label = label[:, :-1].T.ravel()
    prev_end = ends[:, :-1].T.ravel()
    repeats = (prev_end[row * nx + last]
               & (prev_label[row * nx + a] == prev_label[row * nx + last]))
    return int(run_start.sum() - np.count_nonzero(repeats))


def load_occupancy(obstacle_map: Any, where: str, base_dir: str | None) -> np.ndarray:
    """Load an occupancy grid as a bool array ``occ[i, j]`` (i along x, j along y), without
    counting its rectangles (``load_grid`` does; a caller that downsamples first counts
    after).

    Args:
        obstacle_map: 2-D array-like of 0-100 values or bools (already indexed [i, j]), or
            a path to a PNG image (relative paths are resolved against ``base_dir``). In
            images dark pixels are occupied and the top row is the largest y.
        where: location prefix for error messages.
        base_dir: folder of the scene file, or None (current directory).

    Returns:
        Bool array, True where the cell value is > 50 (on a 0-100 scale) or True.

    Raises:
        SceneError: unreadable or non-PNG image, more than ``MAX_MAP_CELLS`` cells, values
            outside [0, 100], ragged or non-2-D arrays.
    """
    if isinstance(obstacle_map, (str, os.PathLike)):
        path = os.fspath(obstacle_map)
        if not os.path.isabs(path) and base_dir is not None:
            path = os.path.join(base_dir, path)
        if not os.path.isfile(path):
            raise SceneError(f"{where}: map image not found: {_quote(path)}")
        return _load_png(path, where)
    return _array_occupancy(obstacle_map, where)


def load_grid(obstacle_map: Any, where: str, base_dir: str | None) -> np.ndarray:
    """:func:`load_occupancy`, refused when it needs more than ``MAX_MAP_PIECES``
    rectangles (counted before any is built)."""
    occ = load_occupancy(obstacle_map, where, base_dir)
    pieces = count_rectangles(occ)
    if pieces > MAX_MAP_PIECES:
        raise SceneError(f"{where}: the map needs {pieces} rectangles, more than the limit of "
                         f"{MAX_MAP_PIECES} (MAX_MAP_PIECES); use coarser or simpler maps")
    return occ


def _cell(resolution: float | Sequence[float]) -> tuple[float, float]:
    """(x, y) cell size [m] of a scalar or a pair."""
    if isinstance(resolution, (int, float, np.integer, np.floating)):
        return float(resolution), float(resolution)
    rx, ry = resolution
    return float(rx), float(ry)


def _row_runs(row: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs [start, stop) of True in a 1-D bool array."""
    padded = np.concatenate([[False], row, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def grid_rectangles(
    occ: np.ndarray, resolution: float | Sequence[float], origin: Sequence[float] = (0.0, 0.0)
) -> list[Piece]:
    """Cover the occupied cells with few solid axis-aligned rectangles (world frame).

    Greedy: maximal runs along x in each row j; a run that repeats unchanged in the next
    rows extends the same rectangle in y. Cells are solid (not outlines) so that bodies
    cannot tunnel through a one-cell-thick wall between two contact checks.

    Args:
        occ: bool occupancy ``occ[i, j]``; cell (i, j) covers
            x in [i*rx, (i+1)*rx], y in [j*ry, (j+1)*ry] (plus ``origin``).
        resolution: cell size [m], one number (square cells) or (rx, ry).
        origin: world position [m] of the grid corner (0, 0).

    Returns:
        CCW 4-vertex polygon pieces in world coordinates [m].
    """
    occ = np.asarray(occ, dtype=bool)
    ox, oy = float(origin[0]), float(origin[1])
    boxes: list[tuple[int, int, int, int]] = []  # (i0, i1, j0, j1), half-open
    open_runs: dict[tuple[int, int], int] = {}  # run -> first row j
    for j in range(occ.shape[1] + 1):
        runs = set(_row_runs(occ[:, j])) if j < occ.shape[1] else set()
        for run in [r for r in open_runs if r not in runs]:
            boxes.append((run[0], run[1], open_runs.pop(run), j))
        for run in runs:
            open_runs.setdefault(run, j)
    rx, ry = _cell(resolution)
    pieces = []
    for i0, i1, j0, j1 in sorted(boxes, key=lambda b: (b[2], b[0])):
        x0, x1 = ox + i0 * rx, ox + i1 * rx
        y0, y1 = oy + j0 * ry, oy + j1 * ry
        pieces.append(Piece("polygon", [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]))
    return pieces


def _edge_runs(mask: np.ndarray) -> list[tuple[int, int, int]]:
    """Runs (line, start, stop) of True along axis 1 of a 2-D mask, per line of axis 0."""
    return [(line, a, b) for line in range(mask.shape[0]) for a, b in _row_runs(mask[line])]


def grid_boundary_segments(
    occ: np.ndarray, resolution: float | Sequence[float], origin: Sequence[float] = (0.0, 0.0)
) -> np.ndarray:
    """Boundary edges between occupied and free cells (or the map border), for drawing.

    Collinear neighbouring edges are merged into one segment.

    Returns:
        (k, 2, 2) float64 array of world-frame segments [m].
    """
    occ = np.asarray(occ, dtype=bool)
    ox, oy = float(origin[0]), float(origin[1])
    padded = np.pad(occ, 1, constant_values=False)
    # Vertical lines x = i*res: cells (i-1, j) and (i, j) differ. Shape (nx+1, ny).
    vertical = padded[:-1, 1:-1] != padded[1:, 1:-1]
    # Horizontal lines y = j*res: cells (i, j-1) and (i, j) differ. Shape (ny+1, nx).
    horizontal = (padded[1:-1, :-1] != padded[1:-1, 1:]).T
    segs = [[[i, a], [i, b]] for i, a, b in _edge_runs(vertical)]
    segs += [[[a, j], [b, j]] for j, a, b in _edge_runs(horizontal)]
    out = np.array(segs, dtype=np.float64).reshape(-1, 2, 2) * np.array(_cell(resolution))
    return out + np.array([ox, oy])
