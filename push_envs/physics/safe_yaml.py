"""Reading scene YAML with bounded cost: file size, nesting depth and alias expansion.

``yaml.safe_load`` never executes code, but it happily builds a small object graph from a
1.4 KB file whose aliases expand to 9^9 elements ("billion laughs"): anything that then walks
the value (an error message's repr, ``np.asarray`` of an obstacle map) runs out of memory. The
loader here counts every node as it would be once expanded, before any Python object is
constructed, and refuses documents above :data:`~push_envs.physics.limits.MAX_YAML_NODES`.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode
from yaml.nodes import Node
from yaml.nodes import SequenceNode

from .errors import SceneError
from .limits import MAX_SCENE_BYTES
from .limits import MAX_YAML_DEPTH
from .limits import MAX_YAML_NODES

_MAX_YAML_ERROR = 500  # [characters] kept of a parser message (it quotes the offending line)


class _Refused(yaml.YAMLError):
    """A budget was exceeded; the message says which (no parser context is added)."""


def expanded_size(root: Node, limit: int) -> int:
    """Number of nodes of ``root`` with every alias expanded, or _Refused above ``limit``.

    Aliases make the node graph a DAG (or a cycle, for an alias inside its own anchor), so
    sizes are memoised per node and the walk is iterative; its cost is the graph's size, not
    the expansion's.
    """
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in size:
            continue
        children = _children(node)
        if children_done:
            on_path.discard(key)
            total = 1 + sum(size[id(c)] for c in children)
            if total > limit:
                raise _Refused(f"the document expands to more than {limit} YAML nodes "
                               "(through aliases); scenes are limited to that many")
            size[key] = total
            continue
        if key in on_path:
            raise _Refused("an alias refers to its own enclosing anchor (a recursive value)")
        on_path.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in on_path:
                raise _Refused("an alias refers to its own enclosing anchor (a recursive value)")
            if id(child) not in size:
                stack.append((child, False))
    return size[id(root)]


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


class BudgetLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that bounds nesting depth and the alias-expanded node count."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        # PyYAML composes recursively (a few Python frames per level): refuse deep nesting
        # with a clear message before Python's recursion limit turns it into a RecursionError.
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise _Refused(f"collections are nested more than {MAX_YAML_DEPTH} levels deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_document(self) -> Node:
        node = super().compose_document()
        expanded_size(node, MAX_YAML_NODES)
        return node


def read_scene_yaml(path: str) -> Any:
    """Parse the scene file at ``path`` within the limits, or raise SceneError.

    The file is refused before parsing when larger than ``MAX_SCENE_BYTES``: it is read
    through a bounded ``read`` (not trusted from ``stat``), so a device or a growing file is
    refused too.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SCENE_BYTES + 1)
    except OSError as exc:
        raise SceneError(f"{path}: cannot read scene file: {exc.strerror or exc}") from exc
    if len(data) > MAX_SCENE_BYTES:
        raise SceneError(f"{path}: scene file is larger than the limit of {MAX_SCENE_BYTES} "
                         f"bytes ({MAX_SCENE_BYTES >> 20} MiB)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SceneError(f"{path}: scene file is not UTF-8 text (byte {exc.start})") from None
    try:
        # BudgetLoader is a SafeLoader: no tag can construct arbitrary Python objects.
        return yaml.load(text, Loader=BudgetLoader)
    except _Refused as exc:
        raise SceneError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        message = str(exc)
        if len(message) > _MAX_YAML_ERROR:
            message = message[: _MAX_YAML_ERROR - 3] + "..."
        raise SceneError(f"{path}: invalid YAML: {message}") from None
    except RecursionError:  # a deep structure that slipped past the depth check
        raise SceneError(f"{path}: invalid YAML: nested too deeply") from None

