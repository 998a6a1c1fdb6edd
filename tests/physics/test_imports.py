"""The physics package's import seams, read from its source with ``ast`` (nothing is imported).

* No module reaches into another module's privates: no ``from .x import _name`` and no
  ``x._name`` on an imported module (dunder names are not private here). What one module
  needs of another is public and documented there, or moved to its one user.
* No module under ``push_envs/physics/`` imports from the layers above it (``push_envs.core``,
  the task modules, the ecosystem adapters ...): the engine is the bottom layer. The one name
  it takes from its parent package is ``push_envs._numba_cache``, which must run before any
  kernel is defined and imports nothing of push_envs.
* The modules' imports, counting those made only for type hints, form no circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "push_envs.physics"
PHYSICS = ROOT / "push_envs" / "physics"
# Modules of push_envs outside the physics package that the engine may import.
ALLOWED_OUTSIDE = {"push_envs._numba_cache"}


def _modules() -> dict[str, Path]:
    """Dotted name -> file of every module of the physics package."""
    out = {}
    for path in sorted(PHYSICS.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_module(dotted: str) -> bool:
    """Whether ``dotted`` names a module or package of push_envs (by its file)."""
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _absolute(module: str, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` in ``module`` reads from."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".")
    if not MODULES[module].name == "__init__.py":
        package = package[:-1]  # a plain module's relative imports start at its package
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _scan(module: str) -> tuple[list[str], set[str]]:
    """(seam violations, push_envs modules imported) of one module."""
    tree = ast.parse(MODULES[module].read_text(), filename=str(MODULES[module]))
    bad: list[str] = []
    imported: set[str] = set()
    aliases: dict[str, str] = {}  # local name -> push_envs module it is bound to
    where = module.replace(".", "/") + ".py"

    def check_target(target: str, line: int) -> None:
        if not target.startswith("push_envs"):
            return
        imported.add(target)
        if target != PACKAGE and not target.startswith(PACKAGE + ".") \
                and target not in ALLOWED_OUTSIDE:
            bad.append(f"{where}:{line}: imports {target}, a layer above the engine")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                check_target(alias.name, node.lineno)
                if alias.name.startswith("push_envs"):
                    if alias.asname:
                        aliases[alias.asname] = alias.name
                    else:
                        aliases["push_envs"] = "push_envs"
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            if not source.startswith("push_envs"):
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if _is_module(full):
                    # ``from . import x`` imports module x itself.
                    check_target(full, node.lineno)
                    aliases[alias.asname or alias.name] = full
                    continue
                check_target(source, node.lineno)
                if _private(alias.name):
                    bad.append(f"{where}:{node.lineno}: imports {alias.name} from {source}")
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            dotted = _dotted(node.value)
            if dotted is None:
                continue
            head, _, rest = dotted.partition(".")
            if head not in aliases:
                continue
            target = aliases[head] + (f".{rest}" if rest else "")
            if _is_module(target):
                bad.append(f"{where}:{node.lineno}: reads {node.attr} of module {target}")
    return bad, imported


SCANS = {m: _scan(m) for m in MODULES}


def test_the_scan_sees_the_package():
    # A scan that found nothing would pass every check below.
    assert len(MODULES) > 20
    assert "push_envs.physics.pipeline" in SCANS["push_envs.physics.world"][1]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_names_across_modules_and_no_upward_imports(module):
    bad, _ = SCANS[module]
    assert not bad, "\n".join(bad)


def _graph() -> dict[str, set[str]]:
    """Physics module -> the physics modules it imports (a package's import of a submodule
    counts: ``from .x import y`` runs ``x``)."""
    graph: dict[str, set[str]] = {}
    for module, (_, imported) in SCANS.items():
        targets = set()
        for target in imported:
            # ``from .x import y`` where y is a name: the scan records x.
            while target not in MODULES and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in MODULES and target != module and target != PACKAGE:
                targets.add(target)
        graph[module] = targets
    return graph


def test_no_import_circle():
    graph = _graph()
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                circle = path[path.index(t):] + [t]
                pytest.fail("import circle: " + " -> ".join(c.rsplit(".", 1)[1] for c in circle))
            if t not in state:
                visit(t)
        path.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_the_checks_catch_what_they_forbid(tmp_path, monkeypatch):
    # Each forbidden form, in a throwaway module of the package, is reported.
    samples = {
        "from .contacts import _private_helper\n": "imports _private_helper",
        "from . import contacts\ncontacts._private_helper\n": "reads _private_helper",
        "import push_envs.physics.contacts as c\nc._x\n": "reads _x",
        "from ..envs import base\n": "a layer above the engine",
        "from push_envs.envs.base import PushEnv\n": "a layer above the engine",
        "import push_envs.scripted\n": "a layer above the engine",
    }
    for source, message in samples.items():
        path = tmp_path / "probe.py"
        path.write_text(source)
        monkeypatch.setitem(MODULES, "push_envs.physics.probe", path)
        bad, _ = _scan("push_envs.physics.probe")
        assert any(message in b for b in bad), (source, bad)
    for fine in ("from .. import _numba_cache\n", "from .jit import compiled\n",
                 "from . import contacts\ncontacts.__name__\n"):
        path = tmp_path / "probe.py"
        path.write_text(fine)
        monkeypatch.setitem(MODULES, "push_envs.physics.probe", path)
        assert _scan("push_envs.physics.probe")[0] == [], fine
