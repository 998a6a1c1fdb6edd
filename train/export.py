"""Export a training run's policy as a pretrained agent (a ``push_envs.baselines`` file).

    python -m train.export runs/PushBox-v0/ppo/0                 # the final model, shipped:
                                                                # push_envs/baselines/agents/
                                                                # PushBox-v0-diff.npz
    python -m train.export runs/PushBox-v0/ppo/1 --out runs/PushBox-v0/ppo/1/agent.npz
    python -m train.export runs/PushT-v0/dagger/0                # train/dagger.py's policy
    python -m train.export runs/PushT-v0/residual/0              # train/residual.py's

The run folder is one that ``train/train.py`` wrote (``args.json``, ``final_model.zip`` or
``best_model.zip`` with the VecNormalize statistics saved beside it, ``result.json``),
``train/dagger.py`` wrote (``args.json``, ``policy.pt``, ``result.json``) or
``train/residual.py`` wrote (train.py's files and ``base.npz``, its base agent, which the
``"residual"`` agent holds whole). The file holds the actor's weights (no critic, no
optimiser state), the observation normalisation, the slots ``sort_obs`` sorts and the
columns ``hide_obs`` hides, and a description: the task and its arguments, the architecture,
the command that trained it, its seed, env steps and wall clock (:mod:`push_envs.baselines.agent`).

Before writing, the exporter plays random actions for a few steps, feeds the observations
to the torch policy and to the exported one, and refuses to write unless their actions agree
to 1e-4. Loading a run folder unpickles its model zip and VecNormalize statistics: export
only runs you trust. The file it writes unpickles nothing when loaded.

SB3 policies: PPO and SAC ``MlpPolicy`` on state observations (a 1-D Box; a goal-mode run's
Dict observation is refused), any of train/train.py's activations, gSDE included.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated
from typing import Any
from typing import Literal

import numpy as np
import torch
import tyro
from torch import nn

import push_envs
from push_envs.baselines import Agent
from push_envs.baselines import agent_path
from push_envs.baselines import write
from push_envs.baselines.agent import FORMAT
from push_envs.baselines.agent import FORMAT_VERSION
from push_envs.baselines.view import ObsView
from push_envs.tasks import spec

from .time_to_floor import to_floor

# torch.nn activation modules -> (the agent file's name, the parameters it keeps)
ACTIVATION_NAMES = {nn.Tanh: ("tanh", ()), nn.ReLU: ("relu", ()), nn.ELU: ("elu", ("alpha",)),
                    nn.LeakyReLU: ("leaky_relu", ("negative_slope",)),
                    nn.GELU: ("gelu", ("approximate",)), nn.SiLU: ("silu", ()),
                    nn.Hardtanh: ("hardtanh", ("min_val", "max_val"))}
TOLERANCE = 1e-4  # max |action difference| between the torch policy and the exported one


@dataclass
class Args:
    run: Annotated[str, tyro.conf.Positional, tyro.conf.arg(metavar="RUN")]
    """run folder written by train/train.py, train/dagger.py or train/residual.py"""
    which: Literal["best", "final"] = "final"
    """train.py's or residual.py's model: final (the suite's protocol) or best (highest
    evaluation return)"""
    out: str | None = None
    """the file to write (default: the shipped agent, push_envs/baselines/agents/
    <env>-<robot>.npz)"""
    overwrite: bool = False
    """replace an existing file at the output path"""
    note: str | None = None
    """what the configuration is, in words (stored; the task pages show it)"""


# ------------------------------------------------------------------------------- layers
def layers_of(modules: list[nn.Module], where: str) -> tuple[list[dict], dict[str, np.ndarray]]:
    """The layer descriptions and arrays of a chain of Linear and activation modules
    (``layer<i>.weight`` (out, in), ``layer<i>.bias``); anything else raises ValueError."""
    specs: list[dict] = []
    arrays: dict[str, np.ndarray] = {}
    flat: list[nn.Module] = []
    for m in modules:
        flat += list(m) if isinstance(m, nn.Sequential) else [m]
    for m in flat:
        if isinstance(m, nn.Linear):
            if m.bias is None:
                raise ValueError(f"{where}: a Linear layer without bias is not supported")
            i = len(specs)
            arrays[f"layer{i}.weight"] = m.weight.detach().cpu().numpy().astype(np.float32)
            arrays[f"layer{i}.bias"] = m.bias.detach().cpu().numpy().astype(np.float32)
            specs.append({"activation": None})
        elif type(m) in ACTIVATION_NAMES:
            if not specs or specs[-1]["activation"] is not None:
                raise ValueError(f"{where}: an activation ({type(m).__name__}) must follow a "
                                 f"Linear layer")
            name, params = ACTIVATION_NAMES[type(m)]
            specs[-1] = {"activation": name, **{p: getattr(m, p) for p in params}}
        elif isinstance(m, (nn.Identity, nn.Flatten)):
            continue
        else:
            raise ValueError(f"{where}: a {type(m).__name__} module cannot be exported; "
                             f"supported: Linear and {[c.__name__ for c in ACTIVATION_NAMES]}")
    return specs, arrays


def _command(module: str, args_cls: type, saved: dict[str, Any], always: tuple[str, ...],
             skip: tuple[str, ...]) -> str:
    """The command line that reruns a run: ``always`` flags and those that differ from
    the defaults of ``args_cls`` (a tyro dataclass), ``skip`` left out."""
    default = args_cls()
    parts = [f"python -m {module}"]
    fields = sorted(dataclasses.fields(args_cls),  # the always-named flags first, in order
                    key=lambda f: always.index(f.name) if f.name in always else len(always))
    for f in fields:
        if f.name in skip or f.name not in saved:
            continue
        value = saved[f.name]
        if f.name not in always and value == getattr(default, f.name):
            continue
        flag = "--" + f.name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(flag if value else f"--no-{flag[2:]}")
        elif value is None:
            continue
        elif isinstance(value, list):
            if f.name == "hp":
                parts += [f"{flag} {shlex.quote(str(v))}" for v in value]
            else:
                parts.append(f"{flag} " + " ".join(shlex.quote(str(v)) for v in value))
        elif isinstance(value, float):
            parts.append(f"{flag} {value:g}")
        else:
            parts.append(f"{flag} {shlex.quote(str(value))}")
    return " ".join(parts)


def _versions() -> dict[str, str]:
    out = {"push_envs": push_envs.__version__, "torch": torch.__version__}
    try:
        import stable_baselines3

        out["stable_baselines3"] = stable_baselines3.__version__
    except ImportError:
        pass
    return out


def _model_files(run: Path, which: str) -> tuple[Path, Path]:
    """The run folder's ``<which>_model.zip`` and its VecNormalize statistics; ValueError
    naming the folder and the models it holds when the model is missing."""
    model_path = run / f"{which}_model.zip"
    stats = run / ("best_vecnormalize.pkl" if which == "best" else "vecnormalize.pkl")
    if not model_path.is_file():
        have = sorted(p.name for p in run.glob("*_model.zip"))
        raise ValueError(f"{run}: no {model_path.name} (models there: {have or 'none'})")
    return model_path, stats


def _read_json(path: Path, needs: tuple[str, ...] = ()) -> dict[str, Any]:
    """A run's JSON file as a mapping ({} when absent and nothing is needed), with the keys
    ``needs`` present; ValueError naming the file otherwise (truncated, not JSON, {}...)."""
    if not path.is_file():
        if needs:
            raise ValueError(f"{path}: missing (not a run folder)")
        return {}
    try:
        value = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{path}: not readable JSON ({exc}); the run folder is damaged") \
            from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: holds {type(value).__name__}, not a mapping; the run "
                         f"folder is damaged")
    missing = [k for k in needs if not isinstance(value.get(k), dict)]
    if missing:
        raise ValueError(f"{path}: no {missing} (what the training script writes there); "
                         f"the run folder is damaged or not one of a training script")
    return value


def _vec_normalize(path: Path) -> Any:
    """The VecNormalize statistics a run saved (unpickled: a trusted run folder, see the
    module docs); ValueError naming the file when it holds anything else."""
    from stable_baselines3.common.vec_env import VecNormalize

    try:
        with path.open("rb") as fh:
            vn = pickle.load(fh)
    except Exception as exc:  # a damaged pickle raises anything unpickling can
        raise ValueError(f"{path}: not readable VecNormalize statistics ({type(exc).__name__}: "
                         f"{exc})") from None
    if not isinstance(vn, VecNormalize):
        raise ValueError(f"{path}: holds a {type(vn).__name__}, not VecNormalize statistics")
    vn.training = False
    return vn


def _load(algo: str, path: Path) -> Any:
    """A run's SB3 model; ValueError naming the file when it does not load."""
    from .train import load_model

    try:
        return load_model(algo, path)
    except Exception as exc:  # a damaged zip or pickle raises anything loading can
        raise ValueError(f"{path}: the model does not load ({type(exc).__name__}: {exc})") \
            from None


def _sample_obs(env_id: str, env_kwargs: dict[str, Any], steps: int = 8, n: int = 32,
                seed: int = 12_345) -> np.ndarray:
    """Observations of ``n`` envs over ``steps`` steps of random actions (seeded), stacked:
    what the exporter checks the two policies on."""
    import gymnasium as gym

    venv = gym.make_vec(env_id, num_envs=n, num_threads=1, **env_kwargs)
    try:
        obs, _ = venv.reset(seed=seed)
        rng = np.random.default_rng(seed)
        rows = [obs]
        for _ in range(steps):
            act = rng.uniform(-1, 1, venv.action_space.shape).astype(np.float32)
            obs, *_ = venv.step(act)
            rows.append(obs)
    finally:
        venv.close()
    return np.concatenate(rows)


# ---------------------------------------------------------------------------------- SB3
def _sb3(run: Path, which: str) -> tuple[dict[str, Any], dict[str, np.ndarray], Any]:
    """(meta, arrays, reference policy) of a train/train.py run."""
    from gymnasium import spaces
    from stable_baselines3.common.torch_layers import FlattenExtractor

    from .train import Args as TrainArgs
    from .train import obs_view
    from .train import wants_view

    saved = _read_json(run / "args.json", ("args", "hyperparams"))
    args, hp = saved["args"], saved["hyperparams"]
    if args.get("algo") not in ("ppo", "sac") or not isinstance(args.get("env"), str):
        raise ValueError(f"{run / 'args.json'}: its args name no algo (ppo, sac) and env; the "
                         f"run folder is damaged")
    model_path, stats = _model_files(run, which)
    model = _load(args["algo"], model_path)
    where = f"{model_path}"
    if not isinstance(model.observation_space, spaces.Box) or \
            len(model.observation_space.shape) != 1:
        raise ValueError(f"{where}: observes {model.observation_space}; only state "
                         f"observations (a 1-D Box) can be exported, not goal or pixel modes")
    policy = model.policy
    if args["algo"] == "ppo":
        extractor = policy.pi_features_extractor
        modules = [policy.mlp_extractor.policy_net, policy.action_net]
    else:
        extractor = policy.actor.features_extractor
        modules = [policy.actor.latent_pi, policy.actor.mu]
    if not isinstance(extractor, FlattenExtractor):
        raise ValueError(f"{where}: its features extractor {type(extractor).__name__} cannot "
                         f"be exported (FlattenExtractor only)")
    layers, arrays = layers_of(modules, where)
    env_id = args["env"]
    env_kwargs = dict(hp.get("env_kwargs") or {})
    robot = env_kwargs.get("robot") or spec(env_id).default_robot
    env_kwargs["robot"] = robot
    obs = _sample_obs(env_id, env_kwargs)
    if obs.shape[1:] != model.observation_space.shape:
        raise ValueError(f"{where}: the model observes {model.observation_space.shape}, "
                         f"{env_id} with {env_kwargs} {obs.shape[1:]}")
    view = ObsView(obs.shape[1])  # what the policy saw: nothing sorted or hidden, unless
    if wants_view(hp):
        from push_envs.sb3 import make_vec_env

        probe = make_vec_env(env_id, n_envs=1, num_threads=1, **env_kwargs)
        try:
            view = obs_view(probe, hp, f"{run}/args.json")
        finally:
            probe.close()
    obs_norm = None
    normalize = lambda o: o  # noqa: E731
    if stats.is_file():
        vn = _vec_normalize(stats)
        if vn.norm_obs:
            arrays["obs_mean"] = np.asarray(vn.obs_rms.mean, np.float64)
            arrays["obs_var"] = np.asarray(vn.obs_rms.var, np.float64)
            obs_norm = {"epsilon": float(vn.epsilon), "clip": float(vn.clip_obs)}
            normalize = vn.normalize_obs
    elif hp.get("normalize"):
        raise ValueError(f"{run}: the run normalised its observations but {stats.name} is "
                         f"missing")
    arrays["hide_columns"] = view.hide
    if len(view.sorts):
        arrays["sort_slots"] = view.sorts
        arrays["sort_standoff"] = view.standoff
    arrays["action_low"] = np.asarray(model.action_space.low, np.float32)
    arrays["action_high"] = np.asarray(model.action_space.high, np.float32)

    def reference(o: np.ndarray) -> np.ndarray:
        return model.predict(normalize(view(o)), deterministic=True)[0]

    result = _read_json(run / "result.json")
    warm = hp.get("warm_start")
    name = args["algo"].upper() + (" (warm start)" if warm else "")
    if warm and (warm.get("dagger_rounds") or 0) > 0:
        name = f"{args['algo'].upper()} (DAgger warm start)"
    training = {
        "command": _command("train.train", TrainArgs, args, ("env", "seed"),
                            ("run_dir", "overwrite", "progress", "verbose")),
        "seed": args["seed"], "algo": args["algo"], "which": which,
        "env_steps": int(model.num_timesteps),
        "warm_start_steps": (result.get("warm_start") or {}).get("steps"),
        "wall_clock_s": result.get("wall_clock_s"), "train_time_s": result.get("train_time_s"),
        **to_floor(result),
        "success_rate_during_training": (result.get(which) or {}).get("success_rate"),
        "run": run.as_posix(), "args": args, "hyperparams": hp}
    meta = {"env_id": env_id, "robot": robot, "env_kwargs": env_kwargs, "policy": name,
            "kind": "mlp", "output": "squash" if policy.squash_output else "clip",
            "observation_dim": int(model.observation_space.shape[0]),
            "action_dim": int(model.action_space.shape[0]), "layers": layers,
            "obs_norm": obs_norm, "hide_obs": list(hp.get("hide_obs") or []),
            "sort_obs": hp.get("sort_obs"),
            "training": training}
    return meta, arrays, (reference, obs)


# ------------------------------------------------------------------------------- DAgger
def _dagger(run: Path) -> tuple[dict[str, Any], dict[str, np.ndarray], Any]:
    """(meta, arrays, reference policy) of a train/dagger.py run."""
    from . import dagger as D

    try:
        policy = D.load_policy(run / "policy.pt")  # weights_only: nothing unpickled
    except Exception as exc:  # a damaged file raises anything torch.load can
        raise ValueError(f"{run / 'policy.pt'}: the policy does not load "
                         f"({type(exc).__name__}: {exc})") from None
    net = policy.net
    layers, arrays = layers_of([net.body, net.head], str(run / "policy.pt"))
    arrays["feature_mean"] = net.mean.detach().numpy().astype(np.float32)
    arrays["feature_std"] = net.std.detach().numpy().astype(np.float32)
    args = _read_json(run / "args.json")
    env_id = args.get("env", "PushT-v0")
    env_kwargs = dict(D.ENV_KWARGS)
    venv = D.batch(1, 1)
    try:
        n_obs = int(venv.single_observation_space.shape[0])
        arrays["action_low"] = np.asarray(venv.single_action_space.low, np.float32)
        arrays["action_high"] = np.asarray(venv.single_action_space.high, np.float32)
    finally:
        venv.close()
    result = _read_json(run / "result.json")
    rounds = result.get("rounds") or []
    training = {
        "command": _command("train.dagger", D.Args, args, ("seed",),
                            ("run_dir", "overwrite", "gif", "gif_episodes", "threads")),
        "seed": args.get("seed"), "algo": "dagger", "which": "final",
        "env_steps": rounds[-1]["samples"] if rounds else None,
        "wall_clock_s": result.get("train_s"), "train_time_s": result.get("train_s"),
        "success_rate_during_training": result.get("coverage_success_rate"),
        "run": run.as_posix(), "args": args}
    meta = {"env_id": env_id, "robot": D.ROBOT, "env_kwargs": env_kwargs, "policy": "DAgger",
            "kind": "tee_mixture", "observation_dim": n_obs, "action_dim": 2,
            "layers": layers, "components": int(net.k), "columns": policy.frame.columns,
            "training": training}
    return meta, arrays, (policy, _sample_obs(env_id, env_kwargs))


# ----------------------------------------------------------------------------- residual
def _residual(run: Path, which: str) -> tuple[dict[str, Any], dict[str, np.ndarray], Any]:
    """(meta, arrays, reference policy) of a train/residual.py run: its base agent (the run's
    ``base.npz``, arrays under :data:`~push_envs.baselines.agent.BASE_PREFIX`) and the PPO
    actor with its normalisation, checked against the training wrapper's action."""
    from push_envs.baselines import load_file
    from push_envs.baselines.agent import BASE_PREFIX
    from push_envs.sb3 import make_vec_env

    from .residual_env import Args as ResidualArgs
    from .residual_env import ResidualVecEnv
    from .residual_env import deterministic_action

    saved = _read_json(run / "args.json", ("args", "hyperparams", "residual"))
    args, hp, res = saved["args"], saved["hyperparams"], saved["residual"]
    scale, inputs = res.get("scale"), res.get("inputs")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0 or \
            not isinstance(inputs, list):
        raise ValueError(f"{run / 'args.json'}: its residual settings {res} hold no scale > 0 "
                         f"and inputs list; the run folder is damaged")
    model_path, stats = _model_files(run, which)
    base = load_file(run / "base.npz")
    with np.load(run / "base.npz", allow_pickle=False) as data:
        arrays = {BASE_PREFIX + k: data[k] for k in data.files if k != "meta"}
    base_meta = {k: v for k, v in base.meta.items() if k not in ("format", "format_version")}
    model = _load("ppo", model_path)
    policy = model.policy
    layers, mlp = layers_of([policy.mlp_extractor.policy_net, policy.action_net],
                            str(model_path))
    arrays.update(mlp)
    env_id, env_kwargs = base.env_id, dict(hp.get("env_kwargs") or {})
    # a one-env batch for the wrapper's spaces: the check below calls only its observe and
    # env_action, which do not step it
    probe = make_vec_env(env_id, n_envs=1, monitor=False, num_threads=1,
                         **{**env_kwargs, "robot": base.robot})
    probe.close()
    venv = ResidualVecEnv(probe, base, res.get("scale"), res.get("inputs"))
    if model.observation_space.shape != venv.observation_space.shape:
        raise ValueError(f"{model_path}: the model observes {model.observation_space.shape}; "
                         f"the base and inputs {res['inputs']} make "
                         f"{venv.observation_space.shape}")
    obs_norm = None
    env: Any = venv
    if stats.is_file():
        vn = _vec_normalize(stats)
        vn.set_venv(venv)
        env = vn
        if vn.norm_obs:
            arrays["obs_mean"] = np.asarray(vn.obs_rms.mean, np.float64)
            arrays["obs_var"] = np.asarray(vn.obs_rms.var, np.float64)
            obs_norm = {"epsilon": float(vn.epsilon), "clip": float(vn.clip_obs)}
    elif hp.get("normalize"):
        raise ValueError(f"{run}: the run normalised its observations but {stats.name} is "
                         f"missing")
    arrays["action_low"] = np.asarray(venv.low, np.float32)
    arrays["action_high"] = np.asarray(venv.high, np.float32)

    def reference(o: np.ndarray) -> np.ndarray:
        return deterministic_action(model, env, o)

    result = _read_json(run / "result.json")
    training = {
        "command": _command("train.residual", ResidualArgs, args, ("base", "seed"),
                            ("run_dir", "overwrite", "progress", "verbose")),
        "seed": args["seed"], "algo": "residual", "which": which,
        "env_steps": int(model.num_timesteps),
        "base_env_steps": (base.meta.get("training") or {}).get("env_steps"),
        "wall_clock_s": result.get("wall_clock_s"), "train_time_s": result.get("train_time_s"),
        **to_floor(result),
        "success_rate_during_training": (result.get(which) or {}).get("success_rate"),
        "base_success_rate": (result.get("base") or {}).get("success_rate"),
        "run": run.as_posix(), "args": args, "hyperparams": hp, "residual": res}
    meta = {"env_id": env_id, "robot": base.robot, "env_kwargs": {**env_kwargs,
                                                                  "robot": base.robot},
            "policy": f"residual PPO on {base.policy}", "kind": "residual", "output": "clip",
            "observation_dim": base.observation_dim, "action_dim": base.action_dim,
            "layers": layers, "obs_norm": obs_norm, "base": base_meta,
            "residual": {"scale": float(res["scale"]), "inputs": list(res["inputs"])},
            "training": training}
    return meta, arrays, (reference, _sample_obs(env_id, {**env_kwargs, "robot": base.robot}))


# ------------------------------------------------------------------------------- export
def export(run: str | Path, which: str = "final", out: str | Path | None = None,
           overwrite: bool = False, note: str | None = None) -> Agent:
    """Write the agent of the run folder ``run`` (see the module docs) and return it. The
    exported policy's actions are checked against the torch policy's first."""
    run = Path(run)
    if not (run / "args.json").is_file():
        raise ValueError(f"{run}: not a run folder (no args.json)")
    if out is not None:  # the output is checked before the run is loaded
        _check_out(Path(out), overwrite)
    if (run / "policy.pt").is_file():
        meta, arrays, (reference, obs) = _dagger(run)
    elif (run / "base.npz").is_file():
        meta, arrays, (reference, obs) = _residual(run, which)
    else:
        meta, arrays, (reference, obs) = _sb3(run, which)
    if note:
        meta["configuration"] = note
    meta["exported_with"] = _versions()
    path = Path(out) if out is not None else agent_path(meta["env_id"], meta["robot"])
    _check_out(path, overwrite)
    agent = Agent({"format": FORMAT, "format_version": FORMAT_VERSION, **meta}, arrays)
    gap = float(np.max(np.abs(agent(obs) - np.asarray(reference(obs), np.float32))))
    if not gap <= TOLERANCE:
        raise ValueError(f"{run}: the exported policy's actions differ from the torch "
                         f"policy's by up to {gap:.3g} (tolerance {TOLERANCE}); not written")
    return write(path, meta, arrays)


def _check_out(path: Path, overwrite: bool) -> None:
    """The agent file to write: not a folder, and not an existing file unless
    ``overwrite``."""
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a folder; --out takes the agent .npz file to "
                                f"write")
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists; pass --overwrite to replace it")


def main(argv: list[str] | None = None) -> Agent:
    """``python -m train.export``: bad input raises (ValueError, or OSError for the output
    file), which :func:`~train.common.cli` turns into one line and exit code 2."""
    args = tyro.cli(Args, args=argv, description=__doc__.split("\n\n")[0])
    torch.set_num_threads(1)
    agent = export(args.run, args.which, args.out, args.overwrite, args.note)
    size = agent.path.stat().st_size
    t = agent.meta["training"]
    print(f"wrote {agent.path} ({size / 1024:.0f} KiB): {agent.policy} on {agent.env_id} "
          f"({agent.robot}), seed {t['seed']}, {t['env_steps']} env steps; trained by "
          f"{t['command']}")
    target = f"{agent.env_id} --robot {agent.robot}" if args.out is None else agent.path
    print(f"evaluate: python -m push_envs.baselines evaluate {target} --episodes 500 "
          f"--csv docs/data/learned.csv")
    return agent


if __name__ == "__main__":
    from .common import cli

    cli(main, "train.export", sys.argv[1:])
