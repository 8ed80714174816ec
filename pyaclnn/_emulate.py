"""The emulator in place without a wrapper (``PYACLNN_EMULATE=1``, ``pytest --aclnn-emulator``).

``pyaclnn-emulate.pth`` (installed next to the package, like coverage.py's process-start hook) runs one line in
every Python process at start-up: it reads PYACLNN_EMULATE from the environment, and only when it is set
imports this module and calls :func:`startup`, which puts the emulator in place (:func:`pyaclnn.preload_stub`)
before anything can import torch / torch_npu. The variable stays set, so child processes get the emulator too.
Without the variable the hook costs one dictionary lookup (measured in tests/test_emulate_hook.py), plus, on
a machine without CANN (ASCEND_HOME_PATH unset), a finder at the front of sys.meta_path that only looks at the
name ``torch_npu``: when something imports torch_npu there (``import torch`` autoloads it) :func:`hint` says
in one line on stderr that PYACLNN_EMULATE=1 runs it on the emulator, and the import goes on (and fails as it
would: torch_npu cannot load without CANN's libraries).
"""
from __future__ import annotations

import os
import sys

VAR = "PYACLNN_EMULATE"
_started = False


def requested(environ=None) -> bool:
    """PYACLNN_EMULATE is set to something other than "", 0, false, no, off."""
    value = (os.environ if environ is None else environ).get(VAR, "")
    return value.strip().lower() not in ("", "0", "false", "no", "off")


def activate():
    """Put the emulator in place in this process (:func:`pyaclnn.preload_stub`) and set PYACLNN_EMULATE=1 for
    its children. Returns the emulated toolkit root; raises BackendError as preload_stub does."""
    from ._preload import preload_stub
    os.environ[VAR] = "1"
    return preload_stub()


def startup() -> None:
    """The start-up hook's call: never raises (a broken hook must not break every Python process); what went
    wrong is one line on stderr. Once a process: site.py may read a venv's site-packages twice."""
    global _started
    if _started:
        return
    _started = True
    try:
        activate()
    except Exception as exc:                        # noqa: BLE001 -- reported, the process goes on
        sys.stderr.write(f"pyaclnn: {VAR} is set, but the emulator could not be put in place: {exc}\n")


def hint(name: str) -> None:
    """The start-up hook's finder saw ``import torch_npu`` on a machine without CANN and without the variable:
    say once how to run it on the emulator, then step aside (the finder leaves sys.meta_path; the import
    proceeds through the normal finders)."""
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "PyaclnnEmulateHint"]
    if not os.environ.get("ASCEND_HOME_PATH"):
        sys.stderr.write(f"pyaclnn: {name} is being imported on a machine without CANN (ASCEND_HOME_PATH is "
                         f"unset): set {VAR}=1 to run it on pyaclnn's CPU emulator\n")


def describe() -> str:
    """One line: backend, SoC, emulator version (pytest's header, info)."""
    from ._toolkit import EMULATOR_VERSION
    soc = os.environ.get("PYACLNN_STUB_SOC", "Ascend950PR")
    hz = os.environ.get("PYACLNN_STUB_HAZARDS", "off")
    return f"aclnn emulator: backend stub, SoC {soc}, {EMULATOR_VERSION}, hazards {hz}"
