"""Process-wide runtime state: ``aclInit`` once, the thread-local current device/stream/binding, and
the status helpers every runtime module uses."""
from __future__ import annotations

import ctypes
import threading
from .._mutex import mutex as _mutex

from .. import _shutdown, capi
from .._release import finalizer as _finalizer
from ..errors import make_error, recent_error_message

class _ThreadState(threading.local):
    """Per thread: the current device and stream (set by ``with``) and the device binding. The class
    defaults make reading an unset one cheap (a missing attribute of a plain threading.local costs
    an exception inside getattr, on every launch)."""
    device = None
    stream = None
    binding = None


_tls = _ThreadState()
_byref = ctypes.byref


def _check(status: int, func: str) -> None:
    if status:
        raise make_error(status, func)


def _quiet(status: int) -> None:
    """For finalizers: drop the vendor message a failing release left on this thread."""
    if status:
        recent_error_message()


# ------------------------------------------------------------------------------------------------
# Process-wide initialisation
# ------------------------------------------------------------------------------------------------

_init_lock = _mutex()
_initialised = False


class _RuntimeReference:
    """Stands for the aclInit reference this process took; finalized last at exit."""


_runtime_reference = _RuntimeReference()


def _drop_runtime_reference(finalize_reference, finalize) -> None:
    # Runs at interpreter exit after every object created later (finalizers run the newest
    # first). aclFinalizeReference drops only our reference; older toolkits lack it.
    try:
        if finalize_reference is not None:
            _quiet(finalize_reference(None))
    except Exception:       # noqa: BLE001 -- nothing may escape a finalizer at shutdown
        pass


def init() -> None:
    """``aclInit(NULL)`` once per process (an earlier ``aclInit`` elsewhere is fine: 100002)."""
    global _initialised
    if _initialised:
        return
    with _init_lock:
        if _initialised:
            return
        status = _acl_init_null()
        if status not in (capi.ACL_SUCCESS, capi.ACL_ERROR_REPEAT_INITIALIZE):
            raise make_error(status, "aclInit")
        fin_ref = capi.aclFinalizeReference
        _finalizer(_runtime_reference, _drop_runtime_reference,
                   None if getattr(fin_ref, "missing", False) else fin_ref, capi.aclFinalize)
        _shutdown.install()   # after a finalizer exists: at exit, launches stop before finalizers run
        _initialised = True


_init_null: list = []


def _acl_init_null() -> int:
    """``aclInit(NULL)`` through a binding whose argument ctypes converts in C: capi's ``const char*``
    converter is Python code, and a KeyboardInterrupt raised inside it reaches the caller as a
    ``ctypes.ArgumentError`` (checked on every resource creation, see devices.check_runtime)."""
    if not _init_null:
        from .._loader import backend
        fn = backend().symbol("aclInit")
        fn.argtypes = [ctypes.c_void_p]
        fn.restype = ctypes.c_int
        _init_null.append(fn)
    return _init_null[0](None)


def is_stub() -> bool:
    """True when the loaded libraries are pyaclnn's CPU emulator."""
    from .._loader import backend
    return backend().name == "stub"


def soc_name() -> str:
    """``aclrtGetSocName()``: e.g. ``Ascend910B4``, ``Ascend950PR``."""
    init()
    raw = capi.aclrtGetSocName()
    return raw.decode() if raw else "unknown"


def device_count() -> int:
    """``aclrtGetDeviceCount()`` (honours ``ASCEND_RT_VISIBLE_DEVICES``)."""
    init()
    n = ctypes.c_uint32()
    _check(capi.aclrtGetDeviceCount(_byref(n)), "aclrtGetDeviceCount")
    return n.value


def _runtime_finalized() -> bool:
    """Was the runtime finalized after pyaclnn's aclInit? (an aclInit + aclFinalizeReference pair,
    which leaves the init state as it found it)"""
    fin_ref = capi.aclFinalizeReference
    if not _initialised or getattr(fin_ref, "missing", False):
        return False
    status = _acl_init_null()
    if status not in (capi.ACL_SUCCESS, capi.ACL_ERROR_REPEAT_INITIALIZE):
        recent_error_message()
        return False
    _quiet(fin_ref(None))
    return status == capi.ACL_SUCCESS
