"""A pretrained agent as a small ``.npz`` file: policy weights, observation normalisation and
a JSON description, run in numpy (no torch, no Stable-Baselines3).

The file holds numeric arrays and one string array, ``meta`` (JSON). It is read with
``numpy.load(allow_pickle=False)``: nothing in it is unpickled, so a file can hold numbers and
text only, never code. Every array the description names is checked (present, finite, shapes
that chain from the observation to the action) before the agent acts.

Three kinds of policy (``meta["kind"]``):

``"mlp"``
    Stable-Baselines3's actor (PPO, SAC) on a state observation: the observation's
    repeated blocks sorted (``sort_slots`` and, for push-pose keys, ``sort_standoff`` [m];
    train/train.py's ``sort_obs``) and its hidden
    columns set to 0 (``hide_columns``, its ``hide_obs``; :class:`~.view.ObsView`), then
    VecNormalize's ``clip((obs - mean) / sqrt(var + epsilon), -clip, clip)``, then the
    actor's layers (``layer<i>.weight`` (out, in), ``layer<i>.bias``,
    ``meta["layers"][i]["activation"]``).
    The output is the Gaussian's mean, the deterministic action; ``meta["output"]`` says what
    SB3's ``predict`` then does to a Box action: ``"clip"`` to the action space, or
    ``"squash"``, tanh and then scaled from [-1, 1] to the action space (SAC, gSDE with
    ``squash_output``).
``"tee_mixture"``
    train/dagger.py's Push-T policy: the 10 features of :class:`~.tee_frame.TeeFrame`
    (columns in ``meta["columns"]``), normalised by ``feature_mean`` / ``feature_std``, the
    mixture density network's layers, the mean of the heaviest of ``meta["components"]``
    Gaussians, decoded from (direction, log speed) and turned from the T's frame to the
    robot's body frame, clipped to the action space.
``"residual"``
    train/residual.py's residual PPO: a frozen base agent (any other kind; its meta under
    ``meta["base"]``, its arrays under the prefix ``base.``) and an SB3 actor on its
    inputs (:func:`residual_inputs`: the observation, then, as ``meta["residual"]["inputs"]``
    lists them, the base's action and the base's :class:`~.tee_frame.TeeFrame` features),
    normalised and run as an ``"mlp"`` with the output ``"clip"`` to [-1, 1]. The action is
    :func:`residual_action`: ``clip(base + scale * residual, low, high)``, ``scale`` in
    ``meta["residual"]["scale"]``. The training wrapper calls the same two functions.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .tee_frame import TeeFrame, decode
from .view import ObsView

FORMAT = "push_envs.agent"
FORMAT_VERSION = 1
KINDS = ("mlp", "tee_mixture", "residual")
OUTPUTS = ("clip", "squash")
MAX_FILE_BYTES = 64 * 1024 * 1024  # a policy of a few MLP layers is well under 1 MiB
RESIDUAL_INPUTS = ("base_action", "tee_features")
"""What a residual policy may read besides the observation, in the order it is appended."""
BASE_PREFIX = "base."  # a residual agent's arrays of its base agent


# ------------------------------------------------------------------------------ activations
def _erf(x: np.ndarray) -> np.ndarray:
    return np.frompyfunc(math.erf, 1, 1)(x).astype(x.dtype)


def _gelu(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


# name -> (function of (x, **params), the parameters it takes with their defaults). The names
# and parameters are torch.nn's (Tanh, ReLU, ELU(alpha), LeakyReLU(negative_slope),
# GELU(approximate), SiLU, Hardtanh(min_val, max_val)), as train/train.py's ACTIVATIONS.
ACTIVATIONS: dict[str, tuple[Callable[..., np.ndarray], dict[str, Any]]] = {
    "tanh": (lambda x: np.tanh(x), {}),
    "relu": (lambda x: np.maximum(x, 0), {}),
    "elu": (lambda x, alpha: np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))),
            {"alpha": 1.0}),
    "leaky_relu": (lambda x, negative_slope: np.where(x >= 0, x, negative_slope * x),
                   {"negative_slope": 0.01}),
    "gelu": (_gelu, {"approximate": "none"}),
    "silu": (lambda x: x * _sigmoid(x), {}),
    "hardtanh": (lambda x, min_val, max_val: np.clip(x, min_val, max_val),
                 {"min_val": -1.0, "max_val": 1.0}),
}


def activation(spec: Mapping[str, Any] | None) -> Callable[[np.ndarray], np.ndarray] | None:
    """The activation a layer's description names (``{"activation": "elu", "alpha": 1.0}``;
    ``None`` or ``{"activation": None}``: none). An unknown name or parameter: ValueError."""
    name = (spec or {}).get("activation")
    if name is None:
        return None
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; known: {sorted(ACTIVATIONS)}")
    fn, defaults = ACTIVATIONS[name]
    extra = sorted(set(spec) - {"activation"} - set(defaults))  # type: ignore[arg-type]
    if extra:
        raise ValueError(f"activation {name!r} takes {sorted(defaults) or 'no parameters'}, "
                         f"got {extra}")
    params = {k: spec.get(k, v) for k, v in defaults.items()}  # type: ignore[union-attr]
    return lambda x: fn(x, **params)


# ------------------------------------------------------------------------------------ agent
class Agent:
    """A loaded agent: ``agent(obs)`` maps observations (N, obs_dim), or one (obs_dim,), to
    deterministic actions (N, act_dim) (or (act_dim,)) in the action space, float32.

    ``meta`` is the file's description: ``env_id``, ``robot``, ``env_kwargs`` (the task
    arguments it was trained with; make the env with them), ``policy`` (e.g. ``"PPO"``),
    ``training`` (the command, seed, env steps and wall clock that produced it) and the
    architecture. Build one with :func:`load` or :func:`read`.
    """

    def __init__(self, meta: dict[str, Any], arrays: Mapping[str, np.ndarray],
                 path: Path | None = None) -> None:
        self.meta, self.path = meta, path
        self._arrays = dict(arrays)
        self._check()

    # properties ---------------------------------------------------------------------------
    @property
    def env_id(self) -> str:
        """The task id the agent was trained on."""
        return self.meta["env_id"]

    @property
    def robot(self) -> str:
        """The robot it drives (``diff``, ``omni`` or ``acker``)."""
        return self.meta["robot"]

    @property
    def env_kwargs(self) -> dict[str, Any]:
        """The task arguments the agent was trained with (``robot`` among them)."""
        return {**self.meta.get("env_kwargs", {}), "robot": self.robot}

    @property
    def policy(self) -> str:
        """What trained it, e.g. ``"PPO (warm start)"`` or ``"DAgger"``."""
        return self.meta.get("policy", self.meta["kind"])

    @property
    def observation_dim(self) -> int:
        """The length of the observation it reads."""
        return int(self.meta["observation_dim"])

    @property
    def action_dim(self) -> int:
        """The length of the action it returns."""
        return int(self.meta["action_dim"])

    def __repr__(self) -> str:
        where = f", {self.path}" if self.path else ""
        return (f"Agent({self.env_id}, robot={self.robot}, {self.policy}, "
                f"{self.observation_dim} -> {self.action_dim}{where})")

    # checks -------------------------------------------------------------------------------
    def _array(self, key: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
        if key not in self._arrays:
            raise ValueError(f"{self._where()}: array {key!r} missing")
        a = self._arrays[key]
        if a.dtype.kind not in "fiu" or not np.all(np.isfinite(a)):
            raise ValueError(f"{self._where()}: array {key!r} must be finite numbers, got "
                             f"{a.dtype}")
        if shape is not None and a.shape != shape:
            raise ValueError(f"{self._where()}: array {key!r} has shape {a.shape}, expected "
                             f"{shape}")
        return a

    def _where(self) -> str:
        return str(self.path) if self.path else "agent"

    def _check(self) -> None:
        m, where = self.meta, self._where()
        if m.get("format") != FORMAT or m.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"{where}: not a {FORMAT} file of version {FORMAT_VERSION} "
                             f"(format {m.get('format')!r}, version {m.get('format_version')!r})")
        for key, kind in (("env_id", str), ("robot", str), ("kind", str),
                          ("observation_dim", int), ("action_dim", int), ("layers", list)):
            if not isinstance(m.get(key), kind) or isinstance(m.get(key), bool):
                raise ValueError(f"{where}: meta[{key!r}] must be a {kind.__name__}, got "
                                 f"{m.get(key)!r}")
        if m["kind"] not in KINDS:
            raise ValueError(f"{where}: unknown policy kind {m['kind']!r}; known: {KINDS}")
        if not isinstance(m.get("env_kwargs", {}), dict):
            raise ValueError(f"{where}: meta['env_kwargs'] must be a mapping")
        n_obs, n_act = m["observation_dim"], m["action_dim"]
        if n_obs < 1 or n_act < 1:
            raise ValueError(f"{where}: observation_dim and action_dim must be >= 1")
        self.low = self._array("action_low", (n_act,)).astype(np.float32)
        self.high = self._array("action_high", (n_act,)).astype(np.float32)
        if not np.all(self.low < self.high):
            raise ValueError(f"{where}: action_low must be below action_high")
        # the range the actor's own output is clipped or squashed to: the action space's
        # (a residual's actor answers in [-1, 1], scaled onto its base's action)
        self.mlp_low, self.mlp_high = self.low, self.high
        if m["kind"] == "mlp":
            self._check_mlp(n_obs, n_act)
        elif m["kind"] == "tee_mixture":
            self._check_tee(n_obs, n_act)
        else:
            self._check_residual(n_obs, n_act)

    def _layers(self, size: int) -> int:
        """Check the layer chain from an input of ``size``; returns the output size."""
        if not self.meta["layers"]:
            raise ValueError(f"{self._where()}: the policy has no layers")
        self._funcs = []
        for i, spec in enumerate(self.meta["layers"]):
            if not isinstance(spec, dict):
                raise ValueError(f"{self._where()}: layer {i} must be a mapping, got {spec!r}")
            w = self._array(f"layer{i}.weight")
            if w.ndim != 2 or w.shape[1] != size:
                raise ValueError(f"{self._where()}: layer {i} weight has shape {w.shape}; "
                                 f"its input has {size} values")
            self._array(f"layer{i}.bias", (w.shape[0],))
            try:
                self._funcs.append(activation(spec))
            except ValueError as exc:
                raise ValueError(f"{self._where()}: layer {i}: {exc}") from None
            size = w.shape[0]
        self._w = [self._arrays[f"layer{i}.weight"].astype(np.float32).T
                   for i in range(len(self.meta["layers"]))]
        self._b = [self._arrays[f"layer{i}.bias"].astype(np.float32)
                   for i in range(len(self.meta["layers"]))]
        return size

    def _check_mlp(self, n_obs: int, n_act: int, outputs: tuple[str, ...] = OUTPUTS) -> None:
        m, where = self.meta, self._where()
        if m.get("output") not in outputs:
            raise ValueError(f"{where}: meta['output'] must be one of {outputs}, got "
                             f"{m.get('output')!r}")
        self.view = ObsView(n_obs, self._arrays.get("hide_columns", ()),
                            self._arrays.get("sort_slots", ()), where,
                            self._arrays.get("sort_standoff"))
        norm = m.get("obs_norm")
        if norm is not None:
            if not isinstance(norm, dict) or not all(
                    isinstance(norm.get(k), (int, float)) and norm[k] > 0
                    for k in ("epsilon", "clip")):
                raise ValueError(f"{where}: meta['obs_norm'] must hold epsilon > 0 and "
                                 f"clip > 0, got {norm!r}")
            self.obs_mean = self._array("obs_mean", (n_obs,)).astype(np.float64)
            var = self._array("obs_var", (n_obs,)).astype(np.float64)
            if np.any(var < 0):
                raise ValueError(f"{where}: obs_var must be >= 0")
            self.obs_scale = np.sqrt(var + float(norm["epsilon"]))
            self.obs_clip = float(norm["clip"])
        out = self._layers(n_obs)
        if out != n_act:
            raise ValueError(f"{where}: the last layer gives {out} values; the action has "
                             f"{n_act}")

    def _check_tee(self, n_obs: int, n_act: int) -> None:
        m, where = self.meta, self._where()
        k, enc = m.get("components"), 3  # the encoded action: direction x, y; log speed
        if n_act != 2 or not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError(f"{where}: a tee_mixture policy acts in 2 dimensions with "
                             f"components >= 1; got action_dim {n_act}, components {k!r}")
        try:
            self.frame = TeeFrame.from_columns(m.get("columns") or {})
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if max(self.frame.columns.values()) + 2 > n_obs:
            raise ValueError(f"{where}: the frame's columns {self.frame.columns} lie beyond "
                             f"the observation's {n_obs}")
        self.feature_mean = self._array("feature_mean", (TeeFrame.SIZE,)).astype(np.float32)
        std = self._array("feature_std", (TeeFrame.SIZE,)).astype(np.float32)
        if np.any(std <= 0):
            raise ValueError(f"{where}: feature_std must be > 0")
        self.feature_std = std
        out = self._layers(TeeFrame.SIZE)
        if out != k * (1 + 2 * enc):
            raise ValueError(f"{where}: the head gives {out} values; {k} components of "
                             f"{enc}-dimensional Gaussians need {k * (1 + 2 * enc)}")
        self.components, self.encoded = k, enc

    def _check_residual(self, n_obs: int, n_act: int) -> None:
        m, where = self.meta, self._where()
        base_meta, res = m.get("base"), m.get("residual")
        if not isinstance(base_meta, dict) or base_meta.get("kind") == "residual":
            raise ValueError(f"{where}: a residual agent needs meta['base'], the description "
                             f"of a base agent of another kind")
        if not isinstance(res, dict):
            raise ValueError(f"{where}: a residual agent needs meta['residual'] (scale, "
                             f"inputs)")
        scale, inputs = res.get("scale"), res.get("inputs")
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or \
                not math.isfinite(scale) or scale <= 0:
            raise ValueError(f"{where}: meta['residual']['scale'] must be a number > 0, got "
                             f"{scale!r}")
        if not isinstance(inputs, list) or any(i not in RESIDUAL_INPUTS for i in inputs) or \
                list(dict.fromkeys(inputs)) != sorted(inputs, key=RESIDUAL_INPUTS.index):
            raise ValueError(f"{where}: meta['residual']['inputs'] must list some of "
                             f"{list(RESIDUAL_INPUTS)} once each, in that order; got "
                             f"{inputs!r}")
        arrays = {k[len(BASE_PREFIX):]: v for k, v in self._arrays.items()
                  if k.startswith(BASE_PREFIX)}
        base_meta = {**base_meta, "format": FORMAT, "format_version": FORMAT_VERSION}
        try:
            self.base = Agent(base_meta, arrays)
        except ValueError as exc:
            raise ValueError(f"{where}: its base agent: {exc}") from None
        b = self.base
        if (b.env_id, b.robot, b.observation_dim, b.action_dim) != \
                (m["env_id"], m["robot"], n_obs, n_act):
            raise ValueError(f"{where}: its base agent acts on {b.env_id} ({b.robot}, "
                             f"{b.observation_dim} -> {b.action_dim}), not on {m['env_id']} "
                             f"({m['robot']}, {n_obs} -> {n_act})")
        if "tee_features" in inputs and b.meta["kind"] != "tee_mixture":
            raise ValueError(f"{where}: the input tee_features needs a tee_mixture base, not "
                             f"{b.meta['kind']!r}")
        self.scale, self.inputs = float(scale), tuple(inputs)
        self.mlp_low = np.full(n_act, -1.0, np.float32)
        self.mlp_high = np.full(n_act, 1.0, np.float32)
        n_in = n_obs + n_act * ("base_action" in inputs) + \
            TeeFrame.SIZE * ("tee_features" in inputs)
        self._check_mlp(n_in, n_act, outputs=("clip",))

    # acting -------------------------------------------------------------------------------
    def _net(self, x: np.ndarray) -> np.ndarray:
        for w, b, f in zip(self._w, self._b, self._funcs, strict=True):
            x = x @ w + b
            if f is not None:
                x = f(x)
        return x

    def __call__(self, obs: Any) -> np.ndarray:
        o = np.asarray(obs)
        single = o.ndim == 1
        if single:
            o = o[None]
        if o.ndim != 2 or o.shape[1] != self.observation_dim:
            raise ValueError(f"{self!r} takes observations of shape (N, "
                             f"{self.observation_dim}), got {np.shape(obs)}")
        kind = self.meta["kind"]
        if kind == "mlp":
            act = self._act_mlp(o)
        elif kind == "tee_mixture":
            act = self._act_tee(o)
        else:
            act = self._act_residual(o)
        return act[0] if single else act

    def _act_mlp(self, o: np.ndarray) -> np.ndarray:
        x = self.view(np.array(o, np.float64))
        if self.meta.get("obs_norm") is not None:
            x = np.clip((x - self.obs_mean) / self.obs_scale, -self.obs_clip, self.obs_clip)
        a = self._net(x.astype(np.float32))
        lo, hi = self.mlp_low, self.mlp_high
        if self.meta["output"] == "squash":
            return (lo + 0.5 * (np.tanh(a) + 1.0) * (hi - lo)).astype(np.float32)
        return np.clip(a, lo, hi).astype(np.float32)

    def _act_tee(self, o: np.ndarray) -> np.ndarray:
        x = (self.frame.features(o) - self.feature_mean) / self.feature_std
        h = self._net(x).reshape(len(o), self.components, 1 + 2 * self.encoded)
        mu = h[np.arange(len(o)), h[..., 0].argmax(-1), 1:1 + self.encoded]
        act = self.frame.from_frame(o, decode(mu))
        return np.clip(act, self.low, self.high).astype(np.float32)


    def _act_residual(self, o: np.ndarray) -> np.ndarray:
        base = self.base(o)
        residual = self._act_mlp(residual_inputs(self.base, o, base, self.inputs))
        return residual_action(base, residual, self.scale, self.low, self.high)


def residual_inputs(base: Agent, obs: np.ndarray, base_action: np.ndarray,
                    inputs: tuple[str, ...] | list[str]) -> np.ndarray:
    """A residual policy's input rows: the observations (N, obs_dim), then for each of
    ``inputs`` (:data:`RESIDUAL_INPUTS`, in that order) the base's actions ``base_action``
    (N, act_dim) or the base's T-frame features (N, 10), float32."""
    parts = [np.asarray(obs, np.float32)]
    if "base_action" in inputs:
        parts.append(np.asarray(base_action, np.float32))
    if "tee_features" in inputs:
        parts.append(base.frame.features(obs))
    return np.concatenate(parts, axis=1)


def residual_action(base_action: np.ndarray, residual: np.ndarray, scale: float,
                    low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The action a residual policy takes: ``clip(base + scale * clip(residual, -1, 1),
    low, high)``, float32 (the residual as SB3 hands a Box action to the env: clipped to
    its [-1, 1] space)."""
    r = np.clip(np.asarray(residual, np.float32), -1.0, 1.0)
    a = np.asarray(base_action, np.float32) + np.float32(scale) * r
    return np.clip(a, low, high).astype(np.float32)


# ------------------------------------------------------------------------------- the file
def read(path: str | os.PathLike) -> Agent:
    """The agent in the ``.npz`` file ``path``, read without unpickling anything and checked
    (see the module docs). A file that is not such an agent raises ValueError naming it."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no agent file {path}")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(f"{path}: {size} bytes; an agent file holds at most "
                         f"{MAX_FILE_BYTES} (weights and normalisation only)")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (ValueError, OSError) as exc:  # object arrays need pickle: refused here
        raise ValueError(f"{path}: not a numpy .npz of plain arrays ({exc})") from None
    raw = arrays.pop("meta", None)
    if raw is None or raw.dtype.kind != "U" or raw.ndim != 0:
        raise ValueError(f"{path}: no 'meta' string in the file")
    try:
        meta = json.loads(str(raw))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: its 'meta' is not JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: its 'meta' must be a JSON object")
    return Agent(meta, arrays, path)


def write(path: str | os.PathLike, meta: Mapping[str, Any],
          arrays: Mapping[str, np.ndarray]) -> Agent:
    """Write an agent file (``meta`` as JSON beside the arrays) and return it as read back.
    ``format`` and ``format_version`` are filled in. The file is written aside and renamed
    into place only once it reads back as a valid agent, so a bad agent never lands at
    ``path``."""
    path = Path(path)
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, **meta}
    if "meta" in arrays:
        raise ValueError("'meta' is the description's key; name the array otherwise")
    Agent(meta, arrays)  # refuses a bad agent before anything is written
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".npz", dir=path.parent)
    os.close(fd)
    try:
        np.savez_compressed(tmp, meta=np.array(json.dumps(meta, sort_keys=True)),
                            **{k: np.asarray(v) for k, v in arrays.items()})
        agent = read(tmp)
        # mkstemp makes the file private (0600); a shipped agent is read by every user.
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    agent.path = path
    return agent
