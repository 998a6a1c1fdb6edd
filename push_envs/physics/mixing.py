"""Friction and restitution mixing: the one rule that makes a contact's coefficient from the
coefficients of its two surfaces.

A contact between a passive body and an immovable one has Coulomb friction, and a contact
that involves a passive body bounces; each needs one coefficient, made from the two bodies'
own (their ``friction``, the same coefficient as their ground friction, and their
``restitution``). This module is the only place that makes it, as Box2D's
``b2FrictionCallback`` / ``b2RestitutionCallback`` are, and each world picks its rule
(``world.friction_mixing`` / ``world.restitution_mixing`` in a scene, or
``World.friction_mixing`` / ``World.restitution_mixing``):

=============  ======================  =====================================================
rule           coefficient of a, b     who uses it
=============  ======================  =====================================================
``mean``       (a + b) / 2             IR-SIM, and this engine's default for both
``geometric``  sqrt(a b)               Box2D's friction (a frictionless surface wins)
``min``        min(a, b)               the slipperier surface wins
``max``        max(a, b)               Box2D's restitution (the bouncier surface wins)
=============  ======================  =====================================================

or a user's compiled function: a numba ``cfunc`` with the signature :data:`MIX_SIGNATURE`,
``float64(float64 a, int64 body_a, float64 b, int64 body_b)``, given the two coefficients
and the two bodies' world indices (``World.index``; a static body's own index), as Box2D
passes its user material ids. Its result is clamped to [0, inf) for friction and [0, 1] for
restitution (NaN reads 0), so a user rule cannot make a contact add energy::

    from numba import cfunc
    from push_envs.physics.mixing import MIX_SIGNATURE

    @cfunc(MIX_SIGNATURE)
    def grippy_walls(a, body_a, b, body_b):   # the larger, but at least 0.8 against body 0
        m = max(a, b)
        return max(m, 0.8) if body_a == 0 or body_b == 0 else m

    world.friction_mixing = grippy_walls

The rule and the function's address live in the world's parameters (``prm``, ``PR_FMIX``
..); the prepare stage (contacts.py) calls :func:`mix` once per candidate pair and sub-step.
"""

from __future__ import annotations

import math

from numba import types

from .abi import call_f8
from .jit import compiled

MIX_MEAN = 0
MIX_GEOMETRIC = 1
MIX_MIN = 2
MIX_MAX = 3
MIX_USER = 4  # a compiled function at the address kept beside the rule
MIX_RULES = {"mean": MIX_MEAN, "geometric": MIX_GEOMETRIC, "min": MIX_MIN, "max": MIX_MAX}
"""The built-in rules by name (the scene keys' values)."""

MIX_SIGNATURE = types.float64(types.float64, types.int64, types.float64, types.int64)
"""Signature of a user mixing function: ``(a, body_a, b, body_b) -> coefficient``."""


# LLVM-inlined into contacts.prepare: once per candidate pair per sub-step (jit.py, 'Inlining')
@compiled(inline="llvm")
def mix(rule, fn, a, ia, b, ib):
    """The coefficient of a contact between surfaces of coefficients ``a`` (body ``ia``) and
    ``b`` (body ``ib``) by ``rule`` (MIX_*); ``fn`` is the user function's address (MIX_USER
    only). Not clamped: the caller clamps a user function's result (:func:`clamped`)."""
    if rule == MIX_MEAN:
        return 0.5 * (a + b)
    if rule == MIX_GEOMETRIC:
        return math.sqrt(a * b)
    if rule == MIX_MIN:
        return min(a, b)
    if rule == MIX_MAX:
        return max(a, b)
    return call_f8(fn, (a, ia, b, ib))


@compiled(inline="llvm")
def clamped(x, hi):
    """``x`` within [0, ``hi``]; NaN reads 0."""
    if not x > 0.0:
        return 0.0
    return min(x, hi)


def rule_code(value: object, what: str) -> tuple[int, int]:
    """(rule, function address) for a rule name or a user ``cfunc`` (``what`` names the
    setting in the error). Raises ValueError for anything else, naming the choices."""
    if isinstance(value, str):
        if value in MIX_RULES:
            return MIX_RULES[value], 0
        raise ValueError(f"{what}: unknown mixing rule {value!r}; choices: "
                         f"{', '.join(MIX_RULES)}, or a numba cfunc of signature "
                         f"{MIX_SIGNATURE}")
    sig = getattr(value, "_sig", None)
    address = getattr(value, "address", None)
    if sig is None or not isinstance(address, int):
        raise ValueError(f"{what}: must be one of {', '.join(MIX_RULES)} or a numba cfunc of "
                         f"signature {MIX_SIGNATURE}, got {type(value).__name__}")
    if sig != MIX_SIGNATURE:
        raise ValueError(f"{what}: a mixing cfunc must have the signature {MIX_SIGNATURE}, "
                         f"got {sig}")
    return MIX_USER, address


__all__ = ["MIX_RULES", "MIX_SIGNATURE", "clamped", "mix", "rule_code"]
