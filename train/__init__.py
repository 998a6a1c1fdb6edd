"""Training on the suite: PPO and SAC (Stable-Baselines3) on the native batch, DAgger for
Push-T and residual PPO on top of it, behaviour cloning from Minari datasets, RLlib; run
from the checkout's root as modules::

    python -m train.train --env PushBox-v0            # PPO, the task's baseline settings
    python -m train.dagger --seed 0                   # Push-T by DAgger
    python -m train.residual --base runs/PushT-v0/dagger/0 --seed 0   # PPO on top of it
    python -m train.export runs/PushBox-v0/ppo/0      # a run -> push_envs/baselines/agents
    python -m train.bc --dataset push_envs/PushBox-v0/scripted-v0
    python -m train.enjoy --run runs/PushBox-v0/ppo/0 --gif out.gif
    python -m train.plot runs/PushBox-v0/ppo --out curve.png
    python -m train.rllib_ppo --env PushBox-v0

A task's baseline hyperparameters live in its folder (``hyperparams.yml``), over the shared
``default`` entries of ``train/hyperparams/<algo>.yml``.
"""
