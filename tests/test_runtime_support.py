"""Helpers shared by the test_runtime_* modules (this module holds no tests).

The emulator's internal entry points (``pyaclnn_stub_*``) are not part of the CANN ABI, so they are
not in ``pyaclnn.capi``; they are bound here from the loaded stub libraries. A ``Gate`` is a stream
task written in Python that blocks its stream until the test opens it: a deterministic "long
kernel" for ordering tests.
"""
from __future__ import annotations

import ctypes
import re
import threading
import time

import numpy as np

from pyaclnn import capi
from pyaclnn._loader import backend
from pyaclnn.errors import recent_error_message

from helpers import StubCounts as Counts

TASK_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

# "[PID: 123] 2026-12-01-01:02:03.456.789 aclrtMemcpy(107000): count 64 > destMax 32"
MESSAGE_LINE = re.compile(
    r"^\[PID: (?P<pid>\d+)\] \d{4}-\d{2}-\d{2}-\d{2}:\d{2}:\d{2}\.\d{3}\.\d{3} "
    r"(?P<func>\w+)\((?P<code>-?\d+)\): (?P<text>.*)$")


def stub_function(name: str, restype, argtypes):
    """A ctypes binding of an internal pyaclnn_stub_* function of the loaded stub."""
    fn = backend().symbol(name)
    fn.restype = restype
    fn.argtypes = argtypes
    return fn


stream_submit = stub_function("pyaclnn_stub_stream_submit", ctypes.c_int,
                              [ctypes.c_char_p, ctypes.c_void_p, TASK_FN, ctypes.c_void_p,
                               ctypes.c_void_p])
# Variadic in C; called here with a format that has no conversions.
task_fail = stub_function("pyaclnn_stub_task_fail", None, [ctypes.c_int, ctypes.c_char_p])
soc_family = stub_function("pyaclnn_stub_soc_family", ctypes.c_int, [])
mem_lookup = stub_function("pyaclnn_stub_mem_lookup", ctypes.c_int,
                           [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p),
                            ctypes.POINTER(ctypes.c_size_t)])
mem_register = stub_function("pyaclnn_stub_mem_register", ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t])
mem_unregister = stub_function("pyaclnn_stub_mem_unregister", ctypes.c_int, [ctypes.c_void_p])


_live_counts = stub_function("pyaclnn_stub_live_counts", None, [ctypes.POINTER(Counts)])


def live_counts() -> Counts:
    counts = Counts()
    _live_counts(ctypes.byref(counts))
    return counts


def expect_failure(status: int, code: int, func: str, contains: str | None = None) -> str:
    """Assert a call returned `code` and left a vendor-style message naming `func`; returns it."""
    message = recent_error_message()
    assert status == code, f"expected {code}, got {status}; message: {message!r}"
    assert message, f"{func} returned {code} without a message for aclGetRecentErrMsg"
    first = MESSAGE_LINE.match(message.splitlines()[0])
    assert first, f"not in the vendor layout: {message!r}"
    assert (first["func"], int(first["code"])) == (func, code), message
    if contains is not None:
        assert contains in first["text"], message
    return message


# Tasks handed to a stream must outlive their run: their ctypes trampolines are kept here.
_SUBMITTED: list = []


class Gate:
    """A stream task that blocks its stream until `open()` (or a 20 s safety timeout)."""

    def __init__(self):
        self.entered = threading.Event()
        self._released = threading.Event()
        self._fn = TASK_FN(self._run)       # kept alive as long as the gate

    def _run(self, _arg):
        self.entered.set()
        self._released.wait(20)

    def submit(self, stream) -> None:
        _SUBMITTED.append(self)
        status = stream_submit(b"Gate", stream, self._fn, None, None)
        assert status == capi.ACL_SUCCESS, (status, recent_error_message())

    def open(self) -> None:
        self._released.set()

    def open_after(self, seconds: float) -> threading.Timer:
        timer = threading.Timer(seconds, self.open)
        timer.start()
        return timer


class PythonTask:
    """A stream task that calls `body()` on the stream's worker thread."""

    def __init__(self, body):
        self._body = body
        self._fn = TASK_FN(lambda _arg: body())

    def submit(self, stream) -> int:
        _SUBMITTED.append(self)
        return stream_submit(b"PythonTask", stream, self._fn, None, None)


def malloc(nbytes: int, policy: int = capi.ACL_MEM_MALLOC_HUGE_FIRST) -> int:
    p = ctypes.c_void_p()
    status = capi.aclrtMalloc(ctypes.byref(p), nbytes, policy)
    assert status == capi.ACL_SUCCESS, (status, recent_error_message())
    return p.value


def free(ptr: int) -> None:
    status = capi.aclrtFree(ptr)
    assert status == capi.ACL_SUCCESS, (status, recent_error_message())


def upload(ptr: int, array: np.ndarray) -> None:
    status = capi.aclrtMemcpy(ptr, array.nbytes, array.ctypes.data, array.nbytes,
                              capi.ACL_MEMCPY_HOST_TO_DEVICE)
    assert status == capi.ACL_SUCCESS, (status, recent_error_message())


def download(ptr: int, nbytes: int) -> np.ndarray:
    out = np.zeros(nbytes, np.uint8)
    status = capi.aclrtMemcpy(out.ctypes.data, nbytes, ptr, nbytes, capi.ACL_MEMCPY_DEVICE_TO_HOST)
    assert status == capi.ACL_SUCCESS, (status, recent_error_message())
    return out


def create_stream() -> int:
    s = ctypes.c_void_p()
    status = capi.aclrtCreateStream(ctypes.byref(s))
    assert status == capi.ACL_SUCCESS, (status, recent_error_message())
    return s.value


def create_event(flag: int | None = None) -> int:
    e = ctypes.c_void_p()
    status = (capi.aclrtCreateEvent(ctypes.byref(e)) if flag is None
              else capi.aclrtCreateEventWithFlag(ctypes.byref(e), flag))
    assert status == capi.ACL_SUCCESS, (status, recent_error_message())
    return e.value


def run_in_thread(body, timeout: float = 30):
    """Run body() in a fresh thread (no current context); return its result or raise its error."""
    result = {}

    def target():
        try:
            result["value"] = body()
        except BaseException as exc:    # noqa: BLE001 - re-raised in the caller
            result["error"] = exc

    t = threading.Thread(target=target)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "thread did not finish"
    if "error" in result:
        raise result["error"]
    return result.get("value")


def elapsed(fn) -> tuple[object, float]:
    t0 = time.monotonic()
    value = fn()
    return value, time.monotonic() - t0
