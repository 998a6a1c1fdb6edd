"""Cost of one PPO gradient step of the actor-critic MLPs, by width, activation and threads.

    python benchmarks/ppo_update.py                    # the table (about a minute)
    python benchmarks/ppo_update.py --obs-dim 53 --batch 1024 --repeats 5

The learner, not the env, sets the wall clock of `train/train.py` (the env batch steps about
a million env-steps/s; PPO trains at ~10 k). One step here is what SB3's PPO does per
minibatch, minus the distribution bookkeeping: the actor and critic forwards on a minibatch,
a loss, backward, gradient-norm clipping (0.5) and a fused Adam step. Per sample and epoch
it is the update's cost: a PPO run pays it ``n_epochs`` times for every env step.

Every figure is the median of ``--repeats`` timings (min and max beside it) of ``--steps``
gradient steps, measured with time.perf_counter after 5 warm-up steps. ``OMP_WAIT_POLICY``
is taken from the environment as train/train.py does (PASSIVE unless set).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as train/train.py, before torch loads

import torch  # noqa: E402
from torch import nn  # noqa: E402

ACTIVATIONS = {"Tanh": nn.Tanh, "ReLU": nn.ReLU}


def mlp(inp: int, out: int, hidden: list[int], act: type[nn.Module]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(inp, width), act()]
        inp = width
    layers.append(nn.Linear(inp, out))
    return nn.Sequential(*layers)


def time_update(obs_dim: int, act_dim: int, hidden: list[int], act: str, batch: int,
                threads: int, steps: int) -> float:
    """Seconds per gradient step (actor + critic, clip, fused Adam) on ``batch`` samples."""
    torch.set_num_threads(threads)
    pi = mlp(obs_dim, act_dim, hidden, ACTIVATIONS[act])
    vf = mlp(obs_dim, 1, hidden, ACTIVATIONS[act])
    params = list(pi.parameters()) + list(vf.parameters())
    opt = torch.optim.Adam(params, lr=3e-4, eps=1e-5, fused=True)
    x = torch.randn(batch, obs_dim)

    def step() -> None:
        loss = pi(x).square().mean() + vf(x).square().mean()
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(params, 0.5)
        opt.step()

    for _ in range(5):
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - t0) / steps


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--obs-dim", type=int, default=53, help="observation size (PushBox-v0: 53)")
    p.add_argument("--act-dim", type=int, default=2)
    p.add_argument("--batch", type=int, default=1024, help="minibatch size")
    p.add_argument("--steps", type=int, default=40, help="gradient steps per timing")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = p.parse_args()
    print(f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}, obs {args.obs_dim}, "
          f"batch {args.batch}, {args.steps} steps x {args.repeats} repeats\n")
    print("| nets (actor and critic) | threads | ms per step (median) | min | max "
          "| us per sample-epoch |")
    print("|---|---:|---:|---:|---:|---:|")
    for hidden, act in (([128, 128], "Tanh"), ([64, 64], "Tanh"), ([128, 128], "ReLU"),
                        ([256, 256], "Tanh")):
        for threads in args.threads:
            t = [time_update(args.obs_dim, args.act_dim, hidden, act, args.batch, threads,
                             args.steps) for _ in range(args.repeats)]
            med = statistics.median(t)
            print(f"| {hidden} {act} | {threads} | {med * 1e3:.2f} | {min(t) * 1e3:.2f} | "
                  f"{max(t) * 1e3:.2f} | {med / args.batch * 1e6:.2f} |")


if __name__ == "__main__":
    main()
