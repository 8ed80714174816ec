"""The catalog of the emulated operators: ``ops.json``, written by the emulator's build from the operator
definitions (native_stubs/src/ops/<family>/*.toml, native_stubs/tools/opgen) and installed next to the
stub libraries.

It holds, per operator: the signature registry entry of its prototype (what the generated header
declares), its family and definition file, the vendor source it follows, its fidelity class and note,
and its dtype lists per SoC. The signature registry (:func:`pyaclnn.signatures.builtin`), the C
functions of :mod:`pyaclnn.capi`, :mod:`pyaclnn.ops._fidelity` and ``python -m pyaclnn info --ops``
read it from here, so nothing about an operator is written twice.

Without a built stub (a bare checkout) the catalog is empty.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from ._exceptions import InvalidArgumentError

FORMAT = 1
FILENAME = "ops.json"


def path() -> Path | None:
    """Where the catalog of the stub in use lies (``<stub library dir>/ops.json``), or None."""
    from ._stubpaths import stub_library_dir
    libdir = stub_library_dir()
    if libdir is None:
        return None
    p = Path(libdir) / FILENAME
    return p if p.is_file() else None


@lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    """The whole catalog (``{"format", "signatures", "operators"}``); empty parts without a built stub."""
    p = path()
    if p is None:
        return {"format": FORMAT, "signatures": {"format": 1, "source": "", "ops": {}}, "operators": {}}
    with open(p, encoding="utf-8") as f:
        doc = json.load(f)
    if doc.get("format") != FORMAT:
        raise InvalidArgumentError(f"{p}: catalog format {doc.get('format')!r}, this pyaclnn reads {FORMAT}; "
                                   "rebuild the stub (pip install -e .)")
    return doc


def operators() -> dict[str, dict[str, Any]]:
    """``{"aclnnRelu": {"family", "definition", "source", "doc", "fidelity", "note", "dtypes", ...}}``."""
    return load()["operators"]


def signature_doc() -> dict[str, Any]:
    """The operators' signature registry, in pyaclnn.signatures' JSON format."""
    return load()["signatures"]


def clear() -> None:
    """Forget the cached catalog (tests that point PYACLNN_STUB_LIBDIR elsewhere)."""
    load.cache_clear()


__all__ = ["path", "load", "operators", "signature_doc", "clear", "FILENAME"]
