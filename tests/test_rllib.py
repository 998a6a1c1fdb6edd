"""The RLlib env creator (push_envs.rllib) without ray: argument checks and strided seeds."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from push_envs.rllib import make_batch  # noqa: E402


@pytest.mark.parametrize("num_envs", [2.7, True, "2", 0, -1, None])
def test_num_envs_that_is_no_whole_number_is_refused(num_envs):
    with pytest.raises(ValueError, match="num_envs"):
        make_batch({"env_id": "PushBox-v0", "num_envs": num_envs})


@pytest.mark.parametrize("num_envs", [3, 3.0, np.int64(3)])
def test_whole_num_envs_are_accepted(num_envs):
    assert make_batch({"env_id": "PushBox-v0", "num_envs": num_envs}).num_envs == 3


def test_a_strided_seed_out_of_range_names_the_seed_that_was_passed():
    env = make_batch({"env_id": "PushBox-v0", "num_envs": 4})
    env.reset(seed=0)
    top = (2**64 - 4) // 4
    env.reset(seed=top)  # the largest accepted: envs top * 4 .. top * 4 + 3 < 2**64
    for seed in (top + 1, -1):
        with pytest.raises(ValueError, match="seed") as err:
            env.reset(seed=seed)
        assert str(seed) in str(err.value) and str(top) in str(err.value)


def test_strided_seeds_take_numpy_ints_and_pass_per_env_lists_through():
    a = make_batch({"env_id": "PushBox-v0", "num_envs": 2})
    b = make_batch({"env_id": "PushBox-v0", "num_envs": 2})
    assert np.array_equal(a.reset(seed=np.int64(3))[0], b.reset(seed=3)[0])
    assert np.array_equal(a.reset(seed=[6, 7])[0], b.reset(seed=3)[0])  # 3 * 2 + i
