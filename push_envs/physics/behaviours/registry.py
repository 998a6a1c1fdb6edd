"""Which behaviours exist, for which kinematics, and their C functions.

IR-SIM 2.12's built-ins (``irsim.lib.behavior``): per object, ``dash`` (diff, omni,
omni_angular, acker), ``rvo`` (diff, omni) and ``sfm`` (diff, omni); as a group, ``orca`` and
``sfm`` (diff, omni). A user behaviour joins them through :func:`register_behavior` or
:func:`register_group_behavior` (:mod:`.user`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from . import dash
from . import orca
from . import rvo
from . import sfm
from .layout import CODE_DASH
from .layout import CODE_ORCA
from .layout import CODE_RVO
from .layout import CODE_SFM
from .layout import CODE_SFM_GROUP


@dataclass(frozen=True)
class Behaviour:
    """A behaviour: its name, the kinematics it exists for, its parameters (name -> IR-SIM's
    default, in the order of its parameter row), its code, and where its C function comes
    from (``cfunction()``, called only when a world uses it)."""

    name: str
    kinematics: tuple[str, ...]
    params: dict[str, Any]
    code: int
    cfunction: Callable[[], Any]
    group: bool = False
    extra: tuple[str, ...] = field(default=())  # keys checked but kept off the row


BUILTIN: dict[str, Behaviour] = {
    "dash": Behaviour("dash", ("diff", "omni", "omni_angular", "acker"), dash.PARAMS,
                      CODE_DASH, lambda: dash.DASH),
    "rvo": Behaviour("rvo", ("diff", "omni"), rvo.PARAMS, CODE_RVO, lambda: rvo.RVO),
    "sfm": Behaviour("sfm", ("diff", "omni"), sfm.PARAMS, CODE_SFM, lambda: sfm.SFM),
}
"""IR-SIM's per-object behaviours."""

GROUP_BUILTIN: dict[str, Behaviour] = {
    "orca": Behaviour("orca", ("diff", "omni"), orca.PARAMS, CODE_ORCA, lambda: orca.ORCA,
                      group=True),
    "sfm": Behaviour("sfm", ("diff", "omni"), sfm.GROUP_PARAMS, CODE_SFM_GROUP,
                     lambda: sfm.SFM_GROUP, group=True, extra=("social_groups",)),
}
"""IR-SIM's group behaviours."""

USER: dict[tuple[str, str], Behaviour] = {}
"""Behaviours registered with :func:`~.user.register_behavior`, by (kinematics, name)."""

USER_GROUP: dict[tuple[str, str], Behaviour] = {}
"""Group behaviours registered with :func:`~.user.register_group_behavior`, by
(kinematics, name)."""


def known_parameters() -> dict[str, Any]:
    """Every parameter some behaviour takes (IR-SIM lets a behaviour ignore another's)."""
    out: dict[str, Any] = {}
    for beh in (*BUILTIN.values(), *GROUP_BUILTIN.values(), *USER.values(),
                *USER_GROUP.values()):
        out.update(beh.params)
        out.update(dict.fromkeys(beh.extra))
    return out


def lookup(name: str, kinematics: str | None, group: bool) -> Behaviour | str:
    """The behaviour ``name`` for ``kinematics`` (a group behaviour when ``group``), or the
    reason there is none (a sentence for the SceneError)."""
    table = GROUP_BUILTIN if group else BUILTIN
    users = USER_GROUP if group else USER
    kin = kinematics or "none"
    user = users.get((kin, name))
    if user is not None:
        return user
    beh = table.get(name)
    what = "group behaviour" if group else "behaviour"
    if beh is None:
        registered = sorted({n for _k, n in users})
        names = ", ".join(sorted(table)) + (f"; registered: {', '.join(registered)}"
                                            if registered else "")
        if any(n == name for _k, n in users):
            kins = sorted(k for k, n in users if n == name)
            return (f"the registered {what} {name!r} exists for kinematics "
                    f"{', '.join(kins)}, not {kin}")
        hint = ""
        if group and any(n == name for _k, n in USER):
            hint = " (a behaviour of that name is registered per object, not as a group's)"
        elif not group and any(n == name for _k, n in USER_GROUP):
            hint = " (a group behaviour of that name is registered: give it as group_behavior)"
        return f"unknown {what} {name!r}; IR-SIM's: {names}{hint}"
    if kin not in beh.kinematics:
        return (f"IR-SIM's {what} {name!r} does not exist for kinematics {kin!r} (only for "
                f"{', '.join(beh.kinematics)})")
    return beh


__all__ = ["BUILTIN", "GROUP_BUILTIN", "USER", "USER_GROUP", "Behaviour", "known_parameters",
           "lookup"]
