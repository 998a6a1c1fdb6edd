"""``python -m push_envs.baselines list`` / ``evaluate <id> [--robot R] [--episodes N]
[--seed S] [--csv FILE]`` (see :mod:`push_envs.baselines.evaluation`)."""

import sys

from .evaluation import main

sys.exit(main())
