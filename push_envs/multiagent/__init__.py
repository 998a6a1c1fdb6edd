"""PettingZoo faces of the multi-robot tasks (``pip install push_envs[multiagent]``).

>>> from push_envs.multiagent import coop_push_v0
>>> env = coop_push_v0.parallel_env()          # a pettingzoo.ParallelEnv
>>> obs, infos = env.reset(seed=0)             # {"robot_0": ..., "robot_1": ...}

Each module follows PettingZoo's convention: ``parallel_env(**kwargs)`` and ``env(**kwargs)``
(the AEC form, through PettingZoo's converter). The task arguments are the Gymnasium env's.
"""
