"""push_envs/physics/generated.py: a generated module is written once, rewritten only when its
text changes, and imported under push_envs_tasks.<stem>."""

from __future__ import annotations

import sys

from push_envs import _numba_cache
from push_envs.physics.generated import load_generated


def test_load_generated_writes_imports_and_rewrites_only_on_change(tmp_path, monkeypatch):
    monkeypatch.setattr(_numba_cache, "CACHE_DIR", str(tmp_path))
    path = tmp_path / "push_envs_tasks" / "probe__gen.py"
    try:
        mod = load_generated("probe__gen", "VALUE = 1\n")
        assert mod.VALUE == 1 and sys.modules["push_envs_tasks.probe__gen"] is mod
        assert path.read_text() == "VALUE = 1\n"
        stamp = path.stat().st_mtime_ns
        assert load_generated("probe__gen", "VALUE = 1\n").VALUE == 1
        assert path.stat().st_mtime_ns == stamp  # the same text: the file is left alone
        assert load_generated("probe__gen", "VALUE = 2\n").VALUE == 2
        assert path.read_text() == "VALUE = 2\n"
        assert not list(path.parent.glob("*.tmp"))
    finally:
        sys.modules.pop("push_envs_tasks.probe__gen", None)
