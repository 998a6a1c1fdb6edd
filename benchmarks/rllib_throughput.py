"""RLlib PPO throughput against the number of EnvRunners K (train/rllib_ppo.py).

    python benchmarks/rllib_throughput.py --runners 0 1 2 --iterations 4
    python benchmarks/rllib_throughput.py --runners 2 --address auto   # on a running cluster

Each K runs train/rllib_ppo.py in its own process and reads its progress.json; the table gives
env-steps/s of whole iterations (sampling and the PPO update) and of sampling alone, as the
median [min, max] over the iterations after the first (which includes start-up).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _stats(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} [{min(values):,.0f}, {max(values):,.0f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runners", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--envs", type=int, default=64, help="envs per runner N")
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--train-batch-size", type=int, default=8192)
    parser.add_argument("--env", default="PushBox-v0")
    parser.add_argument("--address", default=None, help="Ray cluster address (e.g. auto)")
    args = parser.parse_args()
    rows = []
    for k in args.runners:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, str(ROOT / "train" / "rllib_ppo.py"), "--env", args.env,
                   "--num-env-runners", str(k), "--num-envs-per-runner", str(args.envs),
                   "--iterations", str(args.iterations), "--train-batch-size",
                   str(args.train_batch_size), "--run-dir", tmp, "--no-checkpoint"]
            if args.address:
                cmd += ["--address", args.address]
            subprocess.run(cmd, check=True)
            progress = json.loads(next(Path(tmp).rglob("progress.json")).read_text())
        later = progress[1:] or progress
        total = [r["env_steps_per_s"] for r in later]
        sample = [args.train_batch_size / r["sample_s"] for r in later
                  if r["sample_s"] == r["sample_s"] and r["sample_s"] > 0]
        rows.append((k, _stats(total), _stats(sample) if sample else "n/a"))
    print(f"\n{args.env}, N = {args.envs} envs per runner, train batch {args.train_batch_size}, "
          f"iterations 2..{args.iterations}: median [min, max]")
    print("| K runners | env-steps/s, whole iteration | env-steps/s, sampling |")
    print("|---:|---|---|")
    for k, total, sample in rows:
        print(f"| {k} | {total} | {sample} |")


if __name__ == "__main__":
    main()
