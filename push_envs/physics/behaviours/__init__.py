"""IR-SIM's goals and behaviours, compiled into the batch step (docs/behaviours.md).

A world whose bodies carry goals (``goal``, ``goal_threshold``, ``arrive_mode``) or
behaviours (``behavior``, ``group_behavior``) gets a stage before the physics that turns
them into drive commands, env by env (:mod:`.stage`): IR-SIM 2.12's ``dash`` (diff, omni,
omni_angular, acker), ``rvo`` and ``sfm`` (diff, omni) per object, ``orca`` and ``sfm`` as a
group (diff, omni), and the behaviours users register (:func:`register_behavior`,
:func:`register_group_behavior`). A world
without any compiles none of it.

Modules, in the order a step runs them: :mod:`.goals` (arrival, loop, wander),
:mod:`.common` (the snapshot every behaviour reads, IR-SIM's conversions), :mod:`.dash`,
:mod:`.rvo`, :mod:`.sfm`, :mod:`.orca`, :mod:`.user` (with :mod:`.ego`, its arguments);
:mod:`.stage` runs them, :mod:`.plan`
checks a scene's behaviours and builds the arrays (:mod:`.arrays`, :mod:`.layout`),
:mod:`.registry` lists them, :mod:`.params` checks their parameters, :mod:`.reference`
builds a world from IR-SIM's recorded description of one.
"""

from __future__ import annotations

from .layout import EGO_ACCE
from .layout import EGO_DESX
from .layout import EGO_DESY
from .layout import EGO_DT
from .layout import EGO_HIGH
from .layout import EGO_KIN
from .layout import EGO_LEN
from .layout import EGO_LOW
from .layout import EGO_RADIUS
from .layout import EGO_THETA
from .layout import EGO_THRESHOLD
from .layout import EGO_V0
from .layout import EGO_VMAX
from .layout import EGO_VMIN
from .layout import EGO_VX
from .layout import EGO_VY
from .layout import EGO_X
from .layout import EGO_Y
from .layout import KIN_ACKER
from .layout import KIN_DIFF
from .layout import KIN_OMNI
from .layout import KIN_OMNI_ANGULAR
from .layout import MEM_LEN
from .user import register_behavior
from .user import register_group_behavior

__all__ = [
    "EGO_ACCE", "EGO_DESX", "EGO_DESY", "EGO_DT", "EGO_HIGH", "EGO_KIN", "EGO_LEN", "EGO_LOW",
    "EGO_RADIUS", "EGO_THETA", "EGO_THRESHOLD", "EGO_V0", "EGO_VMAX", "EGO_VMIN", "EGO_VX",
    "EGO_VY", "EGO_X", "EGO_Y", "KIN_ACKER", "KIN_DIFF", "KIN_OMNI", "KIN_OMNI_ANGULAR",
    "MEM_LEN", "register_behavior", "register_group_behavior",
]
