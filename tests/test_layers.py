"""The house's rules, read from the sources: imports go down the floors (physics -> core ->
tasks and sensors -> faces -> baselines -> train) and never round in a circle, counting the
imports inside functions as well as those at the top of a module; no module reaches into
another's underscore names, and neither a kernel nor an expert writes or reads the
observation at a literal column."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("push_envs", "train")


def _modules(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    out = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


MODULES = _modules()


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _imports(module: str, modules: dict[str, Path] = MODULES
             ) -> list[tuple[str, list[str], int]]:
    """(imported module, names, line) of every import of ``module``: at the top, inside a
    function or a class, under ``if``, ``try`` or ``TYPE_CHECKING`` alike (ast.walk visits
    every statement of every body)."""
    path = modules[module]
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, path, node)
            names = [a.name for a in node.names]
            # "from pkg import mod" imports the module pkg.mod
            subs = [f"{base}.{n}" for n in names if f"{base}.{n}" in modules]
            rest = [n for n in names if f"{base}.{n}" not in modules]
            if rest:  # names of the module itself, not only its submodules
                out.append((base, rest, node.lineno))
            out += [(s, [], node.lineno) for s in subs]
    return out


# The floors, lowest first; a module is on the floor of the longest prefix that names it.
# Every module of push_envs that no other prefix names is a face (the registry, the experts'
# lookup, the datasets, the SB3 / RLlib / TorchRL / PettingZoo faces, play, warmup).
FLOORS = {
    "push_envs._numba_cache": 0,  # numba's cache, set before any kernel is defined
    "push_envs._cache_load": 0,  # how the cache loads a kernel (for _numba_cache)
    "push_envs._elf": 0,  # an object file's symbols (for _cache_load)
    "push_envs.physics": 1,
    "push_envs.core": 2,
    "push_envs.scripted": 3,  # the experts' shared controllers, numpy only
    "push_envs.tasks": 3,
    "push_envs.sensors": 3,  # plug-ins as the tasks are, found through physics/sensor_registry
    "push_envs": 4,
    "push_envs.baselines": 5,
    "train": 6,
}


def _floor(module: str) -> int | None:
    names = [p for p in FLOORS if module == p or module.startswith(p + ".")]
    return FLOORS[max(names, key=len)] if names else None


def climbing_arrows(modules: dict[str, Path] = MODULES) -> list[str]:
    """Every import of a module from a floor above its own, ``a -> b (line n)``."""
    up = []
    for module in modules:
        mine = _floor(module)
        for target, _, line in _imports(module, modules):
            theirs = _floor(target)
            if mine is not None and theirs is not None and theirs > mine:
                up.append(f"{module} -> {target} (line {line})")
    return up


def circles(modules: dict[str, Path] = MODULES) -> list[str]:
    """Every circle of imports among ``modules``, ``a -> b -> a``. A module's own packages
    are importing it already (``from . import x`` runs nothing new), so an import of one's
    parent package is no edge."""
    graph = {m: {t for t, _, _ in _imports(m, modules) if t in modules and t != m
                 and not m.startswith(t + ".")} for m in modules}
    seen: set[str] = set()
    found = []

    def visit(m: str, stack: list[str]) -> None:
        seen.add(m)
        for t in sorted(graph[m]):
            if t in stack:
                found.append(" -> ".join(stack[stack.index(t):] + [t]))
            elif t not in seen:
                visit(t, stack + [t])

    for m in modules:
        if m not in seen:
            visit(m, [m])
    return found


def test_imports_go_down_the_floors():
    assert not climbing_arrows(), climbing_arrows()


def test_no_import_circle_among_the_modules():
    assert not circles(), circles()


def test_every_module_has_a_floor():
    assert [m for m in MODULES if _floor(m) is None] == []


def test_the_checks_see_imports_inside_functions(tmp_path):
    # A circle and a climb made only by imports inside functions, as the datasets <-> experts
    # circle was: the checks must find both.
    pkg = tmp_path / "push_envs"
    (pkg / "core").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core" / "__init__.py").write_text("")
    (pkg / "core" / "low.py").write_text("def f():\n    from ..experts import g\n")
    (pkg / "experts.py").write_text("def g():\n    from .datasets import h\n")
    (pkg / "datasets.py").write_text("def h():\n    if True:\n        import push_envs.experts\n")
    modules = _modules(tmp_path, ("push_envs",))
    (circle,) = circles(modules)
    assert set(circle.split(" -> ")) == {"push_envs.datasets", "push_envs.experts"}
    assert climbing_arrows(modules) == ["push_envs.core.low -> push_envs.experts (line 2)"]


def test_no_module_uses_another_modules_underscore_names():
    found = []
    for module in MODULES:
        for target, names, _ in _imports(module):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private and target != "push_envs" and not target.endswith("_numba_cache"):
                found.append(f"{module}: from {target} import {private}")
        tree = ast.parse(MODULES[module].read_text())
        aliases = {a.asname or a.name: _resolve(module, MODULES[module], node) + "." + a.name
                   for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                   for a in node.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.attr.startswith("_") and not node.attr.startswith("__"):
                target = aliases.get(node.value.id)
                if target in MODULES and target != module:
                    found.append(f"{module}: {node.value.id}.{node.attr}")
    assert not found, found


# The observation's arrays by their names in the kernels (``row = V.obs[e]``) and the experts.
ROWS = {"row", "obs", "o", "src"}
KERNEL_OR_EXPERT = [m for m in MODULES
                    if m.startswith("push_envs.tasks") or m == "push_envs.scripted"]


def _constant(expr: ast.AST | None) -> bool:
    """Whether ``expr`` is built from integer literals alone (``13``, ``7 + 6 * 4``)."""
    if expr is None:
        return False
    leaves = [n for n in ast.walk(expr)
              if isinstance(n, (ast.Constant, ast.Name, ast.Attribute, ast.Subscript, ast.Call))]
    return bool(leaves) and all(isinstance(n, ast.Constant) and isinstance(n.value, int)
                                for n in leaves)


def _literal_columns(node: ast.Subscript) -> bool:
    """Whether a subscript's column index is literal (``row[13]``, ``o[:, 7]``, ``o[0:4]``)."""
    index = node.slice
    if isinstance(index, ast.Tuple):
        index = index.elts[-1]
    if isinstance(index, ast.Slice):
        return _constant(index.lower) or _constant(index.upper)
    return _constant(index)


@pytest.mark.parametrize("module", KERNEL_OR_EXPERT)
def test_no_literal_observation_column(module):
    tree = ast.parse(MODULES[module].read_text())
    found = [f"line {n.lineno}: {ast.unparse(n)}" for n in ast.walk(tree)
             if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
             and n.value.id in ROWS and _literal_columns(n)]
    assert not found, found


def test_the_literal_column_check_can_fail():
    bad = ast.parse("row[13] = 1.0\nx = o[:, 7]\ny = obs[29 + 6 * 4]\nz = o[:, 0:4]").body
    subs = [n for stmt in bad for n in ast.walk(stmt) if isinstance(n, ast.Subscript)]
    assert all(_literal_columns(s) for s in subs)
    good = ast.parse("row[at[OBS.x]] = 1.0\ny = o[:, ix.robot_xy + 1]\nz = o[:, k:k + 2]").body
    subs = [n for stmt in good for n in ast.walk(stmt) if isinstance(n, ast.Subscript)
            and isinstance(n.value, ast.Name) and n.value.id in ROWS]
    assert not any(_literal_columns(s) for s in subs)
