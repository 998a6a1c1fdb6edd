"""push_envs.tasks.spec: a task id to its TaskSpec; anything else a KeyError naming the
registered tasks."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

import push_envs
from push_envs.tasks import spec


def test_every_registered_id_has_its_spec():
    for env_id in push_envs.ENV_IDS:
        assert spec(env_id).id == env_id


@pytest.mark.parametrize(("env_id", "why"), [
    ("CartPole-v1", r"a Gymnasium env \(gymnasium\.envs\.classic_control\.cartpole:"
                    r"CartPoleEnv\), not a push_envs task"),
    ("Pendulum-v1", "a Gymnasium env"),
    ("gym_pusht/PushT-v0", r"a Gymnasium env \(gym_pusht\.envs:PushTEnv\)"),
    ("PushBox-v9", "not registered"),
    (None, "not registered"),
    (["PushBox-v0"], "not registered"),
])
def test_an_id_that_is_not_a_task_is_a_key_error_naming_the_tasks(env_id, why, monkeypatch):
    if env_id == "gym_pusht/PushT-v0":
        # gym-pusht's id as it registers it (its module need not be installed: never imported)
        monkeypatch.setitem(gym.registry, env_id, gym.envs.registration.EnvSpec(
            env_id, entry_point="gym_pusht.envs:PushTEnv"))
    with pytest.raises(KeyError) as exc:
        spec(env_id)
    text = exc.value.args[0]
    assert f"no task {env_id!r}" in text
    assert re.search(why, text), text
    assert f"registered tasks: {list(push_envs.ENV_IDS)}" in text


@pytest.mark.parametrize(("old", "new"), [("Sweep-v0", "Sweep-v1"),
                                          ("PushMaze-v0", "PushMaze-v1")])
def test_a_retired_id_names_the_id_that_replaced_it(old, new):
    # The project's lookups (the CLIs, agent files) say why and where to go; Gymnasium's own
    # make says the version is deprecated and names the new one.
    with pytest.raises(KeyError, match=rf"'{old}' was retired \(.+\): its rollouts differ "
                                       rf"from {new}'s, which replaced it"):
        spec(old)
    assert old not in push_envs.ENV_IDS and new in push_envs.ENV_IDS
    with pytest.raises(gym.error.DeprecatedEnv, match=f"Please use `{new}`"):
        gym.make(old)
    assert spec(new).versions[-1].startswith(f"v{new[-1]}: ")
