"""The house's rules, read from the sources: imports go down the floors (tasks -> core ->
physics) and never round in a circle, no module reaches into another's underscore names, and
neither a kernel nor an expert writes or reads the observation at a literal column."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "push_envs"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = path.relative_to(PKG.parent).with_suffix("").parts
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


def _imports(module: str) -> list[tuple[str, list[str], bool]]:
    """(imported module, names, at module level) of every import of ``module``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text())
    top = set(map(id, tree.body))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, [], id(node) in top) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, path, node)
            names = [a.name for a in node.names]
            # "from pkg import mod" imports the module pkg.mod
            subs = [f"{base}.{n}" for n in names if f"{base}.{n}" in MODULES]
            out.append((base, [n for n in names if f"{base}.{n}" not in MODULES],
                        id(node) in top))
            out += [(s, [], id(node) in top) for s in subs]
    return out


FLOORS = [("push_envs.physics", 0), ("push_envs.core", 1), ("push_envs.tasks", 2)]


def _floor(module: str) -> int | None:
    for prefix, level in FLOORS:
        if module == prefix or module.startswith(prefix + "."):
            return level
    return None


def test_imports_go_down_the_floors():
    up = []
    for module in MODULES:
        mine = _floor(module)
        if mine is None:
            continue
        for target, _, _ in _imports(module):
            theirs = _floor(target)
            if theirs is not None and theirs > mine:
                up.append(f"{module} -> {target}")
    assert not up, up


def test_no_import_circle_among_the_modules():
    # A module's own packages are importing it already (``from . import x`` runs nothing
    # new), so an import of one's parent package is no edge.
    graph = {m: {t for t, _, top in _imports(m) if top and t in MODULES and t != m
                 and not m.startswith(t + ".")} for m in MODULES}
    seen: dict[str, int] = {}
    cycles = []

    def visit(m: str, stack: list[str]) -> None:
        seen[m] = 1
        for t in graph[m]:
            if t in stack:
                cycles.append(" -> ".join(stack[stack.index(t):] + [t]))
            elif t not in seen:
                visit(t, stack + [t])
        seen[m] = 2

    for m in MODULES:
        if m not in seen:
            visit(m, [m])
    assert not cycles, cycles


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
