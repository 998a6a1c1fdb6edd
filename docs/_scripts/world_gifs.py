"""Render each example world of ``configs/`` to a GIF, drawn by push_envs' own renderer, for
the "Coming from IR-SIM" page.

    python docs/_scripts/world_gifs.py                 # every world -> docs/_static/worlds/
    python docs/_scripts/world_gifs.py crowd_rvo --steps 200

Each world is loaded with ``World.from_config`` and advanced with ``World.step()`` (every
object on its behaviour, as IR-SIM's ``env.step()``); every third step is a frame.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from push_envs.core.render import Renderer  # noqa: E402
from push_envs.physics import World  # noqa: E402
from push_envs.worlds.env import world_goals  # noqa: E402

OUT = ROOT / "docs" / "_static" / "worlds"


def render(name: str, steps: int, every: int, width: int) -> Path:
    """Write ``OUT/<name>.gif`` of the first ``steps`` steps of ``configs/<name>.yaml``."""
    from PIL import Image

    world = World.from_config(ROOT / "configs" / f"{name}.yaml")
    r = Renderer(world, "rgb_array", width_px=width)
    frames = [Image.fromarray(r.render(0, goals=world_goals(world)))]
    for k in range(1, steps + 1):
        world.step()
        if k % every == 0:
            frames.append(Image.fromarray(r.render(0, goals=world_goals(world))))
    r.close()
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.gif"
    pal = [f.convert("P", palette=Image.Palette.ADAPTIVE, colors=64) for f in frames]
    pal[0].save(path, save_all=True, append_images=pal[1:], optimize=True,
                duration=int(1000 * world.dt * every), loop=0)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("worlds", nargs="*", help="names in configs/ (default: all)")
    ap.add_argument("--steps", type=int, default=240)
    ap.add_argument("--every", type=int, default=3)
    ap.add_argument("--width", type=int, default=320)
    a = ap.parse_args()
    names = a.worlds or sorted(p.stem for p in (ROOT / "configs").glob("*.yaml"))
    for name in names:
        path = render(name, a.steps, a.every, a.width)
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main()
