"""aclnnCat, aclnnStack, aclnnPermute (bytes moved: bit-exact against NumPy's concatenate / stack /
transpose) and aclnnArange (the vendor kernel's fp32 Axpy steps, written out independently in NumPy):
every supported dtype, strided inputs, mixed dtypes, validation codes."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from _op_helpers import INNER_NULLPTR, INVALID, NULLPTR, code_of, raw_null_status, strided
from test_elementwise_arith import sample, same_bits
from reference import elementwise as R

DTYPES = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"]


def npdt(name):
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_every_dtype(name, dim):
    a, b, c = sample(name, (2, 3, 4)), sample(name, (2, 3, 4)), sample(name, (2, 3, 4))
    b = np.concatenate([b, b], axis=dim)          # another length along dim
    parts = [a, b, c]
    want = np.concatenate(parts, axis=dim)
    got = ops.Cat([strided(a), b, strided(c, transpose=True)], dim, np.zeros(want.shape, want.dtype))
    same_bits(got, want)


def test_cat_promotes_and_casts_like_the_npu():
    a, b = sample("float16", (2, 3)), sample("int32", (1, 3))
    got = ops.Cat([a, b], 0, np.zeros((3, 3), np.float32))
    same_bits(got, np.concatenate([R.cast(a, "float32"), R.cast(b, "float32")]))


def test_cat_skips_legacy_empty_tensors():
    a = sample("float32", (2, 3))
    got = ops.Cat([np.zeros((0,), np.float32), a, a], 0, np.zeros((4, 3), np.float32))
    same_bits(got, np.concatenate([a, a]))


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("dim", [0, 2, -1])
def test_stack_every_dtype(name, dim):
    xs = [sample(name, (3, 4)) for _ in range(3)]
    want = np.stack(xs, axis=dim)
    got = ops.Stack([strided(xs[0]), xs[1], strided(xs[2], transpose=True)], dim, np.zeros(want.shape, want.dtype))
    same_bits(got, want)


def test_cat_stack_validation_codes():
    a = np.zeros((2, 3), np.float32)
    assert code_of(ops.Cat, [a, np.zeros((2, 4), np.float32)], 0, np.zeros((4, 3), np.float32)) == INVALID
    assert code_of(ops.Cat, [a, np.zeros((2, 3, 1), np.float32)], 0, np.zeros((4, 3), np.float32)) == INVALID
    assert code_of(ops.Cat, [a, a], 2, np.zeros((4, 3), np.float32)) == INVALID
    assert code_of(ops.Cat, [a, a], 0, np.zeros((4, 3), np.int32)) == INVALID       # float cannot cast to int
    assert code_of(ops.Cat, [a, a], 0, np.zeros((3, 3), np.float32)) == INVALID     # out shape
    assert code_of(ops.Stack, [a, np.zeros((3, 2), np.float32)], 0, np.zeros((2, 2, 3), np.float32)) == INVALID
    assert code_of(ops.Stack, [a, a], 3, np.zeros((2, 2, 3), np.float32)) == INVALID
    assert raw_null_status("aclnnCatGetWorkspaceSize", 3) == NULLPTR
    # aclnnStack reports a NULL list or out as an inner null pointer (the vendor's CHECK_RET code)
    assert raw_null_status("aclnnStackGetWorkspaceSize", 3) == INNER_NULLPTR


@pytest.mark.parametrize("name", DTYPES + ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("perm", [(1, 0, 2), (2, 0, 1), (-1, -3, -2)])
def test_permute_every_dtype(name, perm):
    x = sample(name if not name.startswith("uint") or name == "uint8" else "int32", (2, 3, 4)).astype(npdt(name))
    want = np.transpose(x, perm)
    same_bits(ops.Permute(strided(x), list(perm), np.zeros(want.shape, want.dtype)), want)


def test_permute_validation_codes():
    x = np.zeros((2, 3), np.float32)
    assert code_of(ops.Permute, x, [0, 0], np.zeros((2, 3), np.float32)) == INVALID
    assert code_of(ops.Permute, x, [0], np.zeros((2, 3), np.float32)) == INVALID
    assert code_of(ops.Permute, x, [1, 2], np.zeros((3, 2), np.float32)) == INVALID
    assert code_of(ops.Permute, x, [1, 0], np.zeros((2, 3), np.float32)) == INVALID   # out shape
    assert code_of(ops.Permute, x, [1, 0], np.zeros((3, 2), np.float16)) == INVALID
    # a repeat only after wrapping (NumPy's transpose refuses it too: "repeated axis in transpose")
    with pytest.raises(ValueError):
        np.transpose(x, (1, -1))
    assert code_of(ops.Permute, x, [1, -1], np.zeros((3, 3), np.float32)) == INVALID
    assert raw_null_status("aclnnPermuteGetWorkspaceSize", 3) == NULLPTR


# ---- aclnnArange ---------------------------------------------------------------------------------

def arange_reference(start, step, n, name):
    """The vendor kernel for float outs: fp32 t = i * step, v = start + t (each rounded), then cast."""
    if name == "float64":   # the FLOAT scalars' values, widened (aclScalar::ToDouble)
        start, step = float(np.float32(start)), float(np.float32(step))
        return (start + np.arange(n, dtype=np.float64) * step).astype(np.float64)
    if name in ("int32", "int64"):
        return (int(start) + np.arange(n, dtype=np.int64) * int(step)).astype(name)
    i = np.arange(n, dtype=np.float32)
    v = (np.float32(start) + (i * np.float32(step)).astype(np.float32)).astype(np.float32)
    return R.cast(v, name)


ARANGE_CASES = [(name, bounds) for name in ("float32", "float16", "bfloat16", "float64", "int32", "int64")
                for bounds in [(0, 10, 1), (10, 0, -3)]
                + ([(-3.5, 4.0, 0.7), (0.1, 1.0, 0.1)] if not name.startswith("int") else [])]


@pytest.mark.parametrize("name,bounds", ARANGE_CASES)
def test_arange(name, bounds):
    start, end, step = bounds
    n = int(np.ceil((end - start) / step))
    sdt = "float32" if not name.startswith("int") else "int64"
    got = ops.Arange(ops.Scalar(start, sdt), ops.Scalar(end, sdt), ops.Scalar(step, sdt), np.zeros(n, npdt(name)))
    same_bits(got, arange_reference(start, step, n, name))


def test_arange_matches_torch_for_integer_steps():
    torch = pytest.importorskip("torch")
    got = ops.Arange(ops.Scalar(0, "int64"), ops.Scalar(8, "int64"), ops.Scalar(2, "int64"), np.zeros(4, np.float32))
    same_bits(got, torch.arange(0, 8, 2, dtype=torch.float32).numpy())


def test_arange_validation_codes():
    s = lambda v: ops.Scalar(v, "float32")   # noqa: E731
    assert code_of(ops.Arange, s(0), s(5), s(0), np.zeros(5, np.float32)) == INVALID       # zero step
    assert code_of(ops.Arange, s(5), s(0), s(1), np.zeros(5, np.float32)) == INVALID       # wrong sign
    assert code_of(ops.Arange, s(0), s(5), s(1), np.zeros(5, np.int8)) == INVALID          # out dtype
    assert raw_null_status("aclnnArangeGetWorkspaceSize", 4) == NULLPTR
