"""python -m push_envs.warmup: compiles (or loads) a task's kernels in a fresh process."""

from __future__ import annotations

import pytest

from push_envs import warmup


def test_a_warm_up_runs_the_task_and_a_bad_id_says_why():
    assert warmup.warm("PushBox-v0") > 0.0
    with pytest.raises(RuntimeError, match=r"(?s)warm-up of Nope-v0 failed:.*Nope"):
        warmup.warm("Nope-v0")
