"""The hyperparameters of a training run: the yml files (rl-baselines3-zoo format), the
command line's overrides, and the table every key is checked against before anything is
built or written.

Every key a run may set is in :data:`RUN_KEYS` (train/train.py's own), :data:`PPO_KEYS`,
:data:`SAC_KEYS` or :data:`RESIDUAL_KEYS` (train/residual.py's), each with its check: its
type and range (``gamma`` in (0, 1], ``clip_range`` > 0, ``n_epochs`` >= 1, ``ent_coef`` a
finite number >= 0, ``learning_rate`` finite > 0 or a ``lin_`` schedule ...), as SB3 and
torch would need it to train without NaNs. :func:`check` refuses an unknown key (a typo
such as ``n_epoch`` is told the key it likely meant) and a value out of range, naming the
key, before the run builds an env or claims a folder.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import yaml
from stable_baselines3 import HerReplayBuffer
from stable_baselines3.her.goal_selection_strategy import GoalSelectionStrategy

import push_envs
from push_envs.core.env import ROBOTS
from push_envs.tasks import spec
from push_envs.worlds import WORLD_ENV_ID

HYPERPARAMS_DIR = Path(__file__).resolve().parent / "hyperparams"
WORLD_HYPERPARAMS = Path(push_envs.__file__).resolve().parent / "worlds" / "hyperparams.yml"
"""push_envs/World-v0's entries (any IR-SIM world: its file comes with --world)."""
ALGOS = ("ppo", "sac")

# Activations a yml may name in policy_kwargs (a mapping, read with yaml.safe_load: nothing in
# the file is evaluated).
ACTIVATIONS = {name: getattr(torch.nn, name)
               for name in ("Tanh", "ReLU", "ELU", "LeakyReLU", "GELU", "SiLU")}


def policy_kwargs(value: Any, source: str = "policy_kwargs") -> dict[str, Any]:
    """SB3 ``policy_kwargs`` from the yml's mapping: ``activation_fn`` by name."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{source} must be a YAML mapping such as {{net_arch: [64, 64], "
                         f"activation_fn: Tanh}}, got {value!r}")
    kw = dict(value)
    act = kw.get("activation_fn")
    if act is not None:
        if act not in ACTIVATIONS:
            raise ValueError(f"{source}: activation_fn must be one of {sorted(ACTIVATIONS)}, "
                             f"got {act!r}")
        kw["activation_fn"] = ACTIVATIONS[act]
    return kw


def merge(hp: dict[str, Any], entry: dict[str, Any]) -> None:
    """``entry`` over ``hp`` in place, nested mappings merged one level deep."""
    for key, value in entry.items():
        if isinstance(value, dict) and isinstance(hp.get(key), dict):
            hp[key] = {**hp[key], **value}
        else:
            hp[key] = value


def load_hyperparams(algo: str, env_id: str, path: str | os.PathLike | None = None,
                     robot: str | None = None) -> dict:
    """The ``default`` entry of ``train/hyperparams/{algo}.yml`` updated by the task's own
    entry, then by that entry's ``robots: {<robot>: {...}}`` overrides for ``robot``
    (default: the entry's ``env_kwargs.robot``).

    The task's entry is the ``{algo}`` key of the hyperparameter file its TaskSpec declares
    (``hyperparams.yml`` in the task's folder), or, with ``path``, the ``env_id`` key of that
    rl-baselines3-zoo style file (its ``default``, when it has one, replaces the shared one;
    a file without one keeps the shared ``default``, so a scratch file holding one entry still
    trains with VecNormalize, gamma and the policy's settings of every recipe). Nested dicts
    (``env_kwargs``, ``policy_kwargs`` given as a mapping) are merged one level deep. An
    ``env_id`` neither registered by push_envs nor in ``path`` raises ValueError, as does a
    ``robots`` key that is not a mapping of drive names to mappings.
    """
    ids = tuple(push_envs.ENV_IDS)
    shared = HYPERPARAMS_DIR / f"{algo}.yml"
    table = yaml_mapping(Path(path) if path is not None else shared)
    base = table if path is None or "default" in table else yaml_mapping(shared)
    hp: dict[str, Any] = dict(base.get("default") or {})
    if path is not None:
        known = sorted(set(ids) | {k for k in table if k != "default"})
        if env_id not in table and env_id not in ids:
            raise ValueError(f"{path}: unknown env id {env_id!r}; known ids: {known}")
        source, entry = Path(path), dict(table.get(env_id) or {})
    elif env_id == WORLD_ENV_ID:
        # Any IR-SIM world (its file is an env argument, --world): one recipe for all.
        source = WORLD_HYPERPARAMS
        entry = dict(yaml_mapping(source).get(algo) or {})
    else:
        try:
            task = spec(env_id)  # shipped, or registered with push_envs.register_task
        except KeyError as exc:
            raise ValueError(f"{shared}: {exc.args[0]}") from None
        source = task.hyperparams_path()
        entry = dict(yaml_mapping(source).get(algo) or {}) if source is not None else {}
    robots = entry.pop("robots", None) or {}
    if not isinstance(robots, dict) or not all(
            k in ROBOTS and isinstance(v, dict) for k, v in robots.items()):
        raise ValueError(f"{source}: {env_id}.robots must map drive names {list(ROBOTS)} "
                         f"to hyperparameter mappings, got {robots!r}")
    merge(hp, entry)
    robot = robot or (hp.get("env_kwargs") or {}).get("robot")
    merge(hp, robots.get(robot) or {})
    return hp


def yaml_mapping(path: Path) -> dict:
    """A YAML file that holds a mapping (ValueError naming the file otherwise)."""
    try:
        with open(path) as fh:
            table = yaml.safe_load(fh) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: cannot read it as YAML ({exc})") from None
    if not isinstance(table, dict):
        raise ValueError(f"{path}: expected a mapping of hyperparameters")
    return table


def apply_overrides(hp: dict[str, Any], args: Any) -> dict[str, Any]:
    """Command-line values over the yml's: --timesteps, --n-envs, --robot, --eval-freq,
    --env-threads and every ``--hp key=value``."""
    hp = dict(hp)
    hp["env_kwargs"] = dict(hp.get("env_kwargs") or {})
    for item in args.hp:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--hp expects key=value, got {item!r}")
        key = key.strip()
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise ValueError(f"--hp {key}: the value {raw!r} is not YAML ({exc})") from None
        if isinstance(value, dict) and isinstance(hp.get(key), dict):
            value = {**hp[key], **value}  # e.g. --hp "env_kwargs={max_episode_steps: 50}"
        hp[key] = value
    if args.timesteps is not None:
        hp["n_timesteps"] = args.timesteps  # a float from the CLI: 2e6
    if args.n_envs is not None:
        hp["n_envs"] = args.n_envs
    if args.robot is not None:
        hp["env_kwargs"]["robot"] = args.robot
    if getattr(args, "world", None) is not None:
        hp["env_kwargs"]["world"] = args.world
    if args.eval_freq is not None:
        hp["eval_freq"] = args.eval_freq
    if args.env_threads is not None:
        hp["env_threads"] = args.env_threads
    hp.setdefault("n_timesteps", 1_000_000)
    hp.setdefault("n_envs", 1)
    for key in ("n_timesteps", "n_envs"):
        value = hp[key]
        try:
            number = float(value)  # the yml may say 2e6 (YAML reads that as a string)
        except (TypeError, ValueError):
            continue  # left for check() to refuse, naming the key
        if not isinstance(value, bool) and math.isfinite(number) and number >= 1 and \
                (key == "n_timesteps" or number == int(number)):
            hp[key] = int(number)
    return hp


def _lin_start(key: str, value: Any) -> float | None:
    """The start of a ``lin_<value>`` setting (zoo convention: a linear decay from it to 0),
    or None when ``value`` is not one; ``lin_`` without a number raises ValueError naming
    ``key``."""
    if not (isinstance(value, str) and value.startswith("lin_")):
        return None
    try:
        return float(value[4:])
    except ValueError:
        raise ValueError(f"{key} {value!r}: lin_ must be followed by a number, "
                         f"e.g. lin_0.01") from None


def _schedule(key: str, value: Any) -> Any:
    """``lin_3e-4`` -> a linear decay from 3e-4 to 0 (zoo convention); numbers pass through."""
    start = _lin_start(key, value)
    if start is not None:
        return lambda progress_remaining: progress_remaining * start
    return float(value) if isinstance(value, str) else value


def ent_coef_setting(value: Any) -> tuple[Any, bool]:
    """(start value, decays?) of the ``ent_coef`` setting: ``lin_0.01`` decays linearly from
    0.01 to 0 over training; a number (or SAC's ``auto``) is kept as it is."""
    start = _lin_start("ent_coef", value)
    if start is None:
        return value, False
    if not start >= 0.0:
        raise ValueError(f"ent_coef {value!r}: the coefficient must be >= 0")
    return start, True


def _std_bound(key: str, value: Any) -> float | None:
    """The ``min_std`` or ``max_std`` setting: None (no bound) or a std > 0 in the action's
    units."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value > 0):
        raise ValueError(f"{key} {value!r}: must be a number > 0, a bound on PPO's action "
                         f"std (in the action's units)")
    return float(value)


def std_bounds(hp: dict[str, Any]) -> tuple[float | None, float | None]:
    """(min_std, max_std) of the hyperparameters, each None when unset; a floor above the
    ceiling raises ValueError."""
    low, high = (_std_bound(k, hp.get(k)) for k in ("min_std", "max_std"))
    if low is not None and high is not None and low > high:
        raise ValueError(f"min_std {low} is above max_std {high}")
    return low, high


def algo_kwargs(hp: dict[str, Any]) -> dict[str, Any]:
    """SB3 constructor kwargs from the hyperparameters (strings mapped to objects)."""
    kwargs = {k: v for k, v in hp.items() if k not in RUN_KEYS}  # train.py's own keys
    if "policy_kwargs" in kwargs:
        kwargs["policy_kwargs"] = policy_kwargs(kwargs["policy_kwargs"])
    for key in ("learning_rate", "clip_range"):
        if key in kwargs:
            kwargs[key] = _schedule(key, kwargs[key])
    if "ent_coef" in kwargs:
        # SB3 takes a number here; a lin_ coefficient starts at its value and EntCoefDecay
        # lowers it (ent_coef_decay)
        kwargs["ent_coef"] = ent_coef_setting(kwargs["ent_coef"])[0]
    if "train_freq" in kwargs and isinstance(kwargs["train_freq"], list):
        kwargs["train_freq"] = tuple(kwargs["train_freq"])
    buffer = kwargs.get("replay_buffer_class")
    if isinstance(buffer, str):
        buffers = {"HerReplayBuffer": HerReplayBuffer}
        if buffer not in buffers:
            raise ValueError(f"replay_buffer_class must be one of {list(buffers)}, got {buffer!r}")
        kwargs["replay_buffer_class"] = buffers[buffer]
    if "replay_buffer_kwargs" in kwargs:
        rb = dict(kwargs["replay_buffer_kwargs"] or {})
        if isinstance(rb.get("goal_selection_strategy"), str):
            rb["goal_selection_strategy"] = GoalSelectionStrategy[
                rb["goal_selection_strategy"].upper()]
        kwargs["replay_buffer_kwargs"] = rb
    return kwargs


def normalize_kwargs(hp: dict[str, Any]) -> dict[str, Any] | None:
    """VecNormalize kwargs (None: no normalisation); ``normalize`` is a bool or a dict."""
    norm = hp.get("normalize", False)
    if not isinstance(norm, (bool, dict)):
        raise ValueError(f"normalize must be true, false or a mapping of VecNormalize "
                         f"arguments, got {norm!r}")
    if norm is False:
        return None
    kwargs = dict(norm) if isinstance(norm, dict) else {}
    kwargs.setdefault("gamma", float(hp.get("gamma", 0.99)))
    return kwargs




# ------------------------------------------------------------------------------ the table
# A check takes (key, value), raises ValueError naming the key when the value is out of its
# type or range, and returns the value as SB3 takes it: a YAML 1.1 number written without a
# dot (3e-4) is read as a string, so numbers come back as floats (whole ones as ints).
Check = Callable[[str, Any], Any]



def normalized(venv: Any, hp: dict[str, Any], stats: Path | None = None,
               training: bool = True) -> Any:
    """``venv`` in VecNormalize when the yml says so (``normalize``), or with the saved
    statistics ``stats`` when that file exists; ``training=False`` freezes them (and returns
    raw rewards), as an evaluation wants."""
    from stable_baselines3.common.vec_env import VecNormalize

    norm = normalize_kwargs(hp)
    if stats is not None and stats.exists():
        venv = VecNormalize.load(str(stats), venv)
    elif norm is not None:
        venv = VecNormalize(venv, **norm)
    if isinstance(venv, VecNormalize) and not training:
        venv.training = False
        venv.norm_reward = False
    return venv


def _as_number(value: Any) -> Any:
    """A number, or a string that spells one (3e-4), as a float; anything else unchanged."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def real(low: float = -math.inf, high: float = math.inf, *, above: bool = False) -> Check:
    """A finite number in [low, high] ((low, high] when ``above``), as a float."""
    def check(key: str, value: Any) -> float:
        number = _as_number(value)
        ok = _is_number(number) and math.isfinite(number) and number <= high and \
            (number > low if above else number >= low)
        if not ok:
            lo = "" if low == -math.inf else f" {'>' if above else '>='} {low:g}"
            hi = "" if high == math.inf else f"{' and' if lo else ''} <= {high:g}"
            raise ValueError(f"{key} must be a finite number{lo}{hi}, got {value!r}")
        return float(number)
    return check


def whole(low: int, high: int | None = None) -> Check:
    """An integer in [low, high] (a float with an integer value, as YAML's 1e5, alike), as
    an int."""
    def check(key: str, value: Any) -> int:
        number = _as_number(value)
        ok = _is_number(number) and math.isfinite(number) and number == int(number) and \
            number >= low and (high is None or number <= high)
        if not ok:
            bound = f">= {low}" if high is None else f"in [{low}, {high}]"
            raise ValueError(f"{key} must be an integer {bound}, got {value!r}")
        return int(number)
    return check


def flag(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{key} must be true or false, got {value!r}")
    return value


def one_of(*options: Any) -> Check:
    def check(key: str, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)) or \
                value not in options:
            raise ValueError(f"{key} must be one of {list(options)}, got {value!r}")
        return value
    return check


def either(*checks: Check) -> Check:
    """The first check that passes; the last one's error otherwise."""
    def check(key: str, value: Any) -> Any:
        for c in checks[:-1]:
            try:
                return c(key, value)
            except ValueError:
                pass
        return checks[-1](key, value)
    return check


def none(key: str, value: Any) -> None:
    if value is not None:
        raise ValueError(f"{key} must be null, got {value!r}")


def mapping(keys: dict[str, Check] | None = None) -> Check:
    """A mapping; with ``keys``, of those keys only, each checked."""
    def check(key: str, value: Any) -> dict:
        if not isinstance(value, dict):
            raise ValueError(f"{key} must be a mapping, got {value!r}")
        if keys is None:
            return value
        out = {}
        for k, v in value.items():
            if k not in keys:
                raise ValueError(f"{key}: unknown key {k!r}{_suggest(k, keys)}; known: "
                                 f"{sorted(keys)}")
            out[k] = keys[k](f"{key}.{k}", v)
        return out
    return check


def schedule(low: float, *, above: bool) -> Check:
    """A finite number >= low (> low when ``above``), or ``lin_<such a number>``."""
    number = real(low, above=above)

    def check(key: str, value: Any) -> Any:
        start = _lin_start(key, value)
        if start is None:
            return number(key, value)
        number(key, start)
        return value
    return check


def names(key: str, value: Any) -> list:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key} must be a list of names, got {value!r}")
    return value


def anything(key: str, value: Any) -> Any:
    """Checked where it is used (against the env's observation layout, say)."""
    return value


def _std_check(key: str, value: Any) -> Any:
    _std_bound(key, value)
    return value


def _timesteps(key: str, value: Any) -> Any:
    try:
        number = float(value)  # the yml may say 2e6 (YAML reads that as a string)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number) or number < 1:
        raise ValueError(f"{key} must be a number of env steps >= 1, got {value!r}")
    return int(number)


def _net_arch(key: str, value: Any) -> Any:
    layers = whole(1, 1 << 16)
    if isinstance(value, dict):
        for part in value:
            if part not in ("pi", "vf", "qf"):
                raise ValueError(f"{key}: unknown part {part!r}; known: ['pi', 'qf', 'vf']")
        return {part: _net_arch(f"{key}.{part}", sizes) for part, sizes in value.items()}
    if not isinstance(value, list):
        raise ValueError(f"{key} must be a list of layer sizes or a mapping of them (pi, vf, "
                         f"qf), got {value!r}")
    return [layers(f"{key}[{i}]", n) for i, n in enumerate(value)]


POLICY_KEYS: dict[str, Check] = {
    "net_arch": _net_arch,
    "activation_fn": one_of(*ACTIVATIONS),
    "log_std_init": real(-20.0, 5.0),
    "ortho_init": flag, "squash_output": flag, "full_std": flag, "use_expln": flag,
    "share_features_extractor": flag, "normalize_images": flag,
    "clip_mean": real(0.0, above=True),
    "n_critics": whole(1, 64),
    "optimizer_kwargs": mapping({"eps": real(0.0, above=True), "fused": flag,
                                 "weight_decay": real(0.0), "amsgrad": flag,
                                 "betas": anything}),
}
"""What ``policy_kwargs`` may hold (SB3's MlpPolicy arguments), checked."""

VEC_NORMALIZE_KEYS: dict[str, Check] = {
    "norm_obs": flag, "norm_reward": flag, "clip_obs": real(0.0, above=True),
    "clip_reward": real(0.0, above=True), "gamma": real(0.0, 1.0, above=True),
    "epsilon": real(0.0, above=True), "norm_obs_keys": names}

_ENV_OWNED = ("num_envs", "n_envs", "seed", "num_threads", "autoreset_mode", "render_mode")


def _env_kwargs(key: str, value: Any) -> dict:
    mapping()(key, value)
    owned = sorted(set(value) & set(_ENV_OWNED))
    if owned:
        raise ValueError(f"{key} holds {owned}, which the run sets itself (n_envs, --seed, "
                         f"env_threads)")
    return value


RUN_KEYS: dict[str, Check] = {
    "n_envs": whole(1, 1 << 20),
    "n_timesteps": _timesteps,
    "policy": one_of("MlpPolicy", "MultiInputPolicy", "CnnPolicy"),
    "normalize": either(flag, mapping(VEC_NORMALIZE_KEYS)),
    "env_kwargs": _env_kwargs,
    "eval_freq": either(none, whole(1)),
    "env_threads": either(none, whole(1, 1 << 10)),
    "update_threads": either(none, whole(1, 1 << 10)),  # torch's, in updates and fits
    "warm_start": either(none, mapping()),  # its keys: warm_start.settings
    "hide_obs": either(none, names),
    "sort_obs": anything,  # its fields: push_envs.baselines.view.sort_rows, on the env
    "min_std": _std_check, "max_std": _std_check,
    "floor": either(none, real(0.0, 1.0, above=True)),  # train/time_to_floor.py
    "stop_at_success": either(none, real(0.0, 1.0, above=True)),  # its EvalLog
}
"""train/train.py's own keys (what the run is, not the algorithm's arguments)."""

_COMMON_ALGO: dict[str, Check] = {
    "learning_rate": schedule(0.0, above=True),
    "gamma": real(0.0, 1.0, above=True),
    "batch_size": whole(1, 1 << 24),
    "use_sde": flag,
    "sde_sample_freq": whole(-1),
    "stats_window_size": whole(1),
    "policy_kwargs": mapping(POLICY_KEYS),
}

PPO_KEYS: dict[str, Check] = {
    **_COMMON_ALGO,
    "n_steps": whole(1, 1 << 24),
    "n_epochs": whole(1, 10_000),
    "gae_lambda": real(0.0, 1.0),
    "clip_range": schedule(0.0, above=True),
    "clip_range_vf": either(none, schedule(0.0, above=True)),
    "normalize_advantage": flag,
    "ent_coef": schedule(0.0, above=False),
    "vf_coef": real(0.0),
    "max_grad_norm": real(0.0, above=True),
    "target_kl": either(none, real(0.0, above=True)),
}
"""SB3 PPO's arguments, with the ranges it trains in."""


def _sac_ent_coef(key: str, value: Any) -> Any:
    if isinstance(value, str) and value.startswith("lin_"):
        raise ValueError(f"{key}: lin_ decays PPO's entropy bonus; sac takes a number or "
                         f"'auto'")
    if isinstance(value, str) and value.startswith("auto"):
        if value == "auto":
            return value
        try:
            start = float(value[5:]) if value[4:5] == "_" else math.nan
        except ValueError:
            start = math.nan
        if math.isfinite(start) and start > 0:
            return value
        raise ValueError(f"{key} must be 'auto', 'auto_<initial value > 0>' or a number > 0, "
                         f"got {value!r}")
    return real(0.0, above=True)(key, value)


def _train_freq(key: str, value: Any) -> Any:
    if isinstance(value, list) and len(value) == 2:
        return [whole(1)(f"{key}[0]", value[0]),
                one_of("step", "episode")(f"{key}[1]", value[1])]
    return whole(1)(key, value)


SAC_KEYS: dict[str, Check] = {
    **_COMMON_ALGO,
    "buffer_size": whole(1, 1 << 31),
    "learning_starts": whole(0),
    "tau": real(0.0, 1.0, above=True),
    "train_freq": _train_freq,
    "gradient_steps": either(one_of(-1), whole(1)),
    "ent_coef": _sac_ent_coef,
    "target_update_interval": whole(1),
    "target_entropy": either(one_of("auto"), real()),
    "use_sde_at_warmup": flag,
    "optimize_memory_usage": flag,
    "replay_buffer_class": either(none, one_of("HerReplayBuffer")),
    "replay_buffer_kwargs": either(none, mapping({
        "n_sampled_goal": whole(1, 1000), "copy_info_dict": flag,
        "goal_selection_strategy": one_of("future", "final", "episode", "FUTURE", "FINAL",
                                          "EPISODE")})),
}
"""SB3 SAC's arguments, with the ranges it trains in."""

RESIDUAL_KEYS: dict[str, Check] = {
    "scale": real(0.0, above=True),
    "inputs": names,  # which ones: residual.settings
    "critic_warmup": real(0.0),
    "log_std_final": either(none, real(-20.0, 5.0)),
}
"""train/residual.py's own keys (its settings), over PPO's."""

SET_BY_THE_SCRIPT = {"seed": "--seed", "verbose": "--verbose", "device": "always cpu",
                     "tensorboard_log": "the run folder's tb/", "env": "--env"}


def _suggest(key: str, known: Any) -> str:
    close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def keys_of(algo: str) -> dict[str, Check]:
    """Every key a run of ``algo`` (``ppo``, ``sac`` or ``residual``) may set, checked."""
    if algo == "residual":
        return {**RUN_KEYS, **PPO_KEYS, **RESIDUAL_KEYS}
    return {**RUN_KEYS, **{"ppo": PPO_KEYS, "sac": SAC_KEYS}[algo]}


def check(hp: dict[str, Any], algo: str, where: str = "hyperparameters") -> None:
    """Refuse an unknown key (naming the key it likely meant) and a value out of its range
    or of the wrong type, each naming ``where`` and the key; also the pairs SB3 refuses
    (PPO's advantage normalisation needs rollouts and minibatches of 2 or more). Values are
    rewritten in place as SB3 takes them (numbers YAML read as strings become numbers)."""
    table = keys_of(algo)
    for key, value in hp.items():
        if key not in table:
            if key in SET_BY_THE_SCRIPT:
                raise ValueError(f"{where}: {key!r} is set by the run itself "
                                 f"({SET_BY_THE_SCRIPT[key]}), not a hyperparameter")
            raise ValueError(f"{where}: unknown hyperparameter {key!r}{_suggest(key, table)}; "
                             f"{algo} takes {sorted(table)}")
        try:
            hp[key] = table[key](key, value)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    if algo != "sac" and hp.get("normalize_advantage", True):
        n_steps, n_envs = hp.get("n_steps", 2048), hp.get("n_envs", 1)
        if n_steps * n_envs < 2 or hp.get("batch_size", 64) < 2:
            raise ValueError(f"{where}: PPO normalises advantages over a rollout and a "
                             f"minibatch: n_steps x n_envs ({n_steps} x {n_envs}) and "
                             f"batch_size ({hp.get('batch_size', 64)}) must be >= 2 (or set "
                             f"normalize_advantage: false)")
