"""A compiled scene's goals and behaviours, checked and turned into the stage's arrays
(setup time only), and what World reads of them.

Each body's IR-SIM fields come from its :class:`~push_envs.physics.config.BodySpec`:
``goal`` (poses), ``goal_threshold`` [m], ``arrive_mode``, ``behavior`` and
``group_behavior`` (mappings with a ``name``), ``group`` and ``path`` (the body's key path,
for messages). A behaviour IR-SIM does not have, or has not for the body's kinematics, a
parameter no behaviour takes, or a value out of its range is a :class:`SceneError` naming the
file, the body's key path and the key.

IR-SIM's rules for who runs what:

* a group behaviour (``group_behavior``) drives every member of its group (the bodies of one
  role and group id), and wins over a member's own ``behavior``, as IR-SIM's group actions
  come first;
* ``loop``, ``wander`` and their range are read from the body's own behaviour, or from its
  group's when it has none (IR-SIM's ``beh_config``);
* an immovable body (static, or of infinite mass) never runs a behaviour: IR-SIM never steps
  it; a movable body without kinematics cannot run one.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import shapely

from .. import checks
from ..abi import Packed
from ..errors import SceneError
from ..errors import short_repr
from ..layout import BI_KIND
from ..layout import IMMOVABLE
from ..layout import PI_BODY
from ..layout import PI_NV
from ..rng import seed_states
from ..scene import CompiledScene
from . import params as P
from . import registry
from .arrays import BEHAVIOUR_ABI
from .arrays import GR_FN
from .arrays import GR_LEN
from .arrays import BehaviourArrays
from .arrays import empty
from .layout import AG_LEN
from .layout import BF_ACCE
from .layout import BF_CX
from .layout import BF_CY
from .layout import BF_HIGH
from .layout import BF_LEN
from .layout import BF_LOW
from .layout import BF_RADIUS
from .layout import BF_THRESH
from .layout import BF_VMAX
from .layout import BF_VMIN
from .layout import BI_CODE
from .layout import BI_DIMS
from .layout import BI_GROUP
from .layout import BI_KIN
from .layout import BI_LEN
from .layout import BI_LOOP
from .layout import BI_MOVES
from .layout import BI_NGOAL
from .layout import BI_NSEG
from .layout import BI_ROLE
from .layout import BI_SEG0
from .layout import BI_SOCIAL
from .layout import BI_STATE_MODE
from .layout import BI_TARGET
from .layout import BI_WANDER
from .layout import CODE_NONE
from .layout import CODE_USER_GROUP
from .layout import EGO_LEN
from .layout import GQ_DIMS
from .layout import GQ_LEN
from .layout import GS_ARRIVED
from .layout import GS_COUNT
from .layout import GS_HEAD
from .layout import GS_LEN
from .layout import KIN_CODES
from .layout import KIN_NONE
from .layout import KT_LEN
from .layout import MEM_LEN
from .layout import ROLE_OBSTACLE
from .layout import ROLE_ROBOT
from .layout import SN_LEN

DEFAULT_THRESHOLD = 0.1  # [m] IR-SIM's goal_threshold
ARRIVE_MODES = ("position", "state")


def fields_of(body: Any, index: int, role_index: int) -> dict[str, Any]:
    """The IR-SIM fields of a body spec, with IR-SIM's defaults where it has none."""
    path = getattr(body, "path", None) or f"{body.role}[{role_index}]"
    return {
        "goal": getattr(body, "goal", None),
        "goal_threshold": getattr(body, "goal_threshold", DEFAULT_THRESHOLD),
        "arrive_mode": getattr(body, "arrive_mode", "position"),
        "behavior": getattr(body, "behavior", None),
        "group": getattr(body, "group", index),
        "group_behavior": getattr(body, "group_behavior", None),
        "path": path,
    }


def _goals(raw: Any, where: str) -> list[tuple[float, float, float, int]]:
    """Goal poses as (x, y, theta, dims): one pose or a sequence of them."""
    if raw is None:
        return []
    seq = list(raw) if isinstance(raw, (list, tuple, np.ndarray)) else None
    if not seq:
        raise checks.fail(where, f"must be a pose [x, y, theta] or a list of poses, got "
                                 f"{short_repr(raw)}")
    poses = seq if isinstance(seq[0], (list, tuple, np.ndarray)) else [seq]
    out = []
    for k, pose in enumerate(poses):
        at = f"{where}[{k}]" if poses is seq else where
        if not isinstance(pose, (list, tuple, np.ndarray)) or len(pose) < 2:
            raise checks.fail(at, f"must be [x, y] or [x, y, theta], got {short_repr(pose)}")
        vals = [checks.real(v, f"{at}[{i}]") for i, v in enumerate(pose)]
        dims = min(len(vals), 3)
        vals = (vals + [0.0])[:3]
        out.append((vals[0], vals[1], vals[2], dims))
    return out


def _shape_disc(scene: CompiledScene, i: int) -> tuple[float, float, float]:
    """Centroid (body frame) [m] and minimum bounding radius [m] of body i's geometry
    (IR-SIM's centroid and radius), the grid map's from its cells."""
    info = scene.shapes[i]
    if info is None:
        rows = np.flatnonzero(scene.sint[:, PI_BODY] == i)
        polys = [shapely.Polygon(scene.svert[j, :scene.sint[j, PI_NV]]) for j in rows]
        if not polys:
            return 0.0, 0.0, 0.0
        area = np.array([p.area for p in polys])
        cen = np.array([p.centroid.coords[0] for p in polys])
        c = (area[:, None] * cen).sum(0) / max(area.sum(), 1e-300)
        pts = shapely.MultiPoint(np.concatenate([scene.svert[j, :scene.sint[j, PI_NV]]
                                                 for j in rows]))
        return float(c[0]), float(c[1]), float(shapely.minimum_bounding_radius(pts))
    geom = info.geometry((0.0, 0.0, 0.0))
    c = np.asarray(info.centroid, dtype=float)
    return float(c[0]), float(c[1]), float(shapely.minimum_bounding_radius(geom))


def _segments(body: Any) -> list[tuple[float, float, float, float]]:
    """The body-frame segments of a line string body (IR-SIM's rvo_line_segments)."""
    shape = body.shape
    if shape.get("name") != "linestring":
        return []
    v = [tuple(map(float, p)) for p in shape["vertices"]]
    return [(*v[k], *v[k + 1]) for k in range(len(v) - 1)]


def _known_name(raw: Any, where: str, kin: str | None, group: bool) -> None:
    """Refuse a behaviour name nobody has, before its parameters (which another behaviour's
    would then seem to be typos of)."""
    if isinstance(raw, Mapping) and isinstance(raw.get("name"), str):
        found = registry.lookup(raw["name"], kin, group)
        if isinstance(found, str) and found.startswith("unknown"):
            raise checks.fail(f"{where}.name", found)


def _limits(values: tuple[float, ...], fill: float) -> list[float]:
    vals = [float(v) for v in values][:3]
    return vals + [fill] * (3 - len(vals))


class BehaviourPlan:
    """The stage's arrays for a batch of ``num_envs`` envs of ``scene``, and their C
    functions' addresses (compiled, or loaded from the cache, when the plan is made).

    Raises:
        SceneError: a behaviour or goal the scene cannot run (see the module's docstring).
    """

    def __init__(self, scene: CompiledScene, num_envs: int) -> None:
        self.scene = scene
        spec = scene.spec
        src = spec.source
        nb = scene.num_bodies
        E = int(num_envs)
        known = registry.known_parameters()
        bi = np.zeros((nb, BI_LEN), np.int64)
        bf = np.zeros((nb, BF_LEN))
        bi[:, BI_GROUP] = -1
        bi[:, BI_SOCIAL] = -1
        bi[:, BI_ROLE] = ROLE_OBSTACLE
        bi[:, BI_DIMS] = 3
        bf[:, BF_THRESH] = DEFAULT_THRESHOLD
        goals: list[list[tuple[float, float, float, int]]] = [[] for _ in range(nb)]
        segs: list[tuple[float, float, float, float]] = []
        rows: list[list[float]] = [[] for _ in range(nb)]
        own: list[registry.Behaviour | None] = [None] * nb
        group_key: dict[tuple[str, int], list[int]] = {}
        group_raw: dict[tuple[str, int], tuple[dict, str]] = {}
        counts: dict[str, int] = {}
        for i in range(nb):
            c = _shape_disc(scene, i)
            bf[i, BF_CX], bf[i, BF_CY], bf[i, BF_RADIUS] = c
            bi[i, BI_MOVES] = int(scene.bint[i, BI_KIND] != IMMOVABLE)
        for i, body in enumerate(spec.bodies):
            k = counts.get(body.role, 0)
            counts[body.role] = k + 1
            f = fields_of(body, i, k)
            where = f"{src}: {f['path']}"
            kin = body.kinematics.name if body.kinematics is not None else None
            bi[i, BI_KIN] = KIN_CODES.get(kin, KIN_NONE) if kin else KIN_NONE
            bi[i, BI_ROLE] = ROLE_ROBOT if body.role == "robot" else ROLE_OBSTACLE
            bf[i, BF_VMIN:BF_VMIN + 3] = _limits(body.vel_min, -1.0)
            bf[i, BF_VMAX:BF_VMAX + 3] = _limits(body.vel_max, 1.0)
            bf[i, BF_ACCE:BF_ACCE + 3] = _limits(body.acce, math.inf)
            goals[i] = _goals(f["goal"], f"{where}.goal")
            thr = f["goal_threshold"]
            bf[i, BF_THRESH] = checks.bounded(thr, f"{where}.goal_threshold", low=0.0)
            if f["arrive_mode"] not in ARRIVE_MODES:
                raise checks.fail(f"{where}.arrive_mode", f"must be position or state, got "
                                                          f"{short_repr(f['arrive_mode'])}")
            bi[i, BI_STATE_MODE] = int(f["arrive_mode"] == "state")
            body_segs = _segments(body)
            if body_segs:
                bi[i, BI_SEG0] = len(segs)
                bi[i, BI_NSEG] = len(body_segs)
                segs.extend(body_segs)
            group_beh = f["group_behavior"]
            beh_raw = f["behavior"]
            if group_beh is not None:
                _known_name(group_beh, f"{where}.group_behavior", kin, group=True)
                gb = P.check_behaviour(group_beh, f"{where}.group_behavior", known)
                # BodySpec.behavior is the group's mapping when the body has none of its own
                if beh_raw is not None and dict(beh_raw) == dict(group_beh):
                    beh_raw = None
                key = (body.role, int(f["group"]))
                group_key.setdefault(key, []).append(i)
                group_raw.setdefault(key, (gb, where))
            config = None
            if beh_raw is not None:
                _known_name(beh_raw, f"{where}.behavior", kin, group=False)
                config = P.check_behaviour(beh_raw, f"{where}.behavior", known)
            elif group_beh is not None:
                config = gb
            movable = bi[i, BI_MOVES] != 0
            if beh_raw is not None and movable:
                found = registry.lookup(config["name"], kin, group=False)
                if isinstance(found, str):
                    raise checks.fail(f"{where}.behavior.name", found)
                own[i] = found
                rows[i] = P.row(config, found.params)
            if config is not None:
                self._config(bi, bf, i, config)
        # groups: one group behaviour per (role, group id), from its first member's mapping
        grp_rows: list[list[int]] = []
        gmem: list[int] = []
        self._group_beh: list[registry.Behaviour] = []
        for key, members in group_key.items():
            gb, where = group_raw[key]
            kin = spec.bodies[members[0]].kinematics
            kin_name = kin.name if kin is not None else None
            found = registry.lookup(gb["name"], kin_name, group=True)
            if isinstance(found, str):
                raise checks.fail(f"{where}.group_behavior.name", found)
            for i in members:
                other = spec.bodies[i].kinematics
                if (other.name if other is not None else None) != kin_name:
                    raise checks.fail(f"{src}: {fields_of(spec.bodies[i], i, 0)['path']}."
                                      "kinematics", f"a group behaviour drives one kinematics; "
                                      f"this member's differs from {kin_name!r}")
            g = len(grp_rows)
            social = gb.get("social_groups") or []
            seen: set[int] = set()
            for s, idx in enumerate(social):
                for k in idx:
                    if not 0 <= k < len(members):
                        raise checks.fail(f"{where}.group_behavior.social_groups[{s}]",
                                          f"index {k} out of range for {len(members)} members")
                    if k in seen:
                        raise checks.fail(f"{where}.group_behavior.social_groups[{s}]",
                                          f"member {k} is in more than one social group")
                    seen.add(k)
                if len(idx) >= 2:
                    for k in idx:
                        bi[members[k], BI_SOCIAL] = g * 100_000 + s
            grp_rows.append([found.code, len(gmem), len(members), 0])
            gmem.extend(members)
            self._group_beh.append(found)
            for i in members:
                bi[i, BI_GROUP] = g
                bi[i, BI_CODE] = found.code
                own[i] = None  # the group's action comes first (IR-SIM's order)
                rows[i] = P.row(gb, found.params)
        for i in range(nb):
            if own[i] is not None:
                bi[i, BI_CODE] = own[i].code
            bi[i, BI_NGOAL] = len(goals[i])
        self._own = own
        # arrays
        S = len(segs)
        Q = max(2, max((len(g) for g in goals), default=0))
        NP = max(1, max((len(r) for r in rows), default=0))
        K = nb + S + 1
        G = len(grp_rows)
        # rows of a user group behaviour's arguments: its largest group (at least one)
        U = max([r[2] for r in grp_rows if r[0] == CODE_USER_GROUP] + [1])
        prm = np.zeros((nb, NP))
        for i, r in enumerate(rows):
            prm[i, :len(r)] = r
        ginit = np.zeros((nb, Q, GQ_LEN))
        for i, gl in enumerate(goals):
            for q, (x, y, t, d) in enumerate(gl):
                ginit[i, q] = (x, y, t, d)
        seg = empty((S, 4))
        if S:
            seg[:S] = segs
        grp = empty((G, GR_LEN), np.int64)  # without groups, a row of address 0: skipped
        for g, r in enumerate(grp_rows):
            grp[g] = r
        gmem_arr = np.array(gmem or [0], np.int64)
        M = len(gmem_arr)  # every group's members (at least one row)
        self.arrays = BehaviourArrays(
            bi=bi, bf=bf, prm=prm, seg=seg, ginit=ginit, grp=grp,
            gmem=gmem_arr, fn=np.zeros(nb, np.int64),
            manual=np.zeros(nb, np.uint8), gq=np.zeros((E, nb, Q, GQ_LEN)),
            gs=np.zeros((E, nb, GS_LEN), np.int64), start=np.zeros((E, nb, 3)),
            rng=seed_states(0, E), ovel=np.zeros((E, nb, 2)),
            korder=np.zeros((E, M), np.int64),  # written by each reset (reset_goals)
            mem=np.zeros((E, nb, MEM_LEN)),
            pend=np.zeros(E, np.uint8), snap=np.zeros((E, nb, SN_LEN)),
            segw=np.zeros((E, max(S, 1), 4)), agt=np.zeros((E, nb, AG_LEN)),
            nbi=np.zeros((E, K), np.int64), nbd=np.zeros((E, K)), lines=np.zeros((E, K, 6)),
            proj=np.zeros((E, K, 4)), ktree=np.zeros((E, 2 * M, KT_LEN)),
            kstack=np.zeros((E, 2 * M), np.int64),
            ego=np.zeros((E, EGO_LEN)), ugoal=np.zeros((E, 4)),
            others=np.zeros((E, nb, 5)), usegs=np.zeros((E, max(S, 1), 4)),
            uout=np.zeros((E, 3)), gego=np.zeros((E, U, EGO_LEN)), ggoal=np.zeros((E, U, 4)),
            gumem=np.zeros((E, U, MEM_LEN)), gout=np.zeros((E, U, 3)))
        self._packed: Packed | None = None
        self._step_fn: Any = None
        self._bind()

    @staticmethod
    def _config(bi: np.ndarray, bf: np.ndarray, i: int, config: Mapping[str, Any]) -> None:
        """loop, wander and their range, target_roles: IR-SIM's beh_config of body i."""
        wander = bool(config.get("wander", False))
        bi[i, BI_WANDER] = int(wander)
        bi[i, BI_LOOP] = int(bool(config.get("loop", False)) and not wander)
        low = config.get("range_low", P.DEFAULT_RANGE_LOW)
        high = config.get("range_high", P.DEFAULT_RANGE_HIGH)
        bi[i, BI_DIMS] = len(low)
        bf[i, BF_LOW:BF_LOW + 3] = _limits(tuple(low), 0.0)
        bf[i, BF_HIGH:BF_HIGH + 3] = _limits(tuple(high), 0.0)
        bi[i, BI_TARGET] = P.TARGET_ROLES.index(config.get("target_roles", "all"))

    def _bind(self) -> None:
        """Compile (or load) the C functions the scene uses and write their addresses."""
        a = self.arrays
        for i, beh in enumerate(self._own):
            if beh is not None and a.bi[i, BI_CODE] != CODE_NONE:
                a.fn[i] = beh.cfunction().address
        for g, beh in enumerate(self._group_beh):
            a.grp[g, GR_FN] = beh.cfunction().address
        from .stage import CONTROL

        self.control = CONTROL.address
        self._packed = BEHAVIOUR_ABI.pack(a)
        self.address = self._packed.address

    def __deepcopy__(self, memo: dict) -> BehaviourPlan:
        """A copy with arrays of its own, packed again: the packed structure holds the
        arrays' addresses, which a plain deep copy would share with the original."""
        new = copy.copy(self)
        memo[id(self)] = new
        new.scene = copy.deepcopy(self.scene, memo)
        new.arrays = BehaviourArrays(*(copy.deepcopy(a, memo) for a in self.arrays))
        new._packed = BEHAVIOUR_ABI.pack(new.arrays)
        new.address = new._packed.address
        return new

    # ------------------------------------------------------------------ what World calls
    def run(self, world: Any, which: int, envs: np.ndarray) -> None:
        """The stage's ``which`` (layout.CTL_*) for ``envs`` (int indices) of ``world``."""
        from .stage import run_control

        run_control(world.arrays, self.control, np.int64(which),
                    np.ascontiguousarray(envs, dtype=np.int64), self.address)

    def step(self, world: Any, physics: int) -> int:
        """Behaviours, physics and arrivals of every active env of ``world`` in one call:
        the number of envs whose physics was rolled back."""
        if self._step_fn is None:
            from ..fastcall import entry_point
            from .stage import world_step_parallel
            from .stage import world_step_serial

            kernel = world_step_parallel if world._parallel else world_step_serial
            self._step_fn = entry_point(kernel, world.arrays, physics, self.control,
                                        self.address)
        return self._step_fn(world.arrays, physics, self.control, self.address)

    # ------------------------------------------------------------------ what World reads
    def goal(self, i: int) -> np.ndarray:
        """Body i's current goal per env: (num_envs, 3) x [m], y [m], theta [rad]; NaN
        rows without a goal, a NaN heading for a position goal."""
        a = self.arrays
        E = a.gq.shape[0]
        out = np.full((E, 3), np.nan)
        has = a.gs[:, i, GS_COUNT] > 0
        head = a.gs[:, i, GS_HEAD]
        rows = a.gq[np.arange(E), i, head]
        out[has] = rows[has, :3]
        out[has & (rows[:, GQ_DIMS] < 3), 2] = np.nan
        return out

    def goals(self, i: int, env: int) -> np.ndarray:
        """Body i's goal queue in ``env``, current goal first: (n, 3) [m, m, rad]."""
        a = self.arrays
        h, n = int(a.gs[env, i, GS_HEAD]), int(a.gs[env, i, GS_COUNT])
        q = a.gq[env, i, h:h + n, :3].copy()
        q[a.gq[env, i, h:h + n, GQ_DIMS] < 3, 2] = np.nan
        return q

    def set_goal(self, i: int, goals: Any, sel: Any, where: str) -> None:
        """Replace body i's goal queue in the envs ``sel`` with ``goals`` (a pose or a list
        of poses; None clears it), arrive flag down (IR-SIM's ``set_goal``). Raises
        ValueError for a malformed goal or a queue longer than the scene's longest."""
        try:
            poses = _goals(goals, where) if goals is not None else []
        except SceneError as exc:
            raise ValueError(str(exc)) from None
        a = self.arrays
        if len(poses) > a.gq.shape[2]:
            raise ValueError(f"{where}: at most {a.gq.shape[2]} goals per body in this "
                             f"world, got {len(poses)}")
        a.gq[sel, i] = 0.0
        for q, pose in enumerate(poses):
            a.gq[sel, i, q] = pose
        a.gs[sel, i, GS_HEAD] = 0
        a.gs[sel, i, GS_COUNT] = len(poses)
        a.gs[sel, i, GS_ARRIVED] = 0

    def arrived(self, i: int) -> np.ndarray:
        """Body i's arrive flag per env: (num_envs,) bool."""
        return self.arrays.gs[:, i, GS_ARRIVED] != 0

    def seed(self, seed: int) -> None:
        """Seed the wander streams: env i draws as a single world seeded ``seed + i``."""
        self.arrays.rng[:] = seed_states(int(seed), self.arrays.rng.shape[0])


__all__ = ["BehaviourPlan", "SceneError"]
