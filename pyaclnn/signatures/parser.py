"""Find ``<op>GetWorkspaceSize`` prototypes in header text and directories of headers."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .._exceptions import NotADirectoryPathError
from . import doccomment
from .cheader import CleanHeader, clean, comments_between, find_declarations, parse_param, split_params
from .classify import classify
from .model import OpSignature

_PHASE1_SUFFIX = "GetWorkspaceSize"
# Phase 2: aclnnXxx(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream)
_LAUNCH_CTYPES = ("void*", "uint64_t", "aclOpExecutor*", "aclrtStream")
_ENUM_NAMES = re.compile(r"\benum\s+([A-Za-z_]\w*)\s*\{|\btypedef\s+enum\b[^;{]*\{[^}]*\}\s*([A-Za-z_]\w*)\s*;")


def parse_header_text(text: str, filename: str = "<text>", *,
                      enums: frozenset[str] = frozenset()) -> list[OpSignature]:
    """Every operator whose phase-1 function this header declares, in declaration order.

    ``enums`` names extra enum types (from other headers) that parameters may take by value; enums
    defined in ``text`` itself are found automatically.
    """
    header = clean(text)
    enums = enums | defined_enums(header)
    # The @domain tag is usually in the prototype's doc comment, sometimes once in the file comment.
    file_domain = doccomment.domain("\n".join(c.text for c in header.comments))
    sigs: list[OpSignature] = []
    seen: set[str] = set()
    for decl in find_declarations(header, rf"[A-Za-z_]\w*{_PHASE1_SUFFIX}"):
        name = decl.name[: -len(_PHASE1_SUFFIX)]
        if not name or name in seen:  # a repeated declaration of the same function
            continue
        seen.add(name)
        doc = comments_between(header, decl.start, decl.name_pos)
        cparams = [parse_param(p) for p in split_params(decl.params_text)]
        doc_null, doc_optional = doccomment.nullable_params(doc)
        params, notes = classify(name, cparams, doc_null=doc_null, doc_optional=doc_optional,
                                 generated=doccomment.is_generated(doc), enums=enums)
        has_launch = _declares_launch(header, name)
        if not has_launch:
            notes += (f"this header does not declare the phase-2 function as "
                      f"{name}(void*, uint64_t, aclOpExecutor*, aclrtStream)",)
        sigs.append(OpSignature(name=name, params=params, header=filename, has_launch=has_launch,
                                domain=doccomment.domain(doc) or file_domain, notes=notes))
    return sigs


def _declares_launch(header: CleanHeader, name: str) -> bool:
    """Whether ``name`` is declared with the standard four phase-2 parameters."""
    for decl in find_declarations(header, re.escape(name)):
        if tuple(parse_param(p).ctype for p in split_params(decl.params_text)) == _LAUNCH_CTYPES:
            return True
    return False


def defined_enums(header: CleanHeader) -> frozenset[str]:
    return frozenset(a or b for a, b in _ENUM_NAMES.findall(header.text))


def header_files(path: str | os.PathLike[str]) -> list[Path]:
    """The ``*.h`` files under ``path``, shallowest first (``aclnnop/x.h`` before ``aclnnop/level2/x.h``)."""
    root = Path(path)
    return sorted(root.rglob("*.h"), key=lambda p: (len(p.relative_to(root).parts), p.as_posix()))


def scan_dir(path: str | os.PathLike[str]) -> list[OpSignature]:
    """Every prototype under ``path``, duplicates included, shallowest header first."""
    root = Path(path)
    if not root.is_dir():
        raise NotADirectoryPathError(f"not a directory: {root}")
    texts = {f: f.read_text(encoding="utf-8", errors="replace") for f in header_files(root)}
    # Enums may be defined in one header and used in another.
    enums = frozenset().union(*(defined_enums(clean(t)) for t in texts.values() if "enum" in t))
    sigs: list[OpSignature] = []
    for f, text in texts.items():
        if _PHASE1_SUFFIX in text:
            sigs += parse_header_text(text, f.relative_to(root).as_posix(), enums=enums)
    return sigs


def parse_dir(path: str | os.PathLike[str]) -> dict[str, OpSignature]:
    """Every operator declared under ``path`` (recursively), keyed by phase-2 name (``aclnnAbs``).

    Toolkits ship some headers twice (``aclnnop/`` and ``aclnnop/level2/``); the shallowest
    declaration wins. ``header`` of each signature is relative to ``path``.
    """
    return first_per_name(scan_dir(path))


def first_per_name(sigs: list[OpSignature]) -> dict[str, OpSignature]:
    ops: dict[str, OpSignature] = {}
    for sig in sigs:
        ops.setdefault(sig.name, sig)
    return ops
