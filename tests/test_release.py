"""The release as users get it: ``python -m build`` makes a wheel and an sdist that carry every
file a task needs, and a fresh virtual environment holding only the wheel (and its ``[train]``
extra) makes, resets and steps every registered id, one env and a batch.

CI runs this (it downloads the dependencies into the new environment: a few minutes). The
kernels it compiles are the session's: the cache keys them by what they compute, not by where
the package lies, so the installed copy finds what the tests compiled.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import push_envs
from push_envs import _numba_cache
from push_envs.tasks import REGISTRY
from push_envs.tasks import spec_of

ROOT = Path(__file__).resolve().parents[1]


def _needed(prefix: str) -> set[str]:
    """Files every shipped task needs, as archive paths under ``prefix``."""
    out = set()
    for module in REGISTRY:
        s = spec_of(module)
        folder = s.folder().relative_to(ROOT)
        out.add(f"{prefix}{folder.as_posix()}/scene.yaml")
        if s.hyperparams_path() is not None:
            out.add(f"{prefix}{folder.as_posix()}/{s.hyperparams}")
    out.add(f"{prefix}push_envs/tasks/pushing/push_maze/maze.png")
    for agent in (ROOT / "push_envs" / "baselines" / "agents").glob("*.npz"):
        out.add(f"{prefix}{agent.relative_to(ROOT).as_posix()}")  # the pretrained agents
    return out


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--wheel", "--sdist", "--outdir",
                           str(out), str(ROOT)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheel = next(out.glob("push_envs-*.whl"))
    sdist = next(out.glob("push_envs-*.tar.gz"))
    return wheel, sdist


def test_the_wheel_and_the_sdist_carry_every_file_a_task_needs(dist):
    wheel, sdist = dist
    names = set(zipfile.ZipFile(wheel).namelist())
    assert _needed("") <= names, sorted(_needed("") - names)
    assert not [n for n in names if n.startswith(("tests/", "train/", "docs/"))]
    with tarfile.open(sdist) as tar:
        members = {m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name}
    assert _needed("") <= members, sorted(_needed("") - members)
    assert "LICENSE" in members
    version = wheel.name.split("-")[1]
    assert version == push_envs.__version__
    meta = zipfile.ZipFile(wheel).read(f"push_envs-{version}.dist-info/METADATA").decode()
    assert "License-Expression: MIT" in meta.splitlines()
    assert f"push_envs-{version}.dist-info/licenses/LICENSE" in names
    assert (ROOT / "CHANGELOG.md").read_text().count(f"## [{version}]") == 1


_PROBE = """
import push_envs
from push_envs.warmup import exercise
assert push_envs.__file__.startswith({site!r}), push_envs.__file__
assert push_envs.__version__ == {version!r}, push_envs.__version__
for env_id in push_envs.ENV_IDS:
    exercise(env_id, num_envs=3)
    print("ok", env_id)
import stable_baselines3, torch  # the [train] extra
print("train extra", stable_baselines3.__version__, torch.__version__)
"""


def test_a_fresh_environment_with_only_the_wheel_runs_every_task(dist, tmp_path):
    wheel, _ = dist
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["XDG_CACHE_HOME"] = str(Path(_numba_cache.CACHE_DIR).parent.parent)
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("PUSH_ENVS_NUMBA_CACHE", None)
    for args in (["torch==2.13.0"], [f"{wheel}[train]"]):
        proc = subprocess.run([str(py), "-m", "pip", "install", "-q", *args], env=env,
                              capture_output=True, text=True, timeout=1800)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True,
                          env=env).stdout.strip()
    probe = _PROBE.format(site=site, version=push_envs.__version__)
    proc = subprocess.run([str(py), "-c", probe], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.count("ok ") == len(push_envs.ENV_IDS)
    assert "train extra" in proc.stdout
