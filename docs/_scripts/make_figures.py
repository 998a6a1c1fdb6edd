"""Render the first frame of every registered task to docs/_static/tasks/<id>.png.

    python docs/_scripts/make_figures.py [--out docs/_static/tasks] [--seed 0] [ids ...]
    python docs/_scripts/make_figures.py --gif CoopPush-v0 PushMaze-v1

The ids default to the registry's (``push_envs.ENV_IDS``). Each env is reset with the seed
and drawn in ``rgb_array`` mode (no window, works headless); the frame is saved with pygame,
so no image library beyond the core dependencies is needed. ``--gif`` also writes
docs/_static/tasks/<id>-scripted.gif for a task with a scripted expert: one episode of it
(:func:`push_envs.experts.expert`, its first robot), with the step and the task's first info
field (its headline measure, e.g. ``box_to_goal``) in the corner (needs Pillow, which the
``[train]`` extra brings with matplotlib). A task whose reset reports a ``layout`` (PushMaze-v1)
has its GIF cropped to the episode's layout, enlarged.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # push_envs from this checkout


def task_ids() -> list[str]:
    """The ids to draw by default: the registry's, in its order."""
    import push_envs

    return list(push_envs.ENV_IDS)


def headline(env_id: str) -> str | None:
    """The info key shown in a scripted GIF's corner: the task's first info field."""
    from push_envs.tasks import spec

    fields = spec(env_id).info_fields
    return fields[0][0] if fields else None


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


def save_gif(env_id: str, path: str | os.PathLike, seed: int, max_steps: int = 500,
             every: int = 4) -> tuple[int, bool]:
    """One episode of ``env_id``'s scripted policy as a GIF (every ``every``-th step);
    returns (steps, success)."""
    import gymnasium as gym
    from PIL import Image

    from push_envs.experts import expert
    from push_envs.tasks import spec

    key = headline(env_id)
    robot = next(iter(spec(env_id).experts))
    batch = expert(env_id, robot)

    def policy(obs: np.ndarray) -> np.ndarray:
        return batch(obs[None])[0]

    env = gym.make(env_id, render_mode="rgb_array", robot=robot)
    frames = []
    crop = None
    try:
        obs, info = env.reset(seed=seed)
        if "layout" in info:  # PushMaze: the episode's 4 m x 4 m layout of the floor plan
            env.render()
            k = int(info["layout"])
            x0, y0 = 4.0 * (k % 4), 4.0 * (k // 4)
            a, b = env.unwrapped.core._renderer.world_to_px([[x0, y0 + 4.0], [x0 + 4.0, y0]])
            crop = (int(a[0]), int(a[1]), int(b[0]), int(b[1]))
        for t in range(max_steps):
            if t % every == 0:
                env.unwrapped.hud = [f"{env_id} scripted  step {t}",
                                     f"{key}: {info.get(key, 0):.3g}" if key else ""]
                frames.append(Image.fromarray(env.render()))
            obs, _, term, trunc, info = env.step(policy(obs))
            if term or trunc:
                break
        env.unwrapped.hud = [f"{env_id} scripted  step {t + 1}",
                             f"success: {bool(info['is_success'])}"]
        frames.extend([Image.fromarray(env.render())] * 8)  # hold the last frame
    finally:
        env.close()
    if crop is not None:
        size = (2 * (crop[2] - crop[0]), 2 * (crop[3] - crop[1]))
        frames = [im.crop(crop).resize(size, Image.NEAREST) for im in frames]
    frames[0].save(os.fspath(path), save_all=True, append_images=frames[1:],
                   duration=1000 // 10 * every, loop=0, optimize=True)
    return t + 1, bool(info["is_success"])


def main(argv: Sequence[str] | None = None) -> None:
    """Write one PNG per id (default: every registered task), and the GIFs with --gif."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parent.parent / "_static" / "tasks",
                        help="output folder (default: docs/_static/tasks)")
    parser.add_argument("--seed", type=int, default=0, help="reset seed")
    parser.add_argument("--gif", action="store_true",
                        help="also write <id>-scripted.gif with the scripted policy")
    parser.add_argument("ids", nargs="*", help="env ids to draw (default: every registered task)")
    args = parser.parse_args(argv)
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

    import gymnasium as gym

    from push_envs.tasks import spec

    args.out.mkdir(parents=True, exist_ok=True)
    for env_id in args.ids or task_ids():
        env = gym.make(env_id, render_mode="rgb_array")
        try:
            env.reset(seed=args.seed)
            frame = env.render()
        finally:
            env.close()
        path = args.out / f"{env_id}.png"
        save_png(frame, path)
        print(f"{env_id}: {frame.shape[1]}x{frame.shape[0]} -> {path}")
        if args.gif and spec(env_id).experts:
            gif = args.out / f"{env_id}-scripted.gif"
            steps, ok = save_gif(env_id, gif, args.seed)
            print(f"{env_id}: {steps} steps, success {ok} -> {gif}")


if __name__ == "__main__":
    main()
