"""Pictures of the sensors page: a lidar scan and grids of pixel observations.

    python docs/_scripts/make_sensor_figures.py [--figures lidar grid ego] [--out DIR]

* ``lidar_scan.png``: PushBox-v0 with a 64-beam lidar (``lidar=dict(number=64,
  range_max=3.0, angle_range=2 pi)``), drawn by ``render()`` (beams in red, returns as dots).
* ``pixel_grid.png``: 4 x 4 pixel observations (``obs_mode="pixels"``, 96 x 96), two envs of
  each registered task in registry order (row by row), after 20 random steps, each pixel
  shown as 2 x 2.
* ``pixel_ego.png``: the ego view (``pixel_view="ego"``, 3 m wide, 96 x 96) beside the
  top-down one, for one env of PushBox-v0, PushT-v0 and PushMaze-v1 after 20 random steps
  (columns: top-down, ego, in pairs), each pixel shown as 2 x 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_figures import save_png  # noqa: E402


def _tile(tiles: list[np.ndarray], cols: int, gap: int = 4) -> np.ndarray:
    """Equal-sized images on a white grid, row by row, each pixel shown as 2 x 2."""
    rows = -(-len(tiles) // cols)
    h, w = tiles[0].shape[:2]
    grid = np.full((rows * (h + gap) + gap, cols * (w + gap) + gap, 3), 255, np.uint8)
    for k, t in enumerate(tiles):
        r, c = divmod(k, cols)
        grid[gap + r * (h + gap):gap + r * (h + gap) + h,
             gap + c * (w + gap):gap + c * (w + gap) + w] = t
    return np.kron(grid, np.ones((2, 2, 1), np.uint8))


def main() -> None:
    import push_envs  # noqa: F401 (registers the tasks)

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).resolve().parent.parent / "_static" / "sensors")
    ap.add_argument("--figures", nargs="+", choices=("lidar", "grid", "ego"),
                    default=["lidar", "grid", "ego"], help="which pictures to make")
    args = ap.parse_args()
    if "lidar" in args.figures:
        _lidar(args.out)
    if "grid" in args.figures:
        _grid(args.out)
    if "ego" in args.figures:
        _ego(args.out)


def _lidar(out: Path) -> None:
    import gymnasium as gym

    env = gym.make("PushBox-v0", render_mode="rgb_array",
                   lidar={"number": 64, "range_max": 3.0, "angle_range": 2 * np.pi})
    env.reset(seed=4)
    for _ in range(5):
        env.step(np.array([0.6, 0.2], np.float32))
    save_png(env.render(), out / "lidar_scan.png")


def _grid(out: Path) -> None:
    import gymnasium as gym

    import push_envs

    tiles = []
    rng = np.random.default_rng(0)
    for env_id in push_envs.ENV_IDS[:8]:
        venv = gym.make_vec(env_id, num_envs=2, obs_mode="pixels")
        obs, _ = venv.reset(seed=1)
        for _ in range(20):
            obs, *_ = venv.step(rng.uniform(-1, 1, venv.action_space.shape))
        tiles.extend(obs)
        venv.close()
    save_png(_tile(tiles[:16], 4), out / "pixel_grid.png")


def _ego(out: Path) -> None:
    import gymnasium as gym

    tiles = []
    for env_id in ("PushBox-v0", "PushT-v0", "PushMaze-v1"):
        pair = [gym.make_vec(env_id, num_envs=1, obs_mode="pixels", **kw)
                for kw in ({}, {"pixel_view": "ego", "pixel_fov": 3.0})]
        obs = [v.reset(seed=2)[0] for v in pair]
        rng = np.random.default_rng(1)
        for _ in range(20):
            a = rng.uniform(-1, 1, pair[0].action_space.shape)
            obs = [v.step(a)[0] for v in pair]
        tiles.extend(o[0] for o in obs)
    save_png(_tile(tiles, 6), out / "pixel_ego.png")


if __name__ == "__main__":
    main()
