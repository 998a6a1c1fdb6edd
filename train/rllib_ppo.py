"""PPO with Ray RLlib (new API stack) on a push_envs task, each EnvRunner stepping one
compiled batch.

    python -m train.rllib_ppo --env PushBox-v0 --num-env-runners 2 --iterations 100
    python -m train.rllib_ppo --address auto ...      # on a running Ray cluster (README)

The env is registered with ``register_env`` under ``push_envs/<id>`` (``push_envs.rllib``);
its creator returns the native batch (``gym.make_vec(id, num_envs=N)``, NEXT_STEP autoreset as
RLlib expects) and the runners build it through ``gym_env_vectorize_mode="vector_entry_point"``:
one world of N envs per EnvRunner, not N Python envs. Every runner process (and the learner)
runs torch and numba with one thread: on these cores two torch threads made small-MLP
inference ~200x slower.
Observations are normalised by RLlib's ``MeanStdFilter`` connector (as VecNormalize does
for train/train.py). Each iteration prints the mean return, the success rate of the
episodes that ended (``is_success`` of their last step, logged by an ``on_episode_end``
callback) and env-steps/s; ``<run-dir>/<env>/rllib_ppo/<seed>/progress.json`` keeps them and
``checkpoint/`` the final algorithm.

``--num-env-runners 0`` samples in the driver process (what the tests use); K > 0 starts K
EnvRunner actors, on this machine or, with ``--address``, anywhere on the cluster.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import tyro

# One thread per process for numba; set before push_envs (numba) is imported anywhere. Only
# when run as a script: a test importing this module must not change the thread count numba
# launches with for the rest of its process (numba refuses a different count afterwards).
if __name__ == "__main__":
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from push_envs.datasets import parse_kwargs

from .run_folder import RunDir


@dataclass
class Args:
    env: str = "PushBox-v0"
    """the task id (registered by push_envs)"""
    robot: str | None = None
    """drive: diff, omni or acker (default: the task's)"""
    env_kwargs: list[str] = field(default_factory=list)
    """more task arguments as key=value, values parsed as YAML (e.g. max_episode_steps=100)"""
    num_env_runners: int = 2
    """EnvRunner processes K (0: sample in the driver)"""
    num_envs_per_runner: int = 64
    """envs in each runner's native batch N"""
    iterations: int = 100
    """training iterations (each samples train_batch_size env steps)"""
    timesteps: int | None = None
    """stop once this many env steps are sampled (default: iterations decides)"""
    train_batch_size: int = 8192
    """env steps per iteration, over all runners"""
    minibatch_size: int = 1024
    """SGD minibatch size"""
    num_epochs: int = 10
    """passes over each train batch"""
    lr: float = 3e-4
    """Adam learning rate"""
    gamma: float = 0.98
    """discount (train/hyperparams/ppo.yml's PushBox value)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    hidden: list[int] = field(default_factory=lambda: [128, 128])
    """hidden layer sizes of the policy and value MLPs (tanh)"""
    seed: int = 0
    """seed of torch and of the runners' batches (runner k, env i: (seed + k) N + i)"""
    address: str | None = None
    """Ray cluster address ('auto': the cluster this node joined); default: a local Ray"""
    num_cpus: int | None = None
    """CPUs of the local Ray (default: all; ignored with --address)"""
    run_dir: str = "runs"
    """root of the run folders: <run_dir>/<env>/rllib_ppo/<seed>/ (<seed>-2, -3, ... when that
    folder holds an earlier run)"""
    overwrite: bool = False
    """write into <seed>/ even when it holds an earlier run (replacing its files)"""
    no_checkpoint: bool = False
    """do not save the final algorithm"""
    verbose: int = 1
    """0: quiet, 1: one line per iteration"""

    def __post_init__(self) -> None:
        # The shared CLI parser hands floats and list items over as strings.
        try:
            self.lr, self.gamma, self.gae_lambda = float(self.lr), float(self.gamma), \
                float(self.gae_lambda)
            self.hidden = [int(h) for h in self.hidden]
        except ValueError as exc:
            raise SystemExit(f"rllib_ppo.py: --lr, --gamma, --gae-lambda must be floats and "
                             f"--hidden ints ({exc})") from None
        if self.num_env_runners < 0:
            raise SystemExit(f"rllib_ppo.py: --num-env-runners must be >= 0, got "
                             f"{self.num_env_runners}")
        for name in ("num_envs_per_runner", "iterations", "train_batch_size", "minibatch_size",
                     "num_epochs"):
            if getattr(self, name) < 1:
                raise SystemExit(f"rllib_ppo.py: --{name.replace('_', '-')} must be >= 1, got "
                                 f"{getattr(self, name)}")


def build_config(args: Args) -> Any:
    """The PPOConfig of a run (new API stack; one compiled batch per EnvRunner)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.connectors.env_to_module import MeanStdFilter
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    from push_envs.rllib import log_success
    from push_envs.rllib import register

    name = register(args.env)
    env_config: dict[str, Any] = {"env_id": args.env, **parse_kwargs(args.env_kwargs)}
    if args.robot is not None:
        env_config["robot"] = args.robot
    runners = max(args.num_env_runners, 1)
    fragment = max(1, args.train_batch_size // (runners * args.num_envs_per_runner))
    return (
        PPOConfig()
        .environment(name, env_config=env_config)
        .framework("torch")
        .env_runners(num_env_runners=args.num_env_runners,
                     num_envs_per_env_runner=args.num_envs_per_runner,
                     gym_env_vectorize_mode="vector_entry_point",
                     num_cpus_per_env_runner=1,
                     rollout_fragment_length=fragment,
                     env_to_module_connector=lambda env, spaces=None, device=None:
                         MeanStdFilter())
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=args.train_batch_size,
                  minibatch_size=args.minibatch_size, num_epochs=args.num_epochs, lr=args.lr,
                  gamma=args.gamma, lambda_=args.gae_lambda, clip_param=0.2, vf_clip_param=100.0,
                  entropy_coeff=0.0, grad_clip=0.5)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=args.hidden,
                                                   fcnet_activation="tanh",
                                                   vf_share_layers=False))
        .callbacks(on_episode_end=log_success)
        .debugging(seed=args.seed)
    )


def _get(result: dict[str, Any], *path: str, default: Any = float("nan")) -> Any:
    for key in path:
        if not isinstance(result, dict) or key not in result:
            return default
        result = result[key]
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = tyro.cli(Args, args=argv, description=__doc__.split("\n\n")[0])
    import ray
    import torch

    torch.set_num_threads(1)
    if args.address is not None:
        ray.init(address=args.address)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False)
    algo = build_config(args).build_algo()  # before a folder is claimed
    rows: list[dict[str, Any]] = []
    run = RunDir(Path(args.run_dir) / args.env / "rllib_ppo" / str(args.seed), args.overwrite)
    steps = 0
    start = time.perf_counter()
    try:
        with run:
            out = run.path
            (out / "args.json").write_text(json.dumps(asdict(args), indent=2))
            for it in range(1, args.iterations + 1):
                t0 = time.perf_counter()
                result = algo.train()
                dt = time.perf_counter() - t0
                total = int(_get(result, "num_env_steps_sampled_lifetime", default=0))
                row = {"iteration": it, "env_steps": total,
                       "return": float(_get(result, "env_runners", "episode_return_mean")),
                       "success": float(_get(result, "env_runners", "success")),
                       "episode_len": float(_get(result, "env_runners", "episode_len_mean")),
                       "iter_s": dt, "env_steps_per_s": (total - steps) / dt,
                       "sample_s": float(_get(result, "timers", "env_runner_sampling_timer")),
                       "wall_s": time.perf_counter() - start}
                steps = total
                rows.append(row)
                run.under_way()  # an earlier run replaced (--overwrite) goes now
                if args.verbose:
                    print(f"iter {it:4d}  steps {total:9d}  return {row['return']:8.2f}  success "
                          f"{row['success']:.3f}  len {row['episode_len']:6.1f}  "
                          f"{row['env_steps_per_s']:8.0f} env-steps/s  ({dt:.1f} s)", flush=True)
                (out / "progress.json").write_text(json.dumps(rows, indent=1))
                if args.timesteps is not None and total >= args.timesteps:
                    break
            if not args.no_checkpoint:
                algo.save_to_path(str((out / "checkpoint").resolve()))
    finally:
        algo.stop()
        ray.shutdown()
    summary = {"iterations": len(rows), "env_steps": steps,
               "final_return": rows[-1]["return"], "final_success": rows[-1]["success"],
               "wall_s": time.perf_counter() - start, "run_dir": str(out)}
    (out / "result.json").write_text(json.dumps(summary, indent=2))
    print(f"{args.env}: {steps} env steps in {summary['wall_s']:.0f} s; return "
          f"{summary['final_return']:.2f}, success {summary['final_success']:.3f} -> {out}")
    return summary


if __name__ == "__main__":
    main()
