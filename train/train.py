"""Train a Stable-Baselines3 agent (PPO or SAC) on a push_envs task, over the native batch.

    python -m train.train                                  # PPO on PushBox-v0, diff robot
    python -m train.train --algo sac --env PushBox-v0      # SAC + HER, sparse reward
    python -m train.train --env WallSlide-v0 --seed 1 --timesteps 3e6
    python -m train.train --env push_envs/World-v0 --world configs/robot_diff.yaml

Hyperparameters come from ``train/hyperparams/{algo}.yml`` (rl-baselines3-zoo format: a
``default`` entry merged with the env's entry); command-line flags override them. Everything
a run produces lands in ``<run-dir>/<env>/<algo>/<seed>/`` (``<env>-<robot>`` with a --robot
other than the yml's; ``<seed>-2``, ``-3``, ... when that folder holds an earlier run, unless
--overwrite): ``best_model.zip`` (+ ``best_vecnormalize.pkl``), ``final_model.zip``,
``vecnormalize.pkl``, ``args.json``, ``evaluations.npz`` (EvalCallback: timesteps, results,
ep_lengths, successes), ``result.json`` (the final evaluation) and tensorboard logs in ``tb/``.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import os
import sys
import time

# torch's OpenMP threads sleep instead of spinning between parallel regions. Measured on 2
# shared cores (PPO, 2 torch threads in the update): spinning made a run 7x slower than
# sleeping when other processes wanted the cores (docs/history.md). Read when torch
# loads, so it is set before the import.
_USER_ENV = frozenset(os.environ)  # what the user set before this script ran
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# What follows imports torch, Stable-Baselines3, numba and push_envs: about 300,000 objects
# that live as long as the process. The collector's full passes over them while they were
# made took ~0.5 s of the README's run (six passes, each longer than the last, as the heap
# grew). So collection waits until they are loaded, then resumes as it was.
_collecting = gc.isenabled()
gc.disable()
try:
    from dataclasses import dataclass
    from pathlib import Path
    from typing import Any
    from typing import Literal

    import gymnasium as gym
    import numpy as np
    import torch
    import tyro
    from stable_baselines3 import PPO
    from stable_baselines3 import SAC
    from stable_baselines3.common.base_class import BaseAlgorithm
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.callbacks import CallbackList
    from stable_baselines3.common.callbacks import EvalCallback
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.utils import set_random_seed
    from stable_baselines3.common.vec_env import VecEnv
    from stable_baselines3.common.vec_env import VecEnvWrapper
    from stable_baselines3.common.vec_env import VecNormalize
    from stable_baselines3.common.vec_env import sync_envs_normalization

    from push_envs.baselines.view import ObsView
    from push_envs.baselines.view import sort_rows
    from push_envs.core import obs_layout as L
    from push_envs.sb3 import make_vec_env
    from push_envs.worlds import WORLD_ENV_ID

    from .common import RunArgs  # noqa: E402
    from .common import UnderWay  # noqa: E402
    from .common import check_run_args  # noqa: E402
    from .common import cli  # noqa: E402
    from .hyperparameters import ACTIVATIONS  # noqa: E402, F401  (the names tests and scripts use here)
    from .hyperparameters import ALGOS  # noqa: E402, F401  (the names tests and scripts use here)
    from .hyperparameters import HYPERPARAMS_DIR  # noqa: E402, F401  (the names tests and scripts use here)
    from .hyperparameters import algo_kwargs  # noqa: E402, F401  (the names tests and scripts use here)
    from .hyperparameters import apply_overrides  # noqa: E402, F401  (the names tests and scripts use here)
    from .hyperparameters import check  # noqa: E402, F401  (the names tests and scripts use here)
    from .hyperparameters import ent_coef_setting  # noqa: E402, F401  (the names tests and scripts use here)
    from .hyperparameters import load_hyperparams  # noqa: E402, F401  (the names tests and scripts use here)
    from .hyperparameters import merge  # noqa: E402, F401  (the names tests and scripts use here)
    from .hyperparameters import normalize_kwargs  # noqa: E402, F401  (the names tests and scripts use here)
    from .hyperparameters import normalized  # noqa: E402, F401  (the names tests and scripts use here)
    from .hyperparameters import policy_kwargs  # noqa: E402, F401  (the names tests and scripts use here)
    from .hyperparameters import std_bounds  # noqa: E402, F401  (the names tests and scripts use here)
    from .hyperparameters import yaml_mapping  # noqa: E402, F401  (the names tests and scripts use here)
    from .lean_ppo import LeanPPO
    from .run_folder import RunDir  # noqa: E402
    from .time_to_floor import EvalLog
    from .time_to_floor import describe
    from .time_to_floor import entry
    from .time_to_floor import first_at_floor
    from .time_to_floor import floor_of
    from .warm_start import demonstrations  # noqa: E402
    from .warm_start import pretrain  # noqa: E402
    from .warm_start import settings  # noqa: E402
finally:
    if __name__ == "__main__":
        # As the command (python -m train.train), whose process ends with its run: what the
        # imports made is moved out of the collector's sight for good (gc.freeze), so its
        # full passes during the run, and the exit's, walk only what the run makes. What
        # the modules' globals hold is then not finalized at exit; the run closes every file
        # it writes itself (the results, the models, the tensorboard log: the same sizes as
        # without the freeze). Imported as a module, say by a test session, nothing is
        # frozen: the caller's garbage stays collectable.
        gc.freeze()
    if _collecting:
        gc.enable()

EVAL_SEED_OFFSET = 10_000  # the EvalCallback's env: seed + 10_000
FINAL_SEED_OFFSET = 20_000  # the final evaluation: seed + 20_000 (fresh episodes)


@dataclass
class Args(RunArgs):
    """train/train.py's command line: the run's arguments (:class:`~train.common.RunArgs`)
    and what is trained."""

    algo: Literal["ppo", "sac"] = "ppo"
    """the algorithm (sac uses HER when the yml says so)"""
    env: str = "PushBox-v0"
    """the task id (registered by push_envs)"""
    robot: Literal["diff", "omni", "acker"] | None = None
    """drive (default: the yml's env_kwargs, else the task's default; the run folder is
    <env>-<robot> when it differs from the yml's)"""
    world: str | None = None
    """the IR-SIM world file push_envs/World-v0 trains on (its env argument ``world``;
    required for that id, refused for the tasks)"""
    lean: bool = True
    """PPO: train.lean_ppo's LeanPPO (SB3's PPO with a rollout whose per-env work is per
    finished episode, and a faster tanh); --no-lean: SB3's PPO as it comes"""


def check_world_args(args: Args, hp: dict[str, Any]) -> None:
    """push_envs/World-v0 needs a world file (``--world``, or ``env_kwargs.world``) that
    exists; a task takes none. Raises ValueError naming the flag and the reason."""
    world = hp["env_kwargs"].get("world")
    if args.env != WORLD_ENV_ID:
        if args.world is not None:
            raise ValueError(f"--world: {args.env} is a task with its own scene; --world is "
                             f"for {WORLD_ENV_ID}")
        return
    if world is None:
        raise ValueError(f"--world: {WORLD_ENV_ID} trains on an IR-SIM world file; give one, "
                         f"e.g. --world configs/robot_diff.yaml")
    if isinstance(world, str) and not Path(world).is_file():
        raise ValueError(f"--world: no such world file: {world!r}")
    if args.robot is not None:
        raise ValueError(f"--robot: {WORLD_ENV_ID}'s agent is a robot of the world (its "
                         f"kinematics are the file's); choose it with --hp 'env_kwargs={{agent: "
                         f"robot_1}}'")


def parse_args(argv: list[str] | None = None) -> Args:
    """The training :class:`Args` from the command line (tyro: ``--help`` lists them)."""
    return tyro.cli(Args, args=argv, description=__doc__.split("\n\n")[0])


def state_layout(venv: VecEnv, what: str) -> tuple[Any, dict[str, Any]]:
    """(observation layout, task arguments) of a batch with a state observation; any other
    observation raises ValueError beginning with ``what``."""
    if not isinstance(venv.observation_space, gym.spaces.Box) or \
            len(venv.observation_space.shape) != 1:
        raise ValueError(f"{what} of a state observation; this batch observes "
                         f"{venv.observation_space}")
    return venv.get_attr("observation_layout")[0], venv.get_attr("task")[0].args


def hidden_columns(venv: VecEnv, names: Any, source: str = "hide_obs") -> np.ndarray:
    """Columns of the observation fields ``names`` (the task's layout names, e.g.
    ``robot_vel``; a repeated field's every slot), for :class:`ViewObs`. A name not in the
    layout, or a batch whose observation is not a state vector, raises ValueError naming
    ``source`` and the valid names."""
    layout, args = state_layout(venv, f"{source}: hides columns")
    spans = [(f.name, k, f.size) for f, k, _ in L.columns(layout, args)]
    valid = list(dict.fromkeys(name for name, _, _ in spans))
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"{source} must be a list of observation field names, got {names!r}; "
                         f"fields: {valid}")
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise ValueError(f"{source}: no observation fields {unknown}; fields: {valid}")
    return np.array(sorted(k + i for name, k, size in spans if name in names
                           for i in range(size)), np.int64)


def obs_view(venv: VecEnv, hp: dict[str, Any], source: str = "hyperparams") -> ObsView:
    """The policy's view of ``venv``'s observations from the hyperparameters' ``sort_obs``
    (:func:`~push_envs.baselines.view.sort_rows`) and ``hide_obs`` (:func:`hidden_columns`);
    an empty view when the yml has neither. Bad names raise ValueError naming ``source`` and
    the key."""
    hide = hidden_columns(venv, hp["hide_obs"], f"{source}.hide_obs") \
        if hp.get("hide_obs") else ()
    sorts, standoff = (), None
    if hp.get("sort_obs") is not None:
        layout, args = state_layout(venv, f"{source}.sort_obs: sorts slots")
        sorts, standoff = sort_rows(layout, args, hp["sort_obs"], f"{source}.sort_obs")
    return ObsView(int(np.prod(venv.observation_space.shape)), hide, sorts, source, standoff)


class ViewObs(VecEnvWrapper):
    """The batch as its policy sees it (:class:`~push_envs.baselines.view.ObsView`: slots
    sorted, columns hidden), in the observations, the reset and the ``terminal_observation``
    PPO bootstraps from alike.

    Why hide: a column that echoes the last action (the robot's velocity follows its
    command) lets a clone copy its own past instead of reading the scene (causal confusion,
    de Haan et al. 2019): at rest it answers "rest". Hiding such columns removes the echo.
    Why sort: see :mod:`push_envs.baselines.view`.
    """

    def __init__(self, venv: VecEnv, view: ObsView) -> None:
        super().__init__(venv)
        self.view = view

    def reset(self) -> np.ndarray:
        return self.view(self.venv.reset())

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, rew, done, infos = self.venv.step_wait()
        for info in infos:
            if "terminal_observation" in info:
                info["terminal_observation"] = self.view(info["terminal_observation"])
        return self.view(obs), rew, done, infos


def wants_view(hp: dict[str, Any]) -> bool:
    """Whether the hyperparameters sort or hide any observation column (the yml keys
    ``sort_obs``, ``hide_obs``): the one test behind :func:`view_obs`, train's early check and
    the export."""
    return bool(hp.get("hide_obs")) or hp.get("sort_obs") is not None


def view_obs(venv: VecEnv, hp: dict[str, Any]) -> VecEnv:
    """``venv`` wrapped in :class:`ViewObs` when the hyperparameters sort or hide anything
    (the yml keys ``sort_obs``, ``hide_obs``; neither: ``venv`` itself)."""
    if not wants_view(hp):
        return venv  # a goal (Dict) or pixel batch has no columns to view
    return ViewObs(venv, obs_view(venv, hp))


class UpdateThreads(BaseCallback):
    """Switch torch's thread count between the phases of an on-policy iteration.

    Collecting a rollout is many small batched forwards beside the numba env batch, where
    one torch thread is fastest; the update is large matrix products with the env idle,
    where every core helps (measured in docs/history.md)."""

    def __init__(self, collect: int, update: int) -> None:
        super().__init__()
        self.collect, self.update = collect, update

    def _on_rollout_start(self) -> None:
        torch.set_num_threads(self.collect)

    def _on_rollout_end(self) -> None:
        torch.set_num_threads(self.update)

    def _on_step(self) -> bool:
        return True


@dataclass(frozen=True)
class ThreadPlan:
    """Who gets the cores during a PPO run (docs/training.md, "Threads").

    The phases of an iteration take turns, they never run at once: the batch steps (numba,
    ``env`` threads), the policy reads the new observations (torch, ``collect`` threads),
    and after the rollout the update trains on it (torch, ``update`` threads) while the
    batch waits. Each defaults to 1, by measurement on 2 cores (docs/training.md): the
    physics is a small part of an iteration at a thousand envs, a 64-wide MLP's forward is
    faster on one thread than split, and its update was faster on one thread than on two
    (18-27 % more env-steps/s), while on a busy machine a two-thread region waits for a
    thread the scheduler parked (the warm start's fit took 4x longer). numba's workqueue
    threads and torch's OpenMP threads (``OMP_WAIT_POLICY=PASSIVE``) sleep between their
    phases, so neither spins on a core the other needs when more are asked for."""

    env: int
    """numba threads stepping the batch"""
    collect: int
    """torch threads while collecting rollouts, evaluating and exporting"""
    update: int
    """torch threads during the gradient update and the warm start's fit"""


def thread_plan(hp: dict[str, Any], collect: int = 1, update: int | None = None
                ) -> ThreadPlan:
    """The :class:`ThreadPlan` of a run: the hyperparameters' ``env_threads`` (else 1),
    ``collect`` torch threads while collecting, ``update`` (else the hyperparameters'
    ``update_threads``, else 1) in the update and the warm start's fits."""
    return ThreadPlan(env=int(hp.get("env_threads") or 1), collect=collect,
                      update=update or int(hp.get("update_threads") or 1))


class EntCoefDecay(BaseCallback):
    """The entropy bonus decayed linearly to 0 over training (``ent_coef: lin_<value>``).

    The idea: a bonus keeps the policy exploring early, and taking it away late lets the
    policy sharpen. Measured on Sweep-v1 it did not pay (docs/history.md, fourteenth
    round): the bonus carries the middle of training there too, and decayed from the start
    the std fell as it does without one. Set before each update from the fraction of the
    steps still to come, as SB3's own schedules are."""

    def __init__(self, start: float) -> None:
        super().__init__()
        self.start = start

    def _on_rollout_end(self) -> None:
        total = max(getattr(self.model, "_total_timesteps", 0), 1)
        remaining = max(1.0 - self.model.num_timesteps / total, 0.0)
        self.model.ent_coef = self.start * remaining
        self.logger.record("train/ent_coef", self.model.ent_coef)

    def _on_step(self) -> bool:
        return True


def ent_coef_decay(hp: dict[str, Any]) -> list[BaseCallback]:
    """The callbacks the ``ent_coef`` setting needs: an :class:`EntCoefDecay` for
    ``lin_<value>``, none for a number."""
    start, decays = ent_coef_setting(hp.get("ent_coef", 0.0))
    return [EntCoefDecay(start)] if decays else []


class StdClamp(BaseCallback):
    """PPO's state-independent action std held within ``[low, high]`` (the yml's ``min_std``
    and ``max_std``; None: unbounded on that side): before each rollout, ``log_std`` is
    clamped to their logarithms, so every rollout is collected within the bounds.

    Why: on Sweep-v1 the entropy bonus is a blunt tool both ways (docs/history.md,
    thirteenth and fifteenth rounds). Without it the std fell from 1 to 0.047 in 13 M steps
    and every seed stalled; with ``ent_coef: 0.01`` one seed of three kept its std near 1
    for the whole run and learned little. A floor keeps exploring without a bonus; a
    ceiling keeps a bonus from holding the policy near random. Measured there (fifteenth
    round, seeds 0 / 1 / 2 on 500 fresh episodes): ``max_std: 0.6`` with the bonus made every
    seed learn from the start, but ended at 37.6 / 40.0 / 60.2 % against the entry's 60.8 /
    51.6 / 0.0 %; ``min_std: 0.3`` without the bonus learned as slowly as no bonus at all
    (stopped at 12 M steps). Both with the bonus over 60 M steps (sixteenth round, Sweep's
    entry now): 81.8 / 77.0 / 85.0 %."""

    def __init__(self, low: float | None, high: float | None) -> None:
        super().__init__()
        self.log_low = None if low is None else math.log(low)
        self.log_high = None if high is None else math.log(high)

    def _on_rollout_start(self) -> None:
        with torch.no_grad():
            self.model.policy.log_std.clamp_(min=self.log_low, max=self.log_high)

    def _on_step(self) -> bool:
        return True


def std_clamp(hp: dict[str, Any]) -> list[BaseCallback]:
    """The callbacks the ``min_std`` and ``max_std`` settings need: a :class:`StdClamp`, or
    none."""
    low, high = std_bounds(hp)
    return [StdClamp(low, high)] if (low, high) != (None, None) else []


class SaveVecNormalize(BaseCallback):
    """``callback_on_new_best``: save the VecNormalize stats that go with the best model."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def _on_step(self) -> bool:
        venv = self.model.get_vec_normalize_env()
        if venv is not None:
            venv.save(str(self.path))
        return True


# ----------------------------------------------------------------------------------- running
def run_dir_of(args: Args, yml_robot: str | None = None) -> Path:
    """``<run_dir>/<env>/<algo>/<seed>``; ``<env>-<robot>`` when --robot differs from the yml's."""
    env = args.env if args.robot in (None, yml_robot) else f"{args.env}-{args.robot}"
    return Path(args.run_dir) / env / args.algo / str(args.seed)


def make_env(env_id: str, n_envs: int, seed: int, hp: dict[str, Any], stats: Path | None = None,
             training: bool = True, **extra: Any) -> VecEnv:
    """A batch VecEnv (VecNormalize'd when the yml says so; ``stats`` loads saved stats)."""
    env_kwargs = {**(hp.get("env_kwargs") or {}), **extra}
    venv = make_vec_env(env_id, n_envs=n_envs, seed=seed, num_threads=hp.get("env_threads"),
                        **env_kwargs)
    venv = view_obs(venv, hp)
    return normalized(venv, hp, stats, training)


def save_trained(model: BaseAlgorithm, env: VecEnv, eval_cb: EvalCallback, out: Path,
                 train_time: float) -> int:
    """Save the final model (and the batch's VecNormalize statistics) into the run folder
    ``out``, print the training speed and the evaluations' success curve; returns the env
    steps trained."""
    model.save(out / "final_model.zip")
    if isinstance(env, VecNormalize):
        env.save(str(out / "vecnormalize.pkl"))
    steps = int(model.num_timesteps)
    print(f"trained {steps:,} env steps in {train_time:.1f} s ({steps / train_time:,.0f} steps/s)")
    if eval_cb.evaluations_timesteps:
        succ = [f"{t / 1e3:.0f}k:{np.mean(s):.0%}" for t, s in
                zip(eval_cb.evaluations_timesteps, eval_cb.evaluations_successes, strict=False)]
        print("success curve:", " ".join(succ))
    return steps


def load_model(algo: str, path: Path) -> BaseAlgorithm:
    """Load a saved model for inference (an off-policy model gets a 1-transition plain
    buffer instead of its HER buffer, which would need the training env)."""
    if algo == "ppo":
        return PPO.load(path, device="cpu")
    return SAC.load(path, device="cpu", custom_objects={
        "replay_buffer_class": None, "replay_buffer_kwargs": {}, "buffer_size": 1})


def evaluate(model: BaseAlgorithm, env: VecEnv, episodes: int) -> dict[str, float]:
    """Deterministic evaluation: success rate, mean/std return and length over ``episodes``."""
    successes: list[bool] = []

    def grab(locals_: dict[str, Any], _globals: dict[str, Any]) -> None:
        i = locals_["i"]
        if locals_["done"] and locals_["episode_counts"][i] < locals_["episode_count_targets"][i]:
            successes.append(bool(locals_["info"].get("is_success", False)))

    returns, lengths = evaluate_policy(model, env, n_eval_episodes=episodes, deterministic=True,
                                       return_episode_rewards=True, callback=grab)
    return {"success_rate": float(np.mean(successes)) if successes else float("nan"),
            "mean_return": float(np.mean(returns)), "std_return": float(np.std(returns)),
            "mean_length": float(np.mean(lengths)), "episodes": len(returns)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Train (see the module docs). Everything that can be checked or built is, before a run
    folder is claimed: the arguments and every hyperparameter (:func:`check`), the views,
    the warm start's demonstrations, both env batches and the model. With --overwrite an
    earlier run in the folder is replaced only once this one is under way
    (:class:`~train.run_folder.RunDir`)."""
    args = parse_args(argv)
    t_start = time.perf_counter()
    check_run_args(args)
    yml = load_hyperparams(args.algo, args.env, args.hyperparams, args.robot)
    hp = apply_overrides(yml, args)
    check_world_args(args, hp)
    check(hp, args.algo, f"{args.env} ({args.algo})")
    plan = thread_plan(hp, args.threads, args.update_threads)
    hp["env_threads"] = plan.env
    if ent_coef_setting(hp.get("ent_coef", 0.0))[1] and args.algo != "ppo":
        raise ValueError(f"{args.env}.ent_coef: lin_ decays PPO's entropy bonus; {args.algo} "
                         f"takes a number or 'auto'")
    std_callbacks = std_clamp(hp)  # bad bounds are refused here, before anything is written
    if std_callbacks and (args.algo != "ppo" or hp.get("use_sde")):
        key = "min_std" if hp.get("min_std") is not None else "max_std"
        raise ValueError(f"{args.env}.{key}: bounds PPO's state-independent action "
                         f"std; {args.algo}{' with use_sde' if hp.get('use_sde') else ''} "
                         f"has none")
    view = None  # what the policy sees (the warm start's clone sees the same)
    if wants_view(hp):
        # bad field names are refused before anything is written
        probe = make_vec_env(args.env, n_envs=1, num_threads=1, **hp["env_kwargs"])
        try:
            view = obs_view(probe, hp, args.env)
        finally:
            probe.close()
    warm = hp.get("warm_start")
    if warm is not None:
        if args.algo != "ppo":
            raise ValueError(f"{args.env}.warm_start: behaviour cloning warm-starts ppo only, "
                             f"not {args.algo}")
        warm = settings(warm, f"{args.env}.warm_start")
        # Played before anything is written: a task without an expert is refused here.
        demo = demonstrations(args.env, hp["env_kwargs"], warm, args.seed,
                              f"{args.env}.warm_start")
    torch.set_num_threads(plan.collect)
    set_random_seed(args.seed)
    env = make_env(args.env, hp["n_envs"], args.seed, hp)
    eval_env = make_env(args.env, args.eval_envs, args.seed + EVAL_SEED_OFFSET, hp,
                        training=False)
    algo_cls = {"ppo": LeanPPO if args.lean else PPO, "sac": SAC}[args.algo]
    try:
        model = algo_cls(hp.get("policy", "MlpPolicy"), env, seed=args.seed,
                         verbose=args.verbose, device="cpu", **algo_kwargs(hp))
    except (ValueError, TypeError, AssertionError, KeyError) as exc:
        env.close()
        eval_env.close()
        raise ValueError(f"{args.env} ({args.algo}): {algo_cls.__name__} refused the "
                         f"hyperparameters: {type(exc).__name__}: {exc}") from None
    with RunDir(run_dir_of(args, (yml.get("env_kwargs") or {}).get("robot")),
                args.overwrite) as run:
        return _train(args, hp, plan, run, env, eval_env, model, warm,
                      demo if warm else None, view, std_callbacks, t_start)


def _train(args: Args, hp: dict[str, Any], plan: ThreadPlan, run: RunDir, env: VecEnv,
           eval_env: VecEnv, model: BaseAlgorithm, warm: dict[str, Any] | None, demo: Any,
           view: Any, std_callbacks: list[BaseCallback], t_start: float) -> dict[str, Any]:
    """The run itself, into ``run.path`` (claimed by :func:`main`)."""
    out = run.path
    model.tensorboard_log = str(out / "tb")  # read when learning starts
    print(f"run {out}: {args.algo} on {args.env} {hp['env_kwargs'] or ''}, "
          f"{hp['n_timesteps']:,} steps, {hp['n_envs']} envs")
    print(f"threads: numba (env batch) {plan.env}, torch {plan.collect} while collecting "
          f"and {plan.update} in the update")
    with open(out / "args.json", "w") as fh:
        json.dump({"args": dataclasses.asdict(args), "hyperparams": hp}, fh, indent=2,
                  default=str)

    warm_result = None
    log: list[dict[str, Any]] = []  # every evaluation, with its wall clock and env steps
    if warm is not None:
        torch.set_num_threads(plan.update)  # cloning is gradient steps, as an update is
        warm_result = pretrain(model, env, demo, args.seed, warm, view)
        torch.set_num_threads(plan.collect)
        sync_envs_normalization(env, eval_env)
        clone = warm_result["clone"] = evaluate(model, eval_env, args.eval_episodes)
        log.append(entry(0, time.perf_counter() - t_start, clone["success_rate"],
                         clone["mean_return"], "clone"))
        dagger = " ".join(f"{r:.0%}" for r in warm_result["dagger_success_rates"])
        print(f"warm start: {warm_result['steps']:,} steps of {warm_result['episodes']} expert "
              f"episodes ({warm_result['expert_success_rate']:.0%} success)"
              + (f" and DAgger (the clone playing {dagger} over its rounds)" if dagger else "")
              + f" cloned in {warm_result['seconds']:.0f} s ("
              + ", ".join(f"{k.replace('_', ' ')} {v:.0f} s"
                          for k, v in warm_result["seconds_by_part"].items())
              + f"); the clone: {warm_result['clone']['success_rate']:.0%} success")

    eval_freq = int(hp.get("eval_freq") or max(hp["n_timesteps"] // 20, 1))
    on_best = SaveVecNormalize(out / "best_vecnormalize.pkl")
    eval_cb = EvalCallback(eval_env, n_eval_episodes=args.eval_episodes,
                           eval_freq=max(eval_freq // hp["n_envs"], 1), log_path=str(out),
                           best_model_save_path=str(out), deterministic=True,
                           callback_on_new_best=on_best, verbose=0,
                           callback_after_eval=EvalLog(log, t_start,
                                                       hp.get("stop_at_success")))
    t_train = time.perf_counter()
    callbacks = CallbackList([eval_cb, UpdateThreads(plan.collect, plan.update),
                              *ent_coef_decay(hp), *std_callbacks, UnderWay(run)])
    model.learn(total_timesteps=hp["n_timesteps"], callback=callbacks,
                progress_bar=args.progress, tb_log_name=args.algo)
    train_time = time.perf_counter() - t_train
    torch.set_num_threads(plan.collect)  # the evaluations below are batched inference again
    steps = save_trained(model, env, eval_cb, out, train_time)

    result: dict[str, Any] = {"env": args.env, "algo": args.algo, "seed": args.seed,
                              "env_kwargs": hp["env_kwargs"], "env_steps": steps,
                              "train_time_s": train_time, "steps_per_s": steps / train_time,
                              "warm_start": warm_result}
    floor = floor_of(args.env, hp)
    result.update(evaluations=log, floor=floor, to_floor=first_at_floor(log, floor))
    print(describe(result["to_floor"], floor))
    # The final model always; the best one only when it is the one reported (--eval-model
    # best): its evaluation is a second batch of fresh episodes, about a second of the
    # README's run.
    for which in ("final", "best") if args.eval_model == "best" else ("final",):
        path = out / f"{which}_model.zip"
        if not path.exists():
            continue
        stats = out / ("best_vecnormalize.pkl" if which == "best" else "vecnormalize.pkl")
        fenv = make_env(args.env, args.eval_envs, args.seed + FINAL_SEED_OFFSET, hp,
                        stats=stats, training=False)
        result[which] = evaluate(load_model(args.algo, path), fenv, args.eval_episodes)
        fenv.close()
    chosen = args.eval_model if args.eval_model in result else "final"
    res = result[chosen]
    result["reported"] = chosen
    result["success_rate"] = res["success_rate"]
    result["mean_return"] = res["mean_return"]
    result["wall_clock_s"] = time.perf_counter() - t_start
    with open(out / "result.json", "w") as fh:
        json.dump(result, fh, indent=2, default=str)
    env.close()
    eval_env.close()
    if chosen != "final":
        f = result["final"]
        print(f"final model: success {100 * f['success_rate']:.1f}% "
              f"(mean return {f['mean_return']:.1f})")
    print(f"wall clock {result['wall_clock_s']:.0f} s, {steps:,} env steps")
    print(f"final evaluation: success {100 * res['success_rate']:.1f}% over {res['episodes']} "
          f"episodes (mean return {res['mean_return']:.1f}, {chosen} model)")
    return result


if __name__ == "__main__":
    cli(main, "train.train", sys.argv[1:])
