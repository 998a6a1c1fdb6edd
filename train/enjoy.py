"""Watch a trained agent: a pygame window, or a GIF with ``--gif``.

    python -m train.enjoy --run runs/PushBox-v0/ppo/0
    python -m train.enjoy --run runs/PushBox-v0/ppo/0 --gif pushbox_ppo.gif --episodes 3

Loads ``args.json`` (env id, algorithm, env kwargs), the best model (or the final one, or
``--model final``) and the VecNormalize stats saved with it (in eval mode: frozen statistics,
no reward normalisation), then plays ``--episodes`` episodes on a one-env batch.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Literal

import numpy as np
import tyro
from PIL import Image
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env import VecNormalize

from push_envs.sb3 import make_vec_env

from .train import load_model
from .train import view_obs


@dataclass
class Args:
    run: str
    """run folder written by train.py (holds args.json and the models)"""
    episodes: int = 3
    """episodes to play"""
    gif: str | None = None
    """write a GIF here instead of opening a window"""
    deterministic: bool = False
    """use the mean action (default: sample, as during training)"""
    model: Literal["best", "final"] = "best"
    """which model (best falls back to final)"""
    seed: int = 12_345
    """seed of the played episodes"""


def parse_args(argv: list[str] | None = None) -> Args:
    return tyro.cli(Args, args=argv, description=__doc__.split("\n\n")[0])


def load_run(run: Path, which: str = "best", render_mode: str | None = None,
             seed: int = 0) -> tuple[Any, VecEnv, dict[str, Any]]:
    """(model, one-env VecEnv with the run's normalisation, saved args.json content)."""
    saved = json.loads((run / "args.json").read_text())
    args, hp = saved["args"], saved["hyperparams"]
    path = run / f"{which}_model.zip"
    stats = run / ("best_vecnormalize.pkl" if which == "best" else "vecnormalize.pkl")
    if not path.exists():
        path, stats = run / "final_model.zip", run / "vecnormalize.pkl"
    venv: VecEnv = make_vec_env(args["env"], n_envs=1, seed=seed, render_mode=render_mode,
                                num_threads=1, **(hp.get("env_kwargs") or {}))
    venv = view_obs(venv, hp)  # the policy sees the scene as in training: sorted, hidden
    if stats.exists():
        venv = VecNormalize.load(str(stats), venv)
        venv.training = False
        venv.norm_reward = False
    model = load_model(args["algo"], path)
    print(f"loaded {path} ({args['algo']} on {args['env']} {hp.get('env_kwargs') or ''})")
    return model, venv, saved


def _frame(venv: VecEnv) -> np.ndarray:
    return venv.get_images()[0]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    mode = "rgb_array" if args.gif else "human"
    model, venv, _ = load_run(Path(args.run), args.model, render_mode=mode, seed=args.seed)
    frames: list[np.ndarray] = []
    obs = venv.reset()
    if args.gif:
        frames.append(_frame(venv))
    done_episodes, ret, length = 0, 0.0, 0
    while done_episodes < args.episodes:
        action, _ = model.predict(obs, deterministic=args.deterministic)
        obs, rew, dones, infos = venv.step(action)
        ret += float(venv.get_original_reward()[0]) if isinstance(venv, VecNormalize) \
            else float(rew[0])
        length += 1
        if args.gif:
            frames.append(_frame(venv))  # after an episode end: the new episode's first frame
        if dones[0]:
            done_episodes += 1
            success = bool(infos[0].get("is_success", False))
            print(f"episode {done_episodes}: return {ret:.2f}, length {length}, "
                  f"success {success}")
            ret, length = 0.0, 0
    if args.gif:
        fps = venv.get_attr("metadata")[0].get("render_fps") or 10
        images = [Image.fromarray(np.asarray(f, dtype=np.uint8)) for f in frames]
        Path(args.gif).parent.mkdir(parents=True, exist_ok=True)
        images[0].save(args.gif, save_all=True, append_images=images[1:],
                       duration=int(1000 / fps), loop=0)
        print(f"wrote {args.gif} ({len(images)} frames at {fps} fps)")
    venv.close()


if __name__ == "__main__":
    main(sys.argv[1:])
