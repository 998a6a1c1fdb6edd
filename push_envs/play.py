"""Keyboard teleoperation of a push_envs task.

    python -m push_envs.play PushBox-v0 [--robot diff] [--seed 0]

Arrow keys drive: up/down set the first action component to +1/-1 (forward speed), left/right
the second to +1/-1 (turn left/right for diff drive, sideways for omni). R resets, Esc or
closing the window quits. The HUD shows the last reward, the episode's return, is_success and
the robot's contact count.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np

from push_envs.physics.layout import DRIVEN

KEYS = ("up", "down", "left", "right")


def keys_to_action(pressed: Mapping[str, bool]) -> np.ndarray:
    """Map held arrow keys to an action in [-1, 1]^2.

    Args:
        pressed: ``{"up": bool, "down": bool, "left": bool, "right": bool}``; missing keys
            count as released.

    Returns:
        float32 array (2,): ``[up - down, left - right]``, so opposite keys cancel and left
        is positive (a counter-clockwise turn, as the y axis points up).
    """
    def held(k: str) -> float:
        return 1.0 if pressed.get(k, False) else 0.0

    return np.array([held("up") - held("down"), held("left") - held("right")], np.float32)


def _pressed_arrows(pygame: Any) -> dict[str, bool]:
    state = pygame.key.get_pressed()
    return {"up": bool(state[pygame.K_UP]), "down": bool(state[pygame.K_DOWN]),
            "left": bool(state[pygame.K_LEFT]), "right": bool(state[pygame.K_RIGHT])}


def _contact_count(env: Any, info: Mapping[str, Any]) -> int | None:
    """The robot's contact count: from ``info`` if the task reports it, else its World.

    The robot is the env's ``robot_name`` if that names a body, else the first driven body
    (env 0 of the World, the one the renderer shows).
    """
    for key in ("contact_count", "num_contacts"):
        if key in info:
            return int(np.asarray(info[key]).reshape(-1)[0])
    world = getattr(env, "world", None)
    if world is None:
        return None
    name = getattr(env, "robot_name", None)
    if name not in world.names:
        driven = [n for i, n in enumerate(world.names) if world.scene.bint[i, 0] == DRIVEN]
        if not driven:
            return None
        name = driven[0]
    return len(world.contacts(name, 0))


def _hud(reward: float, ret: float, info: Mapping[str, Any], contacts: int | None,
         steps: int) -> list[str]:
    success = info.get("is_success", None)
    return [
        f"reward {reward:+.3f}   return {ret:+.2f}   step {steps}",
        f"is_success {bool(success) if success is not None else '-'}   "
        f"contacts {contacts if contacts is not None else '-'}",
        "arrows drive, R reset, Esc quit",
    ]


def main(argv: Sequence[str] | None = None) -> None:
    """Run the teleop loop until Esc or the window is closed."""
    parser = argparse.ArgumentParser(prog="python -m push_envs.play",
                                     description="Drive a push_envs task with the arrow keys.")
    parser.add_argument("env_id", help="registered id, e.g. PushBox-v0")
    parser.add_argument("--robot", default=None,
                        help="robot drive passed to gym.make (e.g. diff, omni, acker)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first reset")
    args = parser.parse_args(argv)

    import gymnasium as gym
    import pygame

    import push_envs  # noqa: F401 - registers the task ids

    kwargs: dict[str, Any] = {"render_mode": "human"}
    if args.robot is not None:
        kwargs["robot"] = args.robot
    env = gym.make(args.env_id, **kwargs)
    base = env.unwrapped
    low = np.asarray(env.action_space.low, np.float32)
    high = np.asarray(env.action_space.high, np.float32)

    _obs, info = env.reset(seed=args.seed)
    ret, reward, steps = 0.0, 0.0, 0
    base.hud = _hud(reward, ret, info, _contact_count(base, info), steps)
    env.render()  # opens the window, so that key events have somewhere to arrive
    running = True
    try:
        while running:
            reset = False
            for event in pygame.event.get():
                if event.type == pygame.QUIT:
                    running = False
                elif event.type == pygame.KEYDOWN:
                    if event.key == pygame.K_ESCAPE:
                        running = False
                    elif event.key == pygame.K_r:
                        reset = True
            if not running:
                break
            if reset:
                _obs, info = env.reset()
                ret, reward, steps = 0.0, 0.0, 0
            else:
                action = np.clip(keys_to_action(_pressed_arrows(pygame)), low, high)
                _obs, reward, terminated, truncated, info = env.step(action)
                reward = float(reward)
                ret += reward
                steps += 1
                if terminated or truncated:
                    print(f"episode end after {steps} steps: return {ret:+.2f}, "
                          f"is_success {info.get('is_success')}")
                    _obs, info = env.reset()
                    ret, steps = 0.0, 0
            base.hud = _hud(reward, ret, info, _contact_count(base, info), steps)
            env.render()  # human mode keeps the env's fps, which paces this loop
    finally:
        env.close()


if __name__ == "__main__":
    main()
