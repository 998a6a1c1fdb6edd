"""train/residual.py: residual PPO on a frozen DAgger base starts at the base's actions, and
its exported ``"residual"`` agent acts as the training wrapper does."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("tyro")

import torch  # noqa: E402
from train_scripts import load_script  # noqa: E402

import push_envs.baselines as B  # noqa: E402
from push_envs.baselines import evaluation as E  # noqa: E402
from push_envs.baselines.agent import BASE_PREFIX  # noqa: E402
from push_envs.baselines.agent import residual_action  # noqa: E402

D = load_script("dagger.py")
R = load_script("residual.py")
T = load_script("train.py")
X = load_script("export.py")

STEPS = 20  # episode length of the tiny runs (env_kwargs max_episode_steps)
TINY = ["--n-envs", "4", "--eval-episodes", "2", "--eval-envs", "2", "--no-progress",
        "--update-threads", "1", "--hp", "n_steps=32", "--hp", "batch_size=64",
        "--hp", "n_epochs=2", "--hp", f"env_kwargs={{max_episode_steps: {STEPS}}}",
        "--hp", "policy_kwargs={net_arch: {pi: [32, 16], vf: [32]}}"]


def _observations(n: int = 16, steps: int = 12, seed: int = 3) -> np.ndarray:
    """Observations of a short random PushT-v0 rollout (other seeds than the exporter's)."""
    venv = gym.make_vec("PushT-v0", num_envs=n, robot="omni", success="coverage",
                        num_threads=1)
    obs, _ = venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rows = [obs]
    for _ in range(steps):
        obs, *_ = venv.step(rng.uniform(-1, 1, venv.action_space.shape).astype(np.float32))
        rows.append(obs)
    venv.close()
    return np.concatenate(rows)


@pytest.fixture(scope="module")
def dagger_run(tmp_path_factory) -> Path:
    """A tiny train/dagger.py run folder (as tests/train/test_export.py makes one)."""
    args = D.Args(episodes=10, rounds=0, epochs=2, hidden=[32, 16], components=3,
                  num_envs=10, seed=4)
    policy, info = D.train(args)
    run = tmp_path_factory.mktemp("runs") / "PushT-v0" / "dagger" / "4"
    run.mkdir(parents=True)
    D.save(policy, run / "policy.pt", args)
    (run / "args.json").write_text(json.dumps(asdict(args)))
    (run / "result.json").write_text(json.dumps({**info, "coverage_success_rate": 0.0}))
    return run


@pytest.fixture(scope="module")
def base(dagger_run: Path, tmp_path_factory) -> B.Agent:
    out = tmp_path_factory.mktemp("base") / "base.npz"
    X.export(dagger_run, out=out)
    return B.load_file(out)


@pytest.fixture(scope="module")
def residual_run(dagger_run: Path, tmp_path_factory) -> Path:
    """384 steps of residual PPO (3 rollouts of 4 x 32), the first update critic-only; a
    learning rate large enough that the actor visibly moves."""
    root = tmp_path_factory.mktemp("runs")
    R.main(["--base", str(dagger_run), "--seed", "2", "--timesteps", "384",
            "--eval-freq", "256", "--run-dir", str(root), "--hp", "learning_rate=3e-3",
            "--hp", "critic_warmup=128", "--hp", "target_kl=null", *TINY])
    return root / "PushT-v0" / "residual" / "2"


def _hyperparams(**over) -> tuple[dict, dict]:
    hp = R.load_hyperparams("PushT-v0")
    hp.update(over)
    hp["env_kwargs"] = {**hp["env_kwargs"], "max_episode_steps": STEPS}
    res = R.settings(hp)
    return hp, res


def test_the_yml_entry_fine_tunes_from_the_base():
    hp, res = _hyperparams()
    assert res == {"scale": 0.3, "inputs": ["base_action", "tee_features"],
                   "critic_warmup": 200_000, "log_std_final": -5.0}
    assert hp["env_kwargs"] == {"robot": "omni", "success": "coverage", "shaping": "keypoints",
                                "max_episode_steps": STEPS}
    assert (hp["gamma"], hp["n_envs"], hp["learning_rate"]) == (0.99, 256, "lin_1e-4")
    pk = hp["policy_kwargs"]
    assert pk["log_std_init"] == -2.0 and pk["activation_fn"] == "Tanh"  # default's, merged
    assert not {"scale", "inputs", "critic_warmup", "log_std_final"} & set(hp)
    with pytest.raises(ValueError, match="scale must be a finite number > 0, got 0"):
        R.settings({"scale": 0})
    with pytest.raises(ValueError, match="inputs must list some of"):
        R.settings({"inputs": ["velocity"]})
    with pytest.raises(ValueError, match="warm_start is not supported"):
        R.settings({"warm_start": {"episodes": 10}})
    with pytest.raises(ValueError, match="min_std is not supported by residual PPO"):
        R.settings({"min_std": 0.3})
    with pytest.raises(ValueError, match="max_std is not supported by residual PPO"):
        R.settings({"max_std": 0.6})
    with pytest.raises(ValueError, match="log_std_final must be a number or null"):
        R.settings({"log_std_final": "low"})
    assert R.settings({"inputs": ["tee_features", "base_action"]}, scale=0.1) == \
        {"scale": 0.1, "inputs": ["base_action", "tee_features"], "critic_warmup": 0,
         "log_std_final": None}


def test_at_step_0_the_residual_policy_is_the_base(base: B.Agent):
    hp, res = _hyperparams(n_envs=4, n_steps=32, batch_size=64)
    env = R.residual_env("PushT-v0", 4, 0, hp, base, res)
    model = R.build_model(env, hp, seed=0)
    obs = _observations()
    wrapper, norm = R.unwrap(env)
    assert wrapper.observation_space.shape == (53 + 2 + 10,)
    assert norm is not None and norm.norm_obs
    # Observation statistics far from the identity change every hidden unit, not the action.
    x = wrapper.observe(obs)[1]
    norm.obs_rms.mean, norm.obs_rms.var = x.mean(0), x.var(0) + 0.5
    act = R.deterministic_action(model, env, obs)
    np.testing.assert_array_equal(act, base(obs))
    assert np.abs(act).max() > 0.05  # the base does act
    # Exploration: std = scale x exp(log_std_init) around the base, per action dimension.
    std = res["scale"] * np.exp(model.policy.log_std.detach().numpy())
    np.testing.assert_allclose(std, 0.3 * np.exp(-2.0), rtol=1e-6)
    # The batch steps with the base's action for a zero residual, and observes base + inputs.
    first = env.reset()
    assert first.shape == (4, 65)
    np.testing.assert_array_equal(wrapper.env_action(np.zeros((4, 2), np.float32)),
                                  wrapper.base_action)
    np.testing.assert_array_equal(
        wrapper.env_action(np.full((4, 2), 5.0, np.float32)),
        np.clip(wrapper.base_action + np.float32(0.3), -1, 1))  # the residual clipped to 1
    env.close()


def _tiny_model(base: B.Agent) -> tuple:
    """A residual batch of 4 PushT-v0 envs on ``base`` and its PPO (rollouts of 32 steps, 2
    epochs of minibatches of 64, a 3e-3 step, no KL stop): quick updates that move."""
    hp, res = _hyperparams(n_envs=4, n_steps=32, batch_size=64, n_epochs=2,
                           learning_rate=3e-3, target_kl=None)
    env = R.residual_env("PushT-v0", 4, 1, hp, base, res)
    return env, R.build_model(env, hp, seed=1)


def test_critic_warmup_freezes_the_actor(base: B.Agent):
    env, model = _tiny_model(base)
    actor = [p.detach().clone() for p in R.actor_parameters(model)]
    critic = [p.detach().clone() for p in model.policy.mlp_extractor.value_net.parameters()]
    warm = R.Schedule(10_000)
    model.learn(256, callback=warm)
    for before, p in zip(actor, R.actor_parameters(model), strict=True):
        torch.testing.assert_close(p.detach(), before, rtol=0, atol=0)
    moved = [float((p.detach() - b).abs().max()) for b, p in
             zip(critic, model.policy.mlp_extractor.value_net.parameters(), strict=True)]
    assert min(moved) > 1e-4  # the critic learned meanwhile
    assert not warm.frozen and all(p.requires_grad for p in R.actor_parameters(model))
    env.close()


def test_the_log_std_is_lowered_on_a_line_not_learned(base: B.Agent):
    env, model = _tiny_model(base)
    seen = []

    class Record(R.BaseCallback):
        def _on_rollout_end(self) -> None:  # the log std the rollout was played with
            seen.append(float(self.model.policy.log_std.detach()[0]))

        def _on_step(self) -> bool:
            return True

    model.learn(384, callback=[R.Schedule(0, log_std_final=-4.0), Record()])
    # rollouts start at 0, 128 and 256 of 384 steps: -2 + (0, 1/3, 2/3) x (-4 - -2)
    np.testing.assert_allclose(seen, [-2.0, -2 - 2 / 3, -2 - 4 / 3], rtol=1e-6)
    log_std = model.policy.log_std.detach().numpy()
    np.testing.assert_allclose(log_std, [-2 - 4 / 3] * 2, rtol=1e-6)  # no update moved it
    assert not model.policy.log_std.requires_grad
    assert float(model.policy.action_net.weight.detach().abs().max()) > 1e-4  # the mean learned
    env.close()


def test_the_run_folder_and_its_result(residual_run: Path, dagger_run: Path):
    names = {p.name for p in residual_run.iterdir()}
    assert {"base.npz", "final_model.zip", "vecnormalize.pkl", "args.json", "result.json",
            "best_model.zip", "best_vecnormalize.pkl", "evaluations.npz"} <= names
    result = json.loads((residual_run / "result.json").read_text())
    assert result["algo"] == "residual" and result["seed"] == 2 and result["env_steps"] == 384
    assert result["residual"] == {"scale": 0.3, "inputs": ["base_action", "tee_features"],
                                  "critic_warmup": 128, "log_std_final": -5.0}
    assert result["env_kwargs"] == {"robot": "omni", "success": "coverage",
                                    "shaping": "keypoints", "max_episode_steps": STEPS}
    for which in ("base", "final", "best"):
        assert result[which]["episodes"] == 2 and 0.0 <= result[which]["success_rate"] <= 1.0
        assert result[which]["mean_length"] <= STEPS
    saved = json.loads((residual_run / "args.json").read_text())
    assert saved["args"]["base"] == str(dagger_run) and saved["base"]["kind"] == "tee_mixture"
    # the run's base.npz is the DAgger policy: same actions as the torch policy
    obs = _observations()
    policy = D.load_policy(dagger_run / "policy.pt")
    np.testing.assert_allclose(B.load_file(residual_run / "base.npz")(obs), policy(obs),
                               atol=1e-5)


def test_the_exported_agent_acts_as_the_training_wrapper(residual_run: Path, base: B.Agent,
                                                         dagger_run: Path, tmp_path: Path):
    out = tmp_path / "residual.npz"
    agent = X.export(residual_run, out=out)
    saved = json.loads((residual_run / "args.json").read_text())
    hp, res = saved["hyperparams"], saved["residual"]
    stats = residual_run / "vecnormalize.pkl"
    env = R.residual_env("PushT-v0", 2, 0, hp, base, res, stats=stats, training=False)
    model = T.load_model("ppo", residual_run / "final_model.zip")
    obs = _observations()
    expected = R.deterministic_action(model, env, obs)
    act = B.load_file(out)(obs)
    np.testing.assert_allclose(act, expected, atol=1e-5)
    # RL moved the policy off the base (otherwise the check above would be the base's twice)
    gap = np.abs(act - base(obs)).max()
    assert 1e-3 < gap <= 0.3 + 1e-6
    # the agent is the formula: clip(base + scale * clip(mlp, -1, 1), -1, 1)
    wrapper, norm = R.unwrap(env)
    x = norm.normalize_obs(wrapper.observe(obs)[1])
    with torch.no_grad():
        mean = model.policy.get_distribution(torch.as_tensor(x, dtype=torch.float32))
        mean = mean.distribution.mean.numpy()
    np.testing.assert_allclose(act, np.clip(base(obs) + 0.3 * np.clip(mean, -1, 1), -1, 1),
                               atol=1e-5)
    m = agent.meta
    assert (m["kind"], m["robot"], m["output"], m["policy"]) == \
        ("residual", "omni", "clip", "residual PPO on DAgger")
    assert m["residual"] == {"scale": 0.3, "inputs": ["base_action", "tee_features"]}
    assert m["base"]["kind"] == "tee_mixture" and m["base"]["components"] == 3
    assert m["env_kwargs"]["shaping"] == "keypoints" and m["obs_norm"]["clip"] == 10.0
    assert [layer["activation"] for layer in m["layers"]] == ["tanh", "tanh", None]
    assert np.load(out)[BASE_PREFIX + "layer0.weight"].shape == (32, 10)
    t = m["training"]
    assert t["algo"] == "residual" and t["env_steps"] == 384 and t["seed"] == 2
    assert t["command"].startswith(f"python -m train.residual --base {dagger_run} --seed 2 ")
    assert "--timesteps 384 " in t["command"] and "--run-dir" not in t["command"]
    env.close()


def test_evaluate_plays_a_residual_agent(residual_run: Path, tmp_path: Path, monkeypatch,
                                         capsys):
    monkeypatch.setattr(B, "AGENTS_DIR", tmp_path)
    agent = X.main([str(residual_run)])
    assert agent.path == tmp_path / "PushT-v0-omni.npz"
    assert E.main(["evaluate", "PushT-v0", "--robot", "omni", "--episodes", "3",
                   "--num-envs", "3"]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith("PushT-v0 (omni, residual PPO on DAgger, seed 2): ")
    assert "success at >= 0.95" in line and "at >= 0.90" in line
    row = E.evaluate(B.load("PushT-v0", "omni"), episodes=3, num_envs=3)
    assert row["episodes"] == 3 and row["mean_length"] <= STEPS  # the agent's env_kwargs
    assert 0.0 <= row["final_coverage"] <= row["max_coverage"] <= 1.0
    assert row["success_cov95"] <= row["success_cov90"]


def test_a_residual_agent_refuses_a_bad_description(base: B.Agent, residual_run: Path,
                                                    tmp_path: Path):
    agent = X.export(residual_run, out=tmp_path / "ok.npz")
    with np.load(tmp_path / "ok.npz", allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files if k != "meta"}
    meta = {k: v for k, v in agent.meta.items() if k not in ("format", "format_version")}
    for bad, match in (({"residual": {"scale": -1.0, "inputs": []}}, r"\['scale'\] must be"),
                       ({"residual": {"scale": 0.3, "inputs": ["tee_features",
                                                              "base_action"]}}, "in that order"),
                       ({"base": {**meta["base"], "robot": "diff", "env_kwargs": {
                           **meta["base"].get("env_kwargs", {}), "robot": "diff"}}},
                        "its base agent acts on"),
                       ({"base": {**meta["base"], "robot": "diff"}},
                        "its base agent: .* says robot 'omni', the agent drives 'diff'"),
                       ({"output": "squash"}, "must be one of")):
        with pytest.raises(ValueError, match=match):
            B.write(tmp_path / "bad.npz", {**meta, **bad}, arrays)
    # an input the MLP was not trained on changes the input size: refused by shape
    with pytest.raises(ValueError, match=r"'obs_mean' has shape \(65,\), expected \(63,\)"):
        B.write(tmp_path / "bad.npz", {**meta, "residual": {"scale": 0.3,
                                                           "inputs": ["tee_features"]}}, arrays)
    missing = {k: v for k, v in arrays.items() if k != BASE_PREFIX + "feature_std"}
    with pytest.raises(ValueError, match="its base agent: agent: array 'feature_std' missing"):
        B.write(tmp_path / "bad.npz", meta, missing)
    assert not (tmp_path / "bad.npz").exists()
    act = residual_action(np.array([[0.9, -0.2]], np.float32), np.array([[2.0, -0.5]]), 0.3,
                          np.array([-1, -1], np.float32), np.array([1, 1], np.float32))
    assert act.dtype == np.float32
    np.testing.assert_allclose(act, [[1.0, -0.35]], atol=1e-7)  # residual 2 clipped to 1
