"""Which operators can be called: the signature registry, name lookup and one launcher per operator."""
from __future__ import annotations

import keyword
import os
import re
from pathlib import Path
from typing import Iterable
from .._mutex import mutex as _mutex

from ..signatures import OpSignature, parse_dir_cached, registry, toolkit_include_dirs
from ._errors import not_declared

_lock = _mutex()
_signatures: dict[str, OpSignature] | None = None
_extra_dirs: list[Path] = []
_functions: dict[str, object] = {}
_available: list[str] | None = None        # cache of available(); reset by load_headers

# Operators whose output shape depends on the data (opbase's OP_OUTSHAPE): phase 2 waits for the
# stream and writes the real shape into the output's aclTensor (read back with aclGetViewShape).
# A launch through a repeatable executor writes it into the executor's own descriptor, which the
# caller cannot see, so these are never run through one (prepare() and plan(), on which the friendly
# functions' cached plans are built, refuse them). The emulated ones, and those torch_npu runs with EXEC_NPU_CMD_SYNC + aclGetViewShape.
DATA_DEPENDENT_SHAPE = frozenset({"aclnnMaskedSelect", "aclnnNonzeroV2", "aclnnNonzero", "aclnnUnique2",
                                  "aclnnUniqueConsecutive"})


def signatures() -> dict[str, OpSignature]:
    """Every known operator signature, keyed by C name (``aclnnAmpUpdateScale``)."""
    global _signatures, _available
    sigs = _signatures
    if sigs is None:
        with _lock:
            if _signatures is None:
                _available = None
                _signatures = registry()
                for d in _extra_dirs:
                    _signatures.update(parse_dir_cached(d))
            sigs = _signatures
    return sigs


def load_headers(include_dir: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str]:
    """Parse operator headers (e.g. a custom operator package's ``op_api/include``) and make their
    operators callable; returns the names added or replaced."""
    dirs = [include_dir] if isinstance(include_dir, (str, os.PathLike)) else list(include_dir)
    added: list[str] = []
    sigs = signatures()
    with _lock:
        for d in dirs:
            parsed = parse_dir_cached(d)
            _extra_dirs.append(Path(d))
            sigs.update(parsed)
            for name in parsed:
                _functions.pop(name, None)
            added += sorted(parsed)
    _reset_available()
    return added


def _reset_available() -> None:
    global _available
    _available = None


def header_dirs() -> list[str]:
    return [str(d) for d in toolkit_include_dirs()] + [str(d) for d in _extra_dirs]


def _snake_to_camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def snake_case(name: str) -> str:
    """``updatedScaleOut`` -> ``updated_scale_out``; a Python keyword gets a trailing underscore
    (aclnnInplaceUniform's ``from`` -> ``from_``, PEP 8's convention)."""
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    return snake + "_" if keyword.iskeyword(snake) else snake


def c_name(op: str) -> str:
    """``AmpUpdateScale`` / ``aclnnAmpUpdateScale`` / ``amp_update_scale`` -> ``aclnnAmpUpdateScale``."""
    if op.startswith("aclnn"):
        return op
    if "_" in op or op.islower():
        op = _snake_to_camel(op)
    return "aclnn" + op[:1].upper() + op[1:]


def signature(op: str) -> OpSignature:
    """The signature of an operator (any spelling of :func:`c_name`); OperatorNotFoundError if none."""
    sigs = signatures()
    sig = sigs.get(c_name(op)) or sigs.get(op)
    if sig is None:
        # snake_case spellings of names with digits or acronyms ("grouped_dynamic_mx_quant_v2")
        wanted = re.sub(r"[^a-z0-9]", "", op.lower())
        for name, s in sigs.items():
            if re.sub(r"[^a-z0-9]", "", name[len("aclnn"):].lower()) == wanted:
                return s
        raise not_declared(c_name(op), header_dirs(), len(sigs), available)
    return sig


def names() -> list[str]:
    """Operator names without the ``aclnn`` prefix, sorted (declared by a header; the loaded
    libraries may lack some: see :func:`available`)."""
    return sorted(s.op_name for s in signatures().values())


def available() -> list[str]:
    """Operators that can be called here: declared by a known header *and* exported (both
    ``aclnnXxxGetWorkspaceSize`` and ``aclnnXxx``) by the loaded libraries; sorted, no prefix."""
    global _available
    found = _available
    if found is None:
        from .._loader import backend
        b = backend()
        found = sorted(s.op_name for s in list(signatures().values())
                       if b.find(s.workspace_function) and b.find(s.name))
        _available = found
    return found
