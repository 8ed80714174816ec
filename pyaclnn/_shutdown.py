"""Interpreter exit with threads still launching operators.

At exit, ``weakref.finalize`` callbacks release the Python layer's tensors, executors, memory and
streams. Daemon threads may still be in the middle of launches that use them. So, first, new
launches are refused (:class:`ShuttingDownError`, a clear message rather than the argument hints a
launch on half-released objects would give), then the exit waits (briefly) for the launches already
in progress, and only then do the finalizers run. :func:`install` registers that step so that it runs
before the finalizers (``atexit`` runs the newest handler first; call it once a finalizer exists).
"""
from __future__ import annotations

import atexit
import contextlib
import time

from ._exceptions import ShuttingDownError
from ._mutex import mutex as _mutex

DRAIN_SECONDS = 2.0          # how long the exit waits for launches already in progress

_lock = _mutex()
_closing = False
_active = 0
_installed = False
_closing_hooks: list = []    # called (under the GIL) as the exit begins: compiled paths stop launching


def on_closing(hook) -> None:
    """Call ``hook()`` when the exit begins (the compiled launch paths check a flag of their own,
    since they run without entering :func:`launching`; they launch atomically under the GIL)."""
    _closing_hooks.append(hook)


@contextlib.contextmanager
def launching(op: str):
    """Brackets one launch: refused once the exit has begun, waited for by the exit otherwise."""
    global _active
    with _lock:
        if _closing:
            raise ShuttingDownError(f"{op}: the interpreter is exiting and pyaclnn is releasing its objects; "
                                    "no new launches are accepted (join the threads that launch before exit)")
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1


def _stop_launches() -> None:
    global _closing
    for hook in _closing_hooks:
        try:
            hook()
        except Exception:       # noqa: BLE001 -- the exit goes on
            pass
    with _lock:
        _closing = True
    deadline = time.monotonic() + DRAIN_SECONDS
    while time.monotonic() < deadline:
        with _lock:
            if _active == 0:
                return
        time.sleep(0.001)


def install() -> None:
    global _installed
    if not _installed:
        _installed = True
        atexit.register(_stop_launches)
