"""Demonstration datasets in Minari's format, recorded from the native batch.

    python -m push_envs.datasets record --env PushBox-v0 --policy scripted --episodes 1000 \\
        --out push_envs/PushBox-v0/scripted-v0
    python -m push_envs.datasets record --env WallSlide-v0 --episodes 500 \\
        --policy runs/WallSlide-v0/ppo/0/final_model.zip --out push_envs/WallSlide-v0/ppo-v0

Minari's own ``DataCollector`` wraps a single env; here one compiled batch of ``num_envs``
envs (DISABLED autoreset, finished rows restarted with ``reset_mask``) is stepped by a batch
policy and each finished episode is cut out of per-env buffers, then written with
``minari.create_dataset_from_buffers``. An episode holds T + 1 observations and infos (the
reset's and each step's: a reset's info has the same keys as a step's, as Minari requires)
and T actions, rewards, terminations and truncations.

Env i of the batch (seeded ``seed + i``) records ``episodes // num_envs`` episodes (one more
for the first ``episodes % num_envs`` envs) and then only idles, so every episode that is
started is kept (:func:`push_envs.rollout.rollout`, re-exported here).

Policies: ``scripted`` (:func:`push_envs.experts.expert`), or a Stable-Baselines3 model zip
from ``train/train.py`` with its VecNormalize statistics beside it (``vecnormalize.pkl`` for
``final_model.zip``, ``best_vecnormalize.pkl`` for ``best_model.zip``). Loading a model zip
or the statistics unpickles code from that folder: only load files you trust.

Datasets land in Minari's folder (``$MINARI_DATASETS_PATH``, default ``~/.minari/datasets``),
or under ``--root``. minari is imported only here (the ``[datasets]`` extra).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pickle
import sys
import time
import warnings
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

import push_envs  # noqa: F401  (registers the ids)

from .experts import expert
from .rollout import Episode
from .rollout import rollout
from .scripted import BatchPolicy


# ------------------------------------------------------------------------------- policies
def sb3_policy(path: str | Path, algo: str = "auto") -> BatchPolicy:
    """A deterministic batch policy from a Stable-Baselines3 model zip (PPO or SAC), with the
    VecNormalize observation statistics saved beside it when there are any."""
    from stable_baselines3 import PPO
    from stable_baselines3 import SAC

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--policy: no model file {path}")
    classes = {"ppo": PPO, "sac": SAC}
    if algo != "auto" and algo not in classes:
        raise ValueError(f"algo must be auto, ppo or sac, got {algo!r}")
    errors = []
    model = None
    for name in ([algo] if algo != "auto" else list(classes)):
        try:
            model = classes[name].load(str(path), device="cpu")
            break
        except (KeyError, ValueError, AssertionError, RuntimeError) as exc:
            errors.append(f"{name}: {exc}")
    if model is None:
        raise ValueError(f"--policy: {path} is not a PPO or SAC model zip ({'; '.join(errors)})")
    stem = "best_" if path.name.startswith("best") else ""
    stats = path.with_name(f"{stem}vecnormalize.pkl")
    normalize: Callable[[Any], Any] = lambda o: o  # noqa: E731
    if stats.is_file():
        with stats.open("rb") as f:
            vn = pickle.load(f)  # trusted run folder (see the module docs)
        vn.training = False
        normalize = vn.normalize_obs

    def act(obs: Any) -> np.ndarray:
        return model.predict(normalize(obs), deterministic=True)[0]

    return act


def load_policy(spec: str, env_id: str, robot: str, algo: str = "auto",
                env_kwargs: Mapping[str, Any] | None = None) -> BatchPolicy:
    """``scripted`` (the task's scripted expert, set for the task arguments ``env_kwargs``)
    or the path of an SB3 model zip."""
    if spec == "scripted":
        try:
            return expert(env_id, robot, env_kwargs)
        except KeyError as exc:
            raise ValueError(f"--policy scripted: {exc.args[0]}") from None
    return sb3_policy(spec, algo)


# ------------------------------------------------------------------------------- recording
def _env_spec(env_id: str, env_kwargs: Mapping[str, Any]) -> gym.envs.registration.EnvSpec:
    spec = gym.spec(env_id)
    return dataclasses.replace(spec, kwargs={**spec.kwargs, **env_kwargs})


def check_dataset_id(dataset_id: Any) -> str:
    """A Minari dataset id, ``(namespace/)name-v<version>``; anything else (an empty or
    malformed id, a path that leaves the datasets root) is refused with the reason."""
    from minari.dataset.minari_dataset import parse_dataset_id

    if not isinstance(dataset_id, str) or not dataset_id:
        raise ValueError(f"dataset_id must be a non-empty Minari dataset id such as "
                         f"'push_envs/PushBox-v0/scripted-v0', got {dataset_id!r}")
    parts = dataset_id.split("/")
    if any(p in ("", ".", "..") or p.startswith(".") for p in parts):
        raise ValueError(f"dataset_id {dataset_id!r}: every '/'-separated part must be a "
                         f"non-empty name not starting with '.' (the id is a folder under "
                         f"the datasets root)")
    try:
        parse_dataset_id(dataset_id)  # a TypeError too when the version is missing
    except (ValueError, TypeError):
        raise ValueError(f"dataset_id {dataset_id!r} is malformed: Minari ids have the form "
                         f"(namespace/)name-v<version>, e.g. "
                         f"'push_envs/PushBox-v0/scripted-v0'") from None
    return dataset_id


def _write_aside(dataset_id: str, write: Callable[[], None]) -> None:
    """Run ``write`` (which creates the Minari dataset ``dataset_id``) into a hidden folder of
    the datasets root, then swap the result in for any dataset of that id.

    Minari skips hidden folders when it lists datasets, and the folder is in the same root,
    so the swap is two renames on one file system. Whatever stops ``write`` (an exception,
    Ctrl-C) leaves the datasets root as it was.
    """
    import os
    import shutil
    import tempfile

    from minari.namespace import create_namespace
    from minari.namespace import list_local_namespaces
    from minari.storage import get_dataset_path

    root = Path(get_dataset_path())  # creates the root if needed
    final = root / dataset_id
    stage = Path(tempfile.mkdtemp(prefix=".push_envs-recording-", dir=root))
    backup = stage / "previous"
    moved_old = False
    saved = os.environ.get("MINARI_DATASETS_PATH")
    try:
        # Minari writes under $MINARI_DATASETS_PATH/<id> and records the id in the metadata,
        # so the staged copy is already what the final one must be.
        os.environ["MINARI_DATASETS_PATH"] = str(stage / "root")
        try:
            write()
        finally:
            if saved is None:
                os.environ.pop("MINARI_DATASETS_PATH", None)
            else:
                os.environ["MINARI_DATASETS_PATH"] = saved
        namespace = dataset_id.rpartition("/")[0]
        if namespace and namespace not in list_local_namespaces():
            create_namespace(namespace)
        final.parent.mkdir(parents=True, exist_ok=True)
        if final.exists():
            os.replace(final, backup)
            moved_old = True
        os.replace(stage / "root" / dataset_id, final)
        moved_old = False  # the new dataset is in place: the old one may go
    finally:
        if moved_old and not final.exists():
            os.replace(backup, final)  # interrupted between the two renames
        shutil.rmtree(stage, ignore_errors=True)


def record(env_id: str, policy: str | BatchPolicy, episodes: int, dataset_id: str, *,
           num_envs: int = 64, seed: int = 0, env_kwargs: Mapping[str, Any] | None = None,
           algo: str = "auto", only_success: bool = False, overwrite: bool = False,
           data_format: str | None = None, author: str | None = None,
           description: str | None = None) -> Any:
    """Record ``episodes`` episodes of ``policy`` on ``env_id`` into the Minari dataset
    ``dataset_id`` and return it (a ``minari.MinariDataset``).

    ``policy`` is ``"scripted"``, a model zip path, or a batch policy (obs batch -> actions).
    ``only_success`` keeps successful episodes only and runs until ``episodes`` of them are in
    (at most 20 x ``episodes`` tried); it stops at the first ``episodes`` wins, so unlike the
    default it leans toward the quicker wins. ``overwrite`` replaces an existing local dataset
    of that id, but only once the new one is complete: the new dataset is written aside (a
    hidden folder in the datasets root) and swapped in at the end, so a recording that fails
    or is interrupted (the policy raises, Ctrl-C, too few successes) leaves the old dataset
    as it was, or no dataset at all under ``dataset_id``.
    """
    import minari
    from minari.data_collector.episode_buffer import EpisodeBuffer

    check_dataset_id(dataset_id)
    env_kwargs = dict(env_kwargs or {})
    exists = dataset_id in minari.list_local_datasets()
    if exists and not overwrite:
        raise ValueError(f"--out: a Minari dataset {dataset_id!r} already exists; pass "
                         f"--overwrite (overwrite=True) to replace it")
    from minari.storage import get_dataset_path

    if not exists and Path(get_dataset_path(dataset_id)).exists():
        # e.g. a namespace folder holding other datasets: never replaced by a recording.
        raise ValueError(f"--out: {get_dataset_path(dataset_id)} exists and is not a Minari "
                         f"dataset; choose another dataset_id")
    venv = gym.make_vec(env_id, num_envs=num_envs, autoreset_mode=AutoresetMode.DISABLED,
                        num_threads=1, **env_kwargs)
    buffers = []
    tried = 0
    n_success = 0
    budget = episodes * (20 if only_success else 1)
    try:
        name = policy if isinstance(policy, str) else getattr(policy, "__name__", "custom")
        act = (load_policy(policy, env_id, venv.robot, algo, env_kwargs)
               if isinstance(policy, str) else policy)
        start = time.perf_counter()
        for ep in rollout(venv, act, budget, seed):
            tried += 1
            if only_success and not ep.success:
                continue
            n_success += ep.success
            buffers.append(EpisodeBuffer(id=len(buffers), observations=ep.observations,
                                         actions=ep.actions, rewards=ep.rewards,
                                         terminations=ep.terminations,
                                         truncations=ep.truncations, infos=ep.infos))
            if len(buffers) == episodes:
                break
    finally:
        venv.close()
    if len(buffers) < episodes:
        raise RuntimeError(f"only {len(buffers)} of {tried} episodes succeeded; wanted "
                           f"{episodes} successful ones")
    collect_s = time.perf_counter() - start
    text = description or (
        f"{len(buffers)} episodes of {env_id} ({json.dumps(env_kwargs)}) by the {name} policy"
        f"{' (successful episodes only, of ' + str(tried) + ' tried)' if only_success else ''}"
        f", recorded from a native batch of {num_envs} envs seeded {seed} (env i: {seed} + i)"
        f" with push_envs.datasets; success rate {n_success / len(buffers):.3f}.")
    spec = _env_spec(env_id, env_kwargs)

    def write() -> None:
        with warnings.catch_warnings():
            # Minari asks for a contact address; a locally recorded dataset has none.
            warnings.filterwarnings("ignore", message="`author_email` is set to None")
            minari.create_dataset_from_buffers(
                dataset_id=dataset_id, buffer=buffers, env=spec, eval_env=spec,
                algorithm_name=f"push_envs {name}", author=author or "push_envs",
                code_permalink="push_envs/datasets.py", description=text,
                requirements=["push_envs"], data_format=data_format)

    _write_aside(dataset_id, write)
    dataset = minari.load_dataset(dataset_id)
    dataset.push_envs_stats = {"episodes": len(buffers), "tried": tried,
                               "success_rate": n_success / len(buffers),
                               "collect_s": collect_s}
    return dataset


# ------------------------------------------------------------------------------------ CLI
def parse_kwargs(items: list[str]) -> dict[str, Any]:
    """``["robot=omni", "max_episode_steps=100"]`` -> task arguments (values parsed as YAML)."""
    import yaml

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--env-kwargs: expected key=value, got {item!r}")
        out[key] = yaml.safe_load(value)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m push_envs.datasets",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record a Minari dataset from the native batch")
    rec.add_argument("--env", required=True, choices=list(push_envs.ENV_IDS))
    rec.add_argument("--policy", required=True,
                     help="'scripted' or the path of an SB3 model zip (PPO / SAC)")
    rec.add_argument("--episodes", type=int, required=True)
    rec.add_argument("--out", required=True, help="Minari dataset id, e.g. "
                     "push_envs/PushBox-v0/scripted-v0")
    rec.add_argument("--num-envs", type=int, default=64, help="envs in the batch")
    rec.add_argument("--seed", type=int, default=0, help="env i is seeded seed + i")
    rec.add_argument("--env-kwargs", nargs="*", default=[], metavar="KEY=VALUE",
                     help="task arguments, values parsed as YAML (e.g. robot=omni)")
    rec.add_argument("--algo", default="auto", choices=["auto", "ppo", "sac"])
    rec.add_argument("--only-success", action="store_true",
                     help="keep successful episodes only")
    rec.add_argument("--data-format", default=None, choices=["hdf5", "arrow"],
                     help="Minari storage (default: Minari's, hdf5)")
    rec.add_argument("--root", default=None, help="datasets folder (default: Minari's)")
    rec.add_argument("--overwrite", action="store_true", help="replace an existing dataset")
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error(f"--episodes must be >= 1, got {args.episodes}")
    if args.num_envs < 1:
        parser.error(f"--num-envs must be >= 1, got {args.num_envs}")
    if args.root is not None:
        import os

        os.environ["MINARI_DATASETS_PATH"] = str(Path(args.root).resolve())
    start = time.perf_counter()
    ds = record(args.env, args.policy, args.episodes, args.out, num_envs=args.num_envs,
                seed=args.seed, env_kwargs=parse_kwargs(args.env_kwargs), algo=args.algo,
                only_success=args.only_success, overwrite=args.overwrite,
                data_format=args.data_format)
    stats = ds.push_envs_stats
    print(f"{args.out}: {ds.total_episodes} episodes, {ds.total_steps} steps, success rate "
          f"{stats['success_rate']:.3f} ({stats['tried']} tried); collected in "
          f"{stats['collect_s']:.1f} s, {time.perf_counter() - start:.1f} s in all -> "
          f"{ds.storage.data_path}")
    return 0


__all__ = ["Episode", "check_dataset_id", "load_policy", "main", "parse_kwargs", "record",
           "rollout", "sb3_policy"]


if __name__ == "__main__":
    sys.exit(main())
