"""layout.py's column families: each packed array has a prefix of its own, and within a family
no two columns share a value and every column lies below the family's ``<prefix>_LEN``.

Read from the module's globals, so a column added to layout.py is checked without a test
edit; a constant of a new prefix fails ``test_every_constant_is_accounted_for`` until it is
given a family here (or named as no column).
"""

from __future__ import annotations

import pytest

from push_envs.physics import layout

# Families of columns: prefix -> the array they index (for the messages).
FAMILIES = {
    "BI": "bint", "BF": "bflt", "EP": "epar", "PI": "pint/sint", "PF": "pflt/sflt",
    "PS": "sflt (past PF_LEN)",
    "PR": "prm", "BS": "bsc (hot row)", "IS": "bis", "PRS": "prs", "PFL": "pfl",
    "CT": "ctf", "HL": "hl", "YW": "yaw",
}

# Names that share a column with another name on purpose, each documented in layout.py:
# name -> the column it aliases.
ALIASES = {
    "BS_REACH": "BS_DRIVE",  # the step's reach speed, written and read before BS_DRIVE is
    "BS_D0": "BS_SLX",  # a driven body's drive state, where a passive body keeps its sleep pose
    "BS_D1": "BS_SLY",
    "BS_D2": "BS_SLT",  # an omni_angular drive's yaw rate, as BS_D0 and BS_D1
    "IS_STOP": "IS_UF",  # IR-SIM's flags, outside the contact mode (no contact graph)
    "IS_HIT": "IS_MOVED",
    "PFL_ACC": "PFL_LPOS",  # where the solver's accumulators start (prepare clears from it)
}

# Family-prefixed names that are no column of their family's row.
NOT_COLUMNS = {
    "PFL_PSTRIDE",  # columns per patch point (a stride)
    "BS_SAVE",  # cold-row columns (row B + b of bsc): the step's saved state ...
    "BS_SLSAVE",  # ... and saved sleep pose, laid out by SV_LEN
    "BS_KE0", "BS_KE1", "BS_KDRV",  # ... and the energy guard's island sums after them
    "BS_TOI",  # ... and continuous collision's time of impact
    "BS_HOLD",  # ... and the sub-steps a woken body stays awake
}

# Constants of layout.py that belong to no family of columns: enumerations, bits, sizes.
OTHER_PREFIXES = ("MODE_", "ST_", "GS_", "DS_", "MAX_", "SV_", "OUT_", "BODY_", "SC_", "CM_",
                  "ROLE_", "JV_", "JK_", "JOINT_")
OTHER_NAMES = {"IMMOVABLE", "DRIVEN", "PASSIVE"}


def _constants() -> dict[str, int]:
    return {k: v for k, v in vars(layout).items()
            if k.isupper() and isinstance(v, int) and not isinstance(v, bool)}


def _family(name: str) -> str | None:
    prefix = name.split("_", 1)[0]
    return prefix if prefix in FAMILIES else None


def _columns(prefix: str) -> dict[str, int]:
    return {k: v for k, v in _constants().items()
            if _family(k) == prefix and k != f"{prefix}_LEN" and k not in NOT_COLUMNS}


def test_every_constant_is_accounted_for():
    stray = [k for k in _constants()
             if _family(k) is None and k not in OTHER_NAMES and not k.startswith(OTHER_PREFIXES)]
    assert not stray, f"layout.py constants of no known family: {stray}"
    for name in list(ALIASES) + list(ALIASES.values()) + sorted(NOT_COLUMNS):
        assert name in _constants(), f"{name} is listed here but not defined in layout.py"


@pytest.mark.parametrize("prefix", sorted(FAMILIES))
def test_columns_are_distinct_and_within_length(prefix):
    length = getattr(layout, f"{prefix}_LEN")
    columns = _columns(prefix)
    assert columns, prefix
    for name, col in columns.items():
        assert 0 <= col < length, f"{name} = {col} outside {FAMILIES[prefix]}'s {prefix}_LEN"
    owner: dict[int, str] = {}
    for name, col in sorted(columns.items(), key=lambda kv: kv[0] in ALIASES):
        if name in ALIASES:
            assert col == columns[ALIASES[name]], f"{name} no longer aliases {ALIASES[name]}"
            continue
        assert col not in owner, f"{name} and {owner[col]} share column {col} of {prefix}"
        owner[col] = name


def test_the_pair_arrays_and_the_piece_and_world_arrays_no_longer_share_prefixes():
    # The collisions that motivated separate prefixes (PF_BRAD == PF_NPTS == 3 and
    # PR_SLOP == PR_SP == 2): the pair families are named apart.
    names = _constants()
    assert not {"PF_NPTS", "PF_DEPTH", "PR_SP", "PR_A"} & names.keys()
    assert names["PFL_NPTS"] == names["PF_BRAD"] and names["PRS_SP"] == names["PR_SLOP"]


def test_contact_columns_fit_the_narrow_phase_buffer():
    # narrowphase.collide writes the first OUT_LEN columns of a pfl row; the pair's other
    # columns must lie past them or a contact would overwrite them.
    contact = ("NX", "NY", "DEPTH", "NPTS", "P1X", "P1Y", "P1D", "P2X", "P2Y", "P2D", "CORNER")
    last = layout.PFL_P1X + layout.PFL_PSTRIDE * 2 - 1
    assert last < layout.OUT_LEN
    for suffix in contact:
        assert getattr(layout, f"PFL_{suffix}") < layout.OUT_LEN
    rest = [k for k in _columns("PFL") if k[4:] not in contact]
    assert all(getattr(layout, k) >= layout.OUT_LEN for k in rest), rest


def test_multi_column_entries_do_not_overlap_their_neighbours():
    # Entries spanning several columns: the next column must start past them.
    assert layout.IS_GROUP == layout.IS_BLK + layout.MAX_BLOCK
    assert layout.PFL_LVEL2 == layout.PFL_PJN + 2  # PFL_PJN holds the two points' lambdas
    assert layout.BS_SLSAVE == layout.BS_SAVE + layout.SV_LEN
    assert layout.BS_SLSAVE + 3 <= layout.BS_LEN  # the cold row fits in a row of bsc
    assert layout.BS_HOLD < layout.BS_LEN
