"""What a scripted expert costs per state: the labels a warm start's DAgger rounds pay for.

    python benchmarks/experts.py                          # every task-robot pair with one
    python benchmarks/experts.py --tasks PushMaze-v1 --rounds 7 --threads 1

For each (task, robot) with a scripted expert (``push_envs.experts.available``, the registry
being the one list), a batch of ``--envs`` envs plays ``--steps`` steps under the expert,
half of them with random actions instead so that the states are not only the expert's own
(a clone's states are not), and every visited state is kept. Then, in ``--rounds`` rounds,
the expert labels all of them in one call, as the warm start's ``batch`` labeller does
(``train/warm_start.py``); the figure is wall-clock microseconds per state, min / median /
max over the rounds, after one untimed call (which loads or compiles the kernels).

``--threads`` sets numba's thread count for the call (an expert that plans in parallel,
PushMaze-v1's, uses it; the others run on one thread whatever it says). Nothing else should
run while this measures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's push_envs


def states(env_id: str, robot: str, envs: int, steps: int, seed: int) -> np.ndarray:
    """The observations (N, obs_dim) a batch visits under the expert, every other step a
    random action instead of the expert's."""
    import gymnasium as gym

    from push_envs.experts import expert

    policy = expert(env_id, robot)
    venv = gym.make_vec(env_id, num_envs=envs, robot=robot, num_threads=1)
    rng = np.random.default_rng(seed)
    rows = []
    try:
        obs, _ = venv.reset(seed=seed)
        for k in range(steps):
            rows.append(np.array(obs, copy=True))
            act = policy(obs) if k % 2 == 0 else rng.uniform(-1, 1, venv.action_space.shape)
            obs, *_ = venv.step(np.asarray(act, np.float32))
    finally:
        venv.close()
    return np.concatenate(rows)


def time_labels(env_id: str, robot: str, obs: np.ndarray, rounds: int,
                threads: int) -> list[float]:
    """Microseconds per state of labelling ``obs`` in one call, per round."""
    from push_envs.experts import expert

    policy = expert(env_id, robot)
    numba.set_num_threads(threads)
    policy(obs)  # loads (or compiles) the kernels, at the batch size timed
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        policy(obs)
        out.append((time.perf_counter() - t) / len(obs) * 1e6)
    return out


def main(argv: list[str] | None = None) -> None:
    from push_envs.experts import available

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", nargs="*", help="task ids (default: every one with an expert)")
    ap.add_argument("--envs", type=int, default=64, help="envs of the batch that visits")
    ap.add_argument("--steps", type=int, default=40, help="steps the batch plays")
    ap.add_argument("--rounds", type=int, default=5, help="timed labelling calls")
    ap.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS,
                    help="numba threads of the call (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if not 1 <= args.threads <= numba.config.NUMBA_NUM_THREADS:
        ap.error(f"--threads must be in [1, {numba.config.NUMBA_NUM_THREADS}], "
                 f"got {args.threads}")
    for flag in ("envs", "steps", "rounds"):
        if getattr(args, flag) < 1:
            ap.error(f"--{flag} must be >= 1, got {getattr(args, flag)}")
    pairs = [(t, r) for t, r in available() if not args.tasks or t in args.tasks]
    unknown = sorted(set(args.tasks or ()) - {t for t, _ in available()})
    if unknown:
        ap.error(f"no scripted expert for {unknown}; experts: "
                 f"{sorted({t for t, _ in available()})}")
    print(f"# scripted experts: wall-clock us per state labelled in one call, {args.rounds} "
          f"rounds, numba threads {args.threads}")
    print("| task | robot | states | min | median | max |")
    print("|---|---|---:|---:|---:|---:|")
    for env_id, robot in pairs:
        obs = states(env_id, robot, args.envs, args.steps, args.seed)
        us = time_labels(env_id, robot, obs, args.rounds, args.threads)
        print(f"| {env_id} | {robot} | {len(obs):,} | {min(us):.1f} | "
              f"{statistics.median(us):.1f} | {max(us):.1f} |", flush=True)


if __name__ == "__main__":
    main()
