"""CoopPush-v0 as a PettingZoo ``ParallelEnv``: one agent per robot, one shared reward.

Agent ``robot_k`` acts with robot k's 2 command numbers (as the Gymnasium env's action
columns 2k, 2k + 1) and observes the shared block of the joint observation (box, goal, box
contacts) and robot k's own block: its pose and velocity, the box, the goal and the other
robot seen from it, its push spot, and its own contact slots. ``state()`` is the whole joint
observation, for a centralised critic. Both agents get the team's reward and end together:
the task terminates on success and truncates after ``max_episode_steps``.

The sensors the robots carry (``lidar=dict(number=N, ...)`` gives both a lidar2d; a scene
may give them any sensor) are observed by the Gymnasium env, each robot's block after the
task's columns (``env.sensor_fields``); each agent observes its own robot's sensors after its
columns, their noise drawn from the env's own stream. ``state()`` is the joint observation,
so the critic sees every column an agent sees.
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

from ..core.env import check_action_dtype
from ..core.env import check_seed
from ..core.obs_layout import columns
from ..physics.errors import short_repr
from ..tasks.pushing.coop_push import CoopPush
from ..tasks.pushing.coop_push import CoopPushEnv
from ..tasks.pushing.coop_push import agent_columns

AGENTS = ("robot_0", "robot_1")
ROBOTS = ("r0", "r1")  # the scene bodies of the agents, in action order


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
        # Each agent: the task's columns it sees, then its own robot's sensors' columns.
        starts = {f.name: (at, f.size) for f, at, _ in columns(core.observation_layout,
                                                                core.task.args)}
        self._cols = {}
        for k, (agent, robot) in enumerate(zip(AGENTS, ROBOTS, strict=True)):
            own = [np.arange(starts[f][0], starts[f][0] + starts[f][1])
                   for f in core.sensor_fields[robot]]
            self._cols[agent] = np.concatenate([agent_columns(core.task.args, k), *own])
        joint = self.env.observation_space
        self.state_space = spaces.Box(joint.low, joint.high, dtype=np.float32)
        self._obs_spaces = {a: spaces.Box(joint.low[c], joint.high[c], dtype=np.float32)
                            for a, c in self._cols.items()}
        self._act_spaces = {a: spaces.Box(-1.0, 1.0, (2,), np.float32) for a in AGENTS}
        self._state = np.zeros(self.state_space.shape, np.float32)

    # PettingZoo requires the same space object on every call.
    def observation_space(self, agent: str) -> spaces.Box:
        return self._obs_spaces[agent]

    def action_space(self, agent: str) -> spaces.Box:
        return self._act_spaces[agent]

    def _split(self, joint: np.ndarray) -> dict[str, np.ndarray]:
        self._state = joint
        return {a: joint[c] for a, c in self._cols.items()}

    def reset(self, seed: int | None = None,
              options: dict | None = None) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
        """New episode; ``seed`` (None or an int in [0, 2**64), numpy integers alike) as in
        the Gymnasium env (``options`` are not used)."""
        seed = check_seed(seed)
        joint, info = self.env.reset(seed=seed)
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
        """The joint observation (both robots' blocks, then their sensors'), for a centralised
        critic."""
        return self._state.copy()

    def render(self) -> np.ndarray | None:
        return self.env.render()

    def close(self) -> None:
        self.env.close()


def parallel_env(**kwargs: Any) -> CoopPushParallelEnv:
    """The PettingZoo ParallelEnv of CoopPush-v0 (keyword arguments as ``gym.make``'s)."""
    return CoopPushParallelEnv(**kwargs)


def env(**kwargs: Any) -> Any:
    """The AEC form (agents act in turn; the step is taken when both have acted)."""
    return parallel_to_aec(parallel_env(**kwargs))


raw_env = parallel_env
