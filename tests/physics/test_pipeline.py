"""The step's entry points (physics/pipeline.py): the step and sleeping's stages are C
functions reached through addresses in ``prm``, which ``physics_for`` writes.

Units: metres, seconds, kilograms.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np

from push_envs.physics.layout import PR_SLEEPFN
from push_envs.physics.layout import PR_STEPFN
from push_envs.physics.pipeline import STEP
from push_envs.physics.pipeline import physics_for
from push_envs.physics.sleeping import SLEEP


def test_physics_for_writes_the_addresses_the_step_calls(scn):
    w = scn.world([scn.robot("r", 0.0, 0.0, sensors=False)], [scn.box("b", 1.0, 0.0, mass=1.0)])
    w.sleeping = False
    w.prm[PR_STEPFN] = 0.0
    w.prm[PR_SLEEPFN] = 0.0
    physics_for(w.prm)
    assert w.prm[PR_STEPFN] == float(STEP.address)
    assert w.prm[PR_SLEEPFN] == 0.0  # sleeping off: not needed, not compiled for it
    w.sleeping = True  # the setter writes it at once: a kernel may step without physics_for
    assert w.prm[PR_SLEEPFN] == float(SLEEP.address)


def test_a_stale_address_is_replaced_before_the_world_steps(scn):
    """An address is valid only in the process that took it (a pickled world's prm carries
    another process's): World runs physics_for again whenever those slots do not hold what
    it wrote, so garbage in them is rewritten, never called."""
    def build():
        w = scn.world([scn.robot("r", 0.0, 0.0, sensors=False)],
                      [scn.box("b", 0.6, 0.0, mass=1.0)]
                      + [scn.box(f"f{i}", -4.0 + 0.6 * (i % 5), 2.0 + 0.6 * (i // 5), mass=0.5)
                         for i in range(25)])
        w.sleeping = True
        return w

    a, b = build(), build()
    cmd = {"r": np.array([1.0, 0.0])}
    for k in range(20):
        if k % 5 == 0:
            a.prm[PR_STEPFN] = 12345.0
            a.prm[PR_SLEEPFN] = 67890.0
        a.step(cmd)
        b.step(cmd)
    assert a.state_hash() == b.state_hash()
    assert a.asleep[0] > 0  # the far boxes slept: the sleeping stages ran


def test_a_task_never_compiles_sleeping():
    """PushBox-v0's world has sleeping off, so its process never compiles sleeping's stages
    (a fresh machine's first gym.make pays only for what it runs)."""
    code = textwrap.dedent("""
        import gymnasium as gym
        import push_envs
        from push_envs.physics.sleeping import SLEEP
        from push_envs.physics.pipeline import PHYSICS_MODES
        env = gym.make("PushBox-v0")
        env.reset(seed=0)
        env.step(env.action_space.sample())
        assert not env.unwrapped.world.sleeping
        print(SLEEP._compiled is None, PHYSICS_MODES._compiled is None)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "NUMBA_NUM_THREADS": "1"}, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "True"]


def test_a_copied_world_looks_its_entry_point_up_again(scn):
    """World keeps the address physics_for gave it while prm's slots hold what it wrote; a
    copy (or a pickle, in another process) must not carry it over, so it steps through a
    fresh look-up, bit for bit as the original."""
    import copy

    w = scn.world([scn.robot("r", 0.0, 0.0, sensors=False)], [scn.box("b", 0.6, 0.0)])
    cmd = {"r": np.array([1.0, 0.0])}
    w.step(cmd)
    assert w._entry_key is not None
    twin = copy.deepcopy(w)
    assert twin._entry_key is None
    for _ in range(5):
        w.step(cmd)
        twin.step(cmd)
    assert twin._entry_key is not None
    assert twin.state_hash() == w.state_hash()
