"""Golden hashes of whole task rollouts: any change to spawn, physics, observation, reward or
autoreset arithmetic changes them.

Each task keeps its hashes with it, in ``golden.json`` in its folder (``{"id": "<task id>",
"rollout": "<32 hex>", "wide": "<32 hex>"}``: 8 envs, and 256 envs for rare contacts, which
the 8 can miss: the joints of static pieces moved one PushMaze-v0 episode in 40 and kept the 8
envs' hash),
and the test runs every task of the registry: a task added to the registry without its hash
fails here, naming the file to write. When a change is meant to alter the numbers (or a task
is new), write the files with::

    python -m tests.tasks.test_golden --write [ids ...]     # default: every registered task

and say why in the commit message. A changed hash of a released task bumps its id: the
writer refuses a moved hash under the id it was written for (``--same-id`` for a task never
released).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import push_envs
from push_envs.tasks import spec

GOLDEN = "golden.json"  # in each task's folder


def golden_path(env_id: str) -> Path:
    """Where ``env_id`` keeps its golden hashes: ``golden.json`` in its task folder."""
    return spec(env_id).folder() / GOLDEN


# The rollouts hashed: name -> (envs, steps) of rollout_hash, and the episode ends it must see
ROLLOUTS = {"rollout": (8, 400, 48), "wide": (256, 300, 1024)}


def golden(env_id: str, key: str = "rollout") -> str:
    """``env_id``'s golden hash of rollout ``key`` (ROLLOUTS); LookupError naming the file and
    the command that writes it when the task has none."""
    path = golden_path(env_id)
    try:
        return json.loads(path.read_text())[key]
    except (FileNotFoundError, KeyError, json.JSONDecodeError) as exc:
        raise LookupError(f"{env_id} has no golden rollout hash in {path} ({exc!r}): write it "
                          f"with python -m tests.tasks.test_golden --write {env_id}") from None


def rollout_hash(env_id: str, num_envs: int = 8, steps: int = 400) -> tuple[str, dict]:
    """SHA-256 of observations, rewards and episode ends of a seeded random-action rollout
    (long enough for several autoresets), plus a few figures showing it did something."""
    env = gym.make_vec(env_id, num_envs=num_envs, max_episode_steps=60)
    obs, _ = env.reset(seed=123)
    rng = np.random.default_rng(7)
    h = hashlib.sha256(np.ascontiguousarray(obs).tobytes())
    ends = 0
    touched = 0
    for _ in range(steps):
        obs, rew, term, trunc, info = env.step(
            rng.uniform(-1, 1, (num_envs, *env.single_action_space.shape)))
        for a in (obs, rew, term, trunc):
            h.update(np.ascontiguousarray(a).tobytes())
        ends += int(np.sum(term | trunc))
        touched += int(np.sum(info["contacts"] > 0))
    env.close()
    return h.hexdigest()[:32], {"ends": ends, "contact_steps": touched}


def write_hashes(ids: list[str], same_id: bool = False) -> None:
    """Compute and write each task's ``golden.json`` (its hashes and the id they are for).
    A hash that moves under the same id is refused (SystemExit naming the task) unless
    ``same_id``: the CHANGELOG promises that a change of a task's rollouts bumps its id."""
    for env_id in ids:
        path = golden_path(env_id)
        old = json.loads(path.read_text()) if path.exists() else {}
        hashes = {"id": env_id}
        for key, (num_envs, steps, _) in ROLLOUTS.items():
            hashes[key], seen = rollout_hash(env_id, num_envs, steps)
            print(f"{env_id} {key}: {hashes[key]} {seen}")
        moved = [k for k in ROLLOUTS if k in old and old[k] != hashes[k]]
        if moved and old.get("id", env_id) == env_id and not same_id:
            raise SystemExit(f"{env_id}'s {moved} rollouts moved: bump its id (TaskSpec.id, "
                             f"versions and retired) or, for a task never released, pass "
                             f"--same-id; {path} is unchanged")
        path.write_text(json.dumps(hashes, indent=1) + "\n")
        print(f"-> {path}")


def test_every_registered_task_has_its_golden_hash():
    found = {env_id: golden(env_id) for env_id in push_envs.ENV_IDS}
    assert all(re.fullmatch(r"[0-9a-f]{32}", h) for h in found.values()), found
    assert len(set(found.values())) == len(found), found  # no task copied another's file


def test_each_golden_file_is_for_its_tasks_id():
    # A file copied along with a renamed task, its id not bumped, would pass the hash test.
    for env_id in push_envs.ENV_IDS:
        assert json.loads(golden_path(env_id).read_text())["id"] == env_id


def test_writing_a_moved_hash_under_the_same_id_is_refused(monkeypatch, tmp_path):
    path = tmp_path / GOLDEN
    path.write_text(json.dumps({"id": "PushBox-v0", "rollout": "0" * 32, "wide": "1" * 32}))
    monkeypatch.setattr(f"{__name__}.golden_path", lambda env_id: path)
    monkeypatch.setattr(f"{__name__}.rollout_hash", lambda *a: ("2" * 32, {}))
    with pytest.raises(SystemExit, match=r"PushBox-v0's \['rollout', 'wide'\] rollouts "
                                          r"moved: bump its id"):
        write_hashes(["PushBox-v0"])
    assert json.loads(path.read_text())["rollout"] == "0" * 32
    write_hashes(["PushBox-v0"], same_id=True)
    assert json.loads(path.read_text()) == {"id": "PushBox-v0", "rollout": "2" * 32,
                                            "wide": "2" * 32}


def test_a_task_without_its_hash_is_named_with_the_file(monkeypatch, tmp_path):
    monkeypatch.setattr(f"{__name__}.golden_path", lambda env_id: tmp_path / GOLDEN)
    with pytest.raises(LookupError, match=r"PushBox-v0 has no golden rollout hash in .*"
                                          r"golden.json.*--write PushBox-v0"):
        golden("PushBox-v0")


@pytest.mark.parametrize("key", list(ROLLOUTS))
@pytest.mark.parametrize("env_id", push_envs.ENV_IDS)
def test_rollout_matches_golden_hash(env_id, key):
    num_envs, steps, ends = ROLLOUTS[key]
    digest, seen = rollout_hash(env_id, num_envs, steps)
    # The rollout must exercise autoresets and contacts for the hash to mean anything.
    assert seen["ends"] >= ends and seen["contact_steps"] >= 20, seen
    assert digest == golden(env_id, key)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="python -m tests.tasks.test_golden",
                                 description="print (or --write) the tasks' golden hashes")
    ap.add_argument("ids", nargs="*", help="task ids (default: every registered task)")
    ap.add_argument("--write", action="store_true", help="write each task's golden.json")
    ap.add_argument("--same-id", action="store_true",
                    help="with --write: accept moved hashes under the same id (a task never "
                         "released)")
    args = ap.parse_args()
    ids = args.ids or list(push_envs.ENV_IDS)
    if args.write:
        write_hashes(ids, args.same_id)
    else:
        for env_id in ids:
            for key, (num_envs, steps, _) in ROLLOUTS.items():
                print(env_id, key, *rollout_hash(env_id, num_envs, steps))
