"""The emulator's operator switches, read once per process.

``PYACLNN_STUB_KERNEL_THREADS``, ``PYACLNN_STUB_ARNQ_*``, ``PYACLNN_STUB_AMP_FP16_ROUNDING`` and
``PYACLNN_STUB_MATMUL`` pick a thread count or an arithmetic alternative. The stub reads them at their first use, not at every call (as CANN reads
its variables at start-up, and because a ``getenv`` per switch per call is measurable). Code that changes
them between calls -- the tests -- says so:

    >>> with switches({"PYACLNN_STUB_KERNEL_THREADS": "3"}):
    ...     ...                              # calls here see 3; afterwards the old value again

A real CANN toolkit has none of these switches: both functions do nothing there.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping

__all__ = ["reread", "switches"]


def reread() -> None:
    """Make the stub read its switches from the environment again at their next use."""
    from ._loader import backend
    from .errors import BackendError, MissingSymbolError
    try:
        loaded = backend()
        if loaded.name != "stub":
            return
        fn = loaded.symbol("pyaclnn_stub_reread_switches")
    except (BackendError, MissingSymbolError):
        return
    fn.argtypes, fn.restype = [], None
    fn()


@contextlib.contextmanager
def switches(values: Mapping[str, str | int | None]) -> Iterator[None]:
    """Set (or, for None, unset) these variables for the calls inside the block, then restore them."""
    saved = {name: os.environ.get(name) for name in values}
    try:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = str(value)
        reread()
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        reread()
