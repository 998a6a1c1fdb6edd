"""End-to-end PPO throughput on PushBox-v0 (env batch + SB3 learner, env-steps/s): the shipped
recipe against the old one, and train.train's lean PPO against SB3's own, in one run.

    python benchmarks/ppo_throughput.py                    # 3 rounds, 20 s a run
    python benchmarks/ppo_throughput.py --rounds 5 --seconds 30 --csv ppo.csv
    python benchmarks/ppo_throughput.py --recipes shipped --learners lean sb3 --phases
    python benchmarks/ppo_throughput.py --recipes shipped --learners sb3 lean --interleave 30

Each round runs every (recipe, learner) pair once, each in a fresh process, alternating the
order round by round. A process builds the run exactly as ``python -m train.train`` builds it
(the yml's entry for PushBox-v0 and its robot, VecNormalize, the thread split of
:func:`train.train.thread_plan`), without the warm start and the evaluations, learns two
iterations to warm up (kernels loaded, torch's first calls), then learns whole iterations
(collect a rollout: env step, policy forward, rollout buffer; update) for ``--seconds``: the
figure is the env steps of those iterations per wall-clock second, from the start of the
first to the start of the first one past the budget, and the process's CPU time (user +
system, every thread) per 1000 of them. Other jobs only ever slow a process down, and CPU
time is the steadier figure on a shared machine; the table gives min / median / max per
pair over the rounds, and each learner's ratio to ``sb3`` round by round (paired).

``--interleave N`` measures instead in one process per recipe: a model per learner, taking
turns iteration by iteration for N iterations each, the CPU time of each iteration; pairs
this close in time share the load, so their ratio (printed pair by pair) is the steadiest
comparison a busy machine gives.

``--phases`` splits the CPU time of the timed iterations by phase (exclusive time per 1000
env steps): the batch's step, the SB3 adapter, VecMonitor, VecNormalize, the policy's
forwards (the actions and values, the bootstrap of cut episodes, the last values), the
episode-info loop, the buffer's ``add``, GAE, the rest of ``collect_rollouts`` (its own
Python loop and tensor conversions) and the update. The timers cost a little themselves, so
a ``--phases`` run's rate reads a little low.

Recipes: ``shipped`` is PushBox-v0's PPO entry (``push_envs/tasks/pushing/push_box/
hyperparams.yml`` over ``train/hyperparams/ppo.yml``); ``old`` is the recipe shipped before
it (64 envs x 64 steps, minibatch 1024, 10 epochs, 128 x 128 Tanh), which
:data:`OLD` gives as overrides of the shipped one. Learners: ``lean`` is what
``python -m train.train`` runs (:class:`train.lean_ppo.LeanPPO`), ``sb3`` SB3's ``PPO`` as
it comes (``--no-lean``).
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
LEARNERS = ("lean", "sb3")


class PhaseClock:
    """Exclusive process CPU time per phase: wraps methods so that a phase's time excludes
    the wrapped phases it calls."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._stack: list[float] = []

    def wrap(self, obj: Any, name: str, phase: str) -> None:
        inner_fn = getattr(obj, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.process_time()
            self._stack.append(0.0)
            try:
                return inner_fn(*args, **kwargs)
            finally:
                spent = time.process_time() - t0
                inner = self._stack.pop()
                self.seconds[phase] = self.seconds.get(phase, 0.0) + spent - inner
                if self._stack:
                    self._stack[-1] += spent

        setattr(obj, name, timed)


def instrument(model: Any, env: Any) -> PhaseClock:
    """A :class:`PhaseClock` on ``model``'s rollout and update and ``env``'s wrappers."""
    from stable_baselines3.common.vec_env import VecMonitor
    from stable_baselines3.common.vec_env import VecNormalize

    from push_envs.sb3 import PushSB3VecEnv

    clock = PhaseClock()
    names = {VecNormalize: "VecNormalize", VecMonitor: "VecMonitor",
             PushSB3VecEnv: "SB3 adapter"}
    venv = env
    while True:
        clock.wrap(venv, "step_wait", names.get(type(venv), type(venv).__name__))
        if isinstance(venv, PushSB3VecEnv):
            clock.wrap(venv.venv, "step", "batch step")
            break
        venv = venv.venv
    clock.wrap(model.policy, "forward", "policy forward")
    clock.wrap(model.policy, "predict_values", "policy forward")
    clock.wrap(model, "_update_info_buffer", "episode-info loop")
    clock.wrap(model.rollout_buffer, "add", "buffer add")
    clock.wrap(model.rollout_buffer, "compute_returns_and_advantage", "GAE")
    clock.wrap(model, "train", "update")
    clock.wrap(model, "collect_rollouts", "rollout's own loop")
    return clock


def build(recipe: str, learner: str) -> tuple[Any, Any, Any, dict[str, Any], Any]:
    """(model, env, thread callback, hyperparameters, thread plan) of ``recipe`` by
    ``learner``, built as ``python -m train.train`` builds them, warmed up by two
    iterations (kernels loaded, torch's first calls)."""
    sys.path.insert(0, str(HERE))
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from stable_baselines3 import PPO

    from train.hyperparameters import algo_kwargs
    from train.hyperparameters import load_hyperparams
    from train.hyperparameters import merge
    from train.lean_ppo import LeanPPO
    from train.train import UpdateThreads
    from train.train import make_env
    from train.train import thread_plan

    hp = load_hyperparams("ppo", ENV_ID)
    merge(hp, RECIPES[recipe])
    plan = thread_plan(hp)
    hp["env_threads"] = plan.env
    env = make_env(ENV_ID, hp["n_envs"], 0, hp)
    algo = {"lean": LeanPPO, "sb3": PPO}[learner]
    model = algo(hp.get("policy", "MlpPolicy"), env, seed=0, device="cpu", verbose=0,
                 **algo_kwargs(hp))
    threads = UpdateThreads(plan.collect, plan.update)
    model.learn(2 * hp["n_envs"] * hp["n_steps"], callback=threads)
    return model, env, threads, hp, plan


def shape(hp: dict[str, Any], plan: Any) -> dict[str, Any]:
    """The recipe's shape and thread plan, for the table."""
    return {"n_envs": hp["n_envs"], "n_steps": hp["n_steps"], "batch_size": hp["batch_size"],
            "n_epochs": hp["n_epochs"], "width": hp["policy_kwargs"]["net_arch"]["pi"],
            "threads": {"env": plan.env, "collect": plan.collect, "update": plan.update}}


def interleaved(recipe: str, learners: list[str], iterations: int) -> dict[str, Any]:
    """Every learner's model of ``recipe`` in this one process, taking turns iteration by
    iteration (the order flipped each turn): CPU ms per 1000 env steps of each iteration.
    Pairs made this close in time see the same load, so their ratio is the steadiest
    figure a shared machine gives."""
    from stable_baselines3.common.callbacks import CallbackList

    built = {lr: build(recipe, lr) for lr in learners}
    cpu: dict[str, list[float]] = {lr: [] for lr in learners}
    for i in range(iterations):
        for lr in learners if i % 2 == 0 else learners[::-1]:
            model, _, threads, hp, _ = built[lr]
            steps = hp["n_envs"] * hp["n_steps"]
            t0 = time.process_time()
            model.learn(steps, callback=CallbackList([threads]), reset_num_timesteps=False)
            cpu[lr].append(1e6 * (time.process_time() - t0) / steps)
    for _, env, _, _, _ in built.values():
        env.close()
    _, _, _, hp, plan = built[learners[0]]
    return {"recipe": recipe, "cpu_ms_per_1k": cpu, **shape(hp, plan)}


def worker(recipe: str, learner: str, seconds: float, phases: bool = False
           ) -> dict[str, Any]:
    """Whole PPO iterations of ``recipe`` by ``learner`` for ``seconds`` in this process:
    env-steps/s, CPU ms per 1000 env steps (by phase with ``phases``) and the recipe's
    shape."""
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.callbacks import CallbackList

    model, env, threads, hp, plan = build(recipe, learner)

    class Clock(BaseCallback):
        """Times whole iterations: the time and env steps at each rollout's start; learning
        stops at the first rollout that starts ``seconds`` after the first one."""

        def __init__(self) -> None:
            super().__init__()
            self.marks: list[tuple[float, int]] = []
            self.done = False

        def _on_rollout_start(self) -> None:
            now = time.perf_counter()
            self.marks.append((now, self.model.num_timesteps, time.process_time()))
            self.done = now - self.marks[0][0] >= seconds

        def _on_step(self) -> bool:
            return not self.done

    clock = Clock()
    split = instrument(model, env) if phases else None
    model.learn(10 ** 12, callback=CallbackList([threads, clock]), reset_num_timesteps=False)
    (t0, s0, c0), (t1, s1, c1) = clock.marks[0], clock.marks[-1]
    steps, wall = s1 - s0, t1 - t0
    env.close()
    # The phase timers also saw the stopped rollout's one step past the last mark: per
    # 1000 of the env steps they saw.
    by_phase = {} if split is None else {
        k: 1e6 * v / (model.num_timesteps - s0) for k, v in split.seconds.items()}
    return {"recipe": recipe, "learner": learner, "env_steps": steps, "seconds": wall,
            "rate": steps / wall, "cpu_ms_per_1k": 1e6 * (c1 - c0) / steps,
            "phases": by_phase, **shape(hp, plan)}


def _stats(values: list[float]) -> tuple[float, float, float]:
    return min(values), statistics.median(values), max(values)


def report_interleaved(recipes: list[str], learners: list[str], iterations: int) -> None:
    """Print :func:`interleaved`'s CPU times and each learner's paired ratio to the first."""
    for recipe in recipes:
        load0 = os.getloadavg()[0]
        res = interleaved(recipe, learners, iterations)
        load1 = os.getloadavg()[0]
        print(f"{recipe} ({res['n_envs']} x {res['n_steps']}, minibatch {res['batch_size']}, "
              f"{res['n_epochs']} epochs, {'x'.join(map(str, res['width']))}), {iterations} "
              f"interleaved iterations each, load average {load0:.1f} -> {load1:.1f}")
        cpu = res["cpu_ms_per_1k"]
        for lr in learners:
            lo, mid, hi = _stats(cpu[lr])
            print(f"  {lr:5s} CPU ms / 1 k env steps: {lo:.2f} / {mid:.2f} / {hi:.2f} "
                  f"(min / median / max), {1e3 / mid:,.1f} k env steps per CPU-s")
        for lr in learners[1:]:
            lo, mid, hi = _stats([b / a for a, b in zip(cpu[learners[0]], cpu[lr],
                                                         strict=True)])
            print(f"  {lr} / {learners[0]}, pair by pair: {lo:.3f} / {mid:.3f} / {hi:.3f}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=20.0,
                    help="wall clock of the timed iterations per run")
    ap.add_argument("--recipes", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    ap.add_argument("--learners", nargs="+", default=["lean"], choices=list(LEARNERS),
                    help="lean: train.train's (default); sb3: SB3's PPO as it comes")
    ap.add_argument("--phases", action="store_true",
                    help="split each run's CPU time by phase (module docs)")
    ap.add_argument("--interleave", type=int, metavar="N",
                    help="instead: one process per recipe, its learners taking turns for N "
                         "iterations each (module docs); CPU time, paired ratios")
    ap.add_argument("--csv", type=Path, help="write every run's row here")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*args.worker, args.seconds, args.phases)))
        return
    if args.rounds < 1 or not args.seconds > 0:
        ap.error("--rounds must be >= 1 and --seconds > 0")
    if args.interleave is not None:
        if args.interleave < 1:
            ap.error("--interleave must be >= 1")
        report_interleaved(args.recipes, args.learners, args.interleave)
        return
    pairs = [(r, lr) for r in args.recipes for lr in args.learners]
    rows: list[dict[str, Any]] = []
    for rnd in range(args.rounds):
        for recipe, learner in pairs if rnd % 2 == 0 else pairs[::-1]:
            cmd = [sys.executable, __file__, "--worker", recipe, learner, "--seconds",
                   str(args.seconds)] + (["--phases"] if args.phases else [])
            out = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE)
            if out.returncode != 0:
                sys.exit(f"{recipe} / {learner}: the worker failed:\n{out.stderr[-2000:]}")
            row = json.loads(out.stdout.strip().splitlines()[-1])
            row["round"] = rnd
            row["load"] = os.getloadavg()[0]
            rows.append(row)
            print(f"round {rnd} {recipe:8s} {learner:5s} {row['rate']:>10,.0f} env-steps/s "
                  f"({row['env_steps']:,} steps in {row['seconds']:.1f} s), "
                  f"{row['cpu_ms_per_1k']:.2f} CPU ms / 1 k, load {row['load']:.1f}",
                  flush=True)
    loads = [x["load"] for x in rows]
    print(f"\nPPO on {ENV_ID}, end to end (env + learner) over {args.rounds} rounds, "
          f"load average {min(loads):.1f}-{max(loads):.1f}: min / median / max")
    print(f"{'recipe':8s} {'learner':7s} {'envs x steps':>12s} {'batch':>6s} {'epochs':>6s} "
          f"{'width':>8s} {'env-steps/s':>26s} {'CPU ms / 1 k env steps':>24s}")
    med: dict[tuple[str, str], float] = {}
    for recipe, learner in pairs:
        mine = [x for x in rows if (x["recipe"], x["learner"]) == (recipe, learner)]
        lo, mid, hi = _stats([x["rate"] for x in mine])
        clo, cmid, chi = _stats([x["cpu_ms_per_1k"] for x in mine])
        med[recipe, learner] = mid
        x = mine[0]
        print(f"{recipe:8s} {learner:7s} {x['n_envs']:>5d} x {x['n_steps']:<4d} "
              f"{x['batch_size']:>6d} {x['n_epochs']:>6d} {'x'.join(map(str, x['width'])):>8s} "
              f"{lo:>8,.0f} {mid:>8,.0f} {hi:>8,.0f} {clo:>7.2f} {cmid:>7.2f} {chi:>7.2f}")
    for recipe in args.recipes:
        for learner in args.learners:
            if learner == "sb3" or "sb3" not in args.learners:
                continue
            ratio = [a["cpu_ms_per_1k"] / b["cpu_ms_per_1k"] for a in rows for b in rows
                     if a["round"] == b["round"] and a["recipe"] == b["recipe"] == recipe
                     and (a["learner"], b["learner"]) == (learner, "sb3")]
            lo, mid, hi = _stats(ratio)
            print(f"{recipe}: {learner} / sb3, CPU per env step, round by round: "
                  f"{lo:.3f} / {mid:.3f} / {hi:.3f} (min / median / max)")
    if {"shipped", "old"} <= set(args.recipes):
        for learner in args.learners:
            print(f"{learner}: shipped / old (medians of env-steps/s): "
                  f"{med['shipped', learner] / med['old', learner]:.1f}x")
    if args.phases:
        names = list(dict.fromkeys(k for x in rows for k in x["phases"]))
        print("\nCPU ms per 1000 env steps by phase (median over the rounds)")
        print(f"{'phase':24s}" + "".join(f" {r[:7] + '/' + lr:>14s}" for r, lr in pairs))
        for name in names:
            cells = [statistics.median([x["phases"].get(name, 0.0) for x in rows
                                        if (x["recipe"], x["learner"]) == pair])
                     for pair in pairs]
            print(f"{name:24s}" + "".join(f" {c:>14.3f}" for c in cells))
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            fields = ["round", "recipe", "learner", "rate", "cpu_ms_per_1k", "env_steps",
                      "seconds", "load", "n_envs", "n_steps", "batch_size", "n_epochs",
                      "width", "threads", "phases"]
            w = csv.DictWriter(fh, fieldnames=fields)
            w.writeheader()
            for x in rows:
                w.writerow({k: json.dumps(x[k]) if isinstance(x[k], (list, dict)) else x[k]
                            for k in fields})


if __name__ == "__main__":
    main()
