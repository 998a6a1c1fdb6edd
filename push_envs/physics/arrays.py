"""The engine's arrays as one named structure, the way kernels receive them.

Every compiled entry point takes a :class:`WorldArrays` instead of dozens of positional
arrays: numba types a ``NamedTuple`` of arrays once per layout, resolves ``W.pos`` at compile
time, and passes it to helpers as one value. Column names of the packed arrays are in
``layout.py``.
"""

from __future__ import annotations

from dataclasses import make_dataclass
from typing import NamedTuple

import numpy as np

from .abi import AbiType
from .jit import compiled


class WorldArrays(NamedTuple):
    """All arrays of a batch of ``E`` worlds of one compiled scene (``B`` bodies).

    Scene constants (identical for every env):
        prm:    (PR_LEN,) world parameters: step time [s], gravity [m/s^2], slop [m] ...
        bint, bflt: (B, BI_LEN) / (B, BF_LEN) per-body integers and floats
        pint, pvert, pflt: movable bodies' convex pieces (kind, vertices [m], radii [m])
        sint, svert, sflt: static pieces, in the world frame
        grid, gstart, gitem: uniform grid over the static pieces (broad phase)
        movable: (M,) indices of the bodies that can move
    State (leading env axis; what a reset restores):
        epar:   (E, B, EP_LEN) per-env mass [kg], inertia [kg m^2], friction, size factor
        pos:    (E, B, 2) centre of mass [m];   ang: (E, B) heading [rad]
        vel:    (E, B, 2) velocity [m/s];       omg: (E, B) yaw rate [rad/s]
        drv:    (E, B, 2) drive state;          cmd: (E, B, 2) drive commands
        active: (E,) uint8, 0 skips the env in a step
    Scratch (rewritten every step):
        bsc:    (E, 2 B, BS_LEN) per-body floats: B hot rows, then B cold ones (``cold_row``)
        bis:    (E, B, IS_LEN) per-body integers
        aabb, stamp, prs, pfl, pord, cbuf
        vbuf:   (E, 4, MAX_VERTS, 2) the narrow phase's two pieces' world vertices [m],
                then their edge normals
    Outputs of the last step:
        cti, ctf, ctn: touching contacts (pair indices, floats, count) per env
        hl:     (E, HL_LEN) physics-health figures (max penetration [m], sweeps, ...)
    Scratch added for the contact graph (appended, so earlier fields keep their places):
        gsc:    (E, layout.gsc_len(B, K, slots)) int64: the BFS stamp and the queue's start,
                the drive-slot table of the traction rule, the BFS queue, then the touching
                pairs by body (layout.py).
                Per-body graph scratch (CSR offsets, stamps, slot masks) are columns of
                ``bis``, the state saved for a rollback the cold rows of ``bsc``: every field
                costs the call a type check (about 0.17 us each, measured), so scratch joins
                existing arrays.
    Appended for IR-SIM's world model:
        rng:    (E,) uint64, each env's own random stream (rng.py) for its world-model draws:
                random placements at a reset (placement.py), motion noise in a step
                (kinematics.draw_noise); env i of a batch seeded s draws as a single world
                seeded s + i.
        yaw:    (E, B, YW_LEN) IR-SIM's drive extras (layout.YW_*): an omni_angular drive's
                yaw-rate command and state [rad/s], a noisy drive's draws (read for those
                drives only, so other scenes never touch it).
    """

    prm: np.ndarray
    bint: np.ndarray
    bflt: np.ndarray
    pint: np.ndarray
    pvert: np.ndarray
    pflt: np.ndarray
    sint: np.ndarray
    svert: np.ndarray
    sflt: np.ndarray
    grid: np.ndarray
    gstart: np.ndarray
    gitem: np.ndarray
    movable: np.ndarray
    epar: np.ndarray
    pos: np.ndarray
    ang: np.ndarray
    vel: np.ndarray
    omg: np.ndarray
    drv: np.ndarray
    cmd: np.ndarray
    active: np.ndarray
    bsc: np.ndarray
    bis: np.ndarray
    aabb: np.ndarray
    stamp: np.ndarray
    prs: np.ndarray
    pfl: np.ndarray
    pord: np.ndarray
    vbuf: np.ndarray
    cbuf: np.ndarray
    cti: np.ndarray
    ctf: np.ndarray
    ctn: np.ndarray
    hl: np.ndarray
    gsc: np.ndarray
    rng: np.ndarray
    yaw: np.ndarray


WORLD_ABI = AbiType(WorldArrays, {
    "prm": ("f8", 1), "bint": ("i8", 2), "bflt": ("f8", 2), "pint": ("i8", 2),
    "pvert": ("f8", 3), "pflt": ("f8", 2), "sint": ("i8", 2), "svert": ("f8", 3),
    "sflt": ("f8", 2), "grid": ("f8", 1), "gstart": ("i8", 1), "gitem": ("i8", 1),
    "movable": ("i8", 1), "epar": ("f8", 3), "pos": ("f8", 3), "ang": ("f8", 2),
    "vel": ("f8", 3), "omg": ("f8", 2), "drv": ("f8", 3), "cmd": ("f8", 3), "active": ("u1", 1),
    "bsc": ("f8", 3), "bis": ("i8", 3), "aabb": ("f8", 3), "stamp": ("i8", 2), "prs": ("i8", 3),
    "pfl": ("f8", 3), "pord": ("i8", 3), "vbuf": ("f8", 4), "cbuf": ("f8", 2), "cti": ("i8", 3),
    "ctf": ("f8", 3), "ctn": ("i8", 1), "hl": ("f8", 2), "gsc": ("i8", 2), "rng": ("u8", 1),
    "yaw": ("f8", 3),
})
"""The declared type of :class:`WorldArrays`, the structure the engine's compiled step
receives by pointer (``abi.py``)."""

load_world = WORLD_ABI.loader

_F = WorldArrays._fields
SCENE_CONSTANTS = _F[_F.index("bint"):_F.index("movable") + 1]
"""Names of the fields of :class:`WorldArrays` that a compiled scene packs once and every env
of a batch shares (``bint`` ... ``movable``)."""

SceneConstants = make_dataclass("SceneConstants", [(n, np.ndarray) for n in SCENE_CONSTANTS])
SceneConstants.__module__ = __name__
SceneConstants.__doc__ = """The scene constants of :class:`WorldArrays` (:data:`SCENE_CONSTANTS`)
as a dataclass's fields, declared once here: ``scene.CompiledScene`` inherits them."""


@compiled
def cold_row(bsc: np.ndarray, b: int) -> int:
    """Row of ``bsc[e]`` holding body b's cold columns (``layout.BS_SAVE``...): the rows
    after the B hot ones."""
    return bsc.shape[1] // 2 + b


def aligned_zeros(shape: tuple[int, ...], dtype: type = np.float64, align: int = 64) -> np.ndarray:
    """A zeroed C-contiguous array whose first element starts a cache line (``align`` bytes).

    numpy only promises 16-byte alignment; the per-body and per-pair scratch rows are sized
    in whole cache lines (layout.py), and they only fall on line boundaries when the array
    does too.
    """
    dt = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dt.itemsize
    buf = np.zeros(nbytes + align, np.uint8)
    off = -buf.ctypes.data % align
    return buf[off:off + nbytes].view(dt).reshape(shape)
