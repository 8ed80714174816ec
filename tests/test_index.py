"""aclnnIndex, IndexSelect, Embedding, EmbeddingDenseBackward and IndexPutImpl against NumPy's advanced
indexing (an independent reference) and torch CPU: every supported dtype, broadcast and strided
inputs, negative indices, and the vendor's validation codes."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import capi, ops
from pyaclnn.errors import AclError
from _op_helpers import INVALID, NULLPTR, code_of, raw_null_status, strided
from test_elementwise_arith import sample, same_bits

RNG = np.random.default_rng(1515)
# The self dtypes aclnnIndex takes on both SoC families (the emulator has no complex elements).
INDEX_DTYPES = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"]


def npdt(name):
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def zeros(shape, name):
    return np.zeros(shape, npdt(name))


# ---- aclnnIndex ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", INDEX_DTYPES)
@pytest.mark.parametrize("idx_dtype", ["int64", "int32"])
def test_index_rows_every_dtype(name, idx_dtype):
    x = sample(name, (5, 7))
    ids = np.array([[4, 0, -1], [2, 2, 3]], idx_dtype)
    same_bits(ops.Index(x, [ids], zeros((2, 3, 7), name)), x[ids])


@pytest.mark.parametrize("case", ["adjacent", "separated", "second_dim", "broadcast", "zero_d"])
def test_index_follows_numpy_advanced_indexing(case):
    x = sample("float32", (4, 5, 6))
    i0 = np.array([[0], [3]])          # (2, 1)
    i1 = np.array([1, -1, 2])          # (3,)
    empty = np.zeros((0,), np.float32)  # torch_npu's "undefined" slot
    lists = {"adjacent": ([i0, i1], x[i0, i1]),
             "separated": ([i0, empty, np.array([5, 0, 2])], x[i0, :, np.array([5, 0, 2])]),
             "second_dim": ([empty, i1], x[:, i1]),
             "broadcast": ([np.array([1, 2]), np.array([[0], [4]])], x[np.array([1, 2]), np.array([[0], [4]])]),
             "zero_d": ([np.array(2)], x[2])}
    indices, want = lists[case]
    got = ops.Index(x, indices, np.zeros(want.shape, np.float32))
    same_bits(got, want)


def test_index_strided_self_and_index():
    x = sample("bfloat16", (6, 4))
    ids = np.array([5, 1, 1, 0], np.int64)
    got = ops.Index(strided(x, transpose=True), [strided(ids)], zeros((4, 4), "bfloat16"))
    same_bits(got, x[ids])


def test_index_out_of_range_is_a_device_fault():
    with pytest.raises(AclError) as e:
        ops.Index(np.zeros((3, 2), np.float32), [np.array([3])], np.zeros((1, 2), np.float32))
    assert "out of bounds" in str(e.value)


def test_index_validation_codes():
    x = np.zeros((3, 2), np.float32)
    ids = np.array([0])
    assert code_of(ops.Index, x, [ids], np.zeros((1, 2), np.float16)) == INVALID          # out dtype != self
    assert code_of(ops.Index, np.zeros((3,), np.uint16), [ids], np.zeros(1, np.uint16)) == INVALID
    assert code_of(ops.Index, x, [ids.astype(np.int16)], np.zeros((1, 2), np.float32)) == INVALID
    assert code_of(ops.Index, x, [ids], np.zeros((2, 2), np.float32)) == INVALID          # wrong out shape
    assert code_of(ops.Index, x, [ids, ids, ids], np.zeros((1,), np.float32)) == INVALID  # too many indices
    assert code_of(ops.Index, np.zeros((1,) * 9, np.float32), [ids], np.zeros((1,) * 9, np.float32)) == INVALID
    assert raw_null_status("aclnnIndexGetWorkspaceSize", 3) == NULLPTR


def test_index_matches_torch_cpu():
    torch = pytest.importorskip("torch")
    x = sample("float32", (8, 3, 5))
    ids = np.array([[7, 0], [1, -8]])
    want = torch.from_numpy(x)[torch.from_numpy(ids)].numpy()
    same_bits(ops.Index(x, [ids], np.zeros(want.shape, np.float32)), want)


# ---- aclnnIndexSelect ---------------------------------------------------------------------------

SELECT_DTYPES = INDEX_DTYPES + ["uint16", "uint32", "uint64"]


@pytest.mark.parametrize("name", SELECT_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select_every_dtype_and_dim(name, dim):
    x = sample(name if name not in ("uint16", "uint32", "uint64") else "int32", (4, 3, 5)).astype(npdt(name))
    ids = np.array([2, 0, 0, 1], np.int32)
    want = np.take(x, ids, axis=dim)
    same_bits(ops.IndexSelect(strided(x), dim, ids, np.zeros(want.shape, x.dtype)), want)


def test_index_select_zero_d_index_keeps_the_dim():
    x = sample("float16", (3, 4))
    same_bits(ops.IndexSelect(x, 1, np.array(2, np.int64), np.zeros((3, 1), np.float16)), x[:, [2]])


def test_index_select_validation_codes():
    x = np.zeros((3, 2), np.float32)
    ids = np.array([0, 1])
    assert code_of(ops.IndexSelect, x, 2, ids, np.zeros((3, 2), np.float32)) == INVALID   # dim out of range
    assert code_of(ops.IndexSelect, x, 0, ids.reshape(1, 2), np.zeros((2, 2), np.float32)) == INVALID
    assert code_of(ops.IndexSelect, x, 0, ids.astype(np.float32), np.zeros((2, 2), np.float32)) == INVALID
    assert code_of(ops.IndexSelect, x, 0, ids, np.zeros((2, 2), np.int32)) == INVALID
    assert code_of(ops.IndexSelect, x, 0, ids, np.zeros((3, 2), np.float32)) == INVALID   # out shape
    assert raw_null_status("aclnnIndexSelectGetWorkspaceSize", 4) == NULLPTR


# ---- aclnnEmbedding / aclnnEmbeddingDenseBackward ------------------------------------------------

EMB_DTYPES = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("name", EMB_DTYPES)
def test_embedding_gathers_rows(name):
    w = sample(name, (10, 6))
    ids = np.array([[9, 0, 3], [3, 3, 1]], np.int64)
    same_bits(ops.Embedding(strided(w), ids, zeros((2, 3, 6), name)), w[ids])


def test_embedding_validation_codes():
    w = np.zeros((4, 3), np.float32)
    ids = np.array([[1, 2]])
    assert code_of(ops.Embedding, w, ids, np.zeros((2, 3), np.float32)) == INVALID        # out rank
    assert code_of(ops.Embedding, w, ids, np.zeros((1, 3, 3), np.float32)) == INVALID     # out shape
    assert code_of(ops.Embedding, w, ids.astype(np.int16), np.zeros((1, 2, 3), np.float32)) == INVALID
    assert code_of(ops.Embedding, w, ids, np.zeros((1, 2, 3), np.float16)) == INVALID
    assert raw_null_status("aclnnEmbeddingGetWorkspaceSize", 3) == NULLPTR


def embedding_backward_reference(grad, ids, num_weights, padding_idx, scale):
    """Row sums in float64 (the emulator sums in fp32: the comparison allows fp32 accumulation)."""
    g = grad.astype(np.float64).reshape(-1, grad.shape[-1])
    out = np.zeros((num_weights, grad.shape[-1]))
    flat = ids.reshape(-1)
    np.add.at(out, flat, g)
    if padding_idx < num_weights:
        out[padding_idx] = 0
    if scale:
        counts = np.bincount(flat, minlength=num_weights).astype(np.float64)
        out /= np.maximum(counts, 1)[:, None]
    return out


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("padding_idx,scale", [(2 ** 64 - 1, False), (3, False), (2 ** 64 - 1, True)])
def test_embedding_dense_backward(name, padding_idx, scale):
    grad = sample("float32", (2, 5, 4)).astype(np.float32)
    grad[~np.isfinite(grad)] = 1.0
    grad = grad.astype(npdt(name))
    ids = np.array([[3, 0, 3, 6, 3], [1, 0, 6, 6, 2]], np.int64)
    got = ops.EmbeddingDenseBackward(grad, ids, 7, padding_idx, scale, zeros((7, 4), name))
    want = embedding_backward_reference(grad, ids, 7, padding_idx, scale)
    tol = 4 * 2.0 ** -24 * embedding_backward_reference(np.abs(grad.astype(np.float64)), ids, 7, padding_idx, scale)
    ulp = {"float32": 2.0 ** -24, "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}[name]
    assert np.all(np.abs(got.astype(np.float64) - want) <= tol + ulp * np.abs(want))


def test_embedding_dense_backward_validation_codes():
    g = np.zeros((2, 3), np.float32)
    ids = np.array([0, 1])
    assert code_of(ops.EmbeddingDenseBackward, g, ids, 4, 0, False, np.zeros((4, 2), np.float32)) == INVALID
    assert code_of(ops.EmbeddingDenseBackward, g, np.array([0, 1, 2]), 4, 0, False,
                   np.zeros((4, 3), np.float32)) == INVALID
    assert code_of(ops.EmbeddingDenseBackward, g.astype(np.int32), ids, 4, 0, False,
                   np.zeros((4, 3), np.float32)) == INVALID
    with pytest.raises(AclError) as e:
        ops.EmbeddingDenseBackward(g, np.array([0, 5]), 4, 0, False, np.zeros((4, 3), np.float32))
    assert "out of range" in str(e.value)
    assert raw_null_status("aclnnEmbeddingDenseBackwardGetWorkspaceSize", 6) == NULLPTR


def test_embedding_dense_backward_matches_torch():
    torch = pytest.importorskip("torch")
    grad = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    ids = RNG.integers(0, 6, (3, 4))
    want = torch.ops.aten.embedding_dense_backward(torch.from_numpy(grad), torch.from_numpy(ids), 6, -1,
                                                   False).numpy()
    got = ops.EmbeddingDenseBackward(grad, ids, 6, 2 ** 64 - 1, False, np.zeros((6, 5), np.float32))
    assert np.allclose(got, want, rtol=1e-6, atol=1e-6)


# ---- aclnnIndexPutImpl --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8",
                                  "uint8", "bool"])
def test_index_put_assigns_every_dtype(name):
    x = sample(name, (5, 3))
    v = sample(name, (2, 3))
    t = pyaclnn.from_numpy(x.copy())
    ops.IndexPutImpl(t, [np.array([4, -5])], v, False, False)
    want = x.copy()
    want[[4, 0]] = v
    same_bits(t.numpy(), want)


def test_index_put_accumulates_repeated_positions_in_index_order():
    x = np.zeros((4, 2), np.float32)
    v = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    t = pyaclnn.from_numpy(x)
    ops.IndexPutImpl(t, [np.array([1, 3, 1])], v, True, False)
    want = x.copy()
    np.add.at(want, [1, 3, 1], v)
    same_bits(t.numpy(), want)


def test_index_put_broadcasts_values_and_takes_strided_self():
    x = sample("float32", (3, 4))
    buf = pyaclnn.from_numpy(np.zeros(2 * 12 + 1, np.float32))
    view = buf.as_strided((3, 4), (8, 2), 1)
    ops.InplaceCopy(view, x)
    ops.IndexPutImpl(view, [np.array([2, 0]), np.array([1, 3])], np.array([7.5], np.float32), False, False)
    want = x.copy()
    want[[2, 0], [1, 3]] = 7.5
    same_bits(view.numpy(), want)


def test_index_put_validation_codes():
    t = pyaclnn.from_numpy(np.zeros((3, 2), np.float32))
    assert code_of(ops.IndexPutImpl, t, [np.array([0])], np.zeros((1, 2), np.float16), False, False) == INVALID
    assert code_of(ops.IndexPutImpl, t, [np.array([0])], np.zeros((1, 3), np.float32), False, False) == INVALID
    assert code_of(ops.IndexPutImpl, t, [np.array([0])] * 3, np.zeros((1,), np.float32), False, False) == INVALID
    assert code_of(ops.IndexPutImpl, t, [np.array([0.5])], np.zeros((1, 2), np.float32), False, False) == INVALID
    assert raw_null_status("aclnnIndexPutImplGetWorkspaceSize", 5) == NULLPTR
