"""Render the first frame of each headline task to docs/<id>.png, and scripted GIFs.

    python docs/make_figures.py [--out docs] [--seed 0] [ids ...]
    python docs/make_figures.py --gif CoopPush-v0 PushMaze-v0   # also docs/<id>.gif

Each env is reset with the seed and drawn in ``rgb_array`` mode (no window, works headless);
the frame is saved with pygame, so no image library beyond the core dependencies is needed.
``--gif`` also records an episode of the task's scripted policy (push_envs.scripted) as a GIF
(Pillow, from the ``[train]`` extra); for PushMaze-v0 the GIF is cropped to the episode's
layout.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ENV_IDS = ("PushBox-v0", "WallSlide-v0", "PushT-v0", "CoopPush-v0", "PushMaze-v0")
SCRIPTED = {"PushBox-v0": "push_box_action", "CoopPush-v0": "coop_push_action",
            "PushMaze-v0": "push_maze_action"}


def save_png(frame: np.ndarray, path: str | os.PathLike) -> None:
    """Save an (H, W, 3) uint8 frame as a PNG (pygame surfaces are indexed (x, y))."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    frame = np.asarray(frame, dtype=np.uint8)
    if frame.ndim != 3 or frame.shape[2] != 3:
        raise ValueError(f"save_png: expected an (H, W, 3) frame, got shape {frame.shape}")
    surf = pygame.surfarray.make_surface(np.ascontiguousarray(frame.transpose(1, 0, 2)))
    pygame.image.save(surf, os.fspath(path))


def save_gif(env_id: str, seed: int, path: Path, every: int = 2, fps: int = 10) -> None:
    """One scripted episode of ``env_id`` as a GIF (every ``every``-th frame)."""
    import gymnasium as gym
    from PIL import Image

    from push_envs import scripted

    policy = getattr(scripted, SCRIPTED[env_id])
    env = gym.make(env_id, render_mode="rgb_array")
    obs, info = env.reset(seed=seed)
    crop = None
    if "layout" in info:  # PushMaze: the episode's 4 m x 4 m layout, enlarged
        core = env.unwrapped.core
        env.render()
        t = int(info["layout"])
        x0, y0 = 4.0 * (t % 4), 4.0 * (t // 4)
        a, b = core._renderer.world_to_px([[x0, y0 + 4.0], [x0 + 4.0, y0]])
        crop = (int(a[0]), int(a[1]), int(b[0]), int(b[1]))
    frames = []
    for step in range(env.spec.max_episode_steps):
        if step % every == 0:
            frames.append(env.render())
        obs, _, term, trunc, info = env.step(policy(obs))
        if term or trunc:
            break
    frames.append(env.render())
    env.close()
    images = [Image.fromarray(f) for f in frames]
    if crop is not None:
        images = [im.crop(crop).resize((2 * (crop[2] - crop[0]), 2 * (crop[3] - crop[1])),
                                       Image.NEAREST) for im in images]
    images = [im.quantize(colors=64) for im in images]
    images[0].save(path, save_all=True, append_images=images[1:], duration=1000 * every // fps,
                   loop=0, optimize=True)
    print(f"{env_id}: scripted episode, success {info['is_success']}, {len(images)} frames "
          f"-> {path}")


def main(argv: Sequence[str] | None = None) -> None:
    """Write one PNG per id in ENV_IDS."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent,
                        help="output folder (default: this docs folder)")
    parser.add_argument("--seed", type=int, default=0, help="reset seed")
    parser.add_argument("--gif", action="store_true",
                        help="also write <id>.gif of a scripted episode (ids in SCRIPTED)")
    parser.add_argument("--gif-seed", type=int, default=1, help="reset seed of the GIF episode")
    parser.add_argument("ids", nargs="*", default=list(ENV_IDS), help="env ids to draw")
    args = parser.parse_args(argv)
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

    import gymnasium as gym

    import push_envs  # noqa: F401 - registers the task ids

    args.out.mkdir(parents=True, exist_ok=True)
    for env_id in args.ids:
        env = gym.make(env_id, render_mode="rgb_array")
        try:
            env.reset(seed=args.seed)
            frame = env.render()
        finally:
            env.close()
        path = args.out / f"{env_id}.png"
        save_png(frame, path)
        print(f"{env_id}: {frame.shape[1]}x{frame.shape[0]} -> {path}")
        if args.gif and env_id in SCRIPTED:
            save_gif(env_id, args.gif_seed, args.out / f"{env_id}.gif")


if __name__ == "__main__":
    main()
