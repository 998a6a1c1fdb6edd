import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

import push_envs  # noqa: E402,F401  (registers the ids)
