"""Column layout of the behaviour stage's packed arrays (see :mod:`.arrays`).

Prefixes, each with its own ``<prefix>_LEN``::

    BI_   bi[B, :]       body ints: behaviour code, kinematics, role, flags, segments
    BF_   bf[B, :]       body floats: goal threshold, centroid, radius, limits, wander range
    GS_   gs[E, B, :]    goal-queue ints per env: head, length, arrive flag
    GQ_   gq[E, B, Q, :] the goal queue: x [m], y [m], theta [rad], dimensions given
    SN_   snap[E, B, :]  what every body shows the others this step (IR-SIM's rvo states)
    AG_   agt[E, B, :]   a group behaviour's members: orca's agents, the new velocities
    EGO_  ego[E, :]      what a user behaviour reads of its own body (behaviours/user.py)

Behaviour parameters live in ``prm[B, :]``, one row per body; the columns of each behaviour
are named in its own module (``dash.P_*``, ``rvo.P_*``, ...).
"""

from ..kinematics import DRIVE_ACKER
from ..kinematics import DRIVE_DIFF
from ..kinematics import DRIVE_NAMES
from ..kinematics import DRIVE_NONE
from ..kinematics import DRIVE_OMNI
from ..kinematics import DRIVE_OMNI_ANGULAR

# Behaviour codes (bi[b, BI_CODE]).
CODE_NONE = 0
CODE_DASH = 1
CODE_RVO = 2
CODE_SFM = 3
CODE_ORCA = 4  # member of an orca group
CODE_SFM_GROUP = 5  # member of an sfm group
CODE_USER = 6  # a registered compiled behaviour (its C function: uaddr[b])
CODE_USER_GROUP = 7  # member of a registered group behaviour (register_group_behavior)

# Kinematics codes (bi[b, BI_KIN]): the engine's drive codes (kinematics.DRIVE_*), one
# numbering for a body's drive and its behaviour; a body without kinematics has KIN_NONE.
KIN_NONE = DRIVE_NONE
KIN_DIFF = DRIVE_DIFF
KIN_OMNI = DRIVE_OMNI
KIN_ACKER = DRIVE_ACKER
KIN_OMNI_ANGULAR = DRIVE_OMNI_ANGULAR
KIN_CODES = DRIVE_NAMES  # kinematics name -> code

# target_roles: whom a behaviour reacts to.
TARGET_ALL = 0
TARGET_ROBOT = 1
TARGET_OBSTACLE = 2
ROLE_ROBOT = 0
ROLE_OBSTACLE = 1

# bi[B, :] (int64)
BI_CODE = 0
BI_KIN = 1
BI_ROLE = 2  # ROLE_ROBOT or ROLE_OBSTACLE
BI_STATE_MODE = 3  # 1: arrive_mode "state" (position and heading), 0: "position"
BI_LOOP = 4  # 1: the goals loop on arrival
BI_WANDER = 5  # 1: a random goal is drawn on arrival
BI_TARGET = 6  # TARGET_*: whom the behaviour reacts to
BI_SEG0 = 7  # first of the body's line segments in seg (linestring bodies), else 0
BI_NSEG = 8  # number of the body's line segments (0: the body is a disc to the others)
BI_GROUP = 9  # index of the body's group behaviour (rows of grp), -1 when none
BI_MOVES = 10  # 1: the body can move (its velocity is read), 0: immovable
BI_NGOAL = 11  # goals in the body's initial queue (ginit)
BI_SOCIAL = 12  # sfm group: index of the body's social group (-1 when none)
BI_DIMS = 13  # dimensions of a wander goal (2 or 3, the length of range_low)
BI_LEN = 14

# bf[B, :] (float64)
BF_THRESH = 0  # goal_threshold [m]
BF_CX = 1  # geometry centroid in the body frame [m] (IR-SIM's centroid)
BF_CY = 2
BF_RADIUS = 3  # minimum bounding radius of the shape about its centroid [m]
BF_VMIN = 4  # vel_min, 3 columns (a third only for omni_angular)
BF_VMAX = 7  # vel_max, 3 columns
BF_ACCE = 10  # acce, 3 columns (per second; inf: unbounded)
BF_LOW = 13  # wander range_low, 3 columns (x [m], y [m], theta [rad])
BF_HIGH = 16  # wander range_high, 3 columns
BF_LEN = 19

# gs[E, B, :] (int64)
GS_HEAD = 0  # index of the current goal in gq[e, b]
GS_COUNT = 1  # goals in the queue (0: no goal)
GS_ARRIVED = 2  # IR-SIM's arrive_flag: at the last goal
GS_LEN = 3

# gq[E, B, Q, :] (float64)
GQ_X = 0
GQ_Y = 1
GQ_T = 2
GQ_DIMS = 3  # 2: a position goal (no heading), 3: a pose
GQ_LEN = 4

# snap[E, B, :] (float64): each body as the others see it, taken once per step
SN_X = 0  # origin pose (IR-SIM's state) [m, m, rad]
SN_Y = 1
SN_T = 2
SN_CX = 3  # geometry centroid in the world [m]
SN_CY = 4
SN_VX = 5  # velocity in the world frame [m/s] (the drive's, as IR-SIM's velocity_xy)
SN_VY = 6
SN_R = 7  # IR-SIM's radius_extend: bounding radius + 0.1 m
SN_V0 = 8  # drive velocity in the command frame (3 columns; 0 for passive bodies)
SN_LEN = 11

# agt[E, B, :] (float64): a group behaviour's members this step
AG_X = 0  # position [m] (the body's origin)
AG_Y = 1
AG_VX = 2  # orca's own velocity of the agent [m/s]
AG_VY = 3
AG_R = 4  # orca's agent radius [m]
AG_VMAX = 5  # orca's speed cap [m/s]
AG_PX = 6  # orca's preferred velocity [m/s]
AG_PY = 7
AG_NX = 8  # the new velocity [m/s], kept until every member has been solved
AG_NY = 9
AG_LEN = 10

RADIUS_EXTEND = 0.1  # [m] IR-SIM's radius_extend margin (rvo, sfm: the disc others avoid)
DESIRED_THRESHOLD = 0.1  # [m] IR-SIM's desired_omni_vel stops within this of the goal

# Function codes of the control C function (stage.CONTROL).
CTL_STEP = 0  # before the physics: arrivals left from the last step, goals, commands
CTL_ARRIVE = 1  # after the physics: arrivals (goal queues, arrive flags)
CTL_RESET = 2  # at a reset: goal queues, flags and memories from the scene

MEM_LEN = 8  # per-body memory of a user behaviour (floats, zeroed at a reset)

# ego[EGO_LEN]: a user behaviour's own body (user.py lists what each column holds)
EGO_X = 0  # origin pose [m, m, rad]
EGO_Y = 1
EGO_THETA = 2
EGO_VX = 3  # world velocity [m/s]
EGO_VY = 4
EGO_V0 = 5  # drive velocity in the command frame, 3 columns
EGO_RADIUS = 8  # bounding radius [m]
EGO_VMIN = 9  # vel_min, 3 columns
EGO_VMAX = 12  # vel_max, 3 columns
EGO_ACCE = 15  # acce, 3 columns (per second)
EGO_LOW = 18  # the velocity range this step (get_vel_range), 3 columns
EGO_HIGH = 21
EGO_THRESHOLD = 24  # goal_threshold [m]
EGO_DT = 25  # step time [s]
EGO_DESX = 26  # IR-SIM's desired velocity toward the goal [m/s], world frame
EGO_DESY = 27
EGO_KIN = 28  # kinematics (layout.KIN_*)
EGO_NOTHERS = 29  # rows of ``others`` (the stage's bookkeeping)
EGO_NSEGS = 30  # rows of ``segments``
EGO_LEN = 31

# orca's k-d tree node, ktree[e, node, :] (RVO2's KdTree::AgentTreeNode): the node's agents
# begin .. end-1 in korder, its children, and its agents' bounding box [m] (float32 values);
# then the walk's scratch: the node box's squared distance from the agent being queried [m^2]
# (float32), and, in row p, place p of the tree's agent list: its member's position [m]
# (float32 values), member index and body, packed in the tree's order for the leaves' scan
KT_BEGIN = 0
KT_END = 1
KT_LEFT = 2
KT_RIGHT = 3
KT_MINX = 4
KT_MAXX = 5
KT_MINY = 6
KT_MAXY = 7
KT_QD = 8
KT_PX = 9
KT_PY = 10
KT_MEM = 11
KT_BODY = 12
KT_LEN = 13
