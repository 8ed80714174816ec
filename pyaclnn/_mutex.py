"""The locks pyaclnn's Python code holds around its own bookkeeping.

A ``with lock:`` block is not proof against a KeyboardInterrupt raised by a signal handler: between the
block's last statement and the call of ``__exit__`` the interpreter may run the handler (CPython
bpo-29988), and the exception then leaves the lock held. With a plain lock the next ``with`` on that
thread waits forever (tests/test_interrupts.py's interrupt storm meets this on Python 3.10 and 3.13
around the plan caches' locks). Python runs signal
handlers on the main thread only, so the thread that meets a lock left held this way is the one that
left it: a reentrant lock lets it through. (Another thread would still wait for it.)
"""
from __future__ import annotations

import threading

__all__ = ["mutex"]


def mutex():
    """A lock for ``with`` blocks in library code: reentrant, so an interrupt cannot deadlock its thread."""
    return threading.RLock()
