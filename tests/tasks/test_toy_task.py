"""A shipped task is one folder and one registry line: a toy task, added as a real task would
be (in a git repository shaped like push_envs), registers, runs, finds its expert, its scene
and its baseline's hyperparameters, and its commit touches nothing else. With its registry
line the docs scripts, the task tables, the experts' lookup and the golden-hash check all
list it: the registry is the one list of tasks."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import push_envs
from push_envs.experts import expert
from push_envs.tasks import spec

TASKS = Path(push_envs.__file__).parent / "tasks"
ROOT = Path(__file__).resolve().parents[2]

TOY = '''"""PushToy-v0: PushBox with a shorter episode and a farther start."""

from push_envs.core import task_envs
from push_envs.tasks.pushing.push_box import PushBox


class PushToy(PushBox):  # PushBox's hooks are declared on PushBox: inherited
    id = "PushToy-v0"
    max_episode_steps = 120
    goal_separation = 1.0  # [m]
    experts = {"diff": "expert:expert"}
    versions = ("v0: the toy.",)


PushToyEnv, PushToyVectorEnv = task_envs(PushToy, """A toy.

    Truncates after {max_episode_steps} steps.

{obs_table}

    {versions}
""")
'''

TOY_EXPERT = '''"""PushToy-v0's expert: PushBox's pusher."""

from push_envs.tasks.pushing.push_box.expert import expert  # noqa: F401
'''

TOY_HP = "ppo:\n  n_timesteps: 12345\n  gamma: 0.97\n"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    repo = tmp_path_factory.mktemp("repo")
    tasks = repo / "toyroot" / "tasks"
    tasks.mkdir(parents=True)
    (repo / "toyroot" / "__init__.py").write_text("")
    # The registry, as push_envs ships it.
    shutil.copy(TASKS / "__init__.py", tasks / "__init__.py")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "add", "-A")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "base")
    # The task: its folder ...
    folder = tasks / "push_toy"
    folder.mkdir()
    (folder / "__init__.py").write_text(TOY)
    (folder / "expert.py").write_text(TOY_EXPERT)
    (folder / "hyperparams.yml").write_text(TOY_HP)
    shutil.copy(spec("PushBox-v0").scene_path(), folder / "scene.yaml")
    # ... and its registry line.
    registry = tasks / "__init__.py"
    text = registry.read_text()
    line = '    "push_envs.tasks.pushing.push_maze",\n'
    assert line in text
    registry.write_text(text.replace(line, line + '    "toyroot.tasks.push_toy",\n'))
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "add", "-A")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "PushToy-v0")
    sys.path.insert(0, str(repo))
    try:
        registry_module = importlib.import_module("toyroot.tasks")
        assert registry_module.REGISTRY[-1] == "toyroot.tasks.push_toy"
        env_id = push_envs.register_task(registry_module.REGISTRY[-1])
        yield repo, folder, env_id
    finally:
        sys.path.remove(str(repo))


def test_its_commit_is_its_folder_and_the_registry_line(toy):
    repo, _, _ = toy
    changed = _git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == ["toyroot/tasks/__init__.py",
                               "toyroot/tasks/push_toy/__init__.py",
                               "toyroot/tasks/push_toy/expert.py",
                               "toyroot/tasks/push_toy/hyperparams.yml",
                               "toyroot/tasks/push_toy/scene.yaml"]
    stat = _git(repo, "diff", "--numstat", "HEAD~1", "HEAD", "--", "toyroot/tasks/__init__.py")
    assert stat.split()[:2] == ["1", "0"]  # one line added to the registry


def test_it_registers_from_its_spec_and_runs(toy):
    _, folder, env_id = toy
    assert env_id == "PushToy-v0"
    assert gym.spec(env_id).max_episode_steps == 120
    env = gym.make(env_id)
    assert "Truncates after 120 steps." in env.unwrapped.__doc__
    assert "* v0: the toy." in env.unwrapped.__doc__
    obs, _ = env.reset(seed=0)
    assert env.unwrapped.world.scene.spec.source == str(folder / "scene.yaml")
    policy = expert(env_id, "diff")
    for _ in range(5):
        obs, *_ = env.step(policy(obs[None])[0])
    venv = gym.make_vec(env_id, num_envs=3)
    venv.reset(seed=0)
    venv.step(np.zeros((3, 2), np.float32))


def test_its_baseline_comes_from_its_folder(toy):
    _, folder, env_id = toy
    from train.train import load_hyperparams

    hp = load_hyperparams("ppo", env_id)
    assert (hp["n_timesteps"], hp["gamma"]) == (12345, 0.97)
    assert spec(env_id).hyperparams_path() == folder / "hyperparams.yml"


@pytest.fixture
def ninth(toy, monkeypatch):
    """The suite as it would be with the toy's registry line: push_envs.tasks.REGISTRY is the
    toy repository's (the shipped eight and one more) and push_envs.ENV_IDS is registered from
    it as push_envs/__init__.py does. Nothing else is told about the toy."""
    repo, folder, env_id = toy
    registry = importlib.import_module("toyroot.tasks").REGISTRY
    monkeypatch.setattr(push_envs.tasks, "REGISTRY", registry)
    monkeypatch.setattr(push_envs, "ENV_IDS", tuple(push_envs.register_task(m)
                                                    for m in registry))
    monkeypatch.syspath_prepend(str(ROOT / "docs" / "_scripts"))
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "tasks"))
    assert push_envs.ENV_IDS[-1] == env_id and len(push_envs.ENV_IDS) == 9
    return folder, env_id


def test_a_ninth_task_shows_up_in_every_list_without_editing_one(ninth, tmp_path):
    folder, env_id = ninth
    import make_figures
    import perf_page
    import readme_tables
    import results
    import task_pages
    from test_golden import golden

    from push_envs.experts import available

    # The task pages: its own page and a row of the index, generated from its TaskSpec.
    written = task_pages.generate(tmp_path)
    assert tmp_path / f"{env_id}.md" in written
    page = (tmp_path / f"{env_id}.md").read_text()
    assert page.startswith(f"# {env_id}\n") and "| episode length | 120 steps |" in page
    index = (tmp_path / "index.md").read_text()
    assert f"| [{env_id}]({env_id}.md) | A toy. | 120 steps |" in index
    assert index.rstrip().splitlines()[-2] == env_id  # last in the toctree
    # README's task table, the results' order, the figures' and the benchmark page's lists.
    table = readme_tables.task_table()
    assert f"| [{env_id}](docs/tasks/{env_id}.md) |" in table
    assert "A toy. 120 steps. | - | - |" in table  # no expert or agent evaluated yet
    assert results.task_order()[-1] == env_id
    assert make_figures.task_ids()[-1] == env_id
    assert make_figures.headline(env_id) == "box_to_goal"
    assert perf_page.task_order({env_id: 0, "PushBox-v0": 0}) == ["PushBox-v0", env_id]
    # The experts' lookup, and the golden-hash check, which asks for the task's own file.
    assert available()[-1] == (env_id, "diff")
    with pytest.raises(LookupError, match=f"{env_id} has no golden rollout hash in "
                                          f"{folder / 'golden.json'}"):
        golden(env_id)
