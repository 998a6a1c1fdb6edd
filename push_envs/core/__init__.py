"""The framework a task plugs into: what a task author may import and call.

* declaring a task: :class:`TaskSpec`, :class:`Arg` and the argument checks (``choice``,
  ``integer``, ``number``, ``optional_pair``, ``optional_range``, ``region``),
  :func:`columns` (named columns of the task's parameter and memory arrays), the
  observation layout (:class:`Field`, :class:`Repeat`, :func:`obs_names`,
  :func:`obs_offsets`, :class:`ObsIndex`), the goal marks (:class:`GoalMark`);
* the kernels' structures: :class:`TaskArrays` and the generic info columns (``INFO_TASK``,
  ``IF_SUCCESS``); the decorator of compiled code (:func:`compiled`);
* making the Gymnasium classes: :func:`task_envs`.

Everything else under ``push_envs.core`` (the step kernels, the cache wrappers, the
renderer's internals) is the framework's own and may change.
"""

from ..physics.jit import compiled
from .env import PushEnv
from .env import PushVectorEnv
from .env import task_envs
from .obs_layout import Field
from .obs_layout import Index as ObsIndex
from .obs_layout import Repeat
from .obs_layout import names as obs_names
from .obs_layout import offsets as obs_offsets
from .render import GoalMark
from .step import IF_SUCCESS
from .step import INFO_TASK
from .step import TaskArrays
from .task import Arg
from .task import TaskSpec
from .task import choice
from .task import columns
from .task import integer
from .task import number
from .task import optional_pair
from .task import optional_range
from .task import region

__all__ = ["Arg", "Field", "GoalMark", "IF_SUCCESS", "INFO_TASK", "ObsIndex", "PushEnv",
           "PushVectorEnv", "Repeat", "TaskArrays", "TaskSpec", "choice", "columns",
           "compiled", "integer", "number", "obs_names", "obs_offsets", "optional_pair",
           "optional_range", "region", "task_envs"]
