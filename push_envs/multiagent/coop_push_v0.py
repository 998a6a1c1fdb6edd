"""CoopPush-v0 as a PettingZoo ``ParallelEnv``: one agent per robot, one shared reward.

Agent ``robot_k`` acts with robot k's 2 command numbers (as the Gymnasium env's action
columns 2k, 2k + 1) and observes the shared block of the joint observation (box, goal, box
contacts) and robot k's own block: its pose and velocity, the box, the goal and the other
robot seen from it, its push spot, and its own contact slots. ``state()`` is the whole joint
observation, for a centralised critic. Both agents get the team's reward and end together:
the task terminates on success and truncates after ``max_episode_steps``.

With ``lidar=dict(number=N, ...)`` every robot carries that lidar2d, and each agent observes
its own robot's N readings (ranges / range_max, in [0, 1], beam order) after its columns:
``robot_0``'s are the joint observation's lidar block (the Gymnasium env observes the first
robot's sensor), ``robot_1``'s are scanned from r1's sensor after every reset and step (its
noise, if the lidar has any, is drawn from the world's lidar stream, seeded at
``reset(seed=s)`` with ``s + 2**63`` modulo 2**64 so it is not env 0's stream). ``state()``
is then the joint observation followed by robot_1's N readings, so the critic sees every
column an agent sees.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

try:
    from pettingzoo import ParallelEnv
    from pettingzoo.utils.conversions import parallel_to_aec
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError("push_envs.multiagent needs PettingZoo: pip install "
                      "'push_envs[multiagent]'") from exc

from ..core.env import check_action_dtype, check_seed
from ..physics.errors import short_repr
from ..tasks.pushing.coop_push import CoopPush, CoopPushEnv, agent_columns

AGENTS = ("robot_0", "robot_1")
ROBOTS = ("r0", "r1")  # the scene bodies of the agents, in action order
LIDAR_SEED_OFFSET = 2**63  # r1's lidar noise stream: reset seed + this (mod 2**64)


class CoopPushParallelEnv(ParallelEnv):
    """Two robots, one box too heavy for either alone; see ``CoopPushEnv`` for the task.

    Arguments are those of ``gym.make("CoopPush-v0", ...)`` except ``obs_mode``, which is
    always ``"state"`` here (each agent's slice of the state observation).
    """

    metadata = {"name": "coop_push_v0", "render_modes": ["human", "rgb_array"],
                "render_fps": 10, "is_parallelizable": True}

    def __init__(self, *, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        if kwargs.get("obs_mode", "state") != "state":
            raise ValueError(f"obs_mode must be 'state' for the PettingZoo env (each agent sees "
                             f"its slice of the state observation), got "
                             f"{short_repr(kwargs['obs_mode'])}")
        steps = CoopPush.max_episode_steps if max_episode_steps is None else max_episode_steps
        self.env = CoopPushEnv(max_episode_steps=steps, **kwargs)
        self.render_mode = self.env.render_mode
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        core = self.env.core
        self._cols = {a: agent_columns(core.task.args, k) for k, a in enumerate(AGENTS)}
        joint = self.env.observation_space
        low, high = joint.low, joint.high
        # The joint observation's lidar block is robot_0's (the core observes the first
        # robot's sensor); robot_1's own readings are scanned here and appended.
        lidar = [(at, f.size) for f, at in _field_starts(core.observation_layout, core)
                 if f.name == "lidar"]
        self._lidar_r1: tuple[str, float] | None = None
        if lidar:
            at, n = lidar[0]
            block = np.arange(at, at + n)
            self._cols["robot_0"] = np.concatenate([self._cols["robot_0"], block])
            self._cols["robot_1"] = np.concatenate([self._cols["robot_1"],
                                                    np.arange(len(low), len(low) + n)])
            low, high = np.concatenate([low, low[block]]), np.concatenate([high, high[block]])
            self._lidar_r1 = (ROBOTS[1], float(self.env.world.lidar_spec(ROBOTS[1]).range_max))
        self.state_space = spaces.Box(low, high, dtype=np.float32)
        self._obs_spaces = {a: spaces.Box(low[c], high[c], dtype=np.float32)
                            for a, c in self._cols.items()}
        self._act_spaces = {a: spaces.Box(-1.0, 1.0, (2,), np.float32) for a in AGENTS}
        self._state = np.zeros(self.state_space.shape, np.float32)
        self._lidar_seeded = False

    # PettingZoo requires the same space object on every call.
    def observation_space(self, agent: str) -> spaces.Box:
        return self._obs_spaces[agent]

    def action_space(self, agent: str) -> spaces.Box:
        return self._act_spaces[agent]

    def _split(self, joint: np.ndarray) -> dict[str, np.ndarray]:
        if self._lidar_r1 is not None:
            name, range_max = self._lidar_r1
            scan = self.env.world.lidar(name, 0)
            ranges = scan[0] if isinstance(scan, tuple) else scan  # has_velocity: ranges first
            joint = np.concatenate([joint, (ranges / range_max).astype(np.float32)])
        self._state = joint
        return {a: joint[c] for a, c in self._cols.items()}

    def reset(self, seed: int | None = None,
              options: dict | None = None) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
        """New episode; ``seed`` (None or an int in [0, 2**64), numpy integers alike) as in
        the Gymnasium env (``options`` are not used)."""
        seed = check_seed(seed)
        joint, info = self.env.reset(seed=seed)
        if self._lidar_r1 is not None and (seed is not None or not self._lidar_seeded):
            # r1's scan draws its noise from the world's lidar stream: seed it with the
            # episode (or, unseeded, from the env's generator) so a seed replays it too.
            lidar_seed = (seed + LIDAR_SEED_OFFSET) % 2**64 if seed is not None else \
                int(self.env.np_random.integers(0, 2**63))
            self.env.world.seed_lidar(lidar_seed)
            self._lidar_seeded = True
        self.agents = list(AGENTS)
        return self._split(joint), {a: dict(info) for a in AGENTS}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """One step of both robots: ``actions`` maps every live agent to its 2 numbers."""
        if not self.agents:
            raise ValueError("every agent is done: call reset() before step()")
        if not isinstance(actions, dict):
            raise ValueError(f"actions must be a dict agent -> action, got {short_repr(actions)}")
        unknown = sorted(set(actions) - set(self.agents), key=str)
        missing = [a for a in self.agents if a not in actions]
        if unknown or missing:
            raise ValueError(f"actions must hold exactly the live agents {self.agents}; missing "
                             f"{missing}, unknown {unknown}")
        parts = []
        for a in AGENTS:
            act = np.asarray(actions[a])
            check_action_dtype(act, f"action of {a}")  # before the cast drops an imaginary part
            act = act.astype(np.float64)
            if act.shape != (2,):
                raise ValueError(f"action of {a} must have shape (2,), got {np.shape(actions[a])}")
            parts.append(act)
        joint, rew, term, trunc, info = self.env.step(np.concatenate(parts))
        obs = self._split(joint)
        rewards = {a: float(rew) for a in AGENTS}
        terms = {a: bool(term) for a in AGENTS}
        truncs = {a: bool(trunc) for a in AGENTS}
        infos = {a: dict(info) for a in AGENTS}
        if term or trunc:
            self.agents = []
        return obs, rewards, terms, truncs, infos

    def state(self) -> np.ndarray:
        """The joint observation (both robots' blocks; with a lidar, robot_1's readings
        after it), for a centralised critic."""
        return self._state.copy()

    def render(self) -> np.ndarray | None:
        return self.env.render()

    def close(self) -> None:
        self.env.close()


def _field_starts(layout: tuple, core: Any) -> list[tuple[Any, int]]:
    """(field, first column) of each field of the state observation's layout."""
    from ..core.obs_layout import columns

    return [(f, at) for f, at, _ in columns(layout, core.task.args)]


def parallel_env(**kwargs: Any) -> CoopPushParallelEnv:
    """The PettingZoo ParallelEnv of CoopPush-v0 (keyword arguments as ``gym.make``'s)."""
    return CoopPushParallelEnv(**kwargs)


def env(**kwargs: Any) -> Any:
    """The AEC form (agents act in turn; the step is taken when both have acted)."""
    return parallel_to_aec(parallel_env(**kwargs))


raw_env = parallel_env
