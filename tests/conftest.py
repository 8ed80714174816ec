"""Shared fixtures. The whole suite runs on the bundled CPU stub (never on a real toolkit).

Fixtures:
* ``acl``    (session) -- aclInit(NULL) (100002 accepted) + aclrtSetDevice(0); reset/finalize at end.
* ``stream`` (function) -- a fresh aclrtStream (synchronized and destroyed afterwards).
* ``recent_error`` -- a function returning aclGetRecentErrMsg() as str or None (reads and clears).

Tests that change process-global state (aclInit/aclFinalize cycles, device-count variables, another
backend) must run in a subprocess: see ``helpers.run_python``.
"""
from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

os.environ["PYACLNN_BACKEND"] = "stub"      # before pyaclnn is imported anywhere
# With torch-npu installed, `import torch` would import torch_npu too (torch's backend autoload), which
# fails without CANN; tests/test_torch_npu.py imports it explicitly, on the emulator.
os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

TESTS_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS_DIR))          # `import helpers` from any test module

import pytest  # noqa: E402

from pyaclnn import capi  # noqa: E402
from pyaclnn.errors import recent_error_message  # noqa: E402


@pytest.fixture(scope="session")
def acl():
    """The ACL runtime initialised with device 0 bound to the main thread; yields ``capi``."""
    status = capi.aclInit(None)
    assert status in (capi.ACL_SUCCESS, capi.ACL_ERROR_REPEAT_INITIALIZE), status
    status = capi.aclrtSetDevice(0)
    assert status == capi.ACL_SUCCESS, status
    yield capi
    capi.aclrtResetDevice(0)
    capi.aclFinalize()


@pytest.fixture
def stream(acl):
    """A new stream on device 0 (as an int handle)."""
    s = ctypes.c_void_p()
    status = capi.aclrtCreateStream(ctypes.byref(s))
    assert status == capi.ACL_SUCCESS, status
    yield s.value
    capi.aclrtSynchronizeStream(s)
    capi.aclrtDestroyStream(s)


@pytest.fixture
def hazards_off():
    """The hazard checker off for this test: it provokes an ordering hazard on purpose (whatever
    PYACLNN_STUB_HAZARDS the suite runs with; docs/hazards.md)."""
    from pyaclnn._hazards import checker_mode
    with checker_mode("off"):
        yield


@pytest.fixture
def set_switch(monkeypatch):
    """Callable set_switch(name, value): an emulator switch (PYACLNN_STUB_KERNEL_THREADS, _ARNQ_*, _AMP_*)
    for the rest of this test, None unsets it. The stub reads its switches once per process
    (pyaclnn._switches): this makes it read them again, now and after the test."""
    from pyaclnn._switches import reread

    def set_(name, value):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, str(value))
        reread()
    yield set_
    reread()   # monkeypatch restores the variables after this fixture; the next use reads them


@pytest.fixture
def recent_error():
    """Callable: the calling thread's pending aclGetRecentErrMsg() text (str or None); clears it."""
    recent_error_message()          # start clean
    return recent_error_message


# Leak accounting: each module must release the stub objects it creates (tests/_leakcheck.py).
from _leakcheck import no_leaks_at_exit, no_leaks_per_module  # noqa: E402,F401


# ---- --file-shard K/N: a sample of the suite's files (the sanitizer lane of .ci/run) ---------------------

def pytest_addoption(parser):
    parser.addoption("--file-shard", metavar="K/N", default=None,
                     help="run only the test files whose position (sorted by path) is K modulo N; K may be any "
                          "integer, e.g. a commit hash as 0x..., so consecutive commits sample other files")


def pytest_collection_modifyitems(config, items):
    spec = config.getoption("--file-shard")
    if not spec:
        return
    k, _, n = spec.partition("/")
    try:
        k, n = int(k, 0), int(n)
    except ValueError:
        n = 0
    if n < 1:
        raise pytest.UsageError(f"--file-shard takes K/N with N >= 1 (e.g. 1/3 or 0x9f2c/3), not {spec!r}")
    files = sorted({str(item.path) for item in items})
    keep = {f for i, f in enumerate(files) if i % n == k % n}
    selected = [item for item in items if str(item.path) in keep]
    deselected = [item for item in items if str(item.path) not in keep]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected
