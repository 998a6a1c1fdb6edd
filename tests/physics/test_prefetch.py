"""The software prefetch (physics/prefetch.py): a hint compiled to LLVM's prefetch, which
reads nothing back and changes no value."""

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from push_envs.physics.prefetch import ROW_LINES
from push_envs.physics.prefetch import prefetch_address
from push_envs.physics.prefetch import prefetch_row


@njit(cache=False)
def _prefetch_then_sum(a, e):
    lines = prefetch_row(a, e)
    return lines, a[e].sum()


@pytest.mark.parametrize("cols", [1, 3, 8, 9, 64, 200])
def test_prefetch_row_asks_for_the_row_head_and_changes_nothing(cols):
    a = np.arange(cols * 40, dtype=np.float64).reshape(40, cols)
    before = a.copy()
    lines, total = _prefetch_then_sum(a, 3)
    assert total == before[3].sum()
    np.testing.assert_array_equal(a, before)
    # every line the row starts in, up to ROW_LINES: 8 float64 per 64-byte line
    assert lines == min(-(-cols // 8), ROW_LINES)


def test_prefetch_compiles_to_llvm_prefetch():
    ir = "".join(_prefetch_then_sum.inspect_llvm().values())
    assert "call void @llvm.prefetch" in ir


def test_prefetch_address_takes_only_an_integer_address():
    @njit(cache=False)
    def bad(x):
        prefetch_address(x)

    with pytest.raises(TypingError):
        bad(1.5)
