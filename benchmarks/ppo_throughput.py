"""End-to-end PPO throughput on PushBox-v0 (env batch + SB3 learner, env-steps/s): the shipped
recipe against the old one, in one run.

    python benchmarks/ppo_throughput.py                    # 3 rounds, 20 s a recipe
    python benchmarks/ppo_throughput.py --rounds 5 --seconds 30 --csv ppo.csv

Each round runs every recipe once, each in a fresh process, alternating which goes first.
A process builds the run exactly as ``python -m train.train`` builds it (the yml's entry
for PushBox-v0 and its robot, VecNormalize, the thread split of
:func:`train.train.thread_plan`), without the warm start and the evaluations, learns two
iterations to warm up (kernels loaded, torch's first calls), then learns whole iterations
(collect a rollout: env step, policy forward, rollout buffer; update) for ``--seconds``: the
figure is the env steps of those iterations per wall-clock second, from the start of the
first to the start of the first one past the budget. Other jobs only ever slow a
process down, so on a shared machine read the max; the table gives min / median / max per
recipe over the rounds and the ratio of the medians.

Recipes: ``shipped`` is PushBox-v0's PPO entry (``push_envs/tasks/pushing/push_box/
hyperparams.yml`` over ``train/hyperparams/ppo.yml``); ``old`` is the recipe shipped before
it (64 envs x 64 steps, minibatch 1024, 10 epochs, 128 x 128 Tanh), which
:data:`OLD` gives as overrides of the shipped one.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
ENV_ID = "PushBox-v0"
# The recipe shipped until issue 51 (train/hyperparams/ppo.yml's old default), as overrides
# of the shipped entry.
OLD: dict[str, Any] = {"n_envs": 64, "n_steps": 64, "batch_size": 1024, "n_epochs": 10,
                       "learning_rate": 3e-4,
                       "policy_kwargs": {"net_arch": {"pi": [128, 128], "vf": [128, 128]}}}
RECIPES = {"shipped": {}, "old": OLD}


def worker(recipe: str, seconds: float) -> dict[str, Any]:
    """Whole PPO iterations of ``recipe`` for ``seconds`` in this process: env-steps/s and
    the recipe's shape."""
    sys.path.insert(0, str(HERE))
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.callbacks import CallbackList

    from train.hyperparameters import algo_kwargs
    from train.hyperparameters import load_hyperparams
    from train.hyperparameters import merge
    from train.train import UpdateThreads
    from train.train import make_env
    from train.train import thread_plan

    hp = load_hyperparams("ppo", ENV_ID)
    merge(hp, RECIPES[recipe])
    plan = thread_plan(hp)
    hp["env_threads"] = plan.env
    env = make_env(ENV_ID, hp["n_envs"], 0, hp)
    model = PPO(hp.get("policy", "MlpPolicy"), env, seed=0, device="cpu", verbose=0,
                **algo_kwargs(hp))
    threads = UpdateThreads(plan.collect, plan.update)
    rollout = hp["n_envs"] * hp["n_steps"]
    model.learn(2 * rollout, callback=threads)  # warm-up: kernels, torch's first calls

    class Clock(BaseCallback):
        """Times whole iterations: the time and env steps at each rollout's start; learning
        stops at the first rollout that starts ``seconds`` after the first one."""

        def __init__(self) -> None:
            super().__init__()
            self.marks: list[tuple[float, int]] = []
            self.done = False

        def _on_rollout_start(self) -> None:
            now = time.perf_counter()
            self.marks.append((now, self.model.num_timesteps))
            self.done = now - self.marks[0][0] >= seconds

        def _on_step(self) -> bool:
            return not self.done

    clock = Clock()
    model.learn(10 ** 12, callback=CallbackList([threads, clock]), reset_num_timesteps=False)
    (t0, s0), (t1, s1) = clock.marks[0], clock.marks[-1]
    steps, wall = s1 - s0, t1 - t0
    env.close()
    return {"recipe": recipe, "env_steps": steps, "seconds": wall, "rate": steps / wall,
            "n_envs": hp["n_envs"], "n_steps": hp["n_steps"], "batch_size": hp["batch_size"],
            "n_epochs": hp["n_epochs"],
            "width": hp["policy_kwargs"]["net_arch"]["pi"],
            "threads": {"env": plan.env, "collect": plan.collect, "update": plan.update}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=20.0,
                    help="wall clock of the timed iterations per run")
    ap.add_argument("--recipes", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    ap.add_argument("--csv", type=Path, help="write every run's row here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.seconds)))
        return
    if args.rounds < 1 or not args.seconds > 0:
        ap.error("--rounds must be >= 1 and --seconds > 0")
    rows: list[dict[str, Any]] = []
    for r in range(args.rounds):
        order = args.recipes if r % 2 == 0 else args.recipes[::-1]
        for recipe in order:
            out = subprocess.run([sys.executable, __file__, "--worker", recipe, "--seconds",
                                  str(args.seconds)], capture_output=True, text=True, cwd=HERE)
            if out.returncode != 0:
                sys.exit(f"{recipe}: the worker failed:\n{out.stderr[-2000:]}")
            row = json.loads(out.stdout.strip().splitlines()[-1])
            row["round"] = r
            rows.append(row)
            print(f"round {r} {recipe:8s} {row['rate']:>10,.0f} env-steps/s "
                  f"({row['env_steps']:,} steps in {row['seconds']:.1f} s)", flush=True)
    print(f"\nPPO on {ENV_ID}, end to end (env + learner), env-steps/s over {args.rounds} "
          f"rounds")
    print(f"{'recipe':8s} {'envs x steps':>12s} {'batch':>6s} {'epochs':>6s} {'width':>10s} "
          f"{'min':>9s} {'median':>9s} {'max':>9s}")
    med = {}
    for recipe in args.recipes:
        mine = [x for x in rows if x["recipe"] == recipe]
        rates = [x["rate"] for x in mine]
        med[recipe] = statistics.median(rates)
        x = mine[0]
        print(f"{recipe:8s} {x['n_envs']:>5d} x {x['n_steps']:<4d} {x['batch_size']:>6d} "
              f"{x['n_epochs']:>6d} {'x'.join(map(str, x['width'])):>10s} {min(rates):>9,.0f} "
              f"{med[recipe]:>9,.0f} {max(rates):>9,.0f}")
    if {"shipped", "old"} <= set(med):
        print(f"shipped / old (medians): {med['shipped'] / med['old']:.1f}x")
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            fields = ["round", "recipe", "rate", "env_steps", "seconds", "n_envs", "n_steps",
                      "batch_size", "n_epochs", "width", "threads"]
            w = csv.DictWriter(fh, fieldnames=fields)
            w.writeheader()
            for x in rows:
                w.writerow({k: json.dumps(x[k]) if isinstance(x[k], (list, dict)) else x[k]
                            for k in fields})


if __name__ == "__main__":
    main()
