"""aclnnReduceSum, Mean, Amax, Max, Min, MaxDim, MinDim and ArgMax against NumPy (an independent
reference) and torch CPU. Extremes and their indices are exact (class a). Sums and means are class c:
the emulator sums in double and rounds once, so it is checked to the exact (float64) result rounded to
the compute dtype within one ulp; against an NPU, whose fp32 summation order is not published, the
stated tolerance is the fp32 bound n * 2^-24 * sum|x| (+ the final rounding)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pyaclnn import capi, ops
from _op_helpers import INVALID, NULLPTR, code_of, raw_null_status, strided
from test_elementwise_arith import sample, same_bits

RNG = np.random.default_rng(77)
ACL = {"float32": capi.ACL_FLOAT, "float16": capi.ACL_FLOAT16, "bfloat16": capi.ACL_BF16, "float64": capi.ACL_DOUBLE,
       "int32": capi.ACL_INT32, "int64": capi.ACL_INT64, "int8": capi.ACL_INT8, "int16": capi.ACL_INT16,
       "uint8": capi.ACL_UINT8, "bool": capi.ACL_BOOL}
NPDT = {"bfloat16": ml_dtypes.bfloat16}
ULP = {"float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float64": 2.0 ** -52}


def npdt(name):
    return NPDT.get(name, np.dtype(name))


def finite(name, shape):
    x = RNG.standard_normal(shape) * 4
    return x.astype(np.float32).astype(npdt(name)) if name in ULP else RNG.integers(-50, 50, shape).astype(name)


def reduced_shape(shape, dims, keep):
    dims = [d % len(shape) for d in dims] or list(range(len(shape)))
    return tuple(1 if i in dims else s for i, s in enumerate(shape) if keep or i not in dims)


def close_to_rounded(got, exact, name):
    want = exact.astype(npdt(name))
    if name not in ULP:
        same_bits(got, want)
        return
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert np.all(err <= ULP[name] * np.abs(want.astype(np.float64)) + 1e-300)


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "float64", "int32", "int64", "int16", "int8",
                                  "uint8"])
@pytest.mark.parametrize("dims,keep", [([1], False), ([0, 2], True), ([], False), ([-1], True)])
def test_reduce_sum_every_dtype(name, dims, keep):
    x = finite(name, (3, 4, 5))
    shape = reduced_shape(x.shape, dims, keep)
    got = ops.ReduceSum(strided(x), dims, keep, ACL[name], np.zeros(shape, npdt(name)))
    axis = tuple(d % 3 for d in dims) or None
    exact = x.astype(np.float64 if name in ULP else np.int64).sum(axis=axis, keepdims=keep)
    close_to_rounded(got.reshape(shape), np.asarray(exact).reshape(shape), name)


def test_reduce_sum_bool_to_int64_counts():
    x = RNG.integers(0, 2, (6, 7)).astype(bool)
    got = ops.ReduceSum(x, [1], False, capi.ACL_INT64, np.zeros(6, np.int64))
    assert got.tolist() == x.sum(axis=1).tolist()


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("dims,keep", [([-1], True), ([0, 1], False), ([], False), ([0], False)])
def test_mean(name, dims, keep):
    x = finite(name, (4, 6))
    shape = reduced_shape(x.shape, dims, keep)
    got = ops.Mean(x, dims, keep, ACL[name], np.zeros(shape, npdt(name)))
    axis = tuple(d % 2 for d in dims) or None
    close_to_rounded(got.reshape(shape), np.asarray(x.astype(np.float64).mean(axis=axis, keepdims=keep)).reshape(shape),
                     name)


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("dims", [[1], [0, 1], [0, 2]])
def test_sum_and_mean_over_dims_outside_a_contiguous_one(name, dims):
    """Dims reduced outside a kept contiguous one (and around it): the kernel's row path."""
    x = finite(name, (3, 5, 7))
    shape = reduced_shape(x.shape, dims, False)
    want = x.astype(np.float64)
    for op, ref in ((ops.ReduceSum, want.sum(axis=tuple(dims))), (ops.Mean, want.mean(axis=tuple(dims)))):
        got = op(x, dims, False, ACL[name], np.zeros(shape, npdt(name)))
        close_to_rounded(got.reshape(shape), ref.reshape(shape), name)


def test_mean_of_fp16_computed_as_fp32():
    x = finite("float16", (3, 8))
    got = ops.Mean(x, [1], False, capi.ACL_FLOAT, np.zeros(3, np.float32))
    close_to_rounded(got, x.astype(np.float64).mean(axis=1), "float32")


def test_sum_matches_torch_within_the_fp32_bound():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((16, 1000)).astype(np.float32)
    want = torch.from_numpy(x).sum(dim=1).numpy()
    got = ops.ReduceSum(x, [1], False, capi.ACL_FLOAT, np.zeros(16, np.float32))
    bound = 1000 * 2.0 ** -24 * np.abs(x.astype(np.float64)).sum(axis=1)
    assert np.all(np.abs(got.astype(np.float64) - want) <= bound)


def test_reduce_validation_codes():
    x = np.zeros((2, 3), np.float32)
    assert code_of(ops.ReduceSum, x, [2], False, capi.ACL_FLOAT, np.zeros(2, np.float32)) == INVALID   # dim range
    assert code_of(ops.ReduceSum, x, [1, -1], False, capi.ACL_FLOAT, np.zeros(2, np.float32)) == INVALID  # repeat
    assert code_of(ops.ReduceSum, x, [1], False, capi.ACL_FLOAT16, np.zeros(2, np.float32)) == INVALID  # out != dtype
    assert code_of(ops.ReduceSum, x, [1], False, capi.ACL_FLOAT, np.zeros(3, np.float32)) == INVALID   # out shape
    assert code_of(ops.Mean, x, [1], False, capi.ACL_INT32, np.zeros(2, np.int32)) == INVALID          # float->int
    assert code_of(ops.Mean, x.astype(np.uint16), [1], False, capi.ACL_FLOAT, np.zeros(2, np.float32)) == INVALID
    assert raw_null_status("aclnnReduceSumGetWorkspaceSize", 5) == NULLPTR
    assert raw_null_status("aclnnMeanGetWorkspaceSize", 5) == NULLPTR


# ---- extremes: exact ----------------------------------------------------------------------------

EXT_DTYPES = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("name", EXT_DTYPES)
@pytest.mark.parametrize("dims,keep", [([1], False), ([0, 2], True), ([], False)])
def test_amax_every_dtype(name, dims, keep):
    x = sample(name, (3, 4, 5))
    if name in ULP:
        x = np.where(np.isnan(x.astype(np.float64)), np.zeros((), x.dtype), x).astype(x.dtype)
    shape = reduced_shape(x.shape, dims, keep)
    got = ops.Amax(strided(x), dims, keep, np.zeros(shape, x.dtype))
    axis = tuple(d % 3 for d in dims) or None
    same_bits(got.reshape(shape), np.asarray(x.max(axis=axis, keepdims=keep)).reshape(shape).astype(x.dtype))


def test_amax_propagates_nan_like_torch():
    x = np.array([[1.0, np.nan, 3.0], [2.0, 5.0, -1.0]], np.float32)
    got = ops.Amax(x, [1], False, np.zeros(2, np.float32))
    assert np.isnan(got[0]) and got[1] == 5.0


@pytest.mark.parametrize("op,fn", [("Max", np.max), ("Min", np.min)])
@pytest.mark.parametrize("name", EXT_DTYPES)
def test_full_max_min(op, fn, name):
    x = sample(name, (4, 6))
    if name in ULP:
        x = np.where(np.isnan(x.astype(np.float64)), np.zeros((), x.dtype), x).astype(x.dtype)
    got = getattr(ops, op)(strided(x), np.zeros((), x.dtype))
    same_bits(np.asarray(got).reshape(()), np.asarray(fn(x)).astype(x.dtype))


@pytest.mark.parametrize("op,fn,afn", [("MaxDim", np.max, np.argmax), ("MinDim", np.min, np.argmin)])
@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "int64", "int32", "bool"])
@pytest.mark.parametrize("dim,keep", [(0, False), (-1, True)])
def test_max_min_dim_values_and_first_index(op, fn, afn, name, dim, keep):
    x = finite(name, (5, 6)) if name != "bool" else RNG.integers(0, 2, (5, 6)).astype(bool)
    x[1] = x[0]   # ties: the first index wins
    shape = reduced_shape(x.shape, [dim], keep)
    vals, idx = getattr(ops, op)(x, dim, keep, np.zeros(shape, x.dtype), np.zeros(shape, np.int64))
    same_bits(vals.reshape(shape), np.asarray(fn(x, axis=dim, keepdims=keep)).reshape(shape))
    assert idx.reshape(shape).tolist() == np.asarray(afn(x, axis=dim)).reshape(shape).tolist()


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64",
                                  "uint8"])
def test_argmax(name):
    x = finite(name, (4, 7))
    got = ops.ArgMax(strided(x), 1, False, np.zeros(4, np.int64))
    assert got.tolist() == np.argmax(x, axis=1).tolist()


def test_argmax_nan_is_the_maximum_like_torch():
    torch = pytest.importorskip("torch")
    x = np.array([[1.0, np.nan, 7.0], [3.0, 2.0, 3.0]], np.float32)
    got = ops.ArgMax(x, 1, False, np.zeros(2, np.int64))
    assert got.tolist() == torch.from_numpy(x).argmax(dim=1).tolist()


def test_extreme_validation_codes():
    x = np.zeros((2, 3), np.float32)
    assert code_of(ops.Amax, x, [1], False, np.zeros(2, np.float16)) == INVALID      # out != self dtype
    assert code_of(ops.Amax, np.zeros((2, 0), np.float32), [1], False, np.zeros(2, np.float32)) == INVALID
    assert code_of(ops.MaxDim, x, 2, False, np.zeros(2, np.float32), np.zeros(2, np.int64)) == INVALID
    assert code_of(ops.MaxDim, x.astype(np.int8), 1, False, np.zeros(2, np.int8), np.zeros(2, np.int64)) == INVALID
    assert code_of(ops.ArgMax, x, 1, False, np.zeros(2, np.float32)) == INVALID        # index dtype
    assert code_of(ops.ArgMax, x.astype(bool), 1, False, np.zeros(2, np.int64)) == INVALID
    assert code_of(ops.Max, np.zeros((0,), np.float32), np.zeros((), np.float32)) == INVALID
    assert code_of(ops.Max, x.astype(np.uint16), np.zeros((), np.uint16)) == INVALID
    for f, n in [("aclnnAmaxGetWorkspaceSize", 4), ("aclnnMaxGetWorkspaceSize", 2), ("aclnnMinGetWorkspaceSize", 2),
                 ("aclnnMaxDimGetWorkspaceSize", 5), ("aclnnArgMaxGetWorkspaceSize", 4)]:
        assert raw_null_status(f, n) == NULLPTR


def test_results_do_not_depend_on_thread_count(set_switch):
    x = RNG.standard_normal((400, 300)).astype(np.float32)
    runs = []
    for threads in ("1", "3", "8"):
        set_switch("PYACLNN_STUB_KERNEL_THREADS", threads)
        runs.append((ops.ReduceSum(x, [0], False, capi.ACL_FLOAT, np.zeros(300, np.float32)),
                     ops.MaxDim(x, 1, False, np.zeros(400, np.float32), np.zeros(400, np.int64))[1]))
    for r in runs[1:]:
        same_bits(r[0], runs[0][0])
        assert r[1].tolist() == runs[0][1].tolist()
