"""Push-T learned by DAgger: a mixture-density policy in the T's frame, taught by the scripted
expert on its own states.

    python -m train.dagger                      # PushT-v0, seed 0: DAgger, then evaluation
    python -m train.dagger --seed 1 --rounds 8

Everything a run produces lands in ``<run-dir>/PushT-v0/dagger/<seed>/``: ``policy.pt``
(load with :func:`load_policy`), ``args.json`` and ``result.json`` (each round's clone
success and loss, the wall clock, and the final evaluation: coverage success, pose success
and the final coverage over ``eval_episodes`` fresh episodes, seed + 20000 as
train/train.py's).

What the run does (Ross et al., 2011, with the three choices below):

1. the scripted expert (``push_envs.tasks.pushing.push_t.expert``: 100 % coverage success) plays
   ``episodes`` episodes; their (observation, action) pairs start the data set;
2. the policy is fitted to the set, ``epochs`` passes of Adam on the mixture's negative
   log-likelihood;
3. each of ``rounds`` DAgger rounds: the policy plays ``dagger_episodes`` fresh episodes of its
   own, the expert labels every state it visited, those pairs join the set, and step 2 runs
   again (the same network and optimiser, continued);
4. the final policy plays ``eval_episodes`` fresh episodes twice, under ``success='coverage'``
   (gym-pusht's: the T covers 0.95 of the goal) and under ``success='pose'`` (2 cm, 5 deg).

Why not the plain clone of train/warm_start.py (measured on 2 Dec, seed 0;
docs/history.md, tenth round): it made 0-1 % coverage success. The changes below
were added one after another; until the last one, the policy stayed at 0-11 %:

* **Copycat inputs.** The observation carries the robot's velocity, which follows the last
  action; a regression leans on it and learns "keep going". At rest (velocity 0) it answers
  0 and stays at rest, where the expert says drive at 1 m/s. The policy's inputs leave every
  velocity out.
* **The T's frame.** The expert is equivariant: moving the whole scene rigidly moves its
  action with it. Its inputs are the robot and the goal seen from the T (origin and heading),
  so 53 world-frame columns become 10 numbers and a push learned in one place holds in all;
  the action is predicted in the T's frame and turned into the robot's body frame. The goal
  offsets and the heading error also enter x10, so the last centimetres (0.95 coverage needs
  ~1 cm and ~2 deg) are not lost in the input's scale. Frame alone: 0.8 % with a Gaussian
  regression, 10.8 % with the mixture.
* **Jumps in the expert's action.** Where its best push point changes, or the side it orbits
  the T by, the expert's action jumps. A regression averages the two sides into an action
  neither takes (orbiting by neither side is standing still). A mixture density network
  (Bishop, 1994) gives each side its own Gaussian; the policy acts with the mean of the
  heaviest component, so it commits to one side.
* **Direction and log speed.** The expert travels at up to 0.9 m/s and makes its last pushes
  at 2 cm/s (speed in proportion to the pose error). A squared error in m/s hardly sees the
  slow pushes, so the mixture models the action's unit direction and the log of its speed,
  which weighs a 10 % speed error alike at both ends. After 3 DAgger rounds: 29 % of its own
  episodes against 4 % with the velocity modelled directly.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Literal

import gymnasium as gym
import numpy as np
import torch
import tyro
from PIL import Image
from torch import nn

import push_envs  # noqa: F401  (registers the ids)
from push_envs.baselines.tee_frame import TeeFrame  # numpy, shared with the agent
from push_envs.baselines.tee_frame import decode  # numpy, shared with the agent
from push_envs.baselines.tee_frame import encode  # numpy, shared with the agent
from push_envs.datasets import rollout
from push_envs.experts import expert

from .run_folder import RunDir
from .time_to_floor import FLOORS
from .time_to_floor import describe
from .time_to_floor import entry
from .time_to_floor import first_at_floor
from .warm_start import DAGGER_SEED_OFFSET
from .warm_start import DEMO_SEED_OFFSET
from .warm_start import batch as warm_batch
from .warm_start import play

FINAL_SEED_OFFSET = 20_000  # as train/train.py: evaluation episodes are fresh seeds
ROBOT = "omni"  # the expert's drive; its action is a body-frame velocity (vx, vy) [m/s]
ENV_KWARGS = {"robot": ROBOT, "success": "coverage"}


@dataclass
class Args:
    env: Literal["PushT-v0"] = "PushT-v0"
    """the task (the T's frame and the scripted expert are Push-T's)"""
    seed: int = 0
    """seed of torch, the minibatches and the episodes (evaluation: seed + 20000)"""
    episodes: int = 1000
    """the expert's demonstration episodes"""
    rounds: int = 15
    """DAgger rounds after the first fit (fewer if ``minutes`` runs out first)"""
    dagger_episodes: int = 500
    """the policy's own episodes per round, labelled by the expert"""
    epochs: int = 8
    """passes over the whole set per fit"""
    batch_size: int = 1024
    """minibatch size"""
    lr: float = 1e-3
    """Adam learning rate"""
    components: int = 5
    """Gaussians in the mixture"""
    hidden: list[int] = field(default_factory=lambda: [256, 256, 256])
    """hidden layer sizes (ReLU)"""
    minutes: float = 60.0
    """training budget [min]: a round that would end past it is not started"""
    eval_episodes: int = 100
    """final evaluation episodes, under each success test"""
    num_envs: int = 100
    """envs in the batches that play the episodes"""
    run_dir: str = "runs"
    """root of the run folders: <run_dir>/PushT-v0/dagger/<seed>/ (<seed>-2, -3, ... when
    that folder holds an earlier run)"""
    overwrite: bool = False
    """write into <seed>/ even when it holds an earlier run (replacing its files)"""
    threads: int = 1
    """torch threads (small MLPs: 1 is fastest)"""
    gif: str | None = None
    """after the evaluation, record ``gif_episodes`` episodes (seed + 20000 onward) here"""
    gif_episodes: int = 2
    """episodes in the GIF"""
    stop_at_floor: bool = False
    """end the rounds at the first whose own episodes reach PushT-v0's floor (50 % coverage
    success, train/time_to_floor.py), without fitting its labels: the policy saved and
    evaluated is the one those episodes played. For measuring the time to floor, which the
    full run reaches at the same second"""

    def __post_init__(self) -> None:
        for name in ("episodes", "dagger_episodes", "epochs", "batch_size", "components",
                     "eval_episodes", "num_envs", "threads", "gif_episodes"):
            if getattr(self, name) < 1:
                raise SystemExit(f"dagger.py: --{name.replace('_', '-')} must be >= 1, got "
                                 f"{getattr(self, name)}")
        if self.rounds < 0:
            raise SystemExit(f"dagger.py: --rounds must be >= 0, got {self.rounds}")
        if not (self.lr > 0 and self.minutes > 0) or any(h < 1 for h in self.hidden):
            raise SystemExit(f"dagger.py: --lr and --minutes must be > 0 and --hidden sizes "
                             f">= 1, got {self.lr}, {self.minutes}, {self.hidden}")


# --------------------------------------------------------------------------- the policy
LOG_STD_RANGE = (-7.0, 2.0)  # a component's log std: floor keeps the likelihood finite


class MixturePolicy(nn.Module):
    """Mixture density network: normalised features -> K Gaussians over the encoded action
    (:func:`encode`, in the T's frame): the weights' logits, the means, the log stds."""

    def __init__(self, hidden: list[int], components: int, mean: np.ndarray,
                 std: np.ndarray, act_dim: int = 3) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        size = len(mean)
        for h in hidden:
            layers += [nn.Linear(size, h), nn.ReLU()]
            size = h
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(size, components * (1 + 2 * act_dim))
        self.k, self.a = components, act_dim
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.as_tensor(std, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h = self.head(self.body((x - self.mean) / self.std)).view(-1, self.k, 1 + 2 * self.a)
        return h[..., 0], h[..., 1:1 + self.a], h[..., 1 + self.a:].clamp(*LOG_STD_RANGE)

    def nll(self, x: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        """Mean negative log-likelihood of the actions ``a`` (N, act_dim) (up to a constant)."""
        logits, mu, log_std = self(x)
        z = (a[:, None, :] - mu) / log_std.exp()
        log_p = -0.5 * (z * z).sum(-1) - log_std.sum(-1)
        return -torch.logsumexp(torch.log_softmax(logits, -1) + log_p, -1).mean()

    def mode(self, x: torch.Tensor) -> torch.Tensor:
        """The mean of each row's heaviest component."""
        logits, mu, _ = self(x)
        return mu[torch.arange(len(mu)), logits.argmax(-1)]


class Policy:
    """The learned Push-T policy: observations (N, obs_dim) -> body-frame actions (N, 2)."""

    def __init__(self, net: MixturePolicy, frame: TeeFrame) -> None:
        self.net, self.frame = net, frame

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        x = torch.as_tensor(self.frame.features(obs))
        with torch.no_grad():
            a = decode(self.net.mode(x).numpy())
        return np.clip(self.frame.from_frame(obs, a), -1.0, 1.0)


def fit(net: MixturePolicy, opt: torch.optim.Optimizer, x: np.ndarray, a: np.ndarray,
        epochs: int, batch_size: int, gen: torch.Generator) -> float:
    """``epochs`` passes of Adam over (x, a); the last pass's mean loss. The input
    normalisation is set from the whole set first: DAgger's rounds add the policy's own
    states, which spread wider than the expert's."""
    with torch.no_grad():
        net.mean.copy_(torch.as_tensor(x.mean(0)))
        net.std.copy_(torch.as_tensor(x.std(0) + 1e-6))
    xt, at = torch.as_tensor(x), torch.as_tensor(a)
    n, loss = len(xt), float("nan")
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen)
        total = 0.0
        for i in range(0, n, batch_size):
            idx = perm[i:i + batch_size]
            step = net.nll(xt[idx], at[idx])
            opt.zero_grad()
            step.backward()
            opt.step()
            total += float(step.detach()) * len(idx)
        loss = total / n
    return loss


def batch(num_envs: int, episodes: int, **kwargs: Any) -> Any:
    """A native PushT-v0 batch for :func:`warm_start.play` (:func:`warm_start.batch`, with
    :data:`ENV_KWARGS` under ``kwargs``)."""
    return warm_batch("PushT-v0", {**ENV_KWARGS, **kwargs}, num_envs, episodes)


def evaluate(policy: Policy, episodes: int, num_envs: int, seed: int) -> dict[str, float]:
    """Coverage success, mean final coverage and pose success over ``episodes`` fresh
    episodes (the same seeds under both success tests)."""
    out: dict[str, float] = {}
    for success in ("coverage", "pose"):
        venv = batch(num_envs, episodes, success=success)
        try:
            eps = list(rollout(venv, policy, episodes, seed))
        finally:
            venv.close()
        out[f"{success}_success_rate"] = float(np.mean([e.success for e in eps]))
        if success == "coverage":
            out["final_coverage_mean"] = float(np.mean([e.infos["coverage"][-1] for e in eps]))
            out["mean_length"] = float(np.mean([len(e) for e in eps]))
    out["episodes"] = episodes
    return out


def train(args: Args, t_command: float | None = None) -> tuple[Policy, dict[str, Any]]:
    """DAgger as the module docs describe; the policy and what each stage did.

    Each round's own episodes are an evaluation of the policy that played them (fresh
    episodes, the mixture's mode): they are logged (``evaluations``) with the env steps
    played so far and the wall clock since ``t_command`` (``time.perf_counter`` at the
    command's start; the start of training when None), and the first at or above the task's
    floor is the run's time to floor (``to_floor``), as train.train records its own."""
    start = time.perf_counter()
    t_command = start if t_command is None else t_command
    floor = FLOORS[args.env]
    log: list[dict[str, Any]] = []
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    teacher = expert("PushT-v0", ROBOT, ENV_KWARGS)
    venv = batch(args.num_envs, max(args.episodes, args.dagger_episodes))
    try:
        frame = TeeFrame(venv.observation_layout, venv.task.args)
        demo = play(venv, teacher, args.episodes, args.seed + DEMO_SEED_OFFSET)
        x = frame.features(demo["obs"])
        a = encode(frame.to_frame(demo["obs"], np.clip(demo["act"], -1.0, 1.0)))
        net = MixturePolicy(args.hidden, args.components, x.mean(0), x.std(0) + 1e-6)
        opt = torch.optim.Adam(net.parameters(), lr=args.lr)
        policy = Policy(net, frame)
        loss = fit(net, opt, x, a, args.epochs, args.batch_size, gen)
        played = len(demo["obs"])  # env steps played: the expert's, then the policy's
        rounds = [{"round": 0, "samples": len(x), "loss": loss, "clone_success": None,
                   "seconds": time.perf_counter() - start}]
        for r in range(1, args.rounds + 1):
            elapsed = time.perf_counter() - start
            last = rounds[-1]["seconds"] - (rounds[-2]["seconds"] if len(rounds) > 1 else 0.0)
            if elapsed + 1.5 * last > 60.0 * args.minutes:
                break  # the next fit, on a larger set, would overrun the budget
            own = play(venv, policy, args.dagger_episodes,
                       args.seed + DAGGER_SEED_OFFSET + 1000 * r)
            played += len(own["obs"])
            rate = float(own["success"].mean())
            log.append(entry(played, time.perf_counter() - t_command, rate,
                             float(own["rew"].sum() / len(own["success"])), "dagger"))
            if args.stop_at_floor and rate >= floor:
                print(f"round {r}: the policy's own episodes {rate:.1%} coverage success: at "
                      f"the floor, stopped", flush=True)
                break
            x = np.concatenate([x, frame.features(own["obs"])])
            a = np.concatenate([a, encode(frame.to_frame(own["obs"], teacher(own["obs"])))])
            loss = fit(net, opt, x, a, args.epochs, args.batch_size, gen)
            rounds.append({"round": r, "samples": len(x), "loss": loss,
                           "clone_success": rate,
                           "seconds": time.perf_counter() - start})
            print(f"round {r}: the policy's own episodes {rate:.1%} coverage "
                  f"success; {len(x)} samples, loss {loss:.3f} "
                  f"({rounds[-1]['seconds']:.0f} s)", flush=True)
    finally:
        venv.close()
    return policy, {"expert_success_rate": float(demo["success"].mean()), "rounds": rounds,
                    "train_s": time.perf_counter() - start, "evaluations": log,
                    "floor": floor, "to_floor": first_at_floor(log, floor)}


def save(policy: Policy, path: Path, args: Args) -> None:
    net = policy.net
    torch.save({"state_dict": net.state_dict(), "hidden": list(args.hidden),
                "components": args.components, "features": len(net.mean)}, path)


def load_policy(path: str | Path) -> Policy:
    """A :class:`Policy` from a ``policy.pt`` written by this script."""
    saved = torch.load(path, map_location="cpu", weights_only=True)
    n = saved["features"]
    net = MixturePolicy(saved["hidden"], saved["components"], np.zeros(n), np.ones(n))
    net.load_state_dict(saved["state_dict"])
    venv = batch(1, 1)
    frame = TeeFrame(venv.observation_layout, venv.task.args)
    venv.close()
    return Policy(net, frame)


def record_gif(policy: Policy, path: str | Path, episodes: int, seed: int) -> int:
    """Play ``episodes`` episodes of one env (seeds ``seed`` onward, coverage success) and
    write them to the GIF ``path`` at the task's render rate; returns the frame count."""
    env = gym.make("PushT-v0", render_mode="rgb_array", **ENV_KWARGS)
    frames = []
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed + ep)
        frames.append(env.render())
        done = False
        while not done:
            obs, _, term, trunc, _ = env.step(policy(obs[None])[0])
            frames.append(env.render())
            done = term or trunc
    fps = env.metadata.get("render_fps") or 10
    env.close()
    images = [Image.fromarray(np.asarray(f, dtype=np.uint8)) for f in frames]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    images[0].save(path, save_all=True, append_images=images[1:], duration=int(1000 / fps),
                   loop=0)
    return len(images)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    t_command = time.perf_counter()
    args = tyro.cli(Args, args=argv, description=__doc__.split("\n\n")[0])
    torch.set_num_threads(args.threads)
    # An earlier run replaced (--overwrite) stays until this one has finished: an
    # interrupted DAgger run leaves it as it was (train/run_folder.py).
    with RunDir(Path(args.run_dir) / args.env / "dagger" / str(args.seed),
                args.overwrite) as run:
        out = run.path
        (out / "args.json").write_text(json.dumps(asdict(args), indent=2))
        policy, result = train(args, t_command)
        save(policy, out / "policy.pt", args)
        result.update(evaluate(policy, args.eval_episodes, args.num_envs,
                               args.seed + FINAL_SEED_OFFSET))
        (out / "result.json").write_text(json.dumps(result, indent=2))
    if args.gif:
        n = record_gif(policy, args.gif, args.gif_episodes, args.seed + FINAL_SEED_OFFSET)
        print(f"wrote {args.gif} ({n} frames)")
    print(describe(result["to_floor"], result["floor"]))
    print(f"PushT-v0 DAgger, seed {args.seed}, {result['train_s']:.0f} s of training: coverage "
          f"success {result['coverage_success_rate']:.1%} (final coverage "
          f"{result['final_coverage_mean']:.2f} on average), pose success "
          f"{result['pose_success_rate']:.1%}, over {result['episodes']} episodes -> {out}")
    return result


if __name__ == "__main__":
    main()
