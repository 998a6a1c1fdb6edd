"""Behaviour cloning on a Minari dataset of push_envs: an MLP regresses the expert's actions
from the observations, then runs on the task's native batch and reports its success rate.

    python -m push_envs.datasets record --env PushBox-v0 --policy scripted --episodes 1000 \\
        --out push_envs/PushBox-v0/scripted-v0
    python -m train.bc --dataset push_envs/PushBox-v0/scripted-v0

The env (id and arguments) comes from the dataset's env spec. Everything a run produces lands
in ``<run-dir>/<env>/bc/<seed>/``: ``policy.pt`` (weights, observation normalisation and
architecture; load with :func:`load_bc`), ``args.json`` and ``result.json`` (training loss,
the evaluation's success rate and mean return, wall clock). The evaluation runs
``eval_episodes`` fresh episodes (seed + 20000, as train/train.py's final evaluation) with the
quota scheme of ``push_envs.datasets.rollout``, so long episodes are not under-counted.
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

import gymnasium as gym
import numpy as np
import torch
import tyro
from gymnasium.vector import AutoresetMode
from torch import nn

import push_envs  # noqa: F401  (registers the ids)
from push_envs.datasets import rollout

from .run_folder import RunDir

FINAL_SEED_OFFSET = 20_000  # as train/train.py: evaluation episodes are fresh seeds


@dataclass
class Args:
    dataset: str
    """Minari dataset id (see python -m push_envs.datasets record)"""
    root: str | None = None
    """Minari datasets folder (default: $MINARI_DATASETS_PATH or ~/.minari/datasets)"""
    seed: int = 0
    """seed of torch's initialisation and minibatches; the evaluation uses seed + 20000"""
    epochs: int = 100
    """passes over the dataset"""
    batch_size: int = 512
    """minibatch size"""
    lr: float = 1e-3
    """Adam learning rate (cosine-decayed to 0 over the run)"""
    hidden: list[int] = field(default_factory=lambda: [256, 256, 256])
    """hidden layer sizes of the MLP"""
    eval_episodes: int = 1000
    """evaluation episodes on the task's native batch"""
    eval_envs: int = 100
    """envs in the evaluation batch"""
    run_dir: str = "runs"
    """root of the run folders: <run_dir>/<env>/bc/<seed>/ (<seed>-2, -3, ... when that
    folder holds an earlier run)"""
    overwrite: bool = False
    """write into <seed>/ even when it holds an earlier run (replacing its files)"""
    threads: int = 1
    """torch threads (small MLPs: 1 is fastest)"""

    def __post_init__(self) -> None:
        # The shared CLI parser hands floats and list items over as strings.
        try:
            self.lr = float(self.lr)
            self.hidden = [int(h) for h in self.hidden]
        except ValueError as exc:
            raise SystemExit(f"bc.py: --lr must be a float and --hidden ints ({exc})") from None
        for name in ("epochs", "batch_size", "eval_episodes", "eval_envs", "threads"):
            if getattr(self, name) < 1:
                raise SystemExit(f"bc.py: --{name.replace('_', '-')} must be >= 1, got "
                                 f"{getattr(self, name)}")
        if not self.lr > 0 or any(h < 1 for h in self.hidden):
            raise SystemExit(f"bc.py: --lr must be > 0 and --hidden sizes >= 1, got {self.lr}, "
                             f"{self.hidden}")


class BCPolicy(nn.Module):
    """MLP from a normalised observation to an action in [-1, 1] (tanh output)."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: list[int], mean: np.ndarray,
                 std: np.ndarray) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        size = obs_dim
        for h in hidden:
            layers += [nn.Linear(size, h), nn.ReLU()]
            size = h
        layers += [nn.Linear(size, act_dim), nn.Tanh()]
        self.net = nn.Sequential(*layers)
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.as_tensor(std, dtype=torch.float32))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net((obs - self.mean) / self.std)

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Actions (N, act_dim) for a numpy batch of observations (N, obs_dim)."""
        with torch.no_grad():
            return self(torch.as_tensor(obs, dtype=torch.float32)).numpy()


def load_dataset(dataset_id: str, root: str | None = None) -> tuple[Any, np.ndarray, np.ndarray]:
    """The Minari dataset and its (observation, action) pairs as float32 arrays."""
    if root is not None:
        os.environ["MINARI_DATASETS_PATH"] = str(Path(root).resolve())
    import minari

    ds = minari.load_dataset(dataset_id)
    if not isinstance(ds.observation_space, gym.spaces.Box):
        raise ValueError(f"--dataset {dataset_id}: bc.py needs Box observations (obs_mode "
                         f"'state'), got {ds.observation_space}")
    obs, act = [], []
    for ep in ds.iterate_episodes():
        obs.append(np.asarray(ep.observations)[:-1])
        act.append(np.asarray(ep.actions))
    return ds, np.concatenate(obs).astype(np.float32), np.concatenate(act).astype(np.float32)


def train_bc(obs: np.ndarray, act: np.ndarray, args: Args) -> tuple[BCPolicy, list[float]]:
    """Fit a :class:`BCPolicy` by mean squared error; returns it and the loss of each epoch."""
    torch.manual_seed(args.seed)
    gen = np.random.default_rng(args.seed)
    mean = obs.mean(0)
    std = np.maximum(obs.std(0), 1e-3)  # constant columns (unused contact slots) stay finite
    policy = BCPolicy(obs.shape[1], act.shape[1], args.hidden, mean, std)
    opt = torch.optim.Adam(policy.parameters(), lr=args.lr)
    n = len(obs)
    steps = args.epochs * max(1, n // args.batch_size)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    x, y = torch.as_tensor(obs), torch.as_tensor(act)
    losses = []
    for _ in range(args.epochs):
        perm = gen.permutation(n)
        total, count = 0.0, 0
        for s in range(0, n - args.batch_size + 1, args.batch_size):
            idx = torch.as_tensor(perm[s:s + args.batch_size])
            loss = nn.functional.mse_loss(policy(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
            count += len(idx)
        losses.append(total / max(count, 1))
    return policy, losses


def evaluate(policy: BCPolicy, env_id: str, env_kwargs: dict[str, Any], episodes: int,
             num_envs: int, seed: int) -> dict[str, float]:
    """Success rate, mean return and mean length of ``episodes`` fresh episodes."""
    venv = gym.make_vec(env_id, num_envs=min(num_envs, episodes),
                        autoreset_mode=AutoresetMode.DISABLED, num_threads=1, **env_kwargs)
    eps = list(rollout(venv, policy.act, episodes, seed))
    venv.close()
    return {"success_rate": float(np.mean([e.success for e in eps])),
            "mean_return": float(np.mean([e.rewards.sum() for e in eps])),
            "mean_length": float(np.mean([len(e) for e in eps])), "episodes": len(eps)}


def load_bc(path: str | Path) -> BCPolicy:
    """A :class:`BCPolicy` from a ``policy.pt`` written by this script."""
    saved = torch.load(path, map_location="cpu", weights_only=True)
    policy = BCPolicy(saved["obs_dim"], saved["act_dim"], saved["hidden"],
                      np.zeros(saved["obs_dim"]), np.ones(saved["obs_dim"]))
    policy.load_state_dict(saved["state_dict"])
    return policy


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = tyro.cli(Args, args=argv, description=__doc__.split("\n\n")[0])
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    ds, obs, act = load_dataset(args.dataset, args.root)
    spec = ds.spec.env_spec
    if spec is None:
        raise ValueError(f"--dataset {args.dataset}: the dataset names no env to evaluate on")
    env_id, env_kwargs = spec.id, dict(spec.kwargs)
    policy, losses = train_bc(obs, act, args)
    train_s = time.perf_counter() - start
    result = evaluate(policy, env_id, env_kwargs, args.eval_episodes, args.eval_envs,
                      args.seed + FINAL_SEED_OFFSET)
    result.update(dataset=args.dataset, env=env_id, env_kwargs=env_kwargs,
                  dataset_episodes=ds.total_episodes, samples=len(obs),
                  final_loss=losses[-1], train_s=train_s,
                  wall_s=time.perf_counter() - start)
    with RunDir(Path(args.run_dir) / env_id / "bc" / str(args.seed), args.overwrite) as run:
        out = run.path
        torch.save({"state_dict": policy.state_dict(), "obs_dim": obs.shape[1],
                    "act_dim": act.shape[1], "hidden": list(args.hidden), "env": env_id,
                    "env_kwargs": env_kwargs}, out / "policy.pt")
        (out / "args.json").write_text(json.dumps(asdict(args), indent=2))
        (out / "result.json").write_text(json.dumps(result, indent=2))
    print(f"{env_id} BC on {args.dataset} ({len(obs)} samples, loss {losses[-1]:.4f}): success "
          f"rate {result['success_rate']:.3f} over {result['episodes']} episodes, mean return "
          f"{result['mean_return']:.2f} ({result['wall_s']:.0f} s) -> {out}")
    return result


if __name__ == "__main__":
    main()
