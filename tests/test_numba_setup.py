"""numba set-up: source-keyed cache folder, fork-safe threading layer, thread count."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numba
import pytest

from push_envs import _numba_cache

ROOT = Path(__file__).resolve().parent.parent

_FORK = textwrap.dedent("""
    import os, numpy as np, numba
    from push_envs.physics import World
    from push_envs.tasks import spec
    w = World.from_config(spec("PushBox-v0").scene_path(), num_envs=32)  # prange kernel
    w.cmd[:, 0] = [1.0, 0.3]
    w.step_raw()
    pid = os.fork()
    if pid == 0:
        w.step_raw()
        os._exit(0 if np.isfinite(w.pos).all() else 3)
    _, status = os.waitpid(pid, 0)
    print(numba.threading_layer(), os.waitstatus_to_exitcode(status))
""")


_WHERE = ("from push_envs import _numba_cache as c; import numba; "
          "print(c.CACHE_DIR); print(numba.config.CACHE_DIR)")


def _env(**overrides):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(overrides)
    return env


def test_cache_folder_is_keyed_by_numba_and_the_format():
    key = _numba_cache.source_key()
    assert key.startswith(f"numba-{numba.__version__}{_numba_cache.opt_tag()}-")
    assert len(key.rsplit("-", 1)[1]) == 16
    assert numba.config.CACHE_DIR == _numba_cache.CACHE_DIR
    assert Path(_numba_cache.CACHE_DIR) == _numba_cache.cache_folder(os.environ, key)


@pytest.mark.parametrize("user_dir", [False, True], ids=["xdg", "NUMBA_CACHE_DIR"])
def test_cache_folder_in_a_fresh_process(tmp_path, user_dir):
    """Keyed by the sources with and without a user-set NUMBA_CACHE_DIR, and private."""
    env = _env(XDG_CACHE_HOME=str(tmp_path / "xdg"))
    if user_dir:
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    out = subprocess.run([sys.executable, "-c", _WHERE], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    key = _numba_cache.source_key()
    expected = (tmp_path / "numba" / f"push_envs-{key}" if user_dir
                else tmp_path / "xdg" / "push_envs" / key)
    assert out.stdout.split()[-2:] == [str(expected), str(expected)]
    assert stat.S_IMODE(expected.stat().st_mode) == 0o700


def test_cache_folder_is_keyed_by_the_optimisation_level(tmp_path):
    """numba's cache index ignores NUMBA_OPT, so each level needs its own folder; the default
    level 3 keeps the plain key (users' caches stay valid)."""
    folders = {}
    for opt in ("0", "1", "3"):
        env = _env(XDG_CACHE_HOME=str(tmp_path), NUMBA_OPT=opt)
        out = subprocess.run([sys.executable, "-c", _WHERE], capture_output=True, text=True,
                             env=env, cwd=ROOT, timeout=300)
        assert out.returncode == 0, out.stderr
        folders[opt] = Path(out.stdout.split()[-1]).name
    plain = _numba_cache.source_key(opt=3)
    version, digest = plain.rsplit("-", 1)
    assert folders == {"0": f"{version}_O0-{digest}", "1": f"{version}_O1-{digest}",
                       "3": plain}
    # The tagged names are still ours to prune beside the plain one.
    pattern = _numba_cache._sibling_pattern(plain)
    assert pattern.fullmatch(folders["0"]) and pattern.fullmatch(folders["1"])


def _key(n):
    return f"numba-0.68.1-{n:016x}"


def test_prune_keeps_the_recent_folders_and_touches_nothing_else(tmp_path):
    now = time.time()
    current = tmp_path / _key(0)
    current.mkdir()
    ages_h = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 0.1}  # folder n last used ages_h[n] hours ago
    for n, age in ages_h.items():
        (tmp_path / _key(n)).mkdir()
        (tmp_path / _key(n) / "index.nbi").write_text("x")
        os.utime(tmp_path / _key(n), (now - 3600 * age, now - 3600 * age))
    strangers = ["numba-0.68.1-short", "numba-cache", "notes.txt", f"x{_key(9)}"]
    for name in strangers[:2] + strangers[3:]:
        (tmp_path / name).mkdir()
        os.utime(tmp_path / name, (now - 1e6, now - 1e6))
    (tmp_path / "notes.txt").write_text("keep me")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / _key(7)).symlink_to(outside, target_is_directory=True)

    removed = _numba_cache.prune(current, keep=2, grace_s=1800, now=now)
    # Kept: the 2 most recent (6, then 1) and any used within 30 min (none more); the old
    # ones beyond them are removed; the symlink and the foreign names are never touched.
    assert sorted(p.name for p in removed) == [_key(2), _key(3), _key(4), _key(5)]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([_key(0), _key(1), _key(6), _key(7), *strangers])
    assert outside.is_dir()


def test_prune_in_a_user_cache_dir_only_removes_push_envs_folders(tmp_path):
    now = time.time()
    current = tmp_path / f"push_envs-{_key(0)}"
    current.mkdir()
    for name in (f"push_envs-{_key(1)}", _key(2), "other-project"):
        (tmp_path / name).mkdir()
        os.utime(tmp_path / name, (now - 1e6, now - 1e6))
    removed = _numba_cache.prune(current, keep=0, grace_s=0, now=now)
    assert [p.name for p in removed] == [f"push_envs-{_key(1)}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [current.name, _key(2), "other-project"])


def test_prepare_creates_private_folders_and_prunes(tmp_path):
    parent = tmp_path / "push_envs"
    parent.mkdir(mode=0o700)
    old = parent / _key(5)
    old.mkdir()
    os.utime(old, (1.0, 1.0))
    for n in range(1, 5):
        (parent / _key(n)).mkdir()
    folder = _numba_cache.prepare({"XDG_CACHE_HOME": str(tmp_path)}, key=_key(0))
    assert folder == parent / _key(0)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert not old.exists() and all((parent / _key(n)).is_dir() for n in range(1, 5))
    fresh = tmp_path / "fresh"
    folder = _numba_cache.prepare({"XDG_CACHE_HOME": str(fresh)}, key=_key(0))
    assert stat.S_IMODE((fresh / "push_envs").stat().st_mode) == 0o700


def test_writable_cache_of_ours_is_emptied_and_made_private(tmp_path):
    folder = tmp_path / "push_envs" / _key(0)
    folder.mkdir(parents=True)
    (folder / "planted.nbi").write_text("pickle")
    folder.chmod(0o777)
    with pytest.warns(UserWarning, match="was not private"):
        got = _numba_cache.prepare({"XDG_CACHE_HOME": str(tmp_path)}, key=_key(0))
    assert got == folder and list(folder.iterdir()) == []
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_cache_owned_by_someone_else_is_not_used(tmp_path, monkeypatch):
    folder = tmp_path / "push_envs" / _key(0)
    folder.mkdir(parents=True, mode=0o700)
    (folder / "planted.nbi").write_text("pickle")
    monkeypatch.setattr(_numba_cache.os, "getuid", lambda: folder.stat().st_uid + 1)
    with pytest.warns(UserWarning, match="owned by user id"):
        got = _numba_cache.prepare({"XDG_CACHE_HOME": str(tmp_path)}, key=_key(0))
    try:
        assert got != folder and got.name.startswith("push_envs-numba-tmp-")
        assert stat.S_IMODE(got.stat().st_mode) == 0o700 and list(got.iterdir()) == []
        assert (folder / "planted.nbi").exists()  # not ours to delete
    finally:
        import shutil

        shutil.rmtree(got, ignore_errors=True)


def test_forked_child_can_step_after_a_parallel_kernel_ran():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    out = subprocess.run([sys.executable, "-c", _FORK], capture_output=True, text=True,
                         env=env, cwd=os.path.dirname(os.path.dirname(__file__)), timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-2:] == ["workqueue", "0"]


def test_num_threads_setting_is_respected():
    from push_envs.physics import World

    w = World.from_config("push_envs/tasks/pushing/push_box/scene.yaml", num_envs=32, num_threads=1)
    w.step_raw()
    assert numba.get_num_threads() == 1
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


# Two Python threads, each stepping its own batch at once, compared bit for bit with the same
# batches stepped one after the other in the same process. Run in a child process: a
# threading layer that aborts (SIGABRT) fails the test instead of killing pytest.
_THREADS = textwrap.dedent("""
    import sys, threading
    import numpy as np, gymnasium as gym, numba
    import push_envs
    env_id, num_threads = sys.argv[1], None if sys.argv[2] == "None" else int(sys.argv[2])
    acts = np.random.default_rng(0).uniform(-1, 1, (60, 64, 2)).astype(np.float32)

    def play(seed, out):
        venv = gym.make_vec(env_id, num_envs=64, num_threads=num_threads)
        obs, _ = venv.reset(seed=seed)
        rows = [obs]
        for a in acts:
            rows.append(venv.step(a)[0])
        venv.close()
        out.append(np.stack(rows))

    alone = [[], []]
    for seed, out in zip((0, 1000), alone):
        play(seed, out)
    together = [[], []]
    threads = [threading.Thread(target=play, args=(seed, out))
               for seed, out in zip((0, 1000), together)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    same = all(np.array_equal(a[0], b[0]) for a, b in zip(alone, together))
    print(numba.threading_layer(), same)
""")


@pytest.mark.parametrize(("numba_threads", "num_threads"), [
    (None, 1), (None, None), ("2", 1), ("2", None)])
def test_two_threads_stepping_their_own_batches_agree_with_one_after_the_other(
        numba_threads, num_threads):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_THREADING_LAYER", "NUMBA_NUM_THREADS")}
    if numba_threads is not None:
        env["NUMBA_NUM_THREADS"] = numba_threads
    out = subprocess.run([sys.executable, "-c", _THREADS, "PushBox-v0", str(num_threads)],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.split()[-2:] == ["workqueue", "True"]


_NESTED = textwrap.dedent("""
    import numpy as np, numba
    from numba import njit, prange
    import push_envs

    @njit(parallel=True)
    def inner(a):
        out = np.empty_like(a)
        for i in prange(a.shape[0]):
            out[i] = 2.0 * a[i] + 1.0
        return out

    @njit(parallel=True)
    def outer(a):
        out = np.empty((8, a.shape[0]))
        for k in prange(8):
            out[k] = inner(a + k)  # a parallel launch inside a parallel loop
        return out

    a = np.arange(100.0)
    same = np.array_equal(outer(a), 2.0 * (a + np.arange(8.0)[:, None]) + 1.0)
    print(numba.threading_layer(), same)
""")


def test_a_nested_parallel_launch_runs_instead_of_aborting():
    """workqueue alone aborts on a parallel kernel launched inside another (a user's own
    kernels, say); the guard runs the inner one on the calling thread."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    out = subprocess.run([sys.executable, "-c", _NESTED], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.split()[-2:] == ["workqueue", "True"]


def test_a_cache_folder_that_cannot_be_written_warns_what_it_costs(tmp_path, monkeypatch):
    folder = tmp_path / "push_envs" / _key(0)
    folder.mkdir(parents=True, mode=0o700)

    def read_only(where):
        raise PermissionError(13, "Permission denied", str(where))

    monkeypatch.setattr(_numba_cache, "_write_probe", read_only)
    with pytest.warns(UserWarning) as caught:
        got = _numba_cache.prepare({"XDG_CACHE_HOME": str(tmp_path)}, key=_key(0))
    try:
        assert len(caught) == 1
        text = str(caught[0].message)
        assert f"{folder} is read-only" in text and "every process" in text
        assert "about 25 s for PushBox-v0" in text and "NUMBA_CACHE_DIR" in text
        assert got != folder and got.name.startswith("push_envs-numba-tmp-")
    finally:
        import shutil

        shutil.rmtree(got, ignore_errors=True)


_READ_ONLY = textwrap.dedent("""
    import warnings
    warnings.simplefilter("always")
    import numpy as np
    import push_envs
    from push_envs._numba_cache import CACHE_DIR
    from push_envs.tasks.pushing.push_maze import flood
    print(int(flood(np.ones((3, 4), bool), [(0, 0)]).sum()), CACHE_DIR)
""")


def test_a_read_only_cache_folder_still_works_and_says_so_once(tmp_path):
    """A real read-only folder: as root, the child runs without the capability that lets
    root write anywhere (setpriv); the kernels compile into a temporary folder."""
    folder = tmp_path / "numba"
    folder.mkdir()
    cmd = [sys.executable, "-c", _READ_ONLY]
    if os.getuid() == 0:
        if not Path("/usr/bin/setpriv").exists():
            pytest.skip("running as root without setpriv: no way to make a folder read-only")
        drop = "-dac_override,-dac_read_search,-fowner"
        cmd = ["/usr/bin/setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}", *cmd]
    folder.chmod(0o500)
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300,
                             env=_env(NUMBA_CACHE_DIR=str(folder)))
    finally:
        folder.chmod(0o700)
    assert out.returncode == 0, out.stderr[-2000:]
    count, where = out.stdout.split()[-2:]
    assert count == "12" and Path(where).name.startswith("push_envs-numba-tmp-")
    assert out.stderr.count("UserWarning") == 1, out.stderr
    assert "is read-only" in out.stderr and "every process" in out.stderr
    assert list(folder.iterdir()) == []


_ASYNC = textwrap.dedent("""
    import numpy as np, gymnasium as gym, numba
    import push_envs
    big = gym.make_vec("PushBox-v0", num_envs=32)  # the parent runs a parallel kernel first
    big.reset(seed=0)
    big.step(np.zeros(big.action_space.shape, np.float32))
    make = lambda: gym.make("PushBox-v0")
    acts = np.random.default_rng(1).uniform(-1, 1, (40, 3, 2)).astype(np.float32)
    out = []
    for vec in (gym.vector.AsyncVectorEnv([make] * 3, context="fork"),
                gym.vector.SyncVectorEnv([make] * 3)):
        obs, _ = vec.reset(seed=5)
        rows = [obs] + [vec.step(a)[0] for a in acts]
        vec.close()
        out.append(np.stack(rows))
    print(numba.threading_layer(), np.array_equal(out[0], out[1]))
""")


def test_async_vector_env_forks_after_a_parallel_kernel_ran():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    out = subprocess.run([sys.executable, "-c", _ASYNC], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-2:] == ["workqueue", "True"]
