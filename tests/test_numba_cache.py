"""The cache follows what changed: entries stamped by their dependencies, damaged ones
recompiled, and a one-line edit to a task recompiling that task's hooks alone."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from push_envs import _numba_cache

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "push_envs"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


_HELPER = """
from numba import njit
SCALE = {scale}


{deco}
def helper(x):
    return x * SCALE + {offset}
"""

_CALLER = """
from numba import njit
import {helper} as H
from {helper} import helper


{deco}
def caller(x):
    return helper(x) + H.helper(x)
"""


_BEFORE = dict(scale=2.0, offset=1.0, deco="@njit", caller_deco="@njit")


@pytest.mark.parametrize("edit,changes", [
    ({}, False),  # the same code: the same stamp
    (dict(scale=3.0), True),  # a constant the helper reads
    (dict(offset=5.0), True),  # the helper's own code
    # The same code under other options is other machine code: the helper inlined into its
    # caller by LLVM, or compiled without reference counting, or the caller's own options.
    (dict(deco="@njit(forceinline=True)"), True),
    (dict(deco="@njit(_nrt=False)"), True),
    (dict(caller_deco="@njit(fastmath=True)"), True),
])
def test_a_callers_stamp_follows_a_helper_in_another_module(tmp_path, edit, changes):
    # Two copies of one package (the same module names), the second with ``edit``: as a
    # checkout before and after an edit.
    stamps = []
    for k, params in enumerate((_BEFORE, {**_BEFORE, **edit})):
        folder = tmp_path / str(k)
        folder.mkdir()
        (folder / "stamp_helper.py").write_text(_HELPER.format(**params))
        (folder / "stamp_caller.py").write_text(
            _CALLER.format(helper="stamp_helper", deco=params["caller_deco"]))
        sys.path.insert(0, str(folder))
        try:
            sys.modules.pop("stamp_helper", None)
            caller = _load(folder / "stamp_caller.py", "stamp_caller").caller
        finally:
            sys.path.remove(str(folder))
            sys.modules.pop("stamp_helper", None)
            sys.modules.pop("stamp_caller", None)
        stamps.append(_numba_cache.dependency_digest(caller.py_func))
    assert (stamps[0] != stamps[1]) is changes


def test_comments_docstrings_and_line_numbers_do_not_change_a_stamp(tmp_path):
    plain = "from numba import njit\n\n\n@njit\ndef f(x):\n    return x + 1\n"
    noisy = ("# a comment\n\nfrom numba import njit\n\n\n\n@njit\ndef f(x):\n"
             "    \"\"\"Docs.\"\"\"\n    # why\n    return x + 1  # one\n")
    (tmp_path / "p.py").write_text(plain)
    (tmp_path / "n.py").write_text(noisy)
    a = _numba_cache.dependency_digest(_load(tmp_path / "p.py", "stamp_p").f.py_func)
    b = _numba_cache.dependency_digest(_load(tmp_path / "n.py", "stamp_n").f.py_func)
    assert a == b


def _env(xdg: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR",)}
    env["XDG_CACHE_HOME"] = str(xdg)
    return env


_AREA = """
from push_envs.tasks.pushing.push_t.coverage import piece_table, table_area
print(table_area(piece_table([[(0.0, 0.0), (2.0, 0.0), (2.0, 1.5), (0.0, 1.5)]])))
"""


@pytest.mark.parametrize("damage", ["index-garbage", "index-empty", "data-garbage",
                                    "data-truncated"])
def test_a_damaged_cache_entry_is_dropped_and_compiled_again(tmp_path, damage):
    env = _env(tmp_path)
    run = lambda: subprocess.run([sys.executable, "-c", _AREA], capture_output=True,  # noqa
                                 text=True, env=env, cwd=ROOT, timeout=300)
    first = run()
    assert first.returncode == 0, first.stderr
    assert float(first.stdout) == 3.0
    files = list(tmp_path.rglob("coverage.table_area-*.nbi"))
    assert len(files) == 1
    index = files[0]
    data = next(index.parent.glob("coverage.table_area-*.nbc"))
    target = index if damage.startswith("index") else data
    raw = target.read_bytes()
    target.write_bytes({"index-garbage": b"\x80\x05garbage", "index-empty": b"",
                        "data-garbage": os.urandom(64),
                        "data-truncated": raw[:len(raw) // 2]}[damage])
    second = run()
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout  # the same value, compiled again
    assert "damaged numba cache entry" in second.stderr
    third = run()  # the entry was written anew: loads quietly
    assert third.returncode == 0 and "damaged" not in third.stderr
    assert third.stdout == first.stdout


_MAKE = """
import gymnasium as gym, push_envs
print("FROM", push_envs.__file__)
env = gym.make("PushBox-v0")
env.reset(seed=0)
env.step(env.action_space.sample())
"""


def test_a_one_line_edit_to_a_task_recompiles_that_tasks_hook_alone(tmp_path):
    # A copy of the package, with the session's cache copied beside it (entries are filed by
    # module name and stamped by content, so the copy finds them): after a one-line edit to
    # PushBox-v0's observe hook, a fresh process compiles exactly that hook's wrapper.
    copy = tmp_path / "src"
    shutil.copytree(PKG, copy / "push_envs", ignore=shutil.ignore_patterns("__pycache__"))
    xdg = tmp_path / "xdg"
    cache = Path(_numba_cache.CACHE_DIR)
    shutil.copytree(cache, xdg / "push_envs" / cache.name, ignore=shutil.ignore_patterns(
        "*.tmp.*"))
    env = _env(xdg)
    env["PYTHONPATH"] = str(copy)
    env["NUMBA_DEBUG_CACHE"] = "1"

    def saved() -> set[str]:
        out = subprocess.run([sys.executable, "-c", _MAKE], capture_output=True, text=True,
                             env=env, cwd=tmp_path, timeout=900)
        assert out.returncode == 0, out.stderr[-3000:]
        assert f"FROM {copy}" in out.stdout  # the edited copy, not the checkout
        return {Path(line.split("'")[1]).name.split("-")[0]
                for line in out.stdout.splitlines() if "data saved" in line}

    saved()  # whatever the session had not compiled yet
    assert saved() == set()  # warm
    task = copy / "push_envs" / "tasks" / "pushing" / "push_box" / "__init__.py"
    text = task.read_text()
    old = "    P.observe_goal_xy(e, W, V, T)\n"
    assert old in text
    task.write_text(text.replace(old, old + "    T.ag[e, 0] = 0.0\n"))
    assert saved() == {"push_envs_tasks_pushing_push_box_PushBox.hooks_c"}


def test_the_cache_folder_does_not_follow_the_sources():
    # One folder per numba version, level and Python: an edit or an upgrade keeps every
    # entry it did not touch.
    assert _numba_cache.source_key() == _numba_cache.source_key(Path("/nonexistent"))
    assert textwrap.dedent(_numba_cache.FORMAT)


def _this_trees(index: Path, stamp: object) -> bool:
    """Whether a cache entry is this source tree's: its module is loaded, the function is in
    it, and the stamp is the function's stamp now. The folder is shared by every checkout and
    version of the package on the machine (CI keeps ``~/.cache`` between runs), so it holds
    entries of modules this tree does not have, and of older versions of its functions."""
    module = sys.modules.get(index.parent.name)
    if module is None:
        return False
    # numba names an index "<file stem>.<qualified name>-<disambiguator>.<py tag>.nbi".
    qualname = index.name.split("-", 1)[0].split(".", 1)[1]
    if "<locals>" in qualname:
        return True  # a closure: not reachable by name; it is stamped like any other
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    # A dispatcher, a lazily compiled function (physics/jit.py) or the plain function that
    # jit.compiled() copies: the digest of its Python function, marked or not.
    py_func = getattr(obj, "py_func", obj)
    if not isinstance(py_func, types.FunctionType):
        return False
    digest = _numba_cache.dependency_digest(py_func)
    return stamp in (digest, digest + "|compiled-only")


def _cached_signatures() -> dict[str, list[str]]:
    """Every cached function of this source tree in the cache: index name -> the signatures
    its index holds (numba's index: a pickled (stamp, {(signature, target): data file})
    after a pickled version)."""
    import pickle

    out = {}
    for index in Path(_numba_cache.CACHE_DIR).glob("*/*.nbi"):
        with open(index, "rb") as fh:
            pickle.load(fh)
            try:
                stamp, overloads = pickle.loads(fh.read())
            except (ModuleNotFoundError, AttributeError):
                # An entry another checkout of the package wrote into the shared folder
                # (a module or a type this source tree does not have): not this session's.
                continue
        if _this_trees(index, stamp):
            out[f"{index.parent.name}/{index.name}"] = [str(key[0]) for key in overloads]
    return out


def test_no_kernel_is_compiled_for_a_literal_or_a_strided_view():
    # A literal argument (a constant 0 or True at a call site) or a strided view gives numba
    # a second signature to compile, the whole callee again: the cost is invisible except
    # in the cold start. Every task, one env and a batch, with a lidar and with pixels.
    import gymnasium as gym
    import numpy as np

    import push_envs

    for env_id in push_envs.ENV_IDS:
        for env in (gym.make(env_id, lidar=dict(number=4)),
                    gym.make_vec(env_id, num_envs=16, obs_mode="pixels")):
            env.reset(seed=0)
            env.step(np.zeros(env.action_space.shape, np.float32))
            env.close()
    sigs = _cached_signatures()
    assert sigs, "nothing cached"
    bad = {name: s for name, s in sigs.items()
           if any("Literal[" in x or ", 'A'" in x or ", 'F'" in x for x in s)}
    assert not bad, bad
    # The generic kernels and the stages: one signature each, for every task.
    for name in ("run_serial", "run_parallel", "post_envs", "reset_env", "apply_actions",
                 "step_stage", "reset_stage"):
        found = [s for n, s in sigs.items() if n.endswith(f"step.{name}-0.py311.nbi"
                                                          .replace("py311", _py()))]
        assert len(found) == 1 and len(found[0]) == 1, (name, found)


def _py() -> str:
    return f"py{sys.version_info.major}{sys.version_info.minor}"


def test_a_compiled_only_function_is_stamped_apart_from_its_njit_twin(tmp_path):
    # The same code compiled with and without numba's Python wrapper are different binaries:
    # loading one for the other would call into nothing, so their stamps differ.
    from push_envs.physics.jit import compiled
    from push_envs.physics.jit import python_entry

    (tmp_path / "stamp_twin.py").write_text("def f(x):\n    return x + 1\n")
    f = _load(tmp_path / "stamp_twin.py", "stamp_twin").f
    only = compiled(f)
    plain = _numba_cache._LazyStamp(f).value
    marked = _numba_cache._LazyStamp(only.py_func).value
    assert marked == plain + "|compiled-only"
    assert f.__dict__ == {}  # the mark is on compiled()'s own copy, not on f
    with pytest.raises(TypeError, match="stamp_twin.f is compiled for compiled callers only"):
        only(1)
    assert python_entry(only)(1) == 2


def test_a_threading_layer_that_cannot_load_leaves_the_entry_alone(tmp_path, monkeypatch):
    """NUMBA_THREADING_LAYER=tbb without TBB fails every parallel kernel's load; that is no
    damage of the entry, which other processes (on another layer) still load."""
    from types import SimpleNamespace

    index = tmp_path / "step.run_parallel-0.py311.nbi"
    data = tmp_path / "step.run_parallel-0.py311.1.nbc"
    index.write_bytes(b"index")
    data.write_bytes(b"data")
    locator = object.__new__(_numba_cache.DependencyLocator)
    cache = SimpleNamespace(_impl=SimpleNamespace(locator=locator), _cache_file=SimpleNamespace(
        _index_name=index.name, _index_path=str(index), _cache_path=str(tmp_path)))

    def fails(error):
        def load(*args):
            raise error
        return load

    monkeypatch.setattr(_numba_cache, "_load_ours", fails(ValueError(
        "No threading layer could be loaded.\nHINT:\nIntel TBB is required")))
    with pytest.raises(ValueError, match="No threading layer"):
        _numba_cache._load_overload(cache, None, None)
    assert index.exists() and data.exists()
    monkeypatch.setattr(_numba_cache, "_load_ours", fails(EOFError("truncated")))
    with pytest.warns(UserWarning, match="damaged numba cache entry"):
        assert _numba_cache._load_overload(cache, None, None) is None
    assert not index.exists() and not data.exists()
