"""Where a batched env-step spends its time, stage by stage, with Linux ``perf``.

    python benchmarks/profile_stages.py --task PushT-v0 --num-envs 4096 --steps 400
    python benchmarks/profile_stages.py --world configs/crowd_rvo.yaml --num-envs 1024
    python benchmarks/profile_stages.py --crowd --steps 300     # the peer crowd, one env
    PYTHONPATH=<other checkout> python benchmarks/profile_stages.py ...   # the same on another

perf samples the CPU only while the timed steps run (``perf record --control``), so imports,
compiles and the warm-up stay out of the table. Numba's machine code has no symbols that perf
can read, so the child process writes ``/tmp/perf-<pid>.map`` (perf's JIT symbol map: start,
size, name per function) from the object code of every kernel it loaded from numba's cache:
each object's ELF symbol table gives the function names and sizes, and the JIT engine gives
their addresses. The rows are then stage functions (``find_pairs``, ``prepare``, ...);
whatever is compiled into a task's ``step_rows`` (the task hooks, ``step_env``'s own loop and
the helpers numba inlined) is one row.

Two notes for reading the table:

* A stage is charged for the cache misses of the first data it touches, so at large N the
  first stage of a step (the sub-step count) looks dearer than its arithmetic.
* Samples count CPU time, which shared cores stretch: compare checkouts in alternating runs
  and quote ratios of the totals, not single figures.

Needs ``perf`` (linux-tools) with sampling allowed (``kernel.perf_event_paranoid`` <= 2 for
one's own processes). Kernels must already be in numba's cache: a first run compiles them
and maps nothing; the script then says so and runs once more.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

_blobs: list = []


def _hook_cache_loads() -> None:
    """Keep the object code of every library loaded from numba's cache (numba internals:
    ``CPUCodeLibrary._set_compiled_object``, which numba's loader and push_envs' own
    (``push_envs/_cache_load.py``) both call; without them the table shows raw
    addresses)."""
    try:
        from numba.core import codegen
    except ImportError:
        return
    orig = codegen.CPUCodeLibrary._set_compiled_object

    def set_compiled_object(self, value):
        orig(self, value)
        _blobs.append((self._codegen, value))

    codegen.CPUCodeLibrary._set_compiled_object = set_compiled_object


@functools.cache
def _elf_module() -> Any:
    """push_envs/_elf.py of this script's checkout, loaded by path (once): the profiled
    checkout (PYTHONPATH) may be an older one without it."""
    path = Path(__file__).resolve().parent.parent / "push_envs" / "_elf.py"
    spec = importlib.util.spec_from_file_location("_push_envs_elf", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _elf_functions(blob: bytes) -> list[tuple[str, int]]:
    """(name, size in bytes) of the function symbols of an ELF64 little-endian object."""
    elf = _elf_module()
    return [(s.name, s.size) for s in elf.symbols(blob) if s.kind == elf.STT_FUNC]


def _short(name: str) -> str:
    """``push_envs.physics.broadphase.find_pairs`` from numba's mangled symbol."""
    prefix = ""
    for p in ("cfunc.", "cpython."):
        if name.startswith(p):
            prefix, name = p, name[len(p):]
    if not name.startswith("_ZN"):
        return prefix + name[:60]
    parts, i = [], 3
    while i < len(name) and name[i].isdigit():
        digits = re.match(r"\d+", name[i:]).group(0)
        i += len(digits)
        parts.append(name[i:i + int(digits)])
        i += int(digits)
    return prefix + ".".join(parts)


def _write_map() -> int:
    seen = {}
    for cg, blob in _blobs:
        for name, size in _elf_functions(blob):
            try:
                addr = cg._engine.get_function_address(name)
            except Exception:  # a symbol the engine does not export
                addr = 0
            if addr:
                seen[addr] = (size, _short(name))
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as fh:
        for addr in sorted(seen):
            size, name = seen[addr]
            fh.write(f"{addr:x} {max(size, 1):x} {name}\n")
    return len(seen)


def _remove_map(pid: str) -> None:
    try:
        os.remove(f"/tmp/perf-{pid}.map")
    except FileNotFoundError:
        pass


def child(args: argparse.Namespace) -> None:
    _hook_cache_loads()
    import gymnasium as gym
    import numpy as np

    import push_envs  # noqa: F401

    if args.world or args.crowd:
        _world_child(args)
        return
    env = gym.make_vec(args.task, num_envs=args.num_envs)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    shape = (args.steps + args.warmup,) + env.action_space.shape
    actions = rng.uniform(-1.0, 1.0, shape).astype(env.action_space.dtype)
    steps = iter(actions)
    _timed(args, lambda: env.step(next(steps)), args.num_envs)


def _timed(args: argparse.Namespace, step: Any, num_envs: int) -> None:
    """Run ``step`` ``args.warmup`` times, then ``args.steps`` times with perf sampling on,
    and print the env-steps per CPU-second, the kernels mapped and the pid (for the parent)."""
    for _ in range(args.warmup):
        step()
    with open(args.ctl, "w") as ctl:
        ctl.write("enable\n")
        ctl.flush()
        t0 = time.process_time()
        for _ in range(args.steps):
            step()
        cpu = time.process_time() - t0
        ctl.write("disable\n")
        ctl.flush()
    mapped = _write_map()
    print(f"{num_envs * args.steps / cpu:.0f} {mapped} {os.getpid()}", flush=True)


def _world_child(args: argparse.Namespace) -> None:
    """The timed steps of a world: a YAML world's ``World.step`` (behaviours included), or
    the peer crowd's ``World.step_raw`` with its robots driving (benchmarks/crowd.py)."""
    import numpy as np

    from push_envs.physics import World

    if args.crowd:
        here = Path(__file__).resolve().parent
        sys.path[:0] = [str(here), str(here / "peers")]
        import physics as pb

        world = World.from_config(pb.grid_scene(), num_envs=1)
        cmd = np.zeros_like(world.cmd)
        cmd[0, [world.index(f"robot{k}") for k in range(10)], 1] = 1.0

        def step() -> None:
            world.cmd[:] = cmd
            world.step_raw()
    else:
        world = World.from_config(args.world, num_envs=args.num_envs, num_threads=1)
        step = world.step
    _timed(args, step, world.num_envs)


def _report(data: str) -> list[tuple[int, str]]:
    out = subprocess.run(["perf", "report", "-i", data, "--stdio", "-n", "--sort", "sym"],
                         capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+\[(.)\]\s+(.*)", line)
        if m:
            rows.append((int(m.group(1)), m.group(3).strip()))
    return rows


def _group(name: str) -> str:
    """Stage rows keep their module.function; the rest fall in a few buckets."""
    if name.startswith(("push_envs", "push_envs_tasks")):
        return name.replace("push_envs_tasks.push_envs_envs_", "task ").replace("push_envs.", "")
    if "gufunc" in name:
        return "numba prange wrapper"
    if name.startswith(("__sin", "__cos", "__ieee754", "__atan", "__tan", "__exp", "__log")):
        return "libm " + name.strip("_").removesuffix("_fma")
    return "python, numpy and kernel"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default="PushT-v0")
    ap.add_argument("--num-envs", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=400, help="timed batched steps")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--freq", type=int, default=4000, help="perf samples per second")
    ap.add_argument("--top", type=int, default=25, help="rows to print")
    ap.add_argument("--world", help="a YAML world file instead of a task")
    ap.add_argument("--crowd", action="store_true",
                    help="the peer 1000-box crowd (one env) instead of a task")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--ctl", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    if shutil.which("perf") is None:
        sys.exit("profile_stages: needs Linux perf on PATH (linux-tools)")
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory() as tmp:
        ctl = os.path.join(tmp, "ctl.fifo")
        os.mkfifo(ctl)
        data = os.path.join(tmp, "perf.data")
        cmd = [sys.executable, __file__, "--child", "--ctl", ctl, "--task", args.task,
               "--num-envs", str(args.num_envs), "--steps", str(args.steps),
               "--warmup", str(args.warmup)]
        if args.world:
            cmd += ["--world", args.world]
        if args.crowd:
            cmd += ["--crowd"]
        for attempt in range(2):
            run = subprocess.run(["perf", "record", "-q", "-D", "-1", "--control",
                                  f"fifo:{ctl}", "-F", str(args.freq), "-o", data, "--", *cmd],
                                 capture_output=True, text=True)
            words = run.stdout.split()
            if run.returncode != 0 or len(words) < 3:
                sys.exit(f"profile_stages: perf record or the profiled run failed:\n{run.stderr}")
            rate, mapped, pid = words[-3:]
            if int(mapped) > 0:
                break
            if attempt == 1:
                print("profile_stages: no kernel loaded from numba's cache could be mapped "
                      "(its internals changed?); numba's rows show as raw addresses")
                break
            _remove_map(pid)
            print("profile_stages: the kernels were compiled in this run, not loaded from the "
                  "cache; profiling once more")
        rows = _report(data)
        _remove_map(pid)
    total = sum(n for n, _ in rows)
    groups: dict[str, int] = defaultdict(int)
    for n, name in rows:
        groups[_group(name)] += n
    what = "the crowd" if args.crowd else args.world or args.task
    n = 1 if args.crowd else args.num_envs
    print(f"{what}, N={n}, {args.steps} steps, "
          f"NUMBA_NUM_THREADS={os.environ['NUMBA_NUM_THREADS']}: "
          f"{float(rate):,.0f} env-steps/s (CPU time), {total} samples at {args.freq} Hz "
          f"({1e9 * total / args.freq / (n * args.steps):.0f} ns per env-step)")
    print(f"{'share':>7} {'ns/env-step':>11}  function")
    for name, k in sorted(groups.items(), key=lambda kv: -kv[1])[:args.top]:
        ns = 1e9 * k / args.freq / (n * args.steps)
        print(f"{100 * k / total:6.1f}% {ns:11.0f}  {name}")


if __name__ == "__main__":
    main()
