"""The floor plans of PushMaze-v1: eight walled 4 m x 4 m layouts side by side in one map.

A layout is a 40 x 40 grid of 0.1 m cells with a one-cell wall around it; interior walls
leave 0.8 m doorways, wide enough for the 0.3 m box (bounding radius 0.21 m) with the robot
behind it. ``python -m push_envs.tasks.pushing.push_maze.floor_plans <out.png>`` writes the map
(by default the task's own maze.png)
PNG in IR-SIM's ``obstacle_map`` format (dark = occupied, the top row is the largest y);
tests/tasks/pushing/test_push_maze.py checks the shipped PNG against :func:`plan_map`.
"""

from __future__ import annotations

import struct
import sys
import zlib
from pathlib import Path

import numpy as np

CELLS = 40  # cells per layout side
RESOLUTION = 0.1  # [m] per cell
COLUMNS, ROWS = 4, 2  # layouts side by side in the map


def _h(j: int, i0: int, i1: int) -> tuple[int, int, int, int]:
    """A horizontal wall: cells i0 <= i < i1 of row j, as (i0, i1, j0, j1) half-open."""
    return (i0, i1, j, j + 1)


def _v(i: int, j0: int, j1: int) -> tuple[int, int, int, int]:
    """A vertical wall: cells j0 <= j < j1 of column i."""
    return (i, i + 1, j0, j1)


def _square(i: int, j: int, n: int) -> tuple[int, int, int, int]:
    return (i, i + n, j, j + n)


# name -> interior walls (cells of one layout, border excluded)
LAYOUTS: dict[str, list[tuple[int, int, int, int]]] = {
    "two rooms": [_v(20, 0, 16), _v(20, 24, 40)],
    "two rooms, side door": [_h(20, 0, 28), _h(20, 36, 40)],
    "three rooms": [_v(13, 0, 28), _v(13, 36, 40), _v(26, 0, 4), _v(26, 12, 40)],
    "four rooms": [_v(20, 0, 6), _v(20, 14, 26), _v(20, 34, 40),
                   _h(20, 0, 6), _h(20, 14, 26), _h(20, 34, 40)],
    "serpentine": [_h(13, 0, 31), _h(26, 9, 40)],
    "ring": [_square(13, 13, 14)],
    "t rooms": [_v(14, 0, 26), _v(14, 34, 40), _h(20, 14, 24), _h(20, 32, 40)],
    "pillars": [_square(9, 9, 3), _square(28, 9, 3), _square(9, 28, 3), _square(28, 28, 3),
                _v(20, 0, 17)],
}


def layout_cells(walls: list[tuple[int, int, int, int]]) -> np.ndarray:
    """Occupancy ``occ[i, j]`` (i along x, j up) of one layout: its border and its walls."""
    occ = np.zeros((CELLS, CELLS), bool)
    occ[0, :] = occ[-1, :] = occ[:, 0] = occ[:, -1] = True
    for i0, i1, j0, j1 in walls:
        occ[i0:i1, j0:j1] = True
    return occ


def plan_map() -> np.ndarray:
    """The whole map: layout k at column k % COLUMNS, row k // COLUMNS."""
    occ = np.zeros((COLUMNS * CELLS, ROWS * CELLS), bool)
    for k, walls in enumerate(LAYOUTS.values()):
        i0, j0 = (k % COLUMNS) * CELLS, (k // COLUMNS) * CELLS
        occ[i0:i0 + CELLS, j0:j0 + CELLS] = layout_cells(walls)
    return occ


def png_bytes(occ: np.ndarray) -> bytes:
    """An 8-bit grayscale PNG of ``occ[i, j]``: occupied black, free white, top row = max j."""
    rows = np.where(np.asarray(occ, bool).T[::-1], 0, 255).astype(np.uint8)
    return encode_png(rows, 0)


def encode_png(rows: np.ndarray, colour_type: int) -> bytes:
    """PNG file bytes of the 8-bit image ``rows`` (top row first): (H, W) for colour type 0
    (grayscale), (H, W, 4) for colour type 6 (RGBA)."""
    rows = np.ascontiguousarray(rows, np.uint8)
    raw = b"".join(b"\x00" + r.tobytes() for r in rows)  # filter type 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + \
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    head = struct.pack(">IIBBBBB", rows.shape[1], rows.shape[0], 8, colour_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + \
        chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "maze.png"
    out.write_bytes(png_bytes(plan_map()))
    print(f"wrote {out}")
