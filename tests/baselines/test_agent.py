"""push_envs.baselines: the agent file (numbers and JSON, no pickle), its numpy policy, the
lookup by (id, robot) and the shipped agents."""

from __future__ import annotations

import fnmatch
import json
import math
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import push_envs  # noqa: F401  (registers the ids)
import push_envs.baselines as B
from push_envs.baselines import agent as A

ROOT = Path(__file__).resolve().parents[2]


def mlp_meta(n_obs: int, sizes: list[int], acts: list[dict | None], **extra) -> dict:
    return {"env_id": "PushBox-v0", "robot": "diff", "env_kwargs": {}, "policy": "PPO",
            "kind": "mlp", "output": "clip", "observation_dim": n_obs,
            "action_dim": sizes[-1], "obs_norm": None,
            "layers": [dict(a or {"activation": None}) for a in acts], **extra}


def mlp_arrays(n_obs: int, sizes: list[int], seed: int = 0, scale: float = 0.5) -> dict:
    rng = np.random.default_rng(seed)
    out, size = {}, n_obs
    for i, n in enumerate(sizes):
        out[f"layer{i}.weight"] = rng.normal(0, scale, (n, size)).astype(np.float32)
        out[f"layer{i}.bias"] = rng.normal(0, scale, n).astype(np.float32)
        size = n
    out["action_low"] = -np.ones(sizes[-1], np.float32)
    out["action_high"] = np.ones(sizes[-1], np.float32)
    return out


def test_activations_have_torchs_values():
    x = np.array([-2.0, -1.0, 0.0, 1.0, 3.0])
    f = {name: A.activation({"activation": name}) for name in A.ACTIVATIONS}
    np.testing.assert_allclose(f["tanh"](x), np.tanh(x))
    np.testing.assert_allclose(f["relu"](x), [0, 0, 0, 1, 3])
    np.testing.assert_allclose(f["elu"](x), [math.exp(-2) - 1, math.exp(-1) - 1, 0, 1, 3])
    np.testing.assert_allclose(f["leaky_relu"](x), [-0.02, -0.01, 0, 1, 3])
    # GELU: x * Phi(x); Phi(1) = 0.841344746..., Phi(-1) = 0.158655253...
    np.testing.assert_allclose(f["gelu"](x)[1:4], [-0.15865525393, 0.0, 0.84134474607],
                               rtol=1e-9)
    np.testing.assert_allclose(f["silu"](x)[3], 1 / (1 + math.exp(-1)), rtol=1e-12)
    np.testing.assert_allclose(f["hardtanh"](x), [-1, -1, 0, 1, 1])
    elu2 = A.activation({"activation": "elu", "alpha": 2.0})
    assert elu2(np.array([-1.0]))[0] == pytest.approx(2 * (math.exp(-1) - 1))
    tanh_gelu = A.activation({"activation": "gelu", "approximate": "tanh"})
    assert tanh_gelu(np.array([1.0]))[0] == pytest.approx(0.8411919906, rel=1e-8)
    with pytest.raises(ValueError, match="unknown activation 'swish'"):
        A.activation({"activation": "swish"})
    with pytest.raises(ValueError, match=r"activation 'relu' takes no parameters, got \['alpha'\]"):
        A.activation({"activation": "relu", "alpha": 1.0})


def test_an_mlp_agent_hides_normalises_runs_its_layers_and_clips():
    n = 6
    acts = [{"activation": "tanh"}, {"activation": "elu", "alpha": 1.0}, None]
    meta = mlp_meta(n, [5, 4, 2], acts, obs_norm={"epsilon": 1e-8, "clip": 2.0})
    arrays = mlp_arrays(n, [5, 4, 2], scale=1.5)
    arrays["obs_mean"] = np.linspace(-1, 1, n)
    arrays["obs_var"] = np.linspace(0.5, 2.0, n)
    arrays["hide_columns"] = np.array([1, 4])
    agent = B.Agent({"format": A.FORMAT, "format_version": A.FORMAT_VERSION, **meta}, arrays)
    obs = np.random.default_rng(3).normal(0, 3, (50, n))
    # The same computation written out: hidden columns read as 0, VecNormalize, the layers.
    x = obs.copy()
    x[:, [1, 4]] = 0.0
    x = np.clip((x - arrays["obs_mean"]) / np.sqrt(arrays["obs_var"] + 1e-8), -2.0, 2.0)
    h = np.tanh(x @ arrays["layer0.weight"].T + arrays["layer0.bias"])
    h = h @ arrays["layer1.weight"].T + arrays["layer1.bias"]
    h = np.where(h > 0, h, np.exp(np.minimum(h, 0)) - 1)
    mean = h @ arrays["layer2.weight"].T + arrays["layer2.bias"]
    act = agent(obs)
    assert act.dtype == np.float32 and act.shape == (50, 2)
    np.testing.assert_allclose(act, np.clip(mean, -1, 1), atol=1e-5)
    assert (np.abs(mean) > 1).any() and (np.abs(act) == 1).any()  # the clip was exercised
    np.testing.assert_array_equal(agent(obs[7]), act[7])  # one observation -> one action
    with pytest.raises(ValueError, match=r"takes observations of shape \(N, 6\), got \(3, 5\)"):
        agent(obs[:3, :5])


def test_squash_maps_tanh_onto_the_action_space():
    meta = mlp_meta(3, [2], [None], output="squash")
    arrays = mlp_arrays(3, [2])
    arrays["action_low"] = np.array([-1.0, 0.0], np.float32)
    arrays["action_high"] = np.array([1.0, 4.0], np.float32)
    agent = B.Agent({"format": A.FORMAT, "format_version": A.FORMAT_VERSION, **meta}, arrays)
    obs = np.random.default_rng(0).normal(size=(10, 3))
    t = np.tanh(obs @ arrays["layer0.weight"].T + arrays["layer0.bias"])
    np.testing.assert_allclose(agent(obs), np.stack([t[:, 0], 2 * (t[:, 1] + 1)], 1),
                               atol=1e-6)


def test_the_file_round_trips_without_pickle(tmp_path: Path):
    meta = mlp_meta(4, [8, 2], [{"activation": "relu"}, None],
                    training={"command": "python -m train.train --env PushBox-v0 --seed 1",
                              "seed": 1, "env_steps": 500_000, "wall_clock_s": 88.0})
    arrays = mlp_arrays(4, [8, 2])
    path = tmp_path / "sub" / "PushBox-v0-diff.npz"
    written = B.write(path, meta, arrays)
    assert written.path == path and not list(path.parent.glob(".*"))  # no temporary left
    with np.load(path, allow_pickle=False) as data:  # plain arrays and one JSON string
        assert data["meta"].dtype.kind == "U"
        assert all(data[k].dtype != object for k in data.files)
        saved = json.loads(str(data["meta"]))
    assert saved["format"] == "push_envs.agent" and saved["training"]["seed"] == 1
    agent = B.load_file(path)
    obs = np.random.default_rng(1).normal(size=(20, 4))
    np.testing.assert_array_equal(agent(obs), written(obs))
    assert agent.env_kwargs == {"robot": "diff"} and agent.policy == "PPO"
    assert "PushBox-v0, robot=diff, PPO, 4 -> 2" in repr(agent)


@pytest.mark.parametrize(("change", "match"), [
    (lambda m, a: a.pop("layer1.bias"), "array 'layer1.bias' missing"),
    (lambda m, a: a.update({"layer1.weight": np.zeros((2, 7), np.float32)}),
     r"layer 1 weight has shape \(2, 7\); its input has 8 values"),
    (lambda m, a: a.update({"layer0.bias": np.full(8, np.nan, np.float32)}),
     "'layer0.bias' must be finite numbers"),
    (lambda m, a: m.update(action_dim=3), r"'action_low' has shape \(2,\), expected \(3,\)"),
    (lambda m, a: m["layers"][0].update(activation="swish"), "layer 0: unknown activation"),
    (lambda m, a: m.update(kind="transformer"), "unknown policy kind 'transformer'"),
    (lambda m, a: m.update(output="none"), r"meta\['output'\] must be one of"),
    (lambda m, a: m.update(obs_norm={"epsilon": 0, "clip": 10}), "epsilon > 0"),
    (lambda m, a: a.update(hide_columns=np.array([9])), "hide_columns must be column numbers"),
    (lambda m, a: a.update(action_high=-np.ones(2, np.float32)),
     "action_low must be below action_high"),
])
def test_a_bad_agent_is_refused_and_nothing_is_written(tmp_path: Path, change, match):
    meta = mlp_meta(4, [8, 2], [{"activation": "relu"}, None])
    arrays = mlp_arrays(4, [8, 2])
    change(meta, arrays)
    with pytest.raises(ValueError, match=match):
        B.write(tmp_path / "x.npz", meta, arrays)
    assert not list(tmp_path.iterdir())


def test_files_that_are_not_agents_are_refused(tmp_path: Path):
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, meta=np.array("{}"), w=np.array([{"code": 1}], dtype=object))
    with pytest.raises(ValueError, match="has dtype object; .*nothing pickled"):
        B.load_file(pickled)
    no_meta = tmp_path / "no_meta.npz"
    np.savez(no_meta, w=np.zeros(3))
    with pytest.raises(ValueError, match="no 'meta' string"):
        B.load_file(no_meta)
    old = tmp_path / "old.npz"
    meta = {**mlp_meta(4, [2], [None]), "format": A.FORMAT, "format_version": 99}
    np.savez(old, meta=np.array(json.dumps(meta)), **mlp_arrays(4, [2]))
    with pytest.raises(ValueError, match="of version 1 .*version 99"):
        B.load_file(old)
    with pytest.raises(FileNotFoundError, match="no agent file"):
        B.load_file(tmp_path / "missing.npz")


def test_a_tee_mixture_agent_is_checked():
    meta = {"format": A.FORMAT, "format_version": A.FORMAT_VERSION, "env_id": "PushT-v0",
            "robot": "omni", "kind": "tee_mixture", "observation_dim": 60, "action_dim": 2,
            "components": 3, "layers": [{"activation": "relu"}, {"activation": None}],
            "columns": {"robot": 0, "heading": 2, "obj": 10, "obj_heading": 12, "goal": 20,
                        "goal_heading": 22}}
    arrays = mlp_arrays(10, [16, 21])
    arrays["action_low"], arrays["action_high"] = -np.ones(2), np.ones(2)
    arrays["feature_mean"], arrays["feature_std"] = np.zeros(10), np.ones(10)
    agent = B.Agent(meta, arrays)
    obs = np.random.default_rng(0).normal(size=(9, 60))
    act = agent(obs)
    assert act.shape == (9, 2) and np.all(np.abs(act) <= 1)
    with pytest.raises(ValueError, match="the head gives 21 values; 4 components"):
        B.Agent({**meta, "components": 4}, arrays)
    with pytest.raises(ValueError, match="missing \\['goal_heading'\\]"):
        B.Agent({**meta, "columns": {k: v for k, v in meta["columns"].items()
                                     if k != "goal_heading"}}, arrays)


def _ship(folder: Path, env_id: str, robot: str, n_obs: int = 4, n_act: int = 2) -> None:
    meta = {**mlp_meta(n_obs, [n_act], [None]), "env_id": env_id, "robot": robot}
    B.write(folder / f"{env_id}-{robot}.npz", meta, mlp_arrays(n_obs, [n_act]))


def test_load_finds_an_agent_by_id_and_robot_and_names_the_others(tmp_path, monkeypatch):
    monkeypatch.setattr(B, "AGENTS_DIR", tmp_path)
    assert B.available() == []
    with pytest.raises(KeyError, match="no pretrained agent for PushBox-v0; agents exist for: "
                                       "none yet. Export one .*train.export"):
        B.load("PushBox-v0")
    _ship(tmp_path, "PushT-v0", "omni")
    _ship(tmp_path, "PushBox-v0", "acker")
    _ship(tmp_path, "PushBox-v0", "diff")
    (tmp_path / "notes.npz").write_bytes(b"")  # not <id>-<robot>: not an agent
    assert B.available() == [("PushBox-v0", "diff"), ("PushBox-v0", "acker"),
                             ("PushT-v0", "omni")]
    assert B.load("PushBox-v0").robot == "diff"  # the task's default robot
    assert B.load("PushT-v0").robot == "omni"  # its only agent (the task's default: diff)
    assert B.load("PushBox-v0", "acker").robot == "acker"
    with pytest.raises(KeyError, match=r"no pretrained agent for PushBox-v0 with "
                                       r"robot='omni'; agents exist for: PushBox-v0 \(diff\), "
                                       r"PushBox-v0 \(acker\), PushT-v0 \(omni\)"):
        B.load("PushBox-v0", "omni")
    with pytest.raises(KeyError, match="no pretrained agent for Sweep-v1"):
        B.load("Sweep-v1")
    (tmp_path / "PushBox-v0-acker.npz").replace(tmp_path / "Sweep-v1-diff.npz")
    with pytest.raises(ValueError, match=r"describes PushBox-v0 \(acker\), not Sweep-v1 "
                                         r"\(diff\)"):
        B.load("Sweep-v1")


def test_the_wheel_declares_the_agents_as_package_data():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = conf["tool"]["setuptools"]["package-data"]["push_envs.baselines"]
    rel = B.agent_path("PushBox-v0", "diff").relative_to(ROOT / "push_envs" / "baselines")
    assert any(fnmatch.fnmatch(rel.as_posix(), g) for g in globs)


def test_every_registered_task_ships_an_agent_and_pushbox_one_per_drive():
    shipped = B.available()
    assert sorted({env_id for env_id, _ in shipped}) == sorted(push_envs.ENV_IDS)
    assert sorted(r for env_id, r in shipped if env_id == "PushBox-v0") == \
        ["acker", "diff", "omni"]


@pytest.mark.parametrize(("env_id", "robot"), B.available())
def test_every_shipped_agent_loads_and_fits_its_task(env_id, robot):
    agent = B.load(env_id, robot)
    assert (agent.env_id, agent.robot) == (env_id, robot)
    assert agent.path.stat().st_size < 4 * 1024 * 1024  # weights and normalisation only
    t = agent.meta["training"]
    assert t["command"].startswith("python -m train.") and t["env_steps"] > 0
    envs = gym.make_vec(env_id, num_envs=3, **agent.env_kwargs)
    obs, _ = envs.reset(seed=B.EVAL_SEED)
    act = agent(obs)
    envs.close()
    assert act.shape == envs.action_space.shape and np.all(np.isfinite(act))


# ------------------------------------------------------------------ hostile and damaged files
def _agent_file(folder: Path, name: str = "a.npz", **overrides) -> tuple[Path, B.Agent]:
    meta = mlp_meta(4, [8, 2], [{"activation": "elu", "alpha": 1.0}, None])
    arrays = {**mlp_arrays(4, [8, 2]), **overrides}
    agent = B.write(folder / name, meta, arrays)
    return agent.path, agent


def _npz(path: Path, members: dict) -> Path:
    """A zip of .npy members written member by member (``members``: name -> raw bytes, or
    (header dict, n bytes of zero values) streamed without holding them)."""
    import zipfile

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in members.items():
            with zf.open(name, "w", force_zip64=True) as fh:
                if isinstance(content, bytes):
                    fh.write(content)
                    continue
                header, nbytes = content
                np.lib.format.write_array_header_1_0(fh, header)
                chunk = bytes(1 << 20)
                for start in range(0, nbytes, len(chunk)):
                    fh.write(chunk[:min(len(chunk), nbytes - start)])
    return path


def _npy(array: np.ndarray) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def _meta_member(meta: dict) -> bytes:
    return _npy(np.array(json.dumps({"format": A.FORMAT, "format_version": A.FORMAT_VERSION,
                                     **meta})))


@pytest.mark.parametrize("big", [1e300, -1e39, 3.5e38])
def test_weights_that_overflow_float32_are_refused(tmp_path: Path, big):
    meta = mlp_meta(4, [8, 2], [{"activation": "relu"}, None])
    arrays = mlp_arrays(4, [8, 2])
    arrays["layer1.weight"] = arrays["layer1.weight"].astype(np.float64)
    arrays["layer1.weight"][1, 3] = big  # finite in float64, inf once cast to float32
    with pytest.raises(ValueError, match="'layer1.weight' must be finite numbers in float32, "
                                         "got values beyond float32's range"):
        B.write(tmp_path / "x.npz", meta, arrays)
    path = tmp_path / "crafted.npz"  # the same arrays written without write()'s check
    np.savez(path, meta=np.array(json.dumps({"format": A.FORMAT,
                                             "format_version": A.FORMAT_VERSION, **meta})),
             **arrays)
    with pytest.raises(ValueError, match=f"{path}: array 'layer1.weight' must be finite"):
        B.load_file(path)


@pytest.mark.parametrize(("layer", "match"), [
    ({"activation": "elu", "alpha": float("nan")}, "alpha must be a finite number"),
    ({"activation": "elu", "alpha": "1.0"}, "alpha must be a finite number"),
    ({"activation": "elu", "alpha": True}, "alpha must be a finite number"),
    ({"activation": "elu", "alpha": -0.5}, r"alpha must be a finite number >= 0 and <= 1e\+06"),
    ({"activation": "leaky_relu", "negative_slope": float("inf")}, "negative_slope must be"),
    ({"activation": "leaky_relu", "negative_slope": [0.1]}, "negative_slope must be"),
    ({"activation": "hardtanh", "min_val": 1.0, "max_val": -1.0}, "min_val 1 must be below"),
    ({"activation": "hardtanh", "max_val": None}, "max_val must be a finite number"),
    ({"activation": "gelu", "approximate": "fast"}, r"approximate must be one of \['none', "),
    ({"activation": "gelu", "approximate": 1}, "approximate must be one of"),
    ({"activation": ["relu"]}, r"unknown activation \['relu'\]"),
    ({"activation": None, "alpha": 1.0}, "a layer without activation takes no parameters"),
])
def test_activation_parameters_are_checked_when_the_agent_loads(tmp_path: Path, layer, match):
    meta = mlp_meta(4, [8, 2], [layer, None])
    with pytest.raises(ValueError, match=f"layer 0: .*{match}"):
        B.write(tmp_path / "x.npz", meta, mlp_arrays(4, [8, 2]))
    path = _npz(tmp_path / "crafted.npz", {"meta.npy": _meta_member(meta), **{
        f"{k}.npy": _npy(v) for k, v in mlp_arrays(4, [8, 2]).items()}})
    with pytest.raises(ValueError, match=f"{path}: layer 0: .*{match}"):
        B.load_file(path)


def test_an_agent_with_a_valid_parameter_acts_with_it(tmp_path: Path):
    meta = mlp_meta(4, [8, 2], [{"activation": "hardtanh", "min_val": -0.5, "max_val": 2},
                                None])
    arrays = mlp_arrays(4, [8, 2], scale=2.0)
    agent = B.write(tmp_path / "x.npz", meta, arrays)
    obs = np.random.default_rng(2).normal(size=(16, 4))
    h = np.clip(obs @ arrays["layer0.weight"].T + arrays["layer0.bias"], -0.5, 2.0)
    want = np.clip(h @ arrays["layer1.weight"].T + arrays["layer1.bias"], -1, 1)
    np.testing.assert_allclose(B.load_file(agent.path)(obs), want, atol=1e-5)


def test_damaged_files_raise_a_value_error_naming_the_file(tmp_path: Path):
    good, agent = _agent_file(tmp_path)
    raw = good.read_bytes()
    obs = np.random.default_rng(0).normal(size=(5, 4))
    want = agent(obs)
    cases = {"empty": b"", "garbage": bytes(range(256)) * 4, "renamed .npy": _npy(np.zeros(3)),
             "half a zip header": raw[:30]}
    cases.update({f"cut at {n}": raw[:n] for n in range(1, len(raw), 7)})
    for what, data in cases.items():
        path = tmp_path / "bad.npz"
        path.write_bytes(data)
        with pytest.raises(ValueError, match=f"^{path}: ") as exc:
            B.load_file(path)
        assert "Traceback" not in str(exc.value), what
    # Every byte flipped in turn: a ValueError naming the file, or (a byte the format does
    # not read, e.g. a timestamp) the same agent.
    loaded = 0
    for at in range(len(raw)):
        path = tmp_path / "flipped.npz"
        path.write_bytes(raw[:at] + bytes([raw[at] ^ 0xFF]) + raw[at + 1:])
        try:
            again = B.load_file(path)
        except ValueError as exc:
            assert str(exc).startswith(f"{path}: "), (at, exc)
            continue
        np.testing.assert_array_equal(again(obs), want)
        loaded += 1
    assert loaded < len(raw) // 4  # most bytes matter


def test_members_that_are_not_arrays_are_refused(tmp_path: Path):
    arrays = {f"{k}.npy": _npy(v) for k, v in mlp_arrays(4, [2]).items()}
    meta = _meta_member(mlp_meta(4, [2], [None]))
    cases = [
        ({"meta.npy": meta, **arrays, "notes.txt": b"hello"}, "member 'notes.txt' is not a .npy"),
        ({"meta.npy": meta, **arrays, "extra.npy": _npy(np.zeros(3))},
         r"arrays \['extra'\] are not part of the agent"),
        ({"meta.npy": _npy(np.zeros(2)), **arrays}, "its 'meta' must be one string"),
        ({"meta.npy": meta, **arrays, "name.npy": _npy(np.array("text"))},
         r"arrays \['name'\] hold text"),
        ({"meta.npy": meta, **arrays,
          "rec.npy": _npy(np.zeros(2, [("a", "f4"), ("b", "f4")]))}, "array 'rec' has dtype"),
        ({"meta.npy": _npy(np.array("[1, 2]")), **arrays}, "must be a JSON object"),
        ({"meta.npy": _npy(np.array("{")), **arrays}, "its 'meta' is not JSON"),
    ]
    for members, match in cases:
        path = _npz(tmp_path / "m.npz", members)
        with pytest.raises(ValueError, match=f"{path}: .*{match}"):
            B.load_file(path)


def _peak_of(fn) -> int:
    import tracemalloc

    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_a_crafted_file_is_refused_from_its_headers_before_its_values_are_read(tmp_path):
    meta = _meta_member(mlp_meta(4, [8, 2], [{"activation": "relu"}, None]))
    rest = {f"{k}.npy": _npy(v) for k, v in mlp_arrays(4, [8, 2]).items()
            if k != "layer0.weight"}
    # A few MB on disk, 538 MB of zeros inside: over the arrays' limit.
    wide = ({"descr": "<f4", "fortran_order": False, "shape": (8, 16_812_500)}, 538_000_000)
    path = _npz(tmp_path / "wide.npz", {"meta.npy": meta, "layer0.weight.npy": wide, **rest})
    assert path.stat().st_size < 4_000_000

    def load():
        with pytest.raises(ValueError, match=rf"{path}: array 'layer0.weight' declares shape "
                                             rf"\(8, 16812500\) of float32: 513.08 MiB, more "
                                             rf"than .* nothing was read"):
            B.load_file(path)
    assert _peak_of(load) < 5_000_000  # bytes: nothing near the 538 MB was allocated
    # 48 MB inside, within the limit, in a shape that does not chain from the observation.
    wrong = ({"descr": "<f4", "fortran_order": False, "shape": (8, 1_500_000)}, 48_000_000)
    path = _npz(tmp_path / "wrong.npz", {"meta.npy": meta, "layer0.weight.npy": wrong, **rest})

    def load_wrong():
        with pytest.raises(ValueError, match=rf"{path}: layer 0 weight has shape \(8, "
                                             rf"1500000\); its input has 4 values"):
            B.load_file(path)
    assert _peak_of(load_wrong) < 5_000_000
    # An array of 2^40 float64 declared in a few KB (its values cut short).
    huge = {"descr": "<f8", "fortran_order": False, "shape": (2 ** 40,)}
    header = io_header(huge)
    path = _npz(tmp_path / "huge.npz", {"meta.npy": meta, "layer0.weight.npy":
                                        header + bytes(1000), **rest})

    def load_huge():
        with pytest.raises(ValueError, match=rf"{path}: array 'layer0.weight' declares shape "
                                             rf"\(1099511627776,\) of float64: 8.00 TiB"):
            B.load_file(path)
    assert _peak_of(load_huge) < 5_000_000
    # A file that declares a million members.
    many = tmp_path / "many.npz"
    _npz(many, {f"a{i}.npy": b"" for i in range(MANY)})
    with pytest.raises(ValueError, match=f"{many}: .*{MANY} members, more than"):
        B.load_file(many)


MANY = 5000


def io_header(header: dict) -> bytes:
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue()


def test_an_agent_refuses_env_arguments_that_are_not_the_tasks(tmp_path: Path):
    for kwargs, match in [({"num_envs": 8}, r"holds \['num_envs'\], which whoever runs"),
                          ({"robot": "omni"}, "says robot 'omni', the agent drives 'diff'"),
                          ([1, 2], "must be a mapping of task arguments")]:
        meta = {**mlp_meta(4, [2], [None]), "env_kwargs": kwargs}
        with pytest.raises(ValueError, match=match):
            B.write(tmp_path / "x.npz", meta, mlp_arrays(4, [2]))
    meta = {**mlp_meta(4, [2], [None]), "robot": "tank"}
    with pytest.raises(ValueError, match=r"meta\['robot'\] must be one of \['diff', 'omni'"):
        B.write(tmp_path / "x.npz", meta, mlp_arrays(4, [2]))


@pytest.mark.parametrize(("env_id", "robot"), B.available())
def test_an_agents_action_does_not_depend_on_the_batch(env_id, robot):
    """The same observation gives the same action bits alone and in any batch, as the env
    batch is bit-identical to single envs (a BLAS product, blocked by the batch's size,
    moved actions by up to 1.5e-6 and episodes drifted apart)."""
    agent = B.load(env_id, robot)
    envs = gym.make_vec(env_id, num_envs=37, **agent.env_kwargs)
    obs, _ = envs.reset(seed=B.EVAL_SEED)
    for _ in range(3):
        obs, *_ = envs.step(agent(obs))
    envs.close()
    batch = agent(obs)
    alone = np.stack([agent(o) for o in obs])
    in_pieces = np.concatenate([agent(obs[:5]), agent(obs[5:6]), agent(obs[6:])])
    np.testing.assert_array_equal(batch, alone)
    np.testing.assert_array_equal(batch, in_pieces)
    np.testing.assert_array_equal(agent(np.concatenate([obs, obs, obs]))[74:], batch)


def test_dense_is_the_matrix_product():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(9, 30)).astype(np.float32)
    w = rng.normal(size=(30, 17)).astype(np.float32)
    b = rng.normal(size=17).astype(np.float32)
    out = A.dense(x, w, b)
    assert out.dtype == np.float32 and out.shape == (9, 17)
    np.testing.assert_allclose(out, x.astype(np.float64) @ w + b, rtol=1e-5, atol=1e-5)
    # The sum runs over k in index order, in float32: the loop written out in Python.
    want = np.zeros(17, np.float32)
    for k in range(30):
        want = want + x[3, k] * w[k]
    np.testing.assert_array_equal(out[3], want + b)
