"""Any IR-SIM world file as a Gymnasium env: ``push_envs/World-v0``.

    env = gym.make("push_envs/World-v0", world="configs/crowd_rvo.yaml")
    venv = gym.make_vec("push_envs/World-v0", num_envs=1024, world="configs/crowd_rvo.yaml")

One robot of the world is the agent (``agent=`` its name; the first robot with a drive by
default). Its action is its command (diff [v m/s, omega rad/s], omni [vx, vy m/s] in the body
frame, acker [v m/s, steer rad], omni_angular [vx, vy m/s, yaw rate rad/s]), bounded by its
``vel_min`` / ``vel_max``; an action outside them is clipped, one with NaN or of the wrong
shape is refused. Every other object runs its own behaviour toward its own goals, as in
IR-SIM. The observation is described in :mod:`push_envs.worlds.observation`.

Reward per step: ``progress_weight`` x (distance to the current goal before the step minus
after it) [m], minus ``collision_penalty`` while the agent collides (contact mode: it touches
any body; IR-SIM's other modes: its collision flag), plus ``arrival_bonus`` on the step it
arrives at its last goal. The episode terminates at that arrival and is truncated after
``max_episode_steps``.

The batch is one :class:`~push_envs.physics.world.World` of ``num_envs`` copies, stepped by
one compiled call. Env i of a batch seeded s equals a single env seeded s + i, bit for bit:
every stream it draws from (IR-SIM's random distributions, motion noise, wandering goals,
lidar noise) is its own, seeded s + i; each reset draws its random distributions afresh, so
N copies of a random world are N different worlds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector import VectorEnv

from ..core.env import env_seeds
from ..physics.config import SceneError
from ..physics.layout import BI_KIND
from ..physics.layout import DRIVEN
from ..physics.rng import seed_states_of
from ..physics.world import World
from .observation import WorldObservation

DEFAULT_MAX_STEPS = 1000
"""Episode length when neither the call nor the world says otherwise."""


def _check_number(value: Any, name: str, *, low: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or value < low:
        raise ValueError(f"World-v0: {name} must be a finite number >= {low:g}, got {value!r}")
    return float(value)


def _source_name(world: Any) -> str:
    return str(world) if isinstance(world, (str, os.PathLike)) else "<mapping>"


def _pick_agent(w: World, agent: str | None, source: str) -> int:
    """The agent's body index: the named robot, or the first robot with a drive."""
    sc = w.scene
    if agent is not None:
        if not isinstance(agent, str) or agent not in sc.index:
            raise SceneError(f"{source}: agent {agent!r} is not an object of the world; its "
                             f"objects: {list(sc.names)[:20]}")
        i = sc.index[agent]
        if sc.bint[i, BI_KIND] != DRIVEN:
            raise SceneError(f"{source}: agent {agent!r} has no kinematics to command")
        return i
    for i, b in enumerate(sc.spec.bodies):
        if b.role == "robot" and sc.bint[i, BI_KIND] == DRIVEN:
            return i
    raise SceneError(f"{source}: the world has no robot with kinematics to be the agent")


class WorldVectorEnv(VectorEnv):
    """A batch of ``num_envs`` episodes of an IR-SIM world, one robot the agent (module doc).

    Args:
        world: the world file (IR-SIM's YAML) or a mapping of it.
        num_envs: copies stepped together.
        agent: the agent's name (default: the first robot with kinematics).
        max_episode_steps: truncation (default 1000).
        progress_weight, collision_penalty, arrival_bonus: the reward's terms (module doc).
        autoreset_mode: NEXT_STEP (default), SAME_STEP or DISABLED, as Gymnasium's.
        num_threads: numba threads for the batch (None: numba's setting).
        render_mode: "rgb_array" or "human" (env 0 is drawn).
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "rgb_array"],
        "render_fps": 10,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(self, num_envs: int = 1, *, world: str | os.PathLike | Mapping,
                 agent: str | None = None, max_episode_steps: int | None = None,
                 progress_weight: float = 1.0, collision_penalty: float = 0.1,
                 arrival_bonus: float = 1.0,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 num_threads: int | None = None, render_mode: str | None = None) -> None:
        self._renderer: Any = None
        if world is None:
            raise ValueError("World-v0: world= is required (an IR-SIM world file or mapping)")
        try:
            self.autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(f"World-v0: autoreset_mode must be one of "
                             f"{[m.value for m in AutoresetMode]}, got {autoreset_mode!r}") \
                from None
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"World-v0: render_mode must be one of "
                             f"{self.metadata['render_modes']}, got {render_mode!r}")
        steps = DEFAULT_MAX_STEPS if max_episode_steps is None else max_episode_steps
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
            raise ValueError(f"World-v0: max_episode_steps must be an integer >= 1, got "
                             f"{max_episode_steps!r}")
        self.max_episode_steps = int(steps)
        self.progress_weight = _check_number(progress_weight, "progress_weight")
        self.collision_penalty = _check_number(collision_penalty, "collision_penalty")
        self.arrival_bonus = _check_number(arrival_bonus, "arrival_bonus")
        self.render_mode = render_mode
        self.metadata = dict(self.metadata, autoreset_mode=self.autoreset_mode)
        source = _source_name(world)
        self.world = World.from_config(world, num_envs=num_envs, num_threads=num_threads)
        w = self.world
        self.num_envs = w.num_envs
        a = _pick_agent(w, agent, source)
        self.agent_index = a
        self.agent = w.scene.names[a]
        if not np.isfinite(w.goal(self.agent)[:, :2]).all():
            raise SceneError(f"{source}: agent {self.agent!r} has no goal (give it a `goal`)")
        # The agent's episode ends at its last goal: its goals do not loop here (a looping
        # behaviour would clear the arrival at once); a wandering agent's episode ends at its
        # first goal (the one its reset drew), where it would draw the next.
        from ..physics.behaviours.layout import BI_LOOP
        from ..physics.behaviours.layout import BI_WANDER

        plan = w._goals_plan()
        plan.arrays.bi[a, BI_LOOP] = 0
        self._wander = bool(plan.arrays.bi[a, BI_WANDER])
        self.obs_layout = WorldObservation(w, a)
        spec = w.scene.spec.bodies[a]
        ncmd = self.obs_layout.drive_cols
        lo = np.array(spec.vel_min, np.float64)[:ncmd]
        hi = np.array(spec.vel_max, np.float64)[:ncmd]
        self._act_lo, self._act_hi = lo, hi
        self.single_action_space = spaces.Box(lo.astype(np.float32), hi.astype(np.float32),
                                              dtype=np.float32)
        olo, ohi = self.obs_layout.bounds()
        self.single_observation_space = spaces.Box(olo, ohi, dtype=np.float32)
        self.action_space = spaces.Box(np.tile(self.single_action_space.low, (self.num_envs, 1)),
                                       np.tile(self.single_action_space.high,
                                               (self.num_envs, 1)), dtype=np.float32)
        self.observation_space = spaces.Box(
            np.tile(olo, (self.num_envs, 1)), np.tile(ohi, (self.num_envs, 1)), dtype=np.float32)
        mode = getattr(w.scene.spec.world, "collision_mode", "contact")
        self._contact_mode = mode in (None, "contact")
        E = self.num_envs
        self._obs = np.zeros((E, self.obs_layout.size), np.float32)
        self._tstep = np.zeros(E, np.int64)
        self._need_reset = np.zeros(E, bool)
        self._started = False

    # ---------------------------------------------------------------------------- seeding
    def _seed_envs(self, envs: np.ndarray, seeds: Sequence[int]) -> None:
        """Give each env in ``envs`` the streams of a single world seeded with its seed."""
        w = self.world
        states = seed_states_of(list(seeds))
        w.lidar_rng[envs] = states
        plan = w._goals_plan()
        plan.arrays.rng[envs] = states
        if hasattr(w, "rng"):
            w.rng[envs] = states

    def _reset_envs(self, envs: np.ndarray, seeds: Sequence[int] | None) -> None:
        w = self.world
        if seeds is not None:
            self._seed_envs(envs, seeds)
        w.reset(envs)
        self._tstep[envs] = 0
        self._need_reset[envs] = False

    # ---------------------------------------------------------------------------- API
    def reset(self, *, seed: int | Sequence[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every env (or those of ``options["reset_mask"]``); ``seed`` s gives env i the
        seed s + i, a list one seed per env."""
        E = self.num_envs
        mask = None if options is None else options.get("reset_mask")
        if mask is not None:
            mask = np.asarray(mask)
            if mask.shape != (E,) or mask.dtype != np.bool_:
                raise ValueError(f"World-v0: reset_mask must be a bool array of shape ({E},)")
            envs = np.flatnonzero(mask)
        else:
            envs = np.arange(E)
        seeds = env_seeds(seed, E)  # Gymnasium's: s gives env i s + i; a list, one each
        if seeds is not None:
            seeds = [seeds[i] for i in envs]
        elif not self._started:
            seeds = list(np.random.SeedSequence().generate_state(len(envs), np.uint64))
            seeds = [int(s) % 2**62 for s in seeds]
        self._started = True
        self._reset_envs(envs, seeds)
        self.obs_layout.assemble(self._obs)
        return self._obs.copy(), self._info(np.zeros(E, bool), np.zeros(E, bool))

    def _actions(self, actions: Any) -> np.ndarray:
        a = np.asarray(actions)
        shape = (self.num_envs, len(self._act_lo))
        if a.shape != shape:
            raise ValueError(f"World-v0: actions must have shape {shape}, got {a.shape}")
        if not np.issubdtype(a.dtype, np.number) or np.issubdtype(a.dtype, np.complexfloating):
            raise ValueError(f"World-v0: actions must be real numbers, got dtype {a.dtype}")
        a = a.astype(np.float64)
        if not np.isfinite(a).all():
            bad = np.argwhere(~np.isfinite(a))[0]
            raise ValueError(f"World-v0: action of env {bad[0]} holds NaN or inf: {a[bad[0]]}")
        return np.clip(a, self._act_lo, self._act_hi)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        """Advance every env one ``step_time``; see the module doc for reward and ends."""
        if not self._started:
            raise RuntimeError("World-v0: call reset() before step()")
        a = self._actions(actions)
        w = self.world
        E = self.num_envs
        restarting = np.zeros(E, bool)
        if self.autoreset_mode == AutoresetMode.NEXT_STEP and self._need_reset.any():
            restarting = self._need_reset.copy()
            self._reset_envs(np.flatnonzero(restarting), None)
        goal = w.goal(self.agent)
        before, _ = self.obs_layout.goal_frame(goal)
        w.active[:] = ~restarting
        try:
            w.step({self.agent: a})
        finally:
            w.active[:] = 1
        after, _ = self.obs_layout.goal_frame(goal)
        arrived = w.arrived(self.agent)
        if self._wander:
            # it reached its goal and drew the next one in this step
            arrived = arrived | np.any(w.goal(self.agent)[:, :2] != goal[:, :2], axis=1)
        hit = self._collided()
        rew = self.progress_weight * np.nan_to_num(before - after) \
            - self.collision_penalty * hit + self.arrival_bonus * arrived
        self._tstep += ~restarting
        term = arrived & ~restarting
        trunc = (self._tstep >= self.max_episode_steps) & ~term & ~restarting
        rew = np.where(restarting, 0.0, rew).astype(np.float64)
        hit &= ~restarting
        done = term | trunc
        info = self._info(arrived & ~restarting, hit, before - after)
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._need_reset = done
            self.obs_layout.assemble(self._obs)
        elif self.autoreset_mode == AutoresetMode.SAME_STEP:
            self.obs_layout.assemble(self._obs)
            if done.any():
                info["final_obs"] = self._obs.copy()
                info["_final_obs"] = done.copy()
                info["final_info"] = {k: v.copy() for k, v in info.items()
                                      if not k.startswith("final")}
                info["_final_info"] = done.copy()
                self._reset_envs(np.flatnonzero(done), None)
                self.obs_layout.assemble(self._obs)
        else:
            self.obs_layout.assemble(self._obs)
        return self._obs.copy(), rew, term, trunc, info

    def _collided(self) -> np.ndarray:
        w = self.world
        if self._contact_mode:
            return w.in_contact(self.agent)
        return w.collision(self.agent)

    def _info(self, success: np.ndarray, collision: np.ndarray,
              progress: np.ndarray | None = None) -> dict[str, Any]:
        dist, _ = self.obs_layout.goal_frame(self.world.goal(self.agent))
        E = self.num_envs
        info = {"is_success": success.copy(), "collision": collision.copy(),
                "distance": np.nan_to_num(dist),
                "progress": np.zeros(E) if progress is None else np.nan_to_num(progress)}
        for k in list(info):
            info[f"_{k}"] = np.ones(E, bool)
        return info

    # ---------------------------------------------------------------------------- render
    def render_frame(self, env: int = 0) -> np.ndarray | None:
        """Draw env ``env`` with every object's goal: an RGB array (H, W, 3) uint8."""
        from ..core.render import Renderer

        if self._renderer is None:
            self._renderer = Renderer(self.world, "human" if self.render_mode == "human"
                                      else "rgb_array")
        return self._renderer.render(env, goals=world_goals(self.world, env))

    def render(self) -> Any:
        if self.render_mode is None:
            gym.logger.warn("World-v0: render() without a render_mode")
            return None
        return self.render_frame(0)

    def close(self, **kwargs: Any) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None


def world_goals(world: World, env: int = 0) -> list[Any]:
    """A disc at each object's current goal in ``env``, for the renderer (objects without a
    goal draw none)."""
    from ..core.render import Goal

    out = []
    for name in world.names:
        g = world.goal(name)[env]
        if np.isfinite(g[:2]).all():
            out.append(Goal("circle", center=(float(g[0]), float(g[1])), radius=0.15))
    return out


class WorldEnv(gym.Env):
    """One episode of an IR-SIM world at a time (a batch of one, :class:`WorldVectorEnv`)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["human", "rgb_array"],
                                          "render_fps": 10}

    def __init__(self, world: str | os.PathLike | Mapping, **kwargs: Any) -> None:
        if "num_envs" in kwargs or "autoreset_mode" in kwargs:
            raise TypeError("World-v0: a single env takes neither num_envs nor autoreset_mode "
                            "(use gym.make_vec)")
        self.core = WorldVectorEnv(1, world=world, autoreset_mode=AutoresetMode.DISABLED,
                                   **kwargs)
        self.render_mode = self.core.render_mode
        self.observation_space = self.core.single_observation_space
        self.action_space = self.core.single_action_space
        self.world = self.core.world
        self.agent = self.core.agent

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        obs, info = self.core.reset(seed=seed)
        return obs[0], _row(info)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        a = np.asarray(action)
        if a.shape != self.action_space.shape:
            raise ValueError(f"World-v0: action must have shape {self.action_space.shape}, "
                             f"got {a.shape}")
        obs, rew, term, trunc, info = self.core.step(a[None])
        return obs[0], float(rew[0]), bool(term[0]), bool(trunc[0]), _row(info)

    def render(self) -> Any:
        return self.core.render()

    def close(self) -> None:
        self.core.close()


def _row(info: dict[str, Any]) -> dict[str, Any]:
    return {k: v[0].item() for k, v in info.items() if not k.startswith("_")}
