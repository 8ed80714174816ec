"""Exceptions for failing CANN calls: the status code, its C name and the vendor's message.

    status = capi.aclrtMalloc(byref(p), n, capi.ACL_MEM_MALLOC_HUGE_FIRST)
    check(status, "aclrtMalloc")      # raises e.g. AclRuntimeError(ACL_ERROR_RT_MEMORY_ALLOCATION)

:func:`check` reads ``aclGetRecentErrMsg()`` right after the failing call (it is thread-local and
read-and-clear), so call it immediately after the C function, on the same thread.

Families (by code range):

* :class:`AclInitError` -- 100001 / 100002 / 100037 (init and finalize state);
* :class:`AclApiError` -- the other ``ACL_ERROR_*`` codes of acl_base_rt.h (1000xx, 148xxx, 2000xx,
  300000, 5000xx);
* :class:`AclRuntimeError` -- ``ACL_ERROR_RT_*`` (107xxx caller errors, 207xxx resources, 507xxx
  device/internal);
* :class:`AclnnError` -- ``ACLNN_*`` (161xxx parameters: :class:`AclnnParamError`; 361xxx runtime
  underneath; 561xxx internal: :class:`AclnnInnerError`);
* :class:`AclGeError` -- ``ACL_ERROR_GE_*`` (145xxx .. 545xxx).
"""
from __future__ import annotations

from ._exceptions import (  # noqa: F401 -- the whole hierarchy is importable from here
    ArgumentTypeError, BackendError, CIntRangeError, ClosedError, EmulatorOnlyError, IndexOutOfRangeError,
    InvalidArgumentError, MissingPathError, NoAttributeError, NotADirectoryPathError, NotFoundError, PyaclnnError,
    ShuttingDownError, UnsupportedError)
from .capi._constants import ENUM_MEMBERS


class MissingSymbolError(PyaclnnError):
    """A C function that none of the loaded libraries exports (e.g. an operator of a newer CANN)."""

    def __init__(self, func: str, libraries: list[str], backend: str | None = None):
        self.func = func
        self.libraries = list(libraries)
        self.backend = backend
        searched = "\n  ".join(self.libraries) or "(none)"
        super().__init__(f"{func} is not exported by the loaded {backend or 'CANN'} libraries; "
                         f"searched, in order:\n  {searched}")


def _names_by_code() -> dict[int, str]:
    # First spelling wins per family; the families are ordered so that the common name is kept
    # (ACL_SUCCESS over ACL_ERROR_NONE, the corrected ACLNN_ERR_INNER_KEY_CONFLICT over CONFILICT).
    out: dict[int, str] = {0: "ACL_SUCCESS"}
    skip = {"ACL_ERROR_NONE", "ACL_RT_SUCCESS", "ACLNN_SUCCESS", "ACLNN_ERR_INNER_KEY_CONFILICT"}
    for family in ("acl_error", "rt_error", "ge_error", "aclnn_status"):
        for name, value in ENUM_MEMBERS[family].items():
            if name not in skip:
                out.setdefault(value, name)
    return out


STATUS_NAMES: dict[int, str] = _names_by_code()

# Short, actionable hints for the codes users meet most (shown after the vendor message).
HINTS: dict[int, str] = {
    100000: "an argument is invalid (NULL pointer, zero size, out-of-range enum)",
    100001: "call aclInit() first",
    100002: "aclInit() was already called (commonly treated as success)",
    100037: "aclFinalize() was already called",
    107001: "device id out of range: check aclrtGetDeviceCount() and ASCEND_RT_VISIBLE_DEVICES",
    107002: "no current context on this thread: call aclrtSetDevice() (contexts are per thread)",
    161001: "a required pointer argument is NULL",
    161002: "an argument is invalid: dtype, shape, format or value not supported",
    507008: "the SoC is not one this runtime can use; on the emulator, PYACLNN_STUB_SOC names an "
            "unknown chip (the message lists the accepted names)",
    561002: "tiling failed: commonly a shape or attribute the kernel does not support",
    561003: "no kernel for these inputs on this SoC",
    561103: "internal NULL: often a NULL/consumed executor, or a CANN/driver version mismatch",
}


def status_name(code: int) -> str:
    """C name of a status code, e.g. 107000 -> ``ACL_ERROR_RT_PARAM_INVALID``."""
    return STATUS_NAMES.get(code, f"UNKNOWN_STATUS_{code}")


class AclError(PyaclnnError):
    """A CANN call returned a non-zero status.

    Attributes: ``code`` (int), ``name`` (C name of the code), ``message`` (the vendor text from
    ``aclGetRecentErrMsg``, or None), ``func`` (the C function that failed, or None), ``hint``.
    """

    def __init__(self, code: int, func: str | None = None, message: str | None = None):
        self.code = int(code)
        self.name = status_name(self.code)
        self.func = func
        self.message = message
        self.hint = HINTS.get(self.code)
        super().__init__(self._text())

    def _text(self) -> str:
        head = f"{self.func} failed" if self.func else "CANN call failed"
        text = f"{head}: {self.name} ({self.code})"
        if self.message:
            text += f"\n{self.message.rstrip()}"
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text

    def __reduce__(self):
        return (_rebuild, (type(self), self.code, self.func, self.message))


def _rebuild(cls, code, func, message):
    return cls(code, func, message)


class AclApiError(AclError):
    """``ACL_ERROR_*`` codes of acl_base_rt.h other than the init/finalize ones."""


class AclInitError(AclApiError):
    """Init/finalize state: ACL_ERROR_UNINITIALIZE, REPEAT_INITIALIZE, REPEAT_FINALIZE."""


class AclRuntimeError(AclError):
    """``ACL_ERROR_RT_*``: 107xxx (caller), 207xxx (resources), 507xxx (device / internal)."""


class AclGeError(AclError):
    """``ACL_ERROR_GE_*`` (graph engine) codes."""


class AclnnError(AclError):
    """``ACLNN_ERR_*`` status of an aclnn meta-API or operator call."""


class AclnnParamError(AclnnError):
    """161xxx: a NULL or invalid argument."""


class AclnnInnerError(AclnnError):
    """561xxx: internal failure (tiling, kernel lookup, executor)."""


_INIT_CODES = {100001, 100002, 100037}


def error_class(code: int) -> type[AclError]:
    """The exception class for a status code (by its family's range)."""
    family = code // 1000
    if code in _INIT_CODES:
        return AclInitError
    if family in (107, 207, 507):
        return AclRuntimeError
    if family == 161:
        return AclnnParamError
    if family == 561:
        return AclnnInnerError
    if family == 361:
        return AclnnError
    if family in (145, 245, 345, 545):
        return AclGeError
    return AclApiError


# aclGetRecentErrMsg of the loaded libraries: set by pyaclnn._loader when it opens them (until then
# no call has run, so no message is pending).
read_recent_message = None


def recent_error_message() -> str | None:
    """``aclGetRecentErrMsg()`` as text (reads and clears the thread's pending messages)."""
    read = read_recent_message
    if read is None:
        return None
    try:
        raw = read()
    except OSError:
        return None
    return raw.decode("utf-8", "replace") if raw else None


class DeviceResetError(AclRuntimeError):
    """A call failed because a device (or the whole runtime) that pyaclnn's objects live on was reset
    or finalized through :mod:`pyaclnn.capi` behind the Pythonic layer's back.

    ``code`` is the status of the call that failed; ``hint`` says what was found to have happened.
    """


class ConfigError(PyaclnnError, ValueError):
    """An environment variable pyaclnn reads holds a value it cannot use.

    ``variable`` names it, ``code`` is the errno of the problem (``errno.ENAMETOOLONG`` for a path
    longer than the system takes), and the message says what a valid value is.
    """

    def __init__(self, variable: str, code: int, message: str):
        self.variable = variable
        self.code = code
        super().__init__(message)


# Set by pyaclnn.runtime once the Pythonic layer holds devices: (code) -> explanation or None.
_diagnose = None
# Runtime codes a vanished context, stream or runtime produces (107xxx caller, 507xxx device).
_LOST_FAMILIES = (107, 507)


def make_error(code: int, func: str | None = None, message: str | None = None) -> AclError:
    """Build (not raise) the exception for ``code``; reads the vendor message if not given.

    When the Pythonic layer is in use and the failure comes from a device or runtime that was reset
    or finalized behind its back, the result is a :class:`DeviceResetError` saying so.
    """
    if message is None:
        message = recent_error_message()
    diagnose = _diagnose
    if diagnose is not None and code // 1000 in _LOST_FAMILIES:
        try:
            why = diagnose(code)
        except Exception:       # noqa: BLE001 -- a diagnosis must never hide the error itself
            why = None
        if why:
            err = DeviceResetError(code, func, message)
            err.hint = why
            err.args = (err._text(),)
            return err
    return error_class(code)(code, func, message)


def check(status: int, func_name: str | None = None) -> int:
    """Raise the matching :class:`AclError` if ``status`` is non-zero; else return 0."""
    if status:
        raise make_error(status, func_name)
    return status
