"""python -m push_envs.warmup: compiles (or loads) a task's kernels in a fresh process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from push_envs import warmup

ROOT = Path(__file__).resolve().parents[1]


def test_a_warm_up_runs_the_task():
    assert warmup.warm("PushBox-v0") > 0.0


@pytest.mark.parametrize(("env_id", "why"), [("Nope-v0", "not registered"),
                                             ("CartPole-v1", "not a push_envs task")])
def test_an_id_that_is_not_a_task_is_refused_before_any_process_starts(env_id, why):
    with pytest.raises(KeyError, match=f"no task '{env_id}' .*{why}"):
        warmup.warm(env_id)
    # the command line: one line, exit 2, no traceback, nothing run (PushBox-v0 comes first)
    out = subprocess.run([sys.executable, "-m", "push_envs.warmup", "PushBox-v0", env_id],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 2 and out.stdout == "", out
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert f"no task '{env_id}'" in out.stderr and "registered tasks: ['PushBox-v0'" in \
        out.stderr


def test_a_failing_warm_up_ends_in_its_own_error_not_a_traceback(monkeypatch, capsys):
    def fails(env_id):
        raise RuntimeError(f"warm-up of {env_id} failed:\nValueError: boom")

    monkeypatch.setattr(warmup, "warm", fails)
    with pytest.raises(SystemExit) as exc:
        warmup.main(["PushBox-v0"])
    assert exc.value.code == 1
    assert "warm-up of PushBox-v0 failed:\nValueError: boom" in capsys.readouterr().err
