"""The scene error type and the short value excerpts every error message quotes.

Kept apart from config.py and shapes.py so that neither has to import the other for it.
"""

from __future__ import annotations

import reprlib
from typing import Any

MAX_EXCERPT = 80
"""Longest excerpt [characters] of an offending value quoted in an error message."""


class SceneError(ValueError):
    """Invalid scene description; the message names the source file and the key path."""


# reprlib bounds the work as well as the length: it looks at no more than a few elements per
# level and a few levels deep, so a value built from YAML aliases (a small graph that expands
# to millions of elements) or a huge array is never expanded just to be quoted.
_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 4
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 40


def short_repr(value: Any, limit: int = MAX_EXCERPT) -> str:
    """repr of ``value`` cut to at most ``limit`` characters (an excerpt for error messages)."""
    try:
        # A top-level string gets the whole budget (a file path, say); nested ones reprlib's.
        text = repr(value[:limit]) if isinstance(value, str) else _REPR.repr(value)
    except Exception:  # a broken __repr__ must not hide the real error
        text = f"<{type(value).__name__}>"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def clip(text: str, limit: int = MAX_EXCERPT) -> str:
    """``text`` cut to at most ``limit`` characters (for names quoted in messages)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
