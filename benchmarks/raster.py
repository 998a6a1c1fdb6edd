"""CPU time per pixel frame of the compiled rasteriser alone, and a hash of the frames.

    NUMBA_NUM_THREADS=1 python benchmarks/raster.py [--env PushT-v0] [--num-envs 1024]
                                                    [--view top ego] [--fov 3.0]

A ``make_vec`` batch with ``obs_mode="pixels"`` (96 x 96) is stepped ``--steps`` random
steps (seeded), then every env's frame is drawn again into its frame buffer by
``raster_serial`` (one thread) ``--repeats`` times. The time is ``time.process_time()``
(CPU time of this process, so a loaded machine distorts it less than wall-clock), per frame
[us]: best, median [min, max]. The sha256 of the frames is printed too, so two versions of
the rasteriser can be compared for identical images as well as for speed (the same seed
gives the same states). ``--view``: the top-down view, the ego view (``pixel_view="ego"``,
``--fov`` metres wide) or both, one row each.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time

import numpy as np


def main() -> None:
    import gymnasium as gym

    import push_envs  # noqa: F401
    from push_envs.physics.raster import raster_serial

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", nargs="+", default=["PushT-v0", "PushBox-v0"])
    ap.add_argument("--num-envs", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--view", nargs="+", choices=("top", "ego"), default=["top"])
    ap.add_argument("--fov", type=float, default=3.0, help="ego view width [m]")
    args = ap.parse_args()
    for env_id, view in [(e, v) for e in args.env for v in args.view]:
        kw = {"pixel_view": "ego", "pixel_fov": args.fov} if view == "ego" else {}
        venv = gym.make_vec(env_id, num_envs=args.num_envs, obs_mode="pixels", **kw)
        venv.reset(seed=0)
        rng = np.random.default_rng(0)
        shape = venv.action_space.shape
        for _ in range(args.steps):
            venv.step(rng.uniform(-1, 1, shape))
        w, goals = venv.world.arrays, venv.task_arrays.goal
        out = venv.env_arrays.pix  # the frame buffers the rasteriser keeps (dirty rows)
        raster_serial(w, venv.raster, goals, out)  # compile / warm
        times = []
        for _ in range(args.repeats):
            t0 = time.process_time()
            raster_serial(w, venv.raster, goals, out)
            times.append((time.process_time() - t0) / args.num_envs * 1e6)
        digest = hashlib.sha256(out.tobytes()).hexdigest()[:16]
        print(f"{env_id} {view}: {min(times):.2f} us/frame best, median "
              f"{statistics.median(times):.2f} [{min(times):.2f}, {max(times):.2f}] of "
              f"{args.repeats}; frames sha256 {digest}",
              flush=True)


if __name__ == "__main__":
    main()
