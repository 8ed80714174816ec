"""The signature registry: the operators shipped with pyaclnn plus those of an installed toolkit.

The builtin part comes from the operator catalog the emulator's build writes (the headers it ships,
read by this package's own parser at build time; :mod:`pyaclnn._catalog`). Toolkit headers are parsed at run time, once per process,
and the result is also cached on disk (keyed by the headers' names, sizes and mtimes).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping

from .model import OpSignature, registry_from_dict, registry_to_dict
from .parser import header_files, parse_dir

#: Bump when the parser's output changes, so that disk caches written by an older version are ignored.
PARSER_VERSION = 1

# Where a toolkit keeps the operator headers, relative to its root. include/aclnnop is a tree of
# symlinks onto the opp directory in CANN 8.x installs; either works.
_TOOLKIT_SUBDIRS = ("include/aclnnop", "opp/built-in/op_impl/ai_core/tbe/op_api/include/aclnnop")
_TOOLKIT_ROOT_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")
_TOOLKIT_DEFAULT_ROOTS = ("/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/cann")


@lru_cache(maxsize=1)
def builtin() -> Mapping[str, OpSignature]:
    """The operators whose headers pyaclnn ships (and the stub implements): every ``aclnnop`` header of
    the built stub, as its build read them into the operator catalog (:mod:`pyaclnn._catalog`).
    Empty without a built stub."""
    from .. import _catalog   # (not at import: the emulator's generator loads this package on its own)
    return registry_from_dict(_catalog.signature_doc())


def toolkit_include_dirs() -> list[Path]:
    """Operator header directories of the environment, highest priority first.

    Custom operator packages (``ASCEND_CUSTOM_OPP_PATH``, each ``<root>/op_api/include``) come before
    the toolkit's own ``include/aclnnop`` (from ``ASCEND_HOME_PATH``, ``ASCEND_TOOLKIT_HOME`` or the
    standard install paths), the order in which torch_npu resolves operator symbols. Nothing is found
    when ``PYACLNN_BACKEND=stub``: then only the builtin operators can be called.
    """
    from .. import _env   # (not at import: the emulator's generator loads this package on its own)
    if os.environ.get("PYACLNN_BACKEND", "").lower() == "stub":
        return []
    dirs: list[Path] = []
    for root in _env.path_list("ASCEND_CUSTOM_OPP_PATH"):
        dirs.append(Path(root) / "op_api" / "include")
    roots = [r for r in map(_env.path, _TOOLKIT_ROOT_VARS) if r]
    for root in roots or _TOOLKIT_DEFAULT_ROOTS:
        found = [Path(root) / sub for sub in _TOOLKIT_SUBDIRS if (Path(root) / sub).is_dir()]
        if found:
            dirs.append(found[0])
            break
    unique: list[Path] = []
    for d in dirs:
        if d.is_dir() and d.resolve() not in {u.resolve() for u in unique}:
            unique.append(d)
    return unique


def registry(include_dirs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None = None,
             ) -> dict[str, OpSignature]:
    """Builtin operators plus those declared in ``include_dirs``, keyed by name (``aclnnAdd``).

    Parameters
    ----------
    include_dirs:
        One directory or several, highest priority first (a later directory never overrides an
        operator of an earlier one). ``None`` looks them up with :func:`toolkit_include_dirs`.
        An operator declared by a toolkit replaces the builtin description of the same name.
    """
    if include_dirs is None:
        dirs = toolkit_include_dirs()
    elif isinstance(include_dirs, (str, os.PathLike)):
        dirs = [Path(include_dirs)]
    else:
        dirs = [Path(d) for d in include_dirs]
    ops = dict(builtin())
    for d in reversed(dirs):
        ops.update(parse_dir_cached(d))
    return ops


_memory_cache: dict[tuple[str, str], dict[str, OpSignature]] = {}


def parse_dir_cached(path: str | os.PathLike[str]) -> dict[str, OpSignature]:
    """:func:`parse_dir` with a per-process and an on-disk cache, invalidated by any header change."""
    root = Path(path).resolve()
    key = (str(root), _fingerprint(root))
    if key in _memory_cache:
        return dict(_memory_cache[key])
    cache_file = _cache_dir() / f"signatures-{hashlib.sha256(repr(key).encode()).hexdigest()[:24]}.json"
    ops = _read_cache(cache_file)
    if ops is None:
        ops = parse_dir(root)
        _write_cache(cache_file, ops, str(root))
    _memory_cache[key] = ops
    return dict(ops)


def _fingerprint(root: Path) -> str:
    h = hashlib.sha256(f"v{PARSER_VERSION}".encode())
    for f in header_files(root):
        st = f.stat()
        h.update(f"{f.relative_to(root).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _cache_dir() -> Path:
    from .. import _env
    if _env.path("PYACLNN_CACHE_DIR"):
        return Path(os.environ["PYACLNN_CACHE_DIR"])
    base = _env.path("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pyaclnn"


def _read_cache(path: Path) -> dict[str, OpSignature] | None:
    try:
        with open(path, encoding="utf-8") as f:
            return registry_from_dict(json.load(f))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing or unreadable: parse again


def _write_cache(path: Path, ops: Mapping[str, OpSignature], source: str) -> None:
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(registry_to_dict(ops, source), f)
        os.replace(tmp, path)  # atomic: a concurrent process never reads half a file
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        # a read-only cache directory only costs a re-parse next time
