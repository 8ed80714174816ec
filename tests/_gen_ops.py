"""Shared pieces of the issue-28 operator tests (test_reduce_more.py, test_sort_select.py, test_random_more.py):
the message of a failing call, and the status codes of calls on a SoC (the default one in this process,
another in one subprocess)."""
from __future__ import annotations

import helpers
from pyaclnn.errors import AclError

DEFAULT_SOC = "Ascend950PR"

_PRELUDE = """
import numpy as np, ml_dtypes
from pyaclnn import ops, capi
from pyaclnn.errors import AclError

def code(fn, *args):
    try:
        fn(*args)
    except AclError as exc:
        return exc.code
    return 0

"""


def message(fn, *args) -> str:
    """The text of the AclError fn(*args) raises ("" if it returns)."""
    try:
        fn(*args)
    except AclError as exc:
        return str(exc)
    return ""


def codes_on(soc: str, calls: str) -> list:
    """The status codes of `calls` (Python source of a list expression using code(fn, *args), np, ml_dtypes,
    ops and capi) on `soc`."""
    script = _PRELUDE + f"print('CODES', repr({calls}))\n"
    if soc == DEFAULT_SOC:
        scope: dict = {}
        exec(_PRELUDE, scope)
        return eval(calls, scope)
    rc, out, err = helpers.run_python(script, {"PYACLNN_STUB_SOC": soc})
    assert rc == 0, err
    return eval(out.split("CODES", 1)[1].strip())


def assert_null_checks(functions) -> None:
    """Each (GetWorkspaceSize function, argument count): all-NULL arguments give 161001."""
    from _op_helpers import NULLPTR, raw_null_status
    for f, n in functions:
        assert raw_null_status(f, n) == NULLPTR, f


def torch_pairs(calls: str, x) -> dict:
    """Runs the torch calls `calls` (Python source of a dict name -> f(t)) on x moved to npu and on x on the CPU,
    in one torch_npu child process on the emulator: name -> [npu result, cpu result] (encoded), or
    {"error": ...}."""
    from _math_ops import enc, torch_npu_run
    body = "x = T(dec(SPEC['x']))\nxn = x.npu()\ncalls = " + calls + """
for k, f in calls.items():
    try:
        OUT[k] = [enc(to_np(f(xn))), enc(to_np(f(x)))]
    except Exception as exc:
        OUT[k] = {"error": str(exc)[:300]}
"""
    return torch_npu_run(body, {"x": enc(x)})
