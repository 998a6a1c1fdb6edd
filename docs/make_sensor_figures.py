"""Pictures of the sensors for the README: a lidar scan and a grid of pixel observations.

    python docs/make_sensor_figures.py [--out docs]

* ``lidar_scan.png``: PushBox-v0 with a 64-beam lidar (``lidar=dict(number=64,
  range_max=3.0, angle_range=2 pi)``), drawn by ``render()`` (beams in red, returns as dots).
* ``pixel_grid.png``: 4 x 4 pixel observations (``obs_mode="pixels"``, 96 x 96), two envs of
  each registered task in registry order (row by row), after 20 random steps, each pixel
  shown as 2 x 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_figures import save_png  # noqa: E402


def main() -> None:
    import gymnasium as gym

    import push_envs  # noqa: F401

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = ap.parse_args()
    env = gym.make("PushBox-v0", render_mode="rgb_array",
                   lidar={"number": 64, "range_max": 3.0, "angle_range": 2 * np.pi})
    env.reset(seed=4)
    for _ in range(5):
        env.step(np.array([0.6, 0.2], np.float32))
    save_png(env.render(), args.out / "lidar_scan.png")
    tiles = []
    rng = np.random.default_rng(0)
    for env_id in push_envs.ENV_IDS[:8]:
        venv = gym.make_vec(env_id, num_envs=2, obs_mode="pixels")
        obs, _ = venv.reset(seed=1)
        for _ in range(20):
            obs, *_ = venv.step(rng.uniform(-1, 1, venv.action_space.shape))
        tiles.extend(obs)
        venv.close()
    gap = 4
    h, w = tiles[0].shape[:2]
    grid = np.full((4 * (h + gap) + gap, 4 * (w + gap) + gap, 3), 255, np.uint8)
    for k, t in enumerate(tiles[:16]):
        r, c = divmod(k, 4)
        grid[gap + r * (h + gap):gap + r * (h + gap) + h,
             gap + c * (w + gap):gap + c * (w + gap) + w] = t
    save_png(np.kron(grid, np.ones((2, 2, 1), np.uint8)), args.out / "pixel_grid.png")


if __name__ == "__main__":
    main()
