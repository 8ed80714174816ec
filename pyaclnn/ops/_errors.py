"""Errors of the operator launcher: a missing operator, and AclErrors that say which operator and SoC."""
from __future__ import annotations

from .. import capi
from ..errors import AclError, make_error, status_name


def _soc() -> str:
    try:
        from ..runtime import soc_name
        return soc_name()
    except Exception:       # noqa: BLE001 -- only used to enrich a message
        return "unknown SoC"


def _backend() -> tuple[str, list[str]]:
    from .._loader import backend
    b = backend()
    return b.name, b.library_paths


class OperatorNotFoundError(AclError, AttributeError):  # type: ignore[misc]
    """The operator is not declared by any known header, or no loaded library exports it.

    An :class:`~pyaclnn.errors.AclError` with code ``ACL_ERROR_OP_NOT_FOUND`` (100024) and an
    ``AttributeError`` (so ``hasattr(pyaclnn.ops, "Foo")`` is False).  ``libraries`` lists the
    libraries searched, ``soc`` the chip.
    """

    def __init__(self, op: str, reason: str, libraries: list[str] | None = None, soc: str | None = None,
                 backend: str | None = None, header_dirs: list[str] | None = None):
        self.op = op
        self.libraries = list(libraries or [])
        self.soc = soc
        self.backend = backend
        self.header_dirs = list(header_dirs or [])
        lines = [reason]
        if self.header_dirs:
            lines.append("operator headers searched: " + ", ".join(self.header_dirs))
        if self.libraries:
            lines.append("libraries searched, in order:\n  " + "\n  ".join(self.libraries))
        lines.append(f"backend {backend or '?'}, SoC {soc or '?'}")
        AclError.__init__(self, capi.ACL_ERROR_OP_NOT_FOUND, op, "\n".join(lines))
        # AttributeError.__init__ (reached through super()) resets its own `name` slot.
        self.name = status_name(capi.ACL_ERROR_OP_NOT_FOUND)
        self.hint = ("this toolkit does not provide the operator: check the CANN version, or load the "
                     "headers of a custom operator package with pyaclnn.ops.load_headers()")
        self.args = (self._text(),)

    def __reduce__(self):
        return (_rebuild_not_found, (self.op, self.message, self.libraries, self.soc, self.backend))


def _rebuild_not_found(op, message, libraries, soc, backend):
    err = OperatorNotFoundError.__new__(OperatorNotFoundError)
    OperatorNotFoundError.__init__(err, op, message.splitlines()[0] if message else "", libraries, soc, backend)
    return err


_MAX_LISTED = 40


def _available_hint(backend: str, available) -> str:
    """The hint of a missing operator: what the loaded libraries do implement (``available()``,
    given by the caller: pyaclnn.ops._registry.available)."""
    try:
        ops = available()
    except Exception:       # noqa: BLE001 -- only used to enrich a message
        ops = []
    where = "the bundled emulator" if backend == "stub" else "the loaded libraries"
    listed = ", ".join(ops[:_MAX_LISTED]) + (f", ... ({len(ops)} in all)" if len(ops) > _MAX_LISTED else "")
    text = (f"{where} implement{'s' if backend == 'stub' else ''} {listed or 'no known operator'} "
            f"(pyaclnn.ops.available())")
    if backend != "stub":
        text += "; a custom operator package: pyaclnn.ops.load_headers() its op_api/include"
    return text


def not_declared(name: str, header_dirs: list[str], known: int, available) -> OperatorNotFoundError:
    backend, libs = _backend()
    err = OperatorNotFoundError(
        name, f"{name} is not declared by any operator header known to pyaclnn ({known} operators: "
              f"the builtin ones and those of the toolkit's aclnnop/ headers)",
        libs, _soc(), backend, header_dirs)
    return _with_hint(err, _available_hint(backend, available))


def not_exported(name: str, symbol: str, available) -> OperatorNotFoundError:
    backend, libs = _backend()
    err = OperatorNotFoundError(
        name, f"{symbol} is declared by a header but not exported by the loaded libraries", libs, _soc(),
        backend)
    return _with_hint(err, _available_hint(backend, available))


def _with_hint(err: OperatorNotFoundError, hint: str) -> OperatorNotFoundError:
    err.hint = hint
    err.args = (err._text(),)
    return err


# Status codes that mean "not on this chip / not with these dtypes": add the operator and the SoC.
_CONTEXT_HINTS = {
    161002: "{op} rejected an argument (dtype, shape, format or value) on SoC {soc}; see "
            "pyaclnn.ops.support_matrix() for the dtypes each SoC accepts",
    561003: "{op} has no kernel for these inputs on SoC {soc}",
    561002: "{op}: tiling failed on SoC {soc}: a shape or attribute value the kernel does not support",
    561103: "{op} refused at launch on SoC {soc} (tiling or kernel selection): see the message above",
}


# 161002 for an argument that no longer exists is not a dtype/shape problem: say so instead.
_DESTROYED_HINT = ("{op} was given an object that no longer exists (destroyed or consumed, e.g. released by "
                   "another thread or by the interpreter's exit): keep the tensors alive until the call returns")


def op_error(status: int, func: str, op: str) -> AclError:
    """The AclError for a failing operator call, with a hint naming the operator and the SoC."""
    err = make_error(status, func)
    template = _CONTEXT_HINTS.get(status)
    # (only this call's own report counts -- this function's newest, listed first: the thread's message buffer may
    # still hold an earlier, unread failure)
    own = [line for line in (err.message or "").splitlines() if func in line]
    if status == 161002 and own and "is not a live" in own[0]:
        template = _DESTROYED_HINT
    if template is not None:
        err.hint = template.format(op=op, soc=_soc())
        err.args = (err._text(),)
    return err
