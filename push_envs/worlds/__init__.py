"""IR-SIM's worlds as Gymnasium envs: ``gym.make("push_envs/World-v0", world=...)``.

:mod:`.env` holds the env (one robot the agent, the others on their behaviours) and
:mod:`.observation` its observation row.
"""

WORLD_ENV_ID = "push_envs/World-v0"
"""The Gymnasium id of any IR-SIM world file as an env."""

__all__ = ["WORLD_ENV_ID"]
