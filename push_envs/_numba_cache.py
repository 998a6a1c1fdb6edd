"""Where numba keeps the compiled kernels: keyed by the package's source, private, pruned.

Keyed: numba's ``cache=True`` checks only the timestamp of the file that defines a kernel, so
a change to a helper in another module can silently load a stale kernel that still calls the
old helper. The cache folder is named after a hash of every source file of the package, so
any edit starts a fresh cache:

* default: ``$XDG_CACHE_HOME/push_envs/numba-<numba version>-<source hash>`` (``~/.cache``
  when XDG_CACHE_HOME is unset);
* with ``NUMBA_CACHE_DIR`` set: ``$NUMBA_CACHE_DIR/push_envs-numba-<version>-<source hash>``.

Keyed by the optimisation level too: numba's own cache index does not record ``NUMBA_OPT``,
so kernels compiled at another level (the test suite compiles at a low one, see the root
``conftest.py``) would be loaded by a normal run. At any level but numba's default 3 the
version part reads ``<version>_O<level>`` (``numba-0.68.0_O1-<source hash>``).

Pruned: each source edit leaves a folder of ~14 MB behind, so at import the sibling folders
of other keys (only names of exactly that pattern) are removed, except the ``KEEP`` most
recently used and any used in the last ``GRACE_S`` seconds (another checkout or a process
still compiling may be using it). Best effort: races and permission errors are ignored.

Private: numba unpickles its index files, so whoever can write into the cache folder can run
code in this process. The folder is created with mode 0o700; an existing folder owned by
someone else is not used (a warning, then a private temporary folder that is removed at
exit, so the kernels compile again), and one of ours that group or others could write is
emptied and made private (its contents cannot be trusted).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import stat
import tempfile
import time
import warnings
from collections.abc import Mapping
from pathlib import Path

import numba

KEEP = 4
"""Cache folders of other source keys kept per parent folder (the most recently used)."""

GRACE_S = 15 * 60.0
"""A cache folder used within this many seconds is never pruned [s]."""

_PACKAGE_ROOT = Path(__file__).resolve().parent
_USER_PREFIX = "push_envs-"  # inside a user-set NUMBA_CACHE_DIR, shared with other projects
# configure() also exports the folder as NUMBA_CACHE_DIR, because numba re-reads its whole
# configuration from the environment whenever a NUMBA_* variable changes (a script setting
# NUMBA_NUM_THREADS after import, say) and would drop a CACHE_DIR set only on numba.config.
# This variable marks that NUMBA_CACHE_DIR as ours, so it is not taken for a user's choice.
_OURS = "PUSH_ENVS_NUMBA_CACHE"


def opt_tag(opt: object = None) -> str:
    """``""`` at numba's default optimisation level 3, else ``"_O<level>"`` (``opt``: a
    ``NUMBA_OPT`` value; None: the level this process compiles at)."""
    if opt is None:
        opt = getattr(numba.config.OPT, "_raw_value", numba.config.OPT)
    return "" if str(opt) == "3" else f"_O{opt}"


def source_key(root: Path = _PACKAGE_ROOT, opt: object = None) -> str:
    """``numba-<numba version><opt_tag(opt)>-<16 hex digits of a SHA-1 over every .py file
    under root>``."""
    digest = hashlib.sha1()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return f"numba-{numba.__version__}{opt_tag(opt)}-{digest.hexdigest()[:16]}"


def _user_dir(environ: Mapping[str, str]) -> str | None:
    """NUMBA_CACHE_DIR when the user set it (not when configure() exported it)."""
    user = environ.get("NUMBA_CACHE_DIR")
    return user if user and user != environ.get(_OURS) else None


def cache_folder(environ: Mapping[str, str], key: str) -> Path:
    """The cache folder for ``key`` under the environment's cache settings."""
    user = _user_dir(environ)
    if user:
        return Path(user) / f"{_USER_PREFIX}{key}"
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "push_envs" / key


def _sibling_pattern(name: str) -> re.Pattern[str]:
    """Names of our cache folders beside ``name`` (same prefix, any version and hash)."""
    prefix = _USER_PREFIX if name.startswith(_USER_PREFIX) else ""
    return re.compile(rf"{re.escape(prefix)}numba-[0-9][0-9A-Za-z.+_]*-[0-9a-f]{{16}}")


def prune(folder: Path, keep: int = KEEP, grace_s: float = GRACE_S,
          now: float | None = None) -> list[Path]:
    """Remove old sibling cache folders of ``folder``; returns the ones removed.

    Only folders whose name matches our pattern are considered (never anything else in a
    shared NUMBA_CACHE_DIR); of those, the ``keep`` most recently used (modification time)
    and any used within ``grace_s`` seconds stay. Errors (a folder vanishing under a
    concurrent prune, no permission) are ignored.
    """
    now = time.time() if now is None else now
    pattern = _sibling_pattern(folder.name)
    candidates: list[tuple[float, Path]] = []
    try:
        entries = list(folder.parent.iterdir())
    except OSError:
        return []
    for entry in entries:
        if entry.name == folder.name or not pattern.fullmatch(entry.name):
            continue
        try:
            info = entry.lstat()
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):  # never follow a symlink out of the cache
            candidates.append((info.st_mtime, entry))
    candidates.sort(reverse=True)
    removed = []
    for mtime, entry in candidates[keep:]:
        if now - mtime < grace_s:
            continue
        try:
            shutil.rmtree(entry)
            removed.append(entry)
        except OSError:
            pass
    return removed


def unsafe_reason(folder: Path) -> str | None:
    """Why ``folder`` cannot be trusted as a cache (None if it is private to this user)."""
    if not hasattr(os, "getuid"):  # no POSIX ownership (Windows): nothing to check
        return None
    info = folder.stat()
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    if info.st_uid != os.getuid():
        return f"it is owned by user id {info.st_uid}, not by you ({os.getuid()})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"group or others can write to it (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def _private_temp() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="push_envs-numba-tmp-"))  # mode 0o700
    atexit.register(shutil.rmtree, folder, True)
    return folder


def prepare(environ: Mapping[str, str] = os.environ, key: str | None = None) -> Path:
    """Create (mode 0o700), check and mark as used the cache folder; prune its old siblings.

    Returns the folder to use: the keyed one, or a private temporary folder (with a warning)
    when the keyed one is owned by someone else or cannot be created.
    """
    folder = cache_folder(environ, source_key() if key is None else key)
    try:
        if not _user_dir(environ):
            # Our own parent is private too: nobody else can add or swap cache folders in it.
            folder.parent.parent.mkdir(parents=True, exist_ok=True)
            folder.parent.mkdir(mode=0o700, exist_ok=True)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        reason = unsafe_reason(folder)
        if reason is not None and reason.startswith("group or others"):
            # Ours but writable by others: whatever is inside may have been planted.
            warnings.warn(f"push_envs: numba cache {folder} was not private ({reason}); "
                          "emptied it and set mode 0o700", stacklevel=2)
            shutil.rmtree(folder)
            folder.mkdir(mode=0o700)
            reason = unsafe_reason(folder)
        if reason is not None:
            warnings.warn(f"push_envs: not using the numba cache {folder}: {reason} (numba "
                          "unpickles its index files, so a cache others can write can run "
                          "code); using a private temporary cache, kernels will compile again",
                          stacklevel=2)
            return _private_temp()
        os.utime(folder)  # "last used", for prune()
    except OSError as exc:
        warnings.warn(f"push_envs: cannot use the numba cache {folder} ({exc}); using a "
                      "private temporary cache, kernels will compile again", stacklevel=2)
        return _private_temp()
    prune(folder)
    return folder


def configure() -> str:
    """Point numba's cache at the prepared folder; returns the folder."""
    folder = str(prepare())
    numba.config.CACHE_DIR = folder
    os.environ["NUMBA_CACHE_DIR"] = os.environ[_OURS] = folder  # survives a config reload
    return folder


def threading_layer() -> str:
    """Use numba's ``workqueue`` threading layer unless NUMBA_THREADING_LAYER says otherwise.

    The default (OpenMP) layer is not fork-safe once a parallel kernel has run: forked children
    abort. workqueue is, and gave the same bit-identical results, so a batch can live inside
    ``AsyncVectorEnv`` or a forked data loader.
    """
    if not os.environ.get("NUMBA_THREADING_LAYER"):
        os.environ["NUMBA_THREADING_LAYER"] = "workqueue"  # survives a config reload
        numba.config.THREADING_LAYER = "workqueue"
    return numba.config.THREADING_LAYER


CACHE_DIR = configure()
THREADING_LAYER = threading_layer()
