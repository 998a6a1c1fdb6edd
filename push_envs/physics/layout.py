"""Column layout of the engine's packed arrays (shared by the kernels and the Python side).

The engine keeps struct-of-arrays state with a leading env axis (``pos[E, B, 2]``,
``ang[E, B]``...). Per-body constants and scratch that the kernels read together are packed
into a few 2-D/3-D arrays, indexed by the column names below, so that one kernel call passes
few arguments (numba's dispatch costs about 0.1 us per array argument).

Each packed array has a prefix of its own, and its columns run from 0 to ``<prefix>_LEN``
(``tests/physics/test_layout.py`` checks that no two columns of a family share a value, but
for the aliases documented at their definitions)::

    BI_   bint[B, :]         body ints           BF_   bflt[B, :]       body floats
    EP_   epar[E, B, :]      per-env body params PI_   pint, sint       piece ints
    PF_   pflt, sflt         piece floats        PR_   prm[:]           world parameters
    BS_   bsc[E, 2B, :]      body float scratch  IS_   bis[E, B, :]     body int scratch
    PRS_  prs[E, K, :]       pair ints           PFL_  pfl[E, K, :]     pair floats
    CT_   ctf[E, C, :]       contact output      HL_   hl[E, :]         health figures
    GS_   gsc[E, :]          graph scratch (a row of regions, not fixed columns: ``gsc_len``)
"""

# Body kinds.
IMMOVABLE = 0  # static, or infinite mass: never moved by a contact
DRIVEN = 1  # has kinematics: moves by its drive; pushes passive bodies it has traction for
PASSIVE = 2  # finite mass, no kinematics: moves only when pushed, then coasts

# bint[B, :] (int64)
BI_KIND = 0
BI_DRIVE = 1
BI_PSTART = 2  # first piece (movable bodies: index into the movable piece arrays)
BI_PCOUNT = 3
BI_FLAGS = 4  # BODY_* bits: per-body options the stages read (a World's own copy of bint)
BI_ROLE = 5  # ROLE_OBSTACLE or ROLE_ROBOT (IR-SIM's role: unobstructed_obstacles stops robots)
BI_LEN = 6
BODY_BULLET = 1  # swept continuously every sub-step and left out of the sub-step count
BODY_UNOBS = 2  # IR-SIM's unobstructed: in no pair of the broad phase (broadphase.collides)
ROLE_OBSTACLE = 0
ROLE_ROBOT = 1

# bflt[B, :] (float64)
BF_WHEELBASE = 0  # [m]
BF_TAU = 1  # drive lag [s]
BF_VMIN0 = 2
BF_VMIN1 = 3
BF_VMAX0 = 4
BF_VMAX1 = 5
BF_ACC0 = 6  # per second
BF_ACC1 = 7
BF_REST = 8  # restitution coefficient
BF_HALF = 9  # smallest half-thickness of the body's pieces [m] (unscaled)
BF_BRAD = 10  # bounding radius about the centre of mass [m] (unscaled)
BF_COMX = 11  # centre of mass in the body frame [m] (unscaled)
BF_COMY = 12
BF_VMIN2 = 13  # third command of an omni_angular drive (yaw rate [rad/s]): limits, rate
BF_VMAX2 = 14
BF_ACC2 = 15
BF_UNOBS = 16  # 1: IR-SIM's unobstructed: the body takes part in no collision
BF_NOISE = 17  # 1: IR-SIM's motion noise on the drive (kinematics.noise)
BF_ALPHA0 = 18  # the noise's alpha (IR-SIM's 4 for diff and acker, 2 omni, 3 omni_angular)
BF_ALPHA1 = 19
BF_ALPHA2 = 20
BF_ALPHA3 = 21
BF_LEN = 22

# epar[E, B, :] per-env body parameters (domain randomisation lives here)
EP_MASS = 0  # [kg], inf when immovable
EP_INERTIA = 1  # [kg m^2] about the centre of mass
EP_FRICTION = 2  # ground Coulomb coefficient
EP_SCALE = 3  # uniform size factor applied to the body's pieces
EP_LEN = 4

# pint[P, :], sint[S, :]
PI_KIND = 0
PI_NV = 1
PI_BODY = 2
PI_LEN = 3

# pflt[P, :], sflt[S, :]: radius and bounding circle (local about the COM, or world for static)
PF_RAD = 0
PF_BCX = 1
PF_BCY = 2
PF_BRAD = 3
PF_MINX = 4  # world-frame box of a static piece [m] (unused for movable pieces)
PF_MINY = 5
PF_MAXX = 6
PF_MAXY = 7
PF_LEN = 8
# sflt[S, PF_LEN:PS_LEN] static pieces only: where static pieces meet (joints.py, which writes them;
# narrowphase.smooth, which reads them)
PS_SMOOTH = PF_LEN  # 1: some vertex meets another static piece, or some face is covered by one
PS_INNER = PF_LEN + 1  # bit i set: face i (edge i to i + 1; a segment's sides) lies in others
PS_DIRTY = PF_LEN + 2  # bit i set: a contact along face i is checked (inner, or it ends where
#                        another piece meets it with its outer side free there)
PS_JVERTS = PF_LEN + 3  # bit i set: vertex i meets another piece where a body can reach it
PS_NRM = PF_LEN + 4  # 2 JOINT_VERTS columns: face i's outward unit normal (x, y)
JOINT_VERTS = 8  # = narrowphase.MAX_VERTS
PS_JOINT = PS_NRM + 2 * JOINT_VERTS  # JV_STRIDE columns per vertex from here
JV_SECTORS = 3  # free sectors kept per vertex
JV_KIND = 0  # JK_*
JV_NSEC = 1  # sectors that follow, each JV_WIDTH columns from column 2:
JV_WIDTH = 5  # (rax, ray, rbx, rby, convex): the rays bounding it, ccw from a to b; 1.0
#               when it spans pi or more (a body there meets a convex corner of the union)
JV_STRIDE = 2 + JV_WIDTH * JV_SECTORS
PS_LEN = PS_JOINT + JOINT_VERTS * JV_STRIDE
JK_PLAIN = 0  # no other static piece meets the vertex: a corner like any other
JK_SECTORS = 1  # others meet it; the free sectors around it follow
JK_CLOSED = 2  # others close it in (or cut it in more than JV_SECTORS): no contact there

# prm[:] world parameters
PR_DT = 0  # step time [s]
PR_G = 1  # gravity [m/s^2]
PR_SLOP = 2  # gap left between separated bodies [m]
PR_REST = 3  # rest tolerance: gap still counted as a touching contact [m]
PR_SWEEPS = 4  # max Gauss-Seidel sweeps
PR_MAXSUB = 5  # max sub-steps per step (continuous collision covers what moves farther)
PR_SUBFRAC = 6  # travel per sub-step as a fraction of the body's half-thickness
PR_SLEEP = 7  # 1: bodies at rest sleep (sleeping.py), 0: every body is awake every sub-step
PR_FMIX = 8  # friction mixing rule (mixing.py: MIX_MEAN ...)
PR_RMIX = 9  # restitution mixing rule
PR_FMIXFN = 10  # address of the user's friction mixing function (rule MIX_USER), else 0
PR_RMIXFN = 11  # address of the user's restitution mixing function
PR_MODE = 12  # collision mode: CM_CONTACT (this engine) or one of IR-SIM's (collision_modes.py)
PR_NOISE = 13  # 1: some body has motion noise (a step draws it first, kinematics.draw_noise)
PR_STEPFN = 14  # address of pipeline.STEP (step_env as a C function), set by physics_for
PR_SLEEPFN = 15  # address of sleeping.SLEEP, written by physics_for while sleeping is on (0 before)
PR_CCDFN = 16  # address of continuous.CCD once this process has compiled it (0 before)
PR_TOUCHFN = 17  # address of collision_modes.TOUCH, written by physics_for in IR-SIM's modes
PR_LEN = 18
CM_CONTACT = 0  # bodies push each other (the contact solver)
CM_STOP = 1  # nothing pushes; a body that overlaps another (not unobstructed) stops
CM_UNOBSTRUCTED = 2  # nothing pushes or stops
CM_UNOBSTRUCTED_OBSTACLES = 3  # as CM_STOP, but only robots stop
COLLISION_MODE_CODES = {"contact": CM_CONTACT, "stop": CM_STOP,
                        "unobstructed": CM_UNOBSTRUCTED,
                        "unobstructed_obstacles": CM_UNOBSTRUCTED_OBSTACLES}

# bsc[E, 2 B, BS_LEN] per-body float scratch, split by use so that a sub-step walks few cache
# lines: row b holds body b's hot columns (what every sub-step reads and writes), row
# ``cold_row(bsc, b)`` = B + b what only a rollback reads. A row is BS_LEN = 16 floats, two
# cache lines, so the hot rows of an env's bodies are packed back to back.
BS_X0 = 0  # pose at the start of the sub-step (COM x, y, theta)
BS_Y0 = 1
BS_T0 = 2
BS_XP = 3  # pose after free motion (predicted)
BS_YP = 4
BS_TP = 5
BS_VXF = 6  # velocity at the end of free motion
BS_VYF = 7
BS_WF = 8
BS_VX0 = 9  # velocity at the start of the sub-step
BS_VY0 = 10
BS_W0 = 11
BS_DRIVE = 12  # traction of the drives touching the passive chain (component root) [N]
# Speed [m/s] a body may reach in the coming step (substeps.count_substeps), in BS_DRIVE's column:
# it is written and read before the step's first sub-step, BS_DRIVE is reset by every prepare
# that finds a contact before anything reads it, and write_contacts reads it only for the
# touching pairs such a prepare leaves.
BS_REACH = BS_DRIVE
BS_SLX = 13  # passive bodies: pose a body fell asleep at (COM x, y, theta); it sleeps on
BS_SLY = 14  # only while still there
BS_SLT = 15
BS_D0 = 13  # driven bodies (which never sleep): drive state at the start of the sub-step,
BS_D1 = 14  # in the columns a passive body keeps its sleep pose in
BS_D2 = 15  # (an omni_angular drive's yaw rate, from W.yaw)
BS_LEN = 16
# Cold row: what a rolled-back step restores when it took more than one sub-step (a step of
# one sub-step is restored from the BS_X0..BS_W0 and BS_D0, BS_D1 columns of its hot rows).
BS_SAVE = 0  # SV_LEN columns: x, y, theta, vx, vy, omega, drive 0, drive 1 at the step's start
SV_LEN = 8
BS_SLSAVE = SV_LEN  # 3 columns: BS_SLX..BS_SLT at the step's start
# Cold-row scratch of the energy guard (velocity_solver.energy_guard):
BS_KE0 = SV_LEN + 3  # island root: kinetic energy at the sub-step's start [J] (inf: driven)
BS_KE1 = SV_LEN + 4  # island root: kinetic energy after the velocity pass [J]
BS_KDRV = SV_LEN + 5  # each body: 1 when a drive touched it this sub-step
BS_TOI = SV_LEN + 6  # continuous.sweep_fast: the body's earliest time of impact in [0, 1]
BS_HOLD = SV_LEN + 7  # sleeping: sub-steps a woken body stays awake before it may doze again

# yaw[E, B, YW_LEN]: IR-SIM's extras of a drive, read for those drives only (so other scenes
# never touch them): an omni_angular drive's yaw rate, and the draws of a noisy drive.
YW_CMD = 0  # omni_angular: the yaw-rate command [rad/s]
YW_STATE = 1  # omni_angular: the yaw-rate state [rad/s]
YW_SAVE = 2  # omni_angular: the yaw-rate state at the step's start (a rollback restores it)
YW_NOISE = 3  # 3 columns: this step's standard normal draws of a noisy drive (draw_noise)
YW_LEN = 6

# bis[E, B, :] per-body integer scratch. The first cache line (8 columns) holds what the sleep
# bookkeeping reads every sub-step and what preparing a contact-free sub-step writes; the
# contact graph and the blocking lists follow.
IS_SLEEP = 0  # 1: at rest at the end of the last sub-step (may sleep), then, after the broad
#               phase, 1: asleep in this sub-step (sleeping.py)
IS_SLEEP0 = 1  # IS_SLEEP at the step's start (restored when a step is rolled back)
IS_SKIP = 2  # 1: asleep at this sub-step's start, so free motion skipped it (sleeping.doze)
IS_UF = 3  # union-find parent over touching passive bodies
IS_MOVED = 4  # bit 0: moved in this sweep; bit 1: moved in the last one
IS_LEVEL = 5  # contact-graph distance from immovable bodies (then from drives)
IS_CS = 6  # first entry of the body's touching pairs in gsc (contact-graph CSR)
IS_CN = 7  # number of the body's touching movable-movable pairs
IS_NBLK = 8  # number of blocking pairs this sweep
IS_BLK = 9  # first of MAX_BLOCK blocking pair indices
MAX_BLOCK = 4
IS_GROUP = IS_BLK + MAX_BLOCK  # union-find parent over drives pushing one load the same way
IS_VIS = IS_GROUP + 1  # breadth-first visit stamp
IS_MASK = IS_VIS + 1  # bits of the drive slots whose push carries the body
IS_LEN = IS_MASK + 1
# Outside the contact mode (IR-SIM's stop and unobstructed modes, collision_modes.py) no
# contact graph is built, so its columns hold IR-SIM's flags instead:
IS_STOP = IS_UF  # stop flag: the body overlapped another after the last step, so it holds
IS_HIT = IS_MOVED  # collision flag: it overlaps another body that is not unobstructed

# prs[E, K, :] candidate pairs
PRS_A = 0
PRS_B = 1
PRS_SP = 2  # static piece index, or -1 for a pair of movable bodies
PRS_MODE = 3
PRS_LEN = 4
MODE_SHARE = 0  # both yield by inverse mass (or only the movable one against an immovable)
MODE_PUSH = 1  # a is a drive with enough traction: only b yields, a keeps its heading
MODE_STALL = 2  # a is a drive that cannot move b's load: only a yields

# pfl[E, K, :] per-pair floats. The first OUT_LEN columns hold the latest narrow-phase
# contact, in the layout narrowphase.collide writes its ``out`` buffer:
PFL_NX = 0  # unit normal from b toward a
PFL_NY = 1
PFL_DEPTH = 2  # overlap along the normal [m]: > 0 overlapping, <= 0 a gap within tolerance
PFL_NPTS = 3  # patch points, 1 or 2 (stored as a float)
PFL_P1X = 4  # patch point 1 [m] (midway through the overlap), deepest first
PFL_P1Y = 5
PFL_P1D = 6  # depth at point 1 [m]
PFL_P2X = 7  # patch point 2 [m] (a copy of point 1 when npts == 1)
PFL_P2Y = 8
PFL_P2D = 9
PFL_PSTRIDE = 3  # a stride, not a column: point j's columns start at PFL_P1X + PFL_PSTRIDE * j
PFL_CORNER = 10  # 1: corner-to-corner contact, its normal one of two (no push carried)
OUT_LEN = 11
# Written for every candidate pair in every sub-step; with the contact's last columns they
# fill the row's second cache line, all a contact-free sub-step touches of a pair.
PFL_TOUCH = 11  # 1 when touching in the latest narrow phase
PFL_KEY = 12  # sort key: depth at the start of the sweeps
PFL_DMAX = 13  # deepest overlap removed this step [m]
PFL_MU = 14  # friction coefficient of the contact (0: frictionless)
PFL_E = 15  # restitution of the contact
# The solver's accumulators (third cache line), cleared only in sub-steps where some pair
# touches (contacts.prepare): no stage reads them otherwise.
PFL_ACC = 16  # first accumulator column (an alias of PFL_LPOS: prepare clears from here)
PFL_LPOS = 16  # accumulated normal position lambda [kg m]
PFL_LTAN = 17  # accumulated tangential (friction) position lambda [kg m]
PFL_LVEL = 18  # velocity-pass normal impulse at the first patch point [N s]
PFL_LVT = 19  # velocity-pass tangential impulse [N s]
PFL_PJN = 20  # projection scratch (position_solver): normal lambdas of patch points 1, 2 [kg m]
PFL_LVEL2 = 22  # velocity-pass normal impulse at the second patch point [N s]
PFL_PJT = 23  # projection scratch: tangential lambda [kg m]
PFL_LEN = 24

# ctf[E, C, :] contact output
CT_NX = 0
CT_NY = 1
CT_PX = 2
CT_PY = 3
CT_DEPTH = 4
CT_FN = 5  # normal force [N]
CT_FT = 6  # tangential (friction) force on a along the tangent (-ny, nx) [N]
CT_P1X = 7
CT_P1Y = 8
CT_P2X = 9
CT_P2Y = 10
CT_NPTS = 11
CT_LEN = 12

# hl[E, :] physics-health figures of the latest step
HL_MAXPEN = 0  # deepest overlap left after the solve [m]
HL_SWEEPS = 1  # most sweeps used by a sub-step
HL_NSUB = 2  # sub-steps taken
HL_OVERFLOW = 3  # candidate pairs a sub-step found beyond the pair buffer (step rolled back)
HL_STATUS = 4  # 0 ok, else ST_* bits: the env's step was rolled back to its start
HL_NEED = 5  # sub-steps the bodies' speeds called for (uncapped; the step took <= PR_MAXSUB)
HL_SLEEP = 6  # bodies asleep in the last sub-step
HL_LEN = 7
ST_OVERFLOW = 1  # the pair buffer was too small: World grows it and steps the env again
ST_CCD = 2  # a body was fast and continuous collision was not compiled yet: World compiles it
# (continuous.CCD) and steps the env again

# gsc[E, :] graph scratch (int64), in the order a sub-step with contacts touches it:
GS_STAMP = 0  # running breadth-first stamp (never reset, so visit stamps never need clearing)
GS_QUEUE_AT = 1  # where the breadth-first queue starts (after the drive-slot table)
GS_SLOTS = 2  # drive-slot table: DS_ROWS entries per slot (contacts.py), one slot per touching
# drive -> passive pair up to MAX_DRIVE_SLOTS, so sized min(MAX_DRIVE_SLOTS, drives x passive
# bodies) for the scene; then the queue, B entries (and, while contact_graph fills the CSR,
# body b's fill cursor at entry b); then the touching pairs by body, 2 K entries (CSR through
# IS_CS / IS_CN).
MAX_DRIVE_SLOTS = 64
DS_ROWS = 3


# stamp[E, :] broad-phase and sleep scratch (int64), in regions (``stamp_len``): one tag per
# static piece and the query counter (broadphase.py); then, for M movable bodies, the sweep
# order (the bodies the sort-and-sweep sorts: every movable body, or with sleeping on the
# awake ones), the awake list (body indices, ascending), the sleepers (body indices by the
# lower x of their boxes), and a few counts (SC_*).
SC_AWAKE = 0  # bodies in the awake list (and in the sweep order, with sleeping on)
SC_ASLEEP = 1  # bodies in the sleeper list
SC_REBUILD = 2  # 1: the lists are stale (a reset, sleeping switched, a rolled-back step)
SC_FROZEN = 3  # sleepers' touching pairs kept, frozen, at the end of the pair buffers
SC_LAST = 4  # candidate pairs the last sub-step listed (where doze finds what to freeze)
SC_LEN = 5


# (sleeping.regions is the kernels' twin of the four below.)
def stamp_order(ns: int) -> int:
    """Start of the sweep order in a stamp row, for ``ns`` static pieces."""
    return ns + 1


def stamp_awake(ns: int, nm: int) -> int:
    """Start of the awake list in a stamp row (``nm`` movable bodies)."""
    return ns + 1 + nm


def stamp_asleep(ns: int, nm: int) -> int:
    """Start of the sleeper list in a stamp row."""
    return ns + 1 + 2 * nm


def stamp_counts(ns: int, nm: int) -> int:
    """Start of the counts (SC_*) in a stamp row."""
    return ns + 1 + 3 * nm


def stamp_len(ns: int, nm: int) -> int:
    """Entries of one env's stamp row."""
    return ns + 1 + 3 * nm + SC_LEN


def gsc_queue(slots: int) -> int:
    """Start of the queue in a gsc row whose drive-slot table has ``slots`` slots."""
    return GS_SLOTS + DS_ROWS * slots


def gsc_len(num_bodies: int, max_pairs: int, slots: int) -> int:
    """Entries of one env's row of gsc, rounded up to whole cache lines (8 entries)."""
    return (gsc_queue(slots) + num_bodies + 2 * max_pairs + 7) // 8 * 8
