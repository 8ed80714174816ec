"""What the fused-operator tests share (test_rms_norm.py, test_swi_glu.py, test_rotary.py): bit and ulp
comparisons, the Atlas A2 subprocess that reruns a test module's own checks there, and the torch_npu child's
arrays decoded."""
from __future__ import annotations

import os

import numpy as np

from reference import elementwise as R
import helpers

DTYPES = ["float32", "float16", "bfloat16"]
TORCH_NAMES = {"torch.float32": "float32", "torch.float16": "float16", "torch.bfloat16": "bfloat16"}
ON_A2 = os.environ.get("PYACLNN_STUB_SOC", "").startswith("Ascend910")


def f64(a):
    return np.asarray(a).astype(np.float64)


def zeros(shape, name):
    return np.zeros(shape, R.np_dtype(name))


def bits_equal(got, want) -> bool:
    got, want = np.ascontiguousarray(got), np.ascontiguousarray(want)
    return got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got.view(np.uint8), want.view(np.uint8))


def ulp(v, name):
    """The spacing of the dtype at |v| (float64 values)."""
    mant, emin = {"float32": (23, -126), "float16": (10, -14), "bfloat16": (7, -126)}[name]
    with np.errstate(divide="ignore"):
        return 2.0 ** (np.floor(np.log2(np.maximum(np.abs(f64(v)), 2.0 ** emin))) - mant)


def ulps(got, want64, name) -> int:
    """ulp distance of got from the float64 value rounded to the dtype."""
    return int(R.ulp_distance(np.asarray(got), R.cast(want64, name), name).max(initial=0))


def expect_error(fn, args, code: int, text: str) -> None:
    """fn(*args) fails with status `code` and `text` in its message."""
    import pytest
    from pyaclnn.errors import AclError
    err = pytest.raises(AclError, fn, *args).value
    assert (err.code, text in str(err)) == (code, True), (text, str(err))


def null_status_is_nullptr(op: str, n: int) -> None:
    """aclnn<op>GetWorkspaceSize with its n parameters (before workspaceSize) all NULL: 161001, "... is NULL"."""
    import pyaclnn
    from _op_helpers import NULLPTR, raw_null_status
    pyaclnn.library_paths()   # the backend loaded first: pyaclnn reads the messages only of a backend it opened
    assert raw_null_status(f"aclnn{op}GetWorkspaceSize", n) == NULLPTR
    assert "is NULL" in (pyaclnn.errors.recent_error_message() or "")


def run_on_a2(module: str, calls: str) -> None:
    """Runs `calls` (statements using the test module as T) in one Ascend910B4 subprocess."""
    tests = os.path.dirname(os.path.abspath(__file__))
    body = f"import sys\nsys.path.insert(0, {tests!r})\nimport {module} as T\n{calls}\nprint('A2 OK')\n"
    rc, out, err = helpers.run_python(body, {"PYACLNN_STUB_SOC": "Ascend910B4"}, timeout=300)
    assert rc == 0 and "A2 OK" in out, err[-3000:]


def torch_npu_arrays(body: str, soc: str = "Ascend950PR") -> dict:
    """Runs `body` in the torch_npu child of `soc` (_math_ops.torch_npu_run: OUT[key] = [enc(array), ...]); returns
    key -> the arrays."""
    from _math_ops import torch_npu_run
    import ml_dtypes

    def dec(d):
        dt = ml_dtypes.bfloat16 if d["dtype"] == "bfloat16" else np.dtype(d["dtype"])
        return np.frombuffer(bytes.fromhex(d["hex"]), dt).reshape(d["shape"])
    return {k: [dec(v) for v in vals] for k, vals in torch_npu_run(body, {}, soc=soc).items()}
