"""Residual PPO: reinforcement learning of a correction to a frozen base policy (Push-T's
DAgger policy), so that training starts at the base's success and improves on it.

    python -m train.dagger --seed 0                                   # the base, once
    python -m train.residual --base runs/PushT-v0/dagger/0 --seed 0   # PPO on top of it
    python -m train.residual --base agent.npz --seed 1 --timesteps 2e6 --scale 0.2

The env sees ``clip(base(obs) + scale * residual, low, high)``: ``residual`` in [-1, 1] is
PPO's action (SB3 clips its Gaussian sample to that Box), ``base`` the frozen base agent run
in numpy (:mod:`push_envs.baselines.agent`; a train/dagger.py run folder is exported to one
first, ``train.export``), ``scale`` a hyperparameter. Why (docs/history.md): PPO from
a Gaussian clone of the expert made 0-1 % coverage success on Push-T; the DAgger mixture
policy makes 78-90 %, but PPO cannot start from it, its mixture head is not a Gaussian. A
residual keeps the base as it is and learns only what to add (Silver et al., 2018; Johannink
et al., 2019).

Starting at the base: the actor's last layer (weights and bias) is zeroed, so the residual's
mean is 0 and the deterministic policy is the base exactly, and its log std starts small
(``log_std_init`` in the yml), so exploration stays near the base. For the first
``critic_warmup`` env steps only the critic learns (the actor and its log std are frozen):
the critic starts random, and advantages from it would push the actor off the base before
the critic knows what the base's states are worth.

Noise alone helps the base, which the deterministic policy (what is evaluated and exported)
does not get. Measured on 4 Dec 2026 (the DAgger policy of seed 0, 200 episodes, residual
noise N(0, exp(log_std)) at ``scale`` 0.3): coverage success 77 % without noise; 74.5 / 80 /
84.5 / 89 / 96 / 97.5 % at log std -5 / -4 / -3.5 / -3 / -2 / -1. Its failures are mostly
stalls: the coverage stops rising and the action chatters between the mixture's sides
(0.3-1 m/s from one step to the next), and noise shakes it out of them. With a learned log
std, PPO keeps the noise that helps and its mean need not learn anything; so with
``log_std_final`` set the log std is not learned but lowered on a line from ``log_std_init``
to it over training (:class:`Schedule`): the policy PPO improves ends as the deterministic
one, which must then escape the stalls itself.

What PPO's networks read (``inputs``, after the env's observation): ``base_action``, the
base's action, and ``tee_features``, the base's 10 inputs in the T's frame
(:class:`push_envs.baselines.tee_frame.TeeFrame`). The base's action is a discontinuous
function of the observation (its mixture commits to one side where the expert's plan
jumps); a correction that depends on which side it took cannot be read back from the
observation by a small MLP, but can from the action itself. The T-frame features make the
last centimetres and degrees visible (the goal offsets also x10): the critic has to tell
0.94 coverage from 0.95, which the world-frame columns, normalised by spreads of about a
metre, hide. Both cost a few numbers per step.

Hyperparameters: the shared PPO ``default`` of ``train/hyperparams/ppo.yml`` updated by the
``residual`` entry of the task's ``hyperparams.yml`` (Push-T's says why each value), then
``--hp key=value``. Besides PPO's own keys and train/train.py's run keys, an entry sets
``scale``, ``inputs``, ``critic_warmup`` and ``log_std_final``; ``hide_obs`` and
``warm_start`` are refused (the base reads the whole observation; the base is the warm
start).

A run writes ``<run-dir>/<env>/residual/<seed>/`` as train/train.py's runs: ``base.npz`` (the
base agent), ``final_model.zip`` with ``vecnormalize.pkl``, ``best_model.zip`` with
``best_vecnormalize.pkl``, ``args.json``, ``evaluations.npz``, tensorboard logs in ``tb/`` and
``result.json``: the final evaluation on fresh episodes (seed + 20000) of the final and the
best model, and of the base alone on the same episodes (``base``: the residual policy before
training). ``python -m train.export <run folder>`` turns it into a ``"residual"`` agent.
"""

from __future__ import annotations

import os

# torch's OpenMP threads sleep between parallel regions, as train/train.py sets it (see
# there); read when torch loads, so it is set before SB3 or torch is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# numpy's BLAS on one thread: OpenBLAS's threads spinning against the env batch on shared
# cores made numpy's matrix products 30x slower. (The base agent's forward no longer uses
# BLAS: push_envs.baselines.agent.dense.) Read when numpy loads; this module loads it first
# when run as `python -m train.residual`.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.callbacks import CallbackList
from stable_baselines3.common.callbacks import EvalCallback
from stable_baselines3.common.utils import set_random_seed
from stable_baselines3.common.vec_env import VecEnv

from push_envs.baselines import Agent
from push_envs.baselines import load_file
from push_envs.baselines.agent import RESIDUAL_INPUTS
from push_envs.tasks import spec

from .common import UnderWay
from .common import check_run_args
from .common import cli
from .hyperparameters import HYPERPARAMS_DIR
from .hyperparameters import RESIDUAL_KEYS
from .hyperparameters import algo_kwargs
from .hyperparameters import apply_overrides
from .hyperparameters import check
from .hyperparameters import merge
from .hyperparameters import normalized
from .hyperparameters import yaml_mapping
from .residual_env import Args  # noqa: F401  (ResidualVecEnv, unwrap: the names used from here)
from .residual_env import ResidualVecEnv  # noqa: F401  (ResidualVecEnv, unwrap: the names used from here)
from .residual_env import deterministic_action  # noqa: F401  (ResidualVecEnv, unwrap: the names used from here)
from .residual_env import unwrap  # noqa: F401  (ResidualVecEnv, unwrap: the names used from here)
from .run_folder import RunDir
from .time_to_floor import EvalLog
from .time_to_floor import describe
from .time_to_floor import first_at_floor
from .time_to_floor import floor_of
from .train import EVAL_SEED_OFFSET
from .train import FINAL_SEED_OFFSET
from .train import SaveVecNormalize
from .train import UpdateThreads
from .train import ent_coef_decay
from .train import evaluate
from .train import load_model
from .train import make_env
from .train import save_trained
from .train import thread_plan

ENTRY = "residual"  # the key of a task's hyperparams.yml this script reads
SETTINGS = {"scale": 0.3, "inputs": list(RESIDUAL_INPUTS), "critic_warmup": 0,
            "log_std_final": None}
"""The residual's own hyperparameters, when the yml does not set them."""
RESIDUAL_SCALE = RESIDUAL_KEYS["scale"]  # a finite number > 0


# --------------------------------------------------------------------------- the wrapper
def residual_env(env_id: str, n_envs: int, seed: int, hp: dict[str, Any], base: Agent,
                 settings: dict[str, Any], stats: Path | None = None,
                 training: bool = True) -> VecEnv:
    """train/train.py's batch (:func:`train.train.make_env`, unnormalised) wrapped in
    :class:`ResidualVecEnv`, then in VecNormalize when the yml says so (``stats`` loads
    saved statistics; ``training=False`` freezes them)."""
    venv = ResidualVecEnv(make_env(env_id, n_envs, seed, {**hp, "normalize": False}), base,
                          settings["scale"], settings["inputs"])
    return normalized(venv, hp, stats, training)


def start_at_base(model: PPO) -> None:
    """Zero the actor's last layer: the mean residual is 0 everywhere, the deterministic
    policy is the base (the log std is the yml's ``log_std_init``)."""
    with torch.no_grad():
        model.policy.action_net.weight.zero_()
        model.policy.action_net.bias.zero_()


def build_model(env: VecEnv, hp: dict[str, Any], seed: int, verbose: int = 0,
                tensorboard_log: str | None = None) -> PPO:
    """The PPO model of the residual policy on ``env`` (:func:`residual_env`), its
    constructor arguments from ``hp`` (after :func:`settings` took the residual's own keys
    out), started at the base (:func:`start_at_base`)."""
    model = PPO(hp.get("policy", "MlpPolicy"), env, seed=seed, verbose=verbose,
                tensorboard_log=tensorboard_log, device="cpu", **algo_kwargs(hp))
    start_at_base(model)
    return model


def actor_parameters(model: PPO) -> list[torch.nn.Parameter]:
    """The actor's own parameters: its hidden layers, its last layer and its log std."""
    p = model.policy
    return [*p.mlp_extractor.policy_net.parameters(), *p.action_net.parameters(), p.log_std]


class Schedule(BaseCallback):
    """The residual's training schedule, between PPO's rollouts and updates.

    * Critic warm-up: the actor (and its log std) is frozen, its gradients never computed so
      Adam leaves it alone, in the updates of the first ``critic_warmup`` env steps.
    * With ``log_std_final`` (not None), the log std is not learned: before each rollout it
      is set on a line from its initial value (the yml's ``log_std_init``) at step 0 to
      ``log_std_final`` at the end of training."""

    def __init__(self, critic_warmup: int, log_std_final: float | None = None) -> None:
        super().__init__()
        self.steps, self.final = int(critic_warmup), log_std_final
        self.frozen = False
        self.start: float | None = None

    def _set(self, frozen: bool) -> None:
        for p in actor_parameters(self.model):
            p.requires_grad_(not frozen)
        if self.final is not None:
            self.model.policy.log_std.requires_grad_(False)
        self.frozen = frozen

    def _on_training_start(self) -> None:
        if self.final is not None and self.start is None:
            self.start = float(self.model.policy.log_std.detach().mean())
        self._set(self.steps > self.model.num_timesteps)

    def _on_rollout_start(self) -> None:
        if self.final is not None:
            done = 1.0 - float(self.model._current_progress_remaining)
            with torch.no_grad():
                self.model.policy.log_std.fill_(self.start + done * (self.final - self.start))

    def _on_rollout_end(self) -> None:
        # the update of this rollout is the first with the actor once the steps collected
        # are past the warm-up
        if self.frozen and self.model.num_timesteps > self.steps:
            self._set(False)

    def _on_training_end(self) -> None:
        self._set(False)

    def _on_step(self) -> bool:
        return True


# --------------------------------------------------------------------------- settings
def load_hyperparams(env_id: str, path: str | os.PathLike | None = None,
                     robot: str | None = None) -> dict[str, Any]:
    """The ``default`` entry of ``train/hyperparams/ppo.yml`` updated by the ``residual``
    entry of the task's ``hyperparams.yml`` (or, with ``path``, that file's ``default``
    updated by its ``env_id`` entry), then by the entry's ``robots: {<robot>: {...}}``
    overrides. Nested mappings merge one level deep, as :func:`train.train.load_hyperparams`."""
    if path is not None:
        table = yaml_mapping(Path(path))
        if env_id not in table:
            raise ValueError(f"{path}: no entry {env_id!r}; entries: {sorted(table)}")
        hp, entry = dict(table.get("default") or {}), dict(table.get(env_id) or {})
    else:
        hp = dict(yaml_mapping(HYPERPARAMS_DIR / "ppo.yml").get("default") or {})
        source = spec(env_id).hyperparams_path()
        entry = dict(yaml_mapping(source).get(ENTRY) or {}) if source is not None else {}
    robots = entry.pop("robots", None) or {}
    if not isinstance(robots, dict):
        raise ValueError(f"{env_id}.{ENTRY}.robots must map drive names to mappings")
    merge(hp, entry)
    robot = robot or (hp.get("env_kwargs") or {}).get("robot")
    merge(hp, robots.get(robot) or {})
    return hp


def settings(hp: dict[str, Any], scale: float | None = None) -> dict[str, Any]:
    """The residual's own settings, taken out of ``hp`` (which keeps PPO's and the run's
    keys): ``scale`` (``scale`` overrides it), ``inputs``, ``critic_warmup`` and
    ``log_std_final`` (:class:`Schedule`). Bad values,
    ``hide_obs``, ``sort_obs`` and ``warm_start`` raise ValueError."""
    for key in ("hide_obs", "sort_obs", "warm_start"):
        if hp.get(key):
            raise ValueError(f"{ENTRY}: {key} is not supported by residual PPO (the base reads "
                             f"the whole observation, and the base is the warm start)")
        hp.pop(key, None)
    for key in ("min_std", "max_std"):
        if hp.pop(key, None) is not None:
            raise ValueError(f"{ENTRY}: {key} is not supported by residual PPO (its std "
                             f"follows log_std_final)")
    out = {k: hp.pop(k, v) for k, v in SETTINGS.items()}
    if scale is not None:
        out["scale"] = scale
    s = out["scale"]
    RESIDUAL_SCALE(f"{ENTRY}.scale", s)
    inputs = out["inputs"]
    if not isinstance(inputs, list) or any(i not in RESIDUAL_INPUTS for i in inputs):
        raise ValueError(f"{ENTRY}.inputs must list some of {list(RESIDUAL_INPUTS)}, got "
                         f"{inputs!r}")
    out["inputs"] = [i for i in RESIDUAL_INPUTS if i in inputs]
    w = out["critic_warmup"]
    if isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0:
        raise ValueError(f"{ENTRY}.critic_warmup must be a number of env steps >= 0, got "
                         f"{w!r}")
    out["scale"], out["critic_warmup"] = float(s), int(float(w))
    f = out["log_std_final"]
    if f is not None and (isinstance(f, bool) or not isinstance(f, (int, float)) or
                          not np.isfinite(f)):
        raise ValueError(f"{ENTRY}.log_std_final must be a number or null, got {f!r}")
    out["log_std_final"] = None if f is None else float(f)
    return out


def load_base(base: str | Path) -> tuple[Agent, bytes]:
    """The base agent and its file's bytes (the run folder keeps them as ``base.npz``): an
    agent ``.npz`` file, or a train/dagger.py run folder exported to one (``python -m
    train.export``, which first checks that the numpy agent acts as the torch policy)."""
    path = Path(base)
    if path.is_dir():
        if not (path / "policy.pt").is_file():
            raise ValueError(f"{path}: not a train/dagger.py run folder (no policy.pt); pass "
                             f"one, or an agent .npz")
        from .export import export

        with tempfile.TemporaryDirectory() as tmp:
            agent = export(path, out=Path(tmp) / "base.npz")
            return agent, agent.path.read_bytes()
    agent = load_file(path)
    if agent.meta["kind"] == "residual":
        raise ValueError(f"{path}: a residual agent cannot be a base")
    return agent, path.read_bytes()


# ---------------------------------------------------------------------------------- running
def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Train a residual (see the module docs). As train/train.py, everything that can be
    checked or built is before a run folder is claimed, and --overwrite replaces an earlier
    run only once this one is under way."""
    import tyro

    args = tyro.cli(Args, args=argv, description=__doc__.split("\n\n")[0])
    if not args.base:
        raise ValueError("--base is required (a train/dagger.py run folder or an agent .npz)")
    check_run_args(args)
    if args.scale is not None:
        RESIDUAL_SCALE("--scale", args.scale)
    t_start = time.perf_counter()
    torch.set_num_threads(args.threads)
    base, base_file = load_base(args.base)  # checked before anything is written
    env_id = base.env_id
    yml = load_hyperparams(env_id, args.hyperparams, base.robot)
    hp = apply_overrides(yml, SimpleNamespace(**dataclasses.asdict(args), robot=None))
    check(hp, "residual", f"{env_id} ({ENTRY})")
    hp["env_kwargs"] = {**base.env_kwargs, **hp["env_kwargs"]}
    if hp["env_kwargs"]["robot"] != base.robot:
        raise ValueError(f"the base drives {base.robot}, the yml's env_kwargs say "
                         f"{hp['env_kwargs']['robot']}")
    hp["env_threads"] = thread_plan(hp).env  # train.train's thread plan
    res = settings(hp, args.scale)

    set_random_seed(args.seed)
    env = residual_env(env_id, hp["n_envs"], args.seed, hp, base, res)
    eval_env = residual_env(env_id, args.eval_envs, args.seed + EVAL_SEED_OFFSET, hp, base,
                            res, training=False)
    try:
        model = build_model(env, hp, args.seed, args.verbose)
    except (ValueError, TypeError, AssertionError, KeyError) as exc:
        env.close()
        eval_env.close()
        raise ValueError(f"{env_id} ({ENTRY}): PPO refused the hyperparameters: "
                         f"{type(exc).__name__}: {exc}") from None
    with RunDir(Path(args.run_dir) / env_id / "residual" / str(args.seed),
                args.overwrite) as run:
        return _train(args, hp, res, base, base_file, run, env, eval_env, model, t_start)


def _train(args: Args, hp: dict[str, Any], res: dict[str, Any], base: Agent,
           base_file: bytes, run: RunDir, env: VecEnv, eval_env: VecEnv, model: PPO,
           t_start: float) -> dict[str, Any]:
    """The run itself, into ``run.path`` (claimed by :func:`main`)."""
    env_id, out = base.env_id, run.path
    model.tensorboard_log = str(out / "tb")  # read when learning starts
    (out / "base.npz").write_bytes(base_file)
    print(f"run {out}: residual PPO on {base.policy} ({env_id} {hp['env_kwargs']}), "
          f"scale {res['scale']:g}, inputs {res['inputs']}, {hp['n_timesteps']:,} steps, "
          f"{hp['n_envs']} envs")
    update_threads = thread_plan(hp, args.threads, args.update_threads).update
    with open(out / "args.json", "w") as fh:
        json.dump({"args": dataclasses.asdict(args), "hyperparams": hp, "residual": res,
                   "base": {"policy": base.policy, "kind": base.meta["kind"],
                            "training": base.meta.get("training")}},
                  fh, indent=2, default=str)

    # The residual policy before training is the base: its success on the final evaluation's
    # episodes is what RL has to improve on.
    fenv = residual_env(env_id, args.eval_envs, args.seed + FINAL_SEED_OFFSET, hp, base, res,
                        training=False)
    base_result = evaluate(model, fenv, args.eval_episodes)
    fenv.close()
    print(f"the base on the final evaluation's episodes: success "
          f"{100 * base_result['success_rate']:.1f}%")

    log: list[dict[str, Any]] = []  # every evaluation, with its wall clock and env steps
    eval_freq = int(hp.get("eval_freq") or max(hp["n_timesteps"] // 20, 1))
    eval_cb = EvalCallback(eval_env, n_eval_episodes=args.eval_episodes,
                           eval_freq=max(eval_freq // hp["n_envs"], 1), log_path=str(out),
                           best_model_save_path=str(out), deterministic=True,
                           callback_on_new_best=SaveVecNormalize(out / "best_vecnormalize.pkl"),
                           verbose=0, callback_after_eval=EvalLog(log, t_start,
                                                       hp.get("stop_at_success")))
    callbacks = CallbackList([eval_cb, UpdateThreads(args.threads, update_threads),
                              Schedule(res["critic_warmup"], res["log_std_final"]),
                              *ent_coef_decay(hp), UnderWay(run)])
    t_train = time.perf_counter()
    model.learn(total_timesteps=hp["n_timesteps"], callback=callbacks,
                progress_bar=args.progress, tb_log_name="residual")
    train_time = time.perf_counter() - t_train
    torch.set_num_threads(args.threads)
    steps = save_trained(model, env, eval_cb, out, train_time)

    result: dict[str, Any] = {"env": env_id, "algo": "residual", "seed": args.seed,
                              "env_kwargs": hp["env_kwargs"], "residual": res,
                              "env_steps": steps, "train_time_s": train_time,
                              "steps_per_s": steps / train_time, "base": base_result}
    floor = floor_of(env_id, hp)
    result.update(evaluations=log, floor=floor, to_floor=first_at_floor(log, floor))
    print(describe(result["to_floor"], floor))
    for which in ("final", "best"):
        path = out / f"{which}_model.zip"
        if not path.exists():
            continue
        stats = out / ("best_vecnormalize.pkl" if which == "best" else "vecnormalize.pkl")
        fenv = residual_env(env_id, args.eval_envs, args.seed + FINAL_SEED_OFFSET, hp, base,
                            res, stats=stats, training=False)
        result[which] = evaluate(load_model("ppo", path), fenv, args.eval_episodes)
        fenv.close()
    chosen = args.eval_model if args.eval_model in result else "final"
    r = result[chosen]
    result.update(reported=chosen, success_rate=r["success_rate"], mean_return=r["mean_return"],
                  wall_clock_s=time.perf_counter() - t_start)
    with open(out / "result.json", "w") as fh:
        json.dump(result, fh, indent=2, default=str)
    env.close()
    eval_env.close()
    print(f"wall clock {result['wall_clock_s']:.0f} s, {steps:,} env steps")
    print(f"final evaluation: success {100 * r['success_rate']:.1f}% over {r['episodes']} "
          f"episodes ({chosen} model; the base alone {100 * base_result['success_rate']:.1f}%)")
    return result


if __name__ == "__main__":
    cli(main, "train.residual", sys.argv[1:])
