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
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from ..core.env import ROBOTS
from ..core.task import choice
from ..core.task import number
from .tee_frame import TeeFrame
from .tee_frame import decode
from .view import ObsView

FORMAT = "push_envs.agent"
FORMAT_VERSION = 1
KINDS = ("mlp", "tee_mixture", "residual")
OUTPUTS = ("clip", "squash")
MAX_FILE_BYTES = 64 * 1024 * 1024  # a policy of a few MLP layers is well under 1 MiB
RESIDUAL_INPUTS = ("base_action", "tee_features")
"""What a residual policy may read besides the observation, in the order it is appended."""
BASE_PREFIX = "base."  # a residual agent's arrays of its base agent
RUN_ARGUMENTS = ("num_envs", "autoreset_mode", "num_threads", "render_mode", "render_envs")
"""Env arguments that belong to whoever runs an agent, never to its ``env_kwargs``."""
MAX_DATA_BYTES = 64 * 1024 * 1024
"""Most bytes an agent file's arrays may hold once read (all of them, uncompressed): checked
from the archive's headers before any value is read."""
MAX_MEMBERS = 256  # arrays in a file (a residual agent of two MLPs has about 25)
MAX_META_CHARS = 1 << 20  # characters of the JSON description


# ------------------------------------------------------------------------------ activations
def _erf(x: np.ndarray) -> np.ndarray:
    return np.frompyfunc(math.erf, 1, 1)(x).astype(x.dtype)


def _gelu(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


# name -> (function of (x, **params), each parameter's default and check). The names and
# parameters are torch.nn's (Tanh, ReLU, ELU(alpha), LeakyReLU(negative_slope),
# GELU(approximate), SiLU, Hardtanh(min_val, max_val)), as train/train.py's ACTIVATIONS; the
# checks are torch's where it has them (Hardtanh: max_val > min_val) and finiteness, so a
# description can neither make NaN actions nor fail at the first call.
ACTIVATIONS: dict[str, tuple[Callable[..., np.ndarray], dict[str, tuple[Any, Any]]]] = {
    "tanh": (lambda x: np.tanh(x), {}),
    "relu": (lambda x: np.maximum(x, 0), {}),
    "elu": (lambda x, alpha: np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))),
            {"alpha": (1.0, number(0.0, 1e6))}),
    "leaky_relu": (lambda x, negative_slope: np.where(x >= 0, x, negative_slope * x),
                   {"negative_slope": (0.01, number(-1e6, 1e6))}),
    "gelu": (_gelu, {"approximate": ("none", choice("none", "tanh"))}),
    "silu": (lambda x: x * _sigmoid(x), {}),
    "hardtanh": (lambda x, min_val, max_val: np.clip(x, min_val, max_val),
                 {"min_val": (-1.0, number(-1e6, 1e6)), "max_val": (1.0, number(-1e6, 1e6))}),
}


def activation(spec: Mapping[str, Any] | None) -> Callable[[np.ndarray], np.ndarray] | None:
    """The activation a layer's description names (``{"activation": "elu", "alpha": 1.0}``;
    ``None`` or ``{"activation": None}``: none). An unknown name, an unknown parameter or a
    parameter of the wrong type or range: ValueError."""
    spec = spec or {}
    name = spec.get("activation")
    if name is None:
        extra = sorted(set(spec) - {"activation"})
        if extra:
            raise ValueError(f"a layer without activation takes no parameters, got {extra}")
        return None
    if not isinstance(name, str) or name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; known: {sorted(ACTIVATIONS)}")
    fn, table = ACTIVATIONS[name]
    extra = sorted(set(spec) - {"activation"} - set(table))
    if extra:
        raise ValueError(f"activation {name!r} takes {sorted(table) or 'no parameters'}, "
                         f"got {extra}")
    params = {k: check(f"activation {name!r}: {k}", spec.get(k, default))
              for k, (default, check) in table.items()}
    if name == "hardtanh" and not params["min_val"] < params["max_val"]:
        raise ValueError(f"activation 'hardtanh': min_val {params['min_val']:g} must be below "
                         f"max_val {params['max_val']:g}")
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

    def __init__(self, meta: dict[str, Any], arrays: Mapping[str, np.ndarray] | ArraySource,
                 path: Path | None = None) -> None:
        self.meta, self.path = meta, path
        # Headers first, values on demand: each array's dtype and shape are checked against
        # the description before its values are read (a file's are read then).
        self._source = arrays if isinstance(arrays, ArraySource) else ArraySource.of(arrays)
        self._used: set[str] = set()
        self._check()
        unused = sorted(set(self._source.names()) - self._used)
        if unused:
            raise ValueError(f"{self._where()}: arrays {unused} are not part of the agent its "
                             f"description gives")

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
    def _header(self, key: str, kinds: str = "fiu") -> tuple[tuple[int, ...], np.dtype]:
        """(shape, dtype) of array ``key``, its values unread: missing, or not of a dtype
        kind in ``kinds``, is refused."""
        if key not in self._source:
            raise ValueError(f"{self._where()}: array {key!r} missing")
        shape, dtype = self._source.header(key)
        if dtype.kind not in kinds:
            raise ValueError(f"{self._where()}: array {key!r} must hold numbers, got {dtype}")
        return shape, dtype

    def _array(self, key: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
        """The values of array ``key``, read once its header has shape ``shape`` (any with
        None): numbers that stay finite in float32, the precision the agent computes in."""
        have, _ = self._header(key)
        if shape is not None and have != shape:
            raise ValueError(f"{self._where()}: array {key!r} has shape {have}, expected "
                             f"{shape}")
        a = self._source.load(key)
        self._used.add(key)
        with np.errstate(over="ignore"):  # the cast of too large a value is what is looked for
            bad = a.dtype.kind == "f" and not np.all(np.isfinite(a.astype(np.float32)))
        if bad:
            bad = "NaN or inf" if not np.all(np.isfinite(a)) else \
                f"values beyond float32's range (+-{np.finfo(np.float32).max:.3g})"
            raise ValueError(f"{self._where()}: array {key!r} must be finite numbers in "
                             f"float32, got {bad}")
        return a

    def _optional(self, key: str, rows_at_most: int) -> Any:
        """An optional integer or float array of at most ``rows_at_most`` rows (its values
        read only then), or None when the file has none."""
        if key not in self._source:
            return None
        shape, _ = self._header(key)
        if len(shape) > 2 or (shape and shape[0] > rows_at_most) or \
                (len(shape) == 2 and shape[1] > 16):
            raise ValueError(f"{self._where()}: array {key!r} has shape {shape}; at most "
                             f"{rows_at_most} rows fit the observation")
        return self._array(key)

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
        if m["robot"] not in ROBOTS:
            raise ValueError(f"{where}: meta['robot'] must be one of {list(ROBOTS)}, got "
                             f"{m['robot']!r}")
        kwargs = m.get("env_kwargs", {})
        if not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
            raise ValueError(f"{where}: meta['env_kwargs'] must be a mapping of task "
                             f"arguments")
        owned = sorted(set(kwargs) & set(RUN_ARGUMENTS))
        if owned:
            raise ValueError(f"{where}: meta['env_kwargs'] holds {owned}, which whoever runs "
                             f"the agent chooses, not the agent (the task's arguments only)")
        if kwargs.get("robot", m["robot"]) != m["robot"]:
            raise ValueError(f"{where}: meta['env_kwargs'] says robot {kwargs['robot']!r}, "
                             f"the agent drives {m['robot']!r}")
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
        """Check the layer chain from an input of ``size``, every shape from the headers
        before any weight is read; returns the output size."""
        layers = self.meta["layers"]
        if not layers:
            raise ValueError(f"{self._where()}: the policy has no layers")
        self._funcs = []
        shapes = []
        for i, spec in enumerate(layers):
            if not isinstance(spec, dict):
                raise ValueError(f"{self._where()}: layer {i} must be a mapping, got {spec!r}")
            w, _ = self._header(f"layer{i}.weight", "f")
            if len(w) != 2 or w[1] != size or w[0] < 1:
                raise ValueError(f"{self._where()}: layer {i} weight has shape {w}; its input "
                                 f"has {size} values")
            b, _ = self._header(f"layer{i}.bias", "f")
            if b != (w[0],):
                raise ValueError(f"{self._where()}: array 'layer{i}.bias' has shape {b}, "
                                 f"expected {(w[0],)}")
            try:
                self._funcs.append(activation(spec))
            except ValueError as exc:
                raise ValueError(f"{self._where()}: layer {i}: {exc}") from None
            shapes.append(w)
            size = w[0]
        self._w = [np.ascontiguousarray(self._array(f"layer{i}.weight", w).T, np.float32)
                   for i, w in enumerate(shapes)]
        self._b = [self._array(f"layer{i}.bias", (w[0],)).astype(np.float32)
                   for i, w in enumerate(shapes)]
        return size

    def _check_mlp(self, n_obs: int, n_act: int, outputs: tuple[str, ...] = OUTPUTS) -> None:
        m, where = self.meta, self._where()
        if m.get("output") not in outputs:
            raise ValueError(f"{where}: meta['output'] must be one of {outputs}, got "
                             f"{m.get('output')!r}")
        hide = self._optional("hide_columns", n_obs)
        sorts = self._optional("sort_slots", n_obs)
        self.view = ObsView(n_obs, () if hide is None else hide,
                            () if sorts is None else sorts, where,
                            self._optional("sort_standoff", n_obs))
        norm = m.get("obs_norm")
        if norm is not None:
            if not isinstance(norm, dict) or set(norm) != {"epsilon", "clip"} or not all(
                    not isinstance(norm[k], bool) and isinstance(norm[k], (int, float))
                    and math.isfinite(norm[k]) and norm[k] > 0 for k in norm):
                raise ValueError(f"{where}: meta['obs_norm'] must hold finite epsilon > 0 and "
                                 f"clip > 0 (and nothing else), got {norm!r}")
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
        base_meta = {**base_meta, "format": FORMAT, "format_version": FORMAT_VERSION}
        try:
            self.base = Agent(base_meta, self._source.under(BASE_PREFIX))
        except ValueError as exc:
            raise ValueError(f"{where}: its base agent: {exc}") from None
        self._used.update(BASE_PREFIX + k for k in self.base._used)
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
        x = np.ascontiguousarray(x, np.float32)
        for w, b, f in zip(self._w, self._b, self._funcs, strict=True):
            x = dense(x, w, b)
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


# A layer's matrix product, row by row in one fixed order. BLAS (numpy's ``@``) blocks a
# product by the batch's size, so one observation's action moved by up to 1.5e-6 between a
# batch and alone (every shipped agent), and episodes of Sweep-v1 and PushMulti-v0 played
# in a batch drifted from the same episodes played one env at a time. Here each output is
#
#     out[n, j] = ((x[n, 0] * w[0, j] + x[n, 1] * w[1, j]) + ...) + b[j]      (float32)
#
# summed over k in index order whatever the batch, with no fused multiply-add (numba does
# not contract without fastmath): an observation's action is the same bits alone, in any
# batch and on any CPU, as the env batch is bit-identical to single envs. The loop over j is
# innermost, so the compiler vectorises it without reordering any sum: about as fast as
# BLAS for these layers (a few hundred wide) and immune to BLAS threads fighting other work.
@njit(cache=True)
def dense(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``x @ w + b`` for x (N, K), w (K, M), b (M,), float32, each row computed alone in a
    fixed order (above): batch-invariant bit for bit."""
    n, m = x.shape[0], w.shape[1]
    out = np.zeros((n, m), np.float32)
    for r in range(n):
        row = out[r]
        for k in range(w.shape[0]):
            xk = x[r, k]
            wk = w[k]
            for j in range(m):
                row[j] += xk * wk[j]
        for j in range(m):
            row[j] += b[j]
    return out


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
class ArraySource:
    """An agent's arrays by name: each one's header (shape, dtype) at no cost, its values on
    :meth:`load`. Made from a mapping of arrays (:meth:`of`) or from an agent file
    (:func:`read`), where loading reads the member only then."""

    def __init__(self, headers: dict[str, tuple[tuple[int, ...], np.dtype]],
                 load: Callable[[str], np.ndarray]) -> None:
        self._headers, self._load = headers, load

    @classmethod
    def of(cls, arrays: Mapping[str, Any]) -> ArraySource:
        values = {k: np.asarray(v) for k, v in arrays.items()}
        return cls({k: (v.shape, v.dtype) for k, v in values.items()}, values.__getitem__)

    def names(self) -> list[str]:
        return list(self._headers)

    def __contains__(self, key: object) -> bool:
        return key in self._headers

    def header(self, key: str) -> tuple[tuple[int, ...], np.dtype]:
        return self._headers[key]

    def load(self, key: str) -> np.ndarray:
        return self._load(key)

    def under(self, prefix: str) -> ArraySource:
        """The arrays whose names start with ``prefix``, without it."""
        n = len(prefix)
        return ArraySource({k[n:]: h for k, h in self._headers.items() if k.startswith(prefix)},
                           lambda key: self._load(prefix + key))


def _size(nbytes: int) -> str:
    for unit, scale in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes} bytes"


# What reading a damaged archive can raise, from the zip layer, the decompressor, numpy's
# header parser and the JSON decoder: each becomes a ValueError that names the file.
_DAMAGE = (ValueError, OSError, EOFError, KeyError, RuntimeError, NotImplementedError,
           UnicodeDecodeError, RecursionError, OverflowError, SyntaxError, struct.error,
           zipfile.BadZipFile, zlib.error)


def _member_count(fh: Any, size: int) -> int:
    """The entry count of a zip's end-of-central-directory record, read before the zip
    module builds an object per entry (a small file can declare a million)."""
    tail = min(size, 22 + 0xFFFF)
    fh.seek(size - tail)
    data = fh.read(tail)
    at = data.rfind(b"PK\x05\x06")
    if at < 0 or len(data) - at < 22:
        raise zipfile.BadZipFile("no end-of-central-directory record")
    return struct.unpack("<H", data[at + 10:at + 12])[0]


def _headers(zf: zipfile.ZipFile, where: str) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Every member's .npy header, checked against the member's size in the archive; the
    values are not read. Refuses a member that is not a .npy array, an object or structured
    dtype (they would need pickle or hide fields), a name given twice, and arrays that hold
    more than MAX_DATA_BYTES together."""
    out: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
    total = 0
    for info in zf.infolist():
        if not info.filename.endswith(".npy"):
            raise ValueError(f"{where}: member {info.filename!r} is not a .npy array")
        key = info.filename[:-4]
        if key in out:
            raise ValueError(f"{where}: array {key!r} is in the file twice")
        with zf.open(info) as fp:
            version = np.lib.format.read_magic(fp)
            read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                           (2, 0): np.lib.format.read_array_header_2_0}.get(version)
            if read_header is None:
                raise ValueError(f"{where}: array {key!r}: .npy format version {version} is "
                                 f"not read here (numpy writes 1.0 or 2.0)")
            shape, fortran, dtype = read_header(fp)
            start = fp.tell()
        if dtype.hasobject or dtype.fields is not None or dtype.kind not in "fiubU":
            raise ValueError(f"{where}: array {key!r} has dtype {dtype}; an agent file holds "
                             f"plain numbers and one string (no objects, nothing pickled)")
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes > MAX_DATA_BYTES:
            raise ValueError(f"{where}: array {key!r} declares shape {shape} of {dtype}: "
                             f"{_size(nbytes)}, more than an agent file's arrays may hold "
                             f"({_size(MAX_DATA_BYTES)}); nothing was read")
        if info.file_size != start + nbytes:
            raise ValueError(f"{where}: array {key!r} is damaged: its header declares "
                             f"{nbytes} bytes of values, the archive holds "
                             f"{info.file_size - start}")
        total += nbytes
        out[key] = (tuple(int(n) for n in shape), dtype)
    if total > MAX_DATA_BYTES:
        raise ValueError(f"{where}: its arrays hold {_size(total)} together, more than an "
                         f"agent file's may ({_size(MAX_DATA_BYTES)}); nothing was read")
    return out


def _member(zf: zipfile.ZipFile, key: str, header: tuple, where: str) -> np.ndarray:
    """The values of member ``key`` (its header already checked), verified whole: the CRC
    and nothing after the values."""
    with zf.open(key + ".npy") as fp:
        a = np.lib.format.read_array(fp, allow_pickle=False)
        if fp.read(1):
            raise ValueError("data after the array's values")
    if (a.shape, a.dtype) != header:
        raise ValueError(f"array {key!r} is not what its header said")
    return a


def read(path: str | os.PathLike) -> Agent:
    """The agent in the ``.npz`` file ``path``, read without unpickling anything and checked
    (see the module docs). The archive's directory and every array's header are read and
    checked against the description (dtype, shape, the arrays' total size) before any
    array's values are. A file that is not such an agent (empty, not a zip, a member that is
    not a .npy array, truncated, a flipped byte ...) raises ValueError naming it."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no agent file {path}")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(f"{path}: {size} bytes; an agent file holds at most "
                         f"{MAX_FILE_BYTES} (weights and normalisation only)")
    if size == 0:
        raise ValueError(f"{path}: the file is empty, not an agent .npz")
    with open(path, "rb") as fh:
        magic = fh.read(6)
        if magic == b"\x93NUMPY":
            raise ValueError(f"{path}: a single .npy array, not an agent .npz archive (a zip "
                             f"of arrays and a 'meta' description)")
        try:
            count = _member_count(fh, size)
            if count > MAX_MEMBERS:
                raise ValueError(f"{count} members, more than an agent file has "
                                 f"({MAX_MEMBERS})")
            fh.seek(0)
            with zipfile.ZipFile(fh) as zf:
                headers = _headers(zf, str(path))
                meta = _meta(zf, headers, str(path))
                headers.pop("meta")
                loaded: dict[str, np.ndarray] = {}

                def load(key: str) -> np.ndarray:
                    if key not in loaded:
                        loaded[key] = _member(zf, key, headers[key], str(path))
                    return loaded[key]

                return Agent(meta, ArraySource(headers, load), path)
        except _DAMAGE as exc:
            if isinstance(exc, ValueError) and str(exc).startswith(str(path)):
                raise
            raise ValueError(f"{path}: not a readable agent .npz ({type(exc).__name__}: "
                             f"{exc})") from None


def _meta(zf: zipfile.ZipFile, headers: dict, where: str) -> dict[str, Any]:
    """The JSON description: the member ``meta``, one string of at most MAX_META_CHARS."""
    if "meta" not in headers:
        raise ValueError(f"{where}: no 'meta' string in the file")
    shape, dtype = headers["meta"]
    if dtype.kind != "U" or shape != ():
        raise ValueError(f"{where}: its 'meta' must be one string, got {dtype} {shape}")
    if dtype.itemsize // 4 > MAX_META_CHARS:
        raise ValueError(f"{where}: its 'meta' declares {dtype.itemsize // 4} characters, "
                         f"more than a description needs ({MAX_META_CHARS})")
    try:
        meta = json.loads(str(_member(zf, "meta", headers["meta"], where)))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: its 'meta' is not JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{where}: its 'meta' must be a JSON object")
    strings = [k for k, (_, dt) in headers.items() if dt.kind == "U" and k != "meta"]
    if strings:
        raise ValueError(f"{where}: arrays {strings} hold text; only 'meta' may")
    return meta


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
