"""The behaviour stage's arrays as one named structure, passed to its C function by pointer.

``B`` bodies, ``E`` envs, ``S`` line segments (of linestring bodies), ``Q`` goals per queue,
``G`` group behaviours, ``K`` neighbours at most per body. Column names in :mod:`.layout`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..abi import AbiType


class BehaviourArrays(NamedTuple):
    """What the behaviour stage reads and writes beside the physics' WorldArrays.

    Scene constants (one row per body, identical for every env):
        bi:     (B, BI_LEN) behaviour code, kinematics, role, arrive mode, loop / wander,
                target roles, segments, group, ... (layout.BI_*)
        bf:     (B, BF_LEN) goal threshold [m], centroid [m], bounding radius [m], velocity
                and acceleration limits, wander range (layout.BF_*)
        prm:    (B, NP) the behaviour's parameters, columns named by its module (P_*)
        seg:    (S, 4) line segments of linestring bodies in their body frame [m]
                (x1, y1, x2, y2); at least one row
        ginit:  (B, Q, GQ_LEN) the goal queue a reset starts from
        grp:    (G, GR_LEN) group behaviours: code, first member in gmem, number of members,
                the address of its C function
        gmem:   (M,) body indices of the groups' members, group after group
        fn:     (B,) address of the C function of the body's own behaviour (0: none)
        manual: (B,) uint8, 1: the body is commanded from outside (World.step's commands,
                an env's actions): its behaviour does not write its command
    Per env (what a reset restores):
        gq:     (E, B, Q, GQ_LEN) goal queues; gs: (E, B, GS_LEN) head, length, arrive flag
        start:  (E, B, 3) each body's pose at the reset (where a single-goal loop returns)
        rng:    (E,) uint64 wander streams (push_envs.physics.rng)
        ovel:   (E, B, 2) orca's own velocity of each member [m/s] (RVO2's agent velocity)
        korder: (E, M) orca's members in RVO2's k-d tree order: korder[e, first + p] is the
                member (0 .. m-1 of its group) at place p of the tree's agent list, which
                each step's build reorders in place, set by each reset (M: every group's
                members)
        mem:    (E, B, MEM_LEN) a user behaviour's memory
        pend:   (E,) uint8, 1: the physics moved the bodies since the last arrival check
    Scratch (rewritten every step):
        snap:   (E, B, SN_LEN) each body as the others see it; segw: (E, S, 4) segments in
                the world [m]; agt: (E, B, AG_LEN) a group behaviour's members
                (layout.AG_*); nbi, nbd: (E, K) neighbour indices and squared distances;
                lines: (E, K, 6) velocity-obstacle cones or orca half-planes; proj:
                (E, K, 4) orca's projected half-planes; ktree: (E, T, KT_LEN) orca's k-d
                tree nodes and its agent list packed in the tree's order (layout.KT_*),
                kstack: (E, T) its walk's stack, T = 2 M;
                ego: (E, EGO_LEN), ugoal: (E, 4), others: (E, B, 5), usegs: (E, S, 4),
                uout: (E, 3): a user behaviour's arguments; gego: (E, U, EGO_LEN),
                ggoal: (E, U, 4), gumem: (E, U, MEM_LEN), gout: (E, U, 3): a user group
                behaviour's, U its largest group's members (at least one row)
    """

    bi: np.ndarray
    bf: np.ndarray
    prm: np.ndarray
    seg: np.ndarray
    ginit: np.ndarray
    grp: np.ndarray
    gmem: np.ndarray
    fn: np.ndarray
    manual: np.ndarray
    gq: np.ndarray
    gs: np.ndarray
    start: np.ndarray
    rng: np.ndarray
    ovel: np.ndarray
    korder: np.ndarray
    mem: np.ndarray
    pend: np.ndarray
    snap: np.ndarray
    segw: np.ndarray
    agt: np.ndarray
    nbi: np.ndarray
    nbd: np.ndarray
    lines: np.ndarray
    proj: np.ndarray
    ktree: np.ndarray
    kstack: np.ndarray
    ego: np.ndarray
    ugoal: np.ndarray
    others: np.ndarray
    usegs: np.ndarray
    uout: np.ndarray
    gego: np.ndarray
    ggoal: np.ndarray
    gumem: np.ndarray
    gout: np.ndarray


BEHAVIOUR_ABI = AbiType(BehaviourArrays, {
    "bi": ("i8", 2), "bf": ("f8", 2), "prm": ("f8", 2), "seg": ("f8", 2), "ginit": ("f8", 3),
    "grp": ("i8", 2), "gmem": ("i8", 1), "fn": ("i8", 1), "manual": ("u1", 1),
    "gq": ("f8", 4), "gs": ("i8", 3), "start": ("f8", 3), "rng": ("u8", 1), "ovel": ("f8", 3),
    "korder": ("i8", 2),
    "mem": ("f8", 3), "pend": ("u1", 1), "snap": ("f8", 3), "segw": ("f8", 3),
    "agt": ("f8", 3), "nbi": ("i8", 2), "nbd": ("f8", 2), "lines": ("f8", 3),
    "proj": ("f8", 3), "ktree": ("f8", 3), "kstack": ("i8", 2), "ego": ("f8", 2),
    "ugoal": ("f8", 2), "others": ("f8", 3),
    "usegs": ("f8", 3), "uout": ("f8", 2), "gego": ("f8", 3), "ggoal": ("f8", 3),
    "gumem": ("f8", 3), "gout": ("f8", 3),
})
"""The declared type of :class:`BehaviourArrays` (the stage receives it by pointer)."""

load_behaviour = BEHAVIOUR_ABI.loader

GR_CODE = 0  # grp[G, :]: behaviour code of the group
GR_START = 1  # first member in gmem
GR_COUNT = 2  # number of members
GR_FN = 3  # address of the group behaviour's C function
GR_LEN = 4


def empty(shape: tuple[int, ...], dtype: type = np.float64) -> np.ndarray:
    """A zeroed array of ``shape`` with at least one row (a packed structure's array may not
    be empty: its data pointer is what the kernels index)."""
    return np.zeros((max(shape[0], 1), *shape[1:]), dtype)
