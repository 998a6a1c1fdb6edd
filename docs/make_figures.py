"""Render the first frame of each headline task to docs/<id>.png.

    python docs/make_figures.py [--out docs] [--seed 0]

Each env is reset with the seed and drawn in ``rgb_array`` mode (no window, works headless);
the frame is saved with pygame, so no image library beyond the core dependencies is needed.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ENV_IDS = ("PushBox-v0", "WallSlide-v0", "PushT-v0")


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


def main(argv: Sequence[str] | None = None) -> None:
    """Write one PNG per id in ENV_IDS."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent,
                        help="output folder (default: this docs folder)")
    parser.add_argument("--seed", type=int, default=0, help="reset seed")
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


if __name__ == "__main__":
    main()
