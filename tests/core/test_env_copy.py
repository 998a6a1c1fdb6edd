"""copy.deepcopy of an env (single, vector, through gym.make's wrappers) is an independent env
in the same state; pickling is refused with what to do instead; compiled functions copy and
pickle as functions do."""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest

import push_envs  # noqa: F401  (registers the ids)
from push_envs.physics.jit import LazyCompiled
from push_envs.physics.jit import compiled


def _play(env, acts, vector):
    """Every output of stepping ``env`` through ``acts`` (resets included when an episode
    ends), as a list of arrays to compare bit for bit."""
    out = []
    for a in acts:
        obs, rew, term, trunc, info = env.step(a)
        out += [np.asarray(obs), np.asarray(rew), np.asarray(term), np.asarray(trunc),
                np.asarray(info["is_success"])]
        if not vector and (term or trunc):
            obs, _ = env.reset()
            out.append(np.asarray(obs))
    return out


def _same(a, b):
    return len(a) == len(b) and all(x.dtype == y.dtype and np.array_equal(x, y)
                                    for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize(("env_id", "num_envs", "kwargs"), [
    ("PushBox-v0", None, {}),  # gym.make: TimeLimit, OrderEnforcing, PassiveEnvChecker
    ("PushBox-v0", 5, {}),  # serial kernel
    ("PushBox-v0", 32, {"max_episode_steps": 7}),  # prange kernel; autoresets mid-run
    ("PushMaze-v1", 3, {}),  # the map's tables
    ("Sweep-v1", None, {"num_pucks": 4, "lidar": {"number": 8}}),
    ("PushT-v0", 2, {"obs_mode": "pixels", "pixel_size": 16}),
])
def test_a_deep_copy_replays_the_original_and_is_independent(env_id, num_envs, kwargs):
    vector = num_envs is not None
    make = (lambda: gym.make_vec(env_id, num_envs=num_envs, **kwargs)) if vector else \
        (lambda: gym.make(env_id, **kwargs))
    env, ref = make(), make()
    rng = np.random.default_rng(0)
    acts = rng.uniform(-1, 1, (30,) + env.action_space.shape).astype(np.float32)
    for e in (env, ref):
        e.reset(seed=3)
        _play(e, acts[:10], vector)  # the copy is taken mid-episode
    twin = copy.deepcopy(env)
    # The copy runs first, alone: the original must not move with it.
    from_copy = _play(twin, acts[10:], vector)
    from_original = _play(env, acts[10:], vector)
    from_reference = _play(ref, acts[10:], vector)
    assert _same(from_copy, from_original) and _same(from_original, from_reference)
    # An unseeded reset draws from each env's own generator, copied with it.
    assert _same([np.asarray(twin.reset()[0])], [np.asarray(env.reset()[0])])
    for e in (env, twin, ref):
        e.close()


def test_a_copy_owns_its_arrays_and_its_kernel_arguments():
    env = gym.make_vec("PushBox-v0", num_envs=20)
    env.reset(seed=0)
    twin = copy.deepcopy(env)
    assert twin.world is not env.world and twin.world.pos is not env.world.pos
    assert not np.shares_memory(twin.world.pos, env.world.pos)
    assert twin.env_arrays.obs is twin._obs  # the aliases inside an env are kept
    assert twin._args[1:] != env._args[1:]  # packed anew: the addresses of its own arrays
    assert twin._kernels is env._kernels  # compiled code is shared
    env.close()
    twin.step(np.zeros(twin.action_space.shape, np.float32))  # the original's close is not its
    twin.close()


@pytest.mark.parametrize("vector", [False, True])
def test_pickling_an_env_says_what_to_do_instead(vector):
    env = gym.make_vec("PushBox-v0", num_envs=2) if vector else gym.make("PushBox-v0")
    name = "PushBoxVectorEnv" if vector else "PushBoxEnv"
    with pytest.raises(TypeError, match=rf"cannot pickle {name}: .*bound to this process.*"
                                        r"copy\.deepcopy\(env\)"):
        pickle.dumps(env)
    shallow = copy.copy(env)  # a shallow copy still works, sharing the arrays
    assert shallow is not env
    env.close()


@compiled
def _twice(x):
    return 2.0 * x


def test_a_compiled_function_copies_and_pickles_as_a_function_does():
    assert isinstance(_twice, LazyCompiled)
    assert copy.copy(_twice) is _twice and copy.deepcopy(_twice) is _twice
    assert pickle.loads(pickle.dumps(_twice)) is _twice
    # An object made without __init__ (as copy and pickle make them) has no slots set: a
    # lookup is an AttributeError, not a recursion through __getattr__.
    bare = LazyCompiled.__new__(LazyCompiled)
    for name in ("_disp", "py_func", "__setstate__", "__array_interface__"):
        with pytest.raises(AttributeError):
            getattr(bare, name)
