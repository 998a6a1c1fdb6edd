"""push_envs/core/task.py's argument checks: the values they pass and the errors they raise."""

from __future__ import annotations

import pytest

from push_envs.core.task import integer
from push_envs.core.task import optional_pair
from push_envs.core.task import optional_range


def test_optional_pair_checks_each_entry_by_its_index():
    check = optional_pair(integer(1, 64), "(columns, rows) of layouts")
    assert check("layouts", None) is None
    assert check("layouts", (4, 2)) == (4, 2)
    assert check("layouts", [1, 64]) == (1, 64)
    with pytest.raises(ValueError, match=r"^layouts\[1\] must be an integer in \[1, 64\], "
                                         r"got 65$"):
        check("layouts", (1, 65))
    for bad in (5, (1, 2, 3), "ab c"):
        with pytest.raises(ValueError, match=r"^layouts must be None or \(columns, rows\) of "
                                             r"layouts, got "):
            check("layouts", bad)


def test_optional_range_names_a_value_that_is_no_pair_and_a_reversed_range():
    check = optional_range(0.0, strict=True)
    assert check("r", None) is None
    assert check("r", (0.5, 2)) == (0.5, 2.0)
    with pytest.raises(ValueError, match=r"^r must be None or a \(low, high\) pair, got 3$"):
        check("r", 3)
    with pytest.raises(ValueError, match=r"low <= high, got \(2, 1\)$"):
        check("r", (2, 1))
