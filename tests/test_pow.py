"""aclnnPowScalarTensor (scalar ** tensor) and the vendor contract of the Pow family
(hicann/ops-math math/pow/op_api/aclnn_pow.cpp, aclnn_pow_tensor_tensor.cpp): every dtype against
torch CPU or an exact NumPy reference, strided views, special values, the compute dtype each SoC
family picks, and the validation codes and messages in the vendor's order.

The default SoC is Ascend950PR (regbase); the Atlas A2 rules run in a child process
(PYACLNN_STUB_SOC is read once per process).
"""
from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import helpers
import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from test_elementwise_arith import same_bits

NULLPTR, INVALID = 161001, 161002
RNG = np.random.default_rng(1515)
ALL = ["float32", "int32", "int64", "float16", "int8", "uint8", "float64", "int16", "bool", "bfloat16"]
INTS = ["int8", "int16", "int32", "int64", "uint8"]
# pyaclnn/ops/_fidelity.py: <= 2 ulp of torch CPU in fp32, <= 1 ulp in fp16/bf16 (double: libm, 1 ulp)
TOL_TORCH = {"float32": 2, "float16": 1, "bfloat16": 1, "float64": 1}


def zeros(shape, name):
    return np.zeros(shape, R.np_dtype(name))


def _torch():
    return pytest.importorskip("torch")


def _torch_pow(torch, base, exponent: np.ndarray, name: str) -> np.ndarray:
    """torch CPU's `base ** exponent` (the exponent as an fp32 tensor for fp16/bf16: torch computes those in fp32
    too, then rounds once), cast to `name`."""
    if name in ("float16", "bfloat16"):
        t = torch.from_numpy(exponent.astype(np.float32))
    else:
        t = torch.from_numpy(exponent)
    return R.cast(torch.pow(base, t).numpy(), name)


# ---- scalar ** tensor: values ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "float64"])
def test_scalar_tensor_floats_match_torch(name):
    e = R.cast(RNG.standard_normal(2048) * 4, name)
    got = ops.PowScalarTensor(ops.Scalar(2.5, "float64"), e, zeros(e.shape, name))
    want = _torch_pow(_torch(), 2.5, e, name)
    assert R.ulp_distance(got, want, name).max() <= TOL_TORCH[name]


def test_scalar_tensor_rotary_inv_freq():
    """Llama's rotary `base ** (arange(0, d, 2) / d)`: torch_npu passes the Python float as a DOUBLE scalar."""
    torch = _torch()
    e = (torch.arange(0, 128, 2).float() / 128).numpy()
    got = ops.PowScalarTensor(ops.Scalar(10000.0, "float64"), e, zeros(e.shape, "float32"))
    assert R.ulp_distance(got, (10000.0 ** torch.from_numpy(e)).numpy(), "float32").max() <= 2
    assert R.ulp_distance(got, R.cast(10000.0 ** e.astype(np.float64), "float32"), "float32").max() <= 1


@pytest.mark.parametrize("name", INTS)
def test_scalar_tensor_integers_exact_with_wrap(name):
    e = R.cast(RNG.integers(0, 12, 300), name)
    got = ops.PowScalarTensor(ops.Scalar(3, "int64"), e, zeros(e.shape, name))
    with np.errstate(all="ignore"):
        want = (np.int64(3) ** e.astype(np.int64)).astype(R.np_dtype(name))   # wraps as the dtype does
    same_bits(got, want)
    assert got.tolist() == _torch().pow(3, _torch().from_numpy(e)).numpy().tolist()


@pytest.mark.parametrize("name", ALL)
def test_scalar_tensor_every_exponent_dtype_with_a_float_base(name):
    """Every supported exponent dtype: a floating base makes integral and BOOL exponents compute in FLOAT
    (torch's result type too)."""
    torch = _torch()
    e = R.cast(RNG.integers(0, 2, 64), name) if name == "bool" else R.cast(RNG.integers(-6, 7, 64), name)
    if name == "uint8":
        e = R.cast(RNG.integers(0, 13, 64), name)
    out = name if name in R.FLOATS else "float32"
    got = ops.PowScalarTensor(ops.Scalar(1.5, "float64"), e, zeros(e.shape, out))
    t = torch.from_numpy(e.astype(np.float32) if name == "bfloat16" else e)
    want = R.cast(torch.pow(1.5, t).numpy(), out)
    assert R.ulp_distance(got, want, out).max() <= TOL_TORCH[out]


def test_scalar_tensor_bool_exponent_with_int_base():
    got = ops.PowScalarTensor(ops.Scalar(7, "int64"), np.array([True, False, True]), zeros(3, "int64"))
    assert got.tolist() == [7, 1, 7]


def test_scalar_tensor_special_values_as_torch():
    e = np.float32([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 0.5, 3.0])
    torch = _torch()
    for base in (1.0, 0.0, -2.0, np.inf, -np.inf, np.nan, -1.0):
        got = ops.PowScalarTensor(ops.Scalar(base, "float64"), e, zeros(e.shape, "float32"))
        same_bits(got, torch.pow(base, torch.from_numpy(e)).numpy())


def test_scalar_tensor_strided_views_and_wider_out():
    base = R.cast(RNG.standard_normal((8, 10)), "float32")
    src = pyaclnn.from_numpy(base).as_strided((4, 5), (1, 15), 3)          # transposed, stepping, offset
    out_store = pyaclnn.zeros((5, 8), "float64")
    out = out_store.as_strided((4, 5), (2, 8), 1)
    ops.PowScalarTensor(ops.Scalar(2.0, "float32"), src, out)              # FLOAT computed, cast to DOUBLE out
    view = base.reshape(-1)[3 + np.add.outer(np.arange(4), np.arange(5) * 15)]
    got = out_store.numpy().reshape(-1)[1 + np.add.outer(np.arange(4) * 2, np.arange(5) * 8)]
    want = np.float32(2.0 ** view.astype(np.float64)).astype(np.float64)   # one fp32 rounding, then widened
    same_bits(got, want)
    assert not out_store.numpy().reshape(-1)[0]                              # outside the view: untouched


def test_scalar_tensor_empty_and_zero_dim():
    assert ops.PowScalarTensor(ops.Scalar(2.0, "float64"), zeros((0, 3), "float32"),
                               zeros((0, 3), "float32")).shape == (0, 3)
    got = ops.PowScalarTensor(ops.Scalar(2.0, "float64"), np.float32(10.0).reshape(()), zeros((), "float32"))
    assert got.tolist() == 1024.0


# ---- tensor ** scalar, in place: the vendor's list (integers too), as the out-of-place form ----

@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8", "float32", "bfloat16"])
def test_inplace_tensor_scalar_takes_every_dtype_the_vendor_does(name):
    x = R.cast(RNG.integers(-5, 6, 40) if name != "uint8" else RNG.integers(0, 9, 40), name)
    t = pyaclnn.from_numpy(x.copy())
    ops.InplacePowTensorScalar(t, ops.Scalar(3, "int64"))
    if name in R.FLOATS:
        want = R.cast(x.astype(np.float64) ** 3, name)
    else:
        with np.errstate(all="ignore"):
            want = (x.astype(np.int64) ** 3).astype(R.np_dtype(name))
    same_bits(t.numpy(), want)


def test_inplace_tensor_tensor_on_integers():
    t = pyaclnn.from_numpy(np.int32([2, 3, -2, 5]))
    ops.InplacePowTensorTensor(t, np.int32([10, 3, 3, 0]))
    assert t.numpy().tolist() == [1024, 27, -8, 1]


def test_inplace_bool_self_refuses_an_int_exponent():
    with pytest.raises(AclError) as e:   # BOOL promoted with INT64 gives INT64, which cannot go into BOOL
        ops.InplacePowTensorScalar(pyaclnn.from_numpy(np.array([True, False])), ops.Scalar(2, "int64"))
    assert e.value.code == INVALID and "can't be cast to the desired output type BOOL" in str(e.value)


# ---- validation ---------------------------------------------------------------------------------

@pytest.mark.parametrize("call,text", [
    (lambda: ops.PowScalarTensor(ops.Scalar(2, "uint16"), np.float32([1]), zeros(1, "float32")),
     "Self dtype UINT16 should be in dtype support list [FLOAT, INT32"),
    (lambda: ops.PowScalarTensor(ops.Scalar(2.0, "float64"), np.uint16([1]), zeros(1, "float32")),
     "exp dtype UINT16 should be in dtype support list"),
    (lambda: ops.PowScalarTensor(ops.Scalar(2.0, "float64"), np.float32([1]), zeros(1, "int32")),
     "Result dtype DOUBLE can't be cast to the desired output type INT32"),
    (lambda: ops.PowScalarTensor(ops.Scalar(2, "int64"), np.int32([1]), zeros(1, "bool")),
     "can't be cast to the desired output type BOOL"),
    (lambda: ops.PowScalarTensor(ops.Scalar(True, "bool"), np.array([True]), zeros(1, "bool")),
     "Self and exponent dtype are bool is not supported."),
    (lambda: ops.PowScalarTensor(ops.Scalar(2.0, "float64"), np.float32([1, 2]), zeros(3, "float32")),
     "Shape of out should be [2]"),
    (lambda: ops.PowScalarTensor(ops.Scalar(2.0, "float64"), zeros((1,) * 9, "float32"), zeros((1,) * 9, "float32")),
     "dimensions"),
    (lambda: ops.PowTensorScalar(np.array([True]), ops.Scalar(False, "bool"), zeros(1, "bool")),
     "Self and exponent dtype are bool is not supported."),
    (lambda: ops.PowTensorTensor(np.array([True]), np.array([True]), zeros(1, "bool")),
     "Self and exponent dtype are bool is not supported."),
    (lambda: ops.PowTensorScalar(np.int32([2]), ops.Scalar(-1, "int64"), zeros(1, "int32")),
     "exponent negative integers is not allowed"),
    (lambda: ops.PowTensorScalar(np.int8([2]), ops.Scalar(300, "int64"), zeros(1, "int8")),
     "cannot be converted to promote type INT8 without overflow: 300"),
    (lambda: ops.PowTensorScalar(np.float16([2]), ops.Scalar(1e5, "float64"), zeros(1, "float16")),
     "cannot be converted to promote type FLOAT16 without overflow"),
    (lambda: ops.InplacePowTensorScalar(pyaclnn.zeros((2,), "int32"), ops.Scalar(0.5, "float32")),
     "Result dtype FLOAT can't be cast to the desired output type INT32"),
    (lambda: ops.InplacePowTensorTensor(pyaclnn.zeros((2,), "float32"), np.float32([[1, 2], [3, 4]])),
     "Shape of out should be [2, 2]"),
])
def test_invalid_arguments_return_161002(call, text):
    with pytest.raises(AclError) as e:
        call()
    assert e.value.code == INVALID and text in str(e.value), str(e.value)


def test_overflow_checks_skip_empty_tensors_and_inf():
    # The vendor checks the exponent after its empty-tensor exit; an infinite exponent is no overflow.
    assert ops.PowTensorScalar(zeros((0,), "int8"), ops.Scalar(300, "int64"), zeros((0,), "int8")).shape == (0,)
    got = ops.PowTensorScalar(np.float16([0.5, 2.0]), ops.Scalar(np.inf, "float64"), zeros(2, "float16"))
    assert got.tolist() == [0.0, np.inf]


def test_null_arguments_return_161001():
    from pyaclnn import _loader
    lib = ctypes.CDLL(os.path.join(_loader.stub_library_dir(), "libopapi.so"))
    f = lib.aclnnPowScalarTensorGetWorkspaceSize
    f.argtypes = [ctypes.c_void_p] * 3 + [ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_void_p)]
    ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
    assert f(None, None, None, ctypes.byref(ws), ctypes.byref(ex)) == NULLPTR
    assert "self" in (pyaclnn.errors.recent_error_message() or "")


def test_no_inplace_scalar_tensor_form():
    """The vendor's aclnn_pow.h has no aclnnInplacePowScalarTensor; neither does the emulator."""
    assert not hasattr(ops, "InplacePowScalarTensor")


# ---- Atlas A2 (not regbase): its compute-dtype rules, in a child process ----------------------

_A2_CHILD = r"""
import json, numpy as np
from pyaclnn import ops
r = {}
# int32 ** DOUBLE scalar into a DOUBLE out: A2 computes in DOUBLE (PromoteType), 950 in FLOAT
r["int_double"] = ops.PowTensorScalar(np.int32([3]), ops.Scalar(0.3, "float64"), np.zeros(1)).tolist()
# a DOUBLE exponent tensor into a FLOAT out: A2 computes in FLOAT (the exponent rounded to fp32 first)
r["dexp_fout"] = ops.PowScalarTensor(ops.Scalar(2.0, "float64"), np.float64([20.000001]),
                                     np.zeros(1, np.float32)).tolist()
# negative integer exponents are no error on A2: 1 / base truncated
r["neg_int"] = ops.PowTensorScalar(np.int32([1, -1, 2]), ops.Scalar(-1, "int64"), np.zeros(3, np.int32)).tolist()
print("RESULT " + json.dumps(r))
"""


@pytest.fixture(scope="module")
def a2():
    proc = subprocess.run([sys.executable, "-c", _A2_CHILD], capture_output=True, text=True, timeout=120,
                          env=helpers.subprocess_env({"PYACLNN_STUB_SOC": "Ascend910B1", "PYACLNN_BACKEND": "stub"}))
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


def test_a2_int_tensor_double_scalar_computes_in_double(a2):
    assert a2["int_double"] == [3.0 ** 0.3]
    on_950 = ops.PowTensorScalar(np.int32([3]), ops.Scalar(0.3, "float64"), np.zeros(1)).tolist()
    assert on_950 == [float(np.float32(3.0 ** float(np.float32(0.3))))]   # the scalar cast to FLOAT first


def test_a2_double_exponent_into_float_out_computes_in_float(a2):
    assert a2["dexp_fout"] == [float(np.float32(2.0 ** float(np.float32(20.000001))))]
    on_950 = ops.PowScalarTensor(ops.Scalar(2.0, "float64"), np.float64([20.000001]), np.zeros(1, np.float32))
    assert on_950.tolist() == [float(np.float32(2.0 ** 20.000001))]
    assert a2["dexp_fout"] != on_950.tolist()


def test_a2_accepts_negative_integer_exponents(a2):
    assert a2["neg_int"] == [1, -1, 0]
