"""train/warm_start.py: the scripted expert cloned into a PPO policy before PPO."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

import torch  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.vec_env import VecNormalize  # noqa: E402
from train_scripts import load_script  # noqa: E402

from push_envs.sb3 import make_vec_env  # noqa: E402

W = load_script("warm_start.py", "warm_start")


def test_running_returns_restart_at_episode_starts():
    rew = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    first = np.array([True, False, False, True, False])
    # 1; 1 * 0.5 + 2 = 2.5; 2.5 * 0.5 + 3 = 4.25; restart: 4; 4 * 0.5 + 5 = 7.
    np.testing.assert_array_equal(W._running_returns(rew, first, 0.5), [1.0, 2.5, 4.25, 4.0, 7.0])


def test_returns_to_go_stop_at_each_episode_end():
    rew = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    first = np.array([True, False, False, True, False])
    # Episode 1: 3; 2 + 0.5 * 3 = 3.5; 1 + 0.5 * 3.5 = 2.75. Episode 2: 5; 4 + 2.5 = 6.5.
    np.testing.assert_array_equal(W._returns_to_go(rew, first, 0.5), [2.75, 3.5, 3.0, 6.5, 5.0])


@pytest.mark.parametrize(("value", "match"), [
    ([1000], "warm_start must be a mapping"),
    ({"episode": 10}, r"unknown keys \['episode'\]"),
    ({"episodes": 0}, r"warm_start.episodes must be an int >= 1, got 0"),
    ({"epochs": 2.5}, r"warm_start.epochs must be an int >= 1"),
    ({"learning_rate": -1.0}, r"warm_start.learning_rate must be a finite number > 0"),
    ({"learning_rate": float("inf")}, r"warm_start.learning_rate must be a finite number > 0"),
    ({"log_std": "low"}, r"warm_start.log_std must be a finite number"),
    ({"log_std": float("nan")}, r"warm_start.log_std must be a finite number"),
    ({"dagger_rounds": -1}, r"warm_start.dagger_rounds must be an int >= 0, got -1"),
    ({"dagger_episodes": 0}, r"warm_start.dagger_episodes must be an int >= 1, got 0"),
    ({"expert": "in_order_expert"}, r"warm_start.expert must be a 'module:factory' string"),
    ({"dagger_labels": "replay"}, r"warm_start.dagger_labels must be 'batch' or 'shadow'"),
    ({"dagger_epochs": 0}, r"warm_start.dagger_epochs must be an int >= 1, got 0"),
    ({"dagger_stride": 1.5}, r"warm_start.dagger_stride must be an int >= 1, got 1.5"),
    ({"freeze_normalize": "yes"}, r"warm_start.freeze_normalize must be true or false"),
])
def test_settings_name_the_bad_key(value, match):
    with pytest.raises(ValueError, match=match):
        W.settings(value)


def test_the_teacher_is_the_named_expert_or_the_tasks_own():
    import gymnasium as gym

    from push_envs.experts import expert
    from push_envs.tasks import spec
    from push_envs.tasks.many.push_multi.expert import in_order_expert

    env = gym.make_vec("PushMulti-v0", num_envs=64)
    obs, _ = env.reset(seed=0)
    env.close()
    own = W.teacher("PushMulti-v0", "diff", {}, W.settings({}))(obs)
    np.testing.assert_array_equal(own, expert("PushMulti-v0", "diff")(obs))
    named = W.teacher("PushMulti-v0", "diff", {},
                      W.settings({"expert": "expert:in_order_expert"}))(obs)
    cls = spec("PushMulti-v0")
    np.testing.assert_array_equal(named, in_order_expert(cls(cls.resolve_args({})))(obs))
    # Over 64 spawns the cost order picks another box than the index order somewhere.
    assert not np.array_equal(named, own)
    with pytest.raises(ValueError, match="warm_start: .*no_such_factory"):
        W.teacher("PushMulti-v0", "diff", {}, W.settings({"expert": "expert:no_such_factory"}))


def test_pretrain_clones_the_expert_and_starts_the_normalisation():
    env = VecNormalize(make_vec_env("PushBox-v0", n_envs=4, seed=0, num_threads=1,
                                    max_episode_steps=60), gamma=0.98)
    model = PPO("MlpPolicy", env, n_steps=16, batch_size=64, gamma=0.98, seed=0, device="cpu")
    ws = W.settings({"episodes": 12, "epochs": 30, "batch_size": 128, "log_std": -1.5,
                     "num_envs": 6})
    demo = W.demonstrations("PushBox-v0", {"max_episode_steps": 60}, ws, 0)
    assert len(demo["success"]) == 12 and len(demo["obs"]) == len(demo["act"])
    assert demo["first"].sum() == 12 and demo["first"][0]

    def actor_mse():
        x = env.normalize_obs(demo["obs"])
        with torch.no_grad():
            mean = model.policy.get_distribution(torch.as_tensor(x, dtype=torch.float32))
            return float(((mean.distribution.mean.numpy() - demo["act"]) ** 2).mean())

    count0 = env.obs_rms.count
    out = W.pretrain(model, env, demo, 0, ws)
    assert out["steps"] == len(demo["obs"]) and out["seconds"] >= demo["seconds"] > 0
    assert env.obs_rms.count == pytest.approx(count0 + len(demo["obs"]))
    total = demo["obs"].astype(np.float64).sum(0)
    np.testing.assert_allclose(env.obs_rms.mean, total / (len(demo["obs"]) + count0),
                               rtol=1e-9, atol=1e-9)
    assert out["expert_success_rate"] == pytest.approx(demo["success"].mean())
    # The actor fits the expert far better than the variance of its actions.
    assert actor_mse() < 0.25 * float(demo["act"].var(axis=0).mean())
    assert out["actor_mse"] < 0.25 * float(demo["act"].var(axis=0).mean())
    np.testing.assert_array_equal(model.policy.log_std.detach().numpy(), [-1.5, -1.5])
    env.close()


def _dagger_run():
    env = VecNormalize(make_vec_env("PushBox-v0", n_envs=4, seed=0, num_threads=1,
                                    max_episode_steps=40), gamma=0.98)
    model = PPO("MlpPolicy", env, n_steps=16, batch_size=64, gamma=0.98, seed=0, device="cpu")
    ws = W.settings({"episodes": 8, "epochs": 3, "batch_size": 128, "num_envs": 4,
                     "dagger_rounds": 2, "dagger_episodes": 5})
    demo = W.demonstrations("PushBox-v0", {"max_episode_steps": 40}, ws, 0)
    count0 = env.obs_rms.count
    out = W.pretrain(model, env, demo, 0, ws)
    params = [p.detach().clone() for p in model.policy.parameters()]
    rows = env.obs_rms.count - count0
    env.close()
    return demo, out, params, rows


@pytest.mark.parametrize("freeze", [False, True])
def test_freeze_normalize_keeps_the_statistics_the_clone_was_fitted_to(freeze):
    # After the warm start, PPO's steps move VecNormalize's statistics unless frozen; frozen,
    # the observations are still normalised, by the warm start's statistics.
    env = VecNormalize(make_vec_env("PushBox-v0", n_envs=4, seed=0, num_threads=1,
                                    max_episode_steps=40), gamma=0.98)
    try:
        model = PPO("MlpPolicy", env, n_steps=16, batch_size=64, gamma=0.98, seed=0,
                    device="cpu")
        ws = W.settings({"episodes": 4, "epochs": 1, "num_envs": 4,
                         "freeze_normalize": freeze})
        demo = W.demonstrations("PushBox-v0", {"max_episode_steps": 40}, ws, 0)
        W.pretrain(model, env, demo, 0, ws)
        mean, count = env.obs_rms.mean.copy(), env.obs_rms.count
        env.reset()
        obs, *_ = env.step(np.zeros((4, 2), np.float32))
        assert (env.obs_rms.count == count) is freeze
        assert np.array_equal(env.obs_rms.mean, mean) is freeze
        if freeze:
            raw = env.get_original_obs()
            want = np.clip((raw - mean) / np.sqrt(env.obs_rms.var + env.epsilon),
                           -env.clip_obs, env.clip_obs)
            np.testing.assert_allclose(obs, want, rtol=1e-5, atol=1e-5)
    finally:
        env.close()


def test_dagger_rounds_add_the_clones_states_labelled_by_the_expert():
    demo, out, params, rows = _dagger_run()
    rates = out["dagger_success_rates"]
    assert len(rates) == 2 and all(0.0 <= r <= 1.0 for r in rates)
    # Each round adds the clone's 5 episodes: at most 40 steps each, at least one.
    added = out["steps"] - len(demo["obs"])
    assert 2 * 5 <= added <= 2 * 5 * 40
    # Every row, demonstrated or visited by the clone, went into the observation statistics.
    assert rows == pytest.approx(out["steps"])
    # The parts of the wall clock: the expert's include its episodes; none exceeds the whole.
    parts = out["seconds_by_part"]
    assert set(parts) == {"expert", "clone_play", "fit"}
    assert parts["expert"] >= demo["seconds"] > 0 and parts["clone_play"] > 0 < parts["fit"]
    assert sum(parts.values()) <= out["seconds"] + 1e-6
    # Seeded: the same settings give the same weights, bit for bit.
    _, out2, params2, _ = _dagger_run()
    assert out2["steps"] == out["steps"] and out2["dagger_success_rates"] == rates
    for a, b in zip(params, params2, strict=True):
        assert torch.equal(a, b)


def _last_fit_labels(monkeypatch, make_labeller, **dagger):
    """A warm start on PushBox-v0 (2 envs, 20-step episodes) whose DAgger rounds take their
    labels from ``make_labeller()`` (the factory stands in for the task's expert once the
    demonstrations are played): the demonstrations and the action labels of the last fit."""
    seen = {}
    real = W._fit

    def spy(model, opt, obs, act, target, ws, gen, epochs=None):
        seen["act"] = act.copy()
        seen.setdefault("epochs", []).append(epochs)
        seen["target"] = target.copy()
        return real(model, opt, obs, act, target, ws, gen, epochs)

    monkeypatch.setattr(W, "_fit", spy)
    env = VecNormalize(make_vec_env("PushBox-v0", n_envs=2, seed=0, num_threads=1,
                                    max_episode_steps=20), gamma=0.98)
    try:
        model = PPO("MlpPolicy", env, n_steps=16, batch_size=32, gamma=0.98, seed=0,
                    device="cpu")
        ws = W.settings({"episodes": 2, "epochs": 1, "num_envs": 2, "dagger_episodes": 2,
                         **dagger})
        demo = W.demonstrations("PushBox-v0", {"max_episode_steps": 20}, ws, 0)
        monkeypatch.setattr(W, "expert", lambda *a, **k: make_labeller())
        W.pretrain(model, env, demo, 0, ws)
    finally:
        env.close()
    _last_fit_labels.seen = seen
    return demo, seen["act"]


def test_the_clone_is_labelled_by_the_expert_in_its_own_states(monkeypatch):
    # The rows a DAgger round adds carry the expert's action in the clone's state: with an
    # expert that answers a constant, every added row's label is that constant.
    demo, act = _last_fit_labels(
        monkeypatch, lambda: lambda obs: np.full((len(obs), 2), 0.25), dagger_rounds=1)
    assert not np.all(demo["act"] == 0.25)
    n = len(demo["obs"])
    np.testing.assert_array_equal(act[:n], np.clip(demo["act"], -1, 1))
    assert len(act) > n
    np.testing.assert_array_equal(act[n:], 0.25)


def test_a_dagger_stride_labels_every_kth_state_and_refits_take_their_own_epochs(monkeypatch):
    # Stride 3: each round adds the visited states 0, 3, 6, ... of its flattened episodes,
    # labelled by the expert there, with the critic's targets of those very rows; the first
    # fit runs `epochs` passes and every refit `dagger_epochs`.
    calls = []

    def labeller(obs):
        calls.append(obs.copy())
        return np.full((len(obs), 2), 0.5)

    demo, act = _last_fit_labels(monkeypatch, lambda: labeller, dagger_rounds=2,
                                 dagger_stride=3, dagger_epochs=2)
    seen = _last_fit_labels.seen
    assert seen["epochs"] == [1, 2, 2]
    n = len(demo["obs"])
    added = act[n:]
    assert len(calls) == 2 and len(added) == sum(len(c) for c in calls)
    np.testing.assert_array_equal(added, 0.5)
    # 2 envs x 20-step episodes, 2 a round: 40 visited states at most, so 14 at most kept
    # (states 0, 3, ..., 39), and at least one
    assert all(1 <= len(c) <= 14 for c in calls)


def test_a_shadow_expert_labels_each_step_as_it_would_have_acted_on_the_clones_episode():
    # Sweep-v1's sweeper keeps a plan per row of its batch. Riding along the clone's episodes
    # (3 over 2 envs: env 0 plays two back to back), its label for each step is what a fresh
    # sweeper fed that episode's observations one step at a time answers; the batch labeller,
    # one call on all the visited states, answers something else.
    from push_envs.experts import expert

    venv = W.batch("Sweep-v1", {"max_episode_steps": 40}, 2, 3)
    try:
        own = W.play(venv, lambda obs: np.tile(np.float32([0.6, 0.3]), (len(obs), 1)), 3, 7,
                     shadow=expert("Sweep-v1", "diff"))
    finally:
        venv.close()
    assert len(own["success"]) == 3 and own["first"].sum() == 3
    assert own["label"].shape == own["act"].shape == (len(own["obs"]), 2)
    np.testing.assert_array_equal(own["act"], np.tile(np.float32([0.6, 0.3]), (len(own["obs"]), 1)))
    ends = [*np.flatnonzero(own["first"])[1:], len(own["obs"])]
    for a, b in zip(np.flatnonzero(own["first"]), ends, strict=True):
        fresh = expert("Sweep-v1", "diff")
        want = np.stack([fresh(o[None])[0] for o in own["obs"][a:b]])
        np.testing.assert_array_equal(own["label"][a:b], want)
    assert len(np.unique(own["label"].round(3), axis=0)) > 3  # not a constant answer
    flat = np.asarray(expert("Sweep-v1", "diff")(own["obs"]), np.float32)
    assert not np.array_equal(flat, own["label"])


def test_shadow_dagger_rounds_take_the_riders_labels_a_fresh_rider_each_round(monkeypatch):
    # A stateful expert whose k-th call answers k / 100 in every row: the rows each round adds
    # are labelled 0.01, 0.02, ... along each of its episodes (both envs start together), and
    # the next round's rider counts from 0.01 again.
    class Counter:
        def __init__(self):
            self.k = 0

        def __call__(self, obs):
            self.k += 1
            return np.full((len(obs), 2), self.k / 100)

    demo, act = _last_fit_labels(monkeypatch, Counter, dagger_rounds=2,
                                 dagger_labels="shadow")
    added = act[len(demo["obs"]):, 0]
    starts = np.flatnonzero(added == np.float32(0.01))
    assert len(starts) == 4  # 2 rounds x 2 episodes
    for a, b in zip(starts, [*starts[1:], len(added)], strict=True):
        np.testing.assert_array_equal(added[a:b], np.float32(np.arange(1, b - a + 1) / 100))
