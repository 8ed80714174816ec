"""The row paths of the gather and scatter kernels (native_stubs/src/kernels/gather.c: gather_rows, scatter_rows):
IndexSelect / Index / Embedding with one index tensor and IndexCopy move whole rows with memcpy when the dims after
the indexed one are row-major, straight into out when out is contiguous and apart from the inputs. Each case is
compared bit for bit with NumPy's own indexing, on layouts that take the row path (outer dims strided, in place,
out apart) and on those that must not (inner dims strided, a source inside self), and an index out
of range is a device fault that writes nothing on either path."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops, runtime
from pyaclnn.errors import AclError

RNG = np.random.default_rng(2718)


def _values(shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _outer_strided(arr: np.ndarray) -> pyaclnn.Tensor:
    """A device view of `arr` whose first two dims are swapped in memory (rows stay contiguous)."""
    store = pyaclnn.from_numpy(np.ascontiguousarray(np.swapaxes(arr, 0, 1)))
    st = list(store.strides)
    st[0], st[1] = st[1], st[0]
    return store.as_strided(arr.shape, st, store.offset)


def _inner_strided(arr: np.ndarray) -> pyaclnn.Tensor:
    """A device view of `arr` whose last dim has stride 2 (rows are not contiguous)."""
    wide = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1],), arr.dtype)
    wide[..., ::2] = arr
    store = pyaclnn.from_numpy(wide)
    st = list(store.strides)
    st[-1] = 2
    return store.as_strided(arr.shape, st, store.offset)


def _same(got, want):
    got = got.numpy() if isinstance(got, pyaclnn.Tensor) else np.asarray(got)
    assert got.shape == want.shape
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


@pytest.mark.parametrize("layout", ["contiguous", "outer strided", "inner strided"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_index_select_rows(layout, dim):
    x = _values((6, 5, 4))
    size = x.shape[dim]
    ix = np.array([4, 1, 0, 3, 3, 1], np.int64) % size - size * np.array([0, 1, 0, 1, 0, 0])   # some negative
    self = {"contiguous": pyaclnn.from_numpy, "outer strided": _outer_strided, "inner strided": _inner_strided}[layout](x)
    want = np.take(x, ix % x.shape[dim], axis=dim)
    out = pyaclnn.empty(want.shape, "float32")
    ops.IndexSelect(self, dim, ix.astype(np.int32 if dim == 2 else np.int64), out)
    _same(out, want)


def test_index_select_0d_index_and_fp16_bits():
    x = _values((3, 7), np.float16)
    x.view(np.uint16)[0, :3] = [0x7E01, 0xFC00, 0x8000]    # a NaN payload, -inf and -0.0 move as bytes
    out = pyaclnn.empty((1, 7), "float16")
    ops.IndexSelect(x, 0, np.array(0, np.int64), out)
    _same(out, x[:1])


def test_index_and_embedding_rows():
    x = _values((9, 3, 2))
    ids = np.array([[8, 0], [-9, 4]], np.int64)
    out = pyaclnn.empty((2, 2, 3, 2), "float32")
    ops.Index(_outer_strided(x), [ids], out)
    _same(out, x[ids])
    w = _values((10, 4))
    tok = np.array([[1, 9, 1], [0, 2, 2]], np.int64)
    emb = pyaclnn.empty((2, 3, 4), "float32")
    ops.Embedding(w, tok, emb)
    _same(emb, w[tok])


def _index_copy_want(x, dim, ix, src):
    want = x.copy()
    moved = np.moveaxis(want, dim, 0)
    srcm = np.moveaxis(src, dim, 0)
    for j, v in enumerate(ix):          # in order: a repeated index keeps its last row
        moved[v] = srcm[j]
    return want


@pytest.mark.parametrize("dim,how", [(d, h) for d in (0, 1, 2) for h in (
    "out apart", "in place", "out is self", "outer strided source", "inner strided source")] + [(0, "source inside self")])
def test_index_copy_rows(dim, how):
    x = _values((5, 4, 3))
    ix = np.array([3, 0, -1, 3], np.int64) % x.shape[dim]
    sshape = list(x.shape)
    sshape[dim] = len(ix)
    src = _values(sshape)
    self = pyaclnn.from_numpy(x)
    if how == "source inside self":        # (self's leading rows: a valid source along dim 0)
        src = x[:len(ix)].copy()
        src_t = self[:len(ix)]              # rows of self, overwritten by the call
    else:
        src_t = {"outer strided source": _outer_strided,
                 "inner strided source": _inner_strided}.get(how, pyaclnn.from_numpy)(src)
    want = _index_copy_want(x, dim, ix, src)
    if how == "out apart":
        out = pyaclnn.empty(x.shape, "float32")
        ops.IndexCopy(self, dim, ix, src_t, out)
        _same(out, want)
        _same(self, x)                      # self is read, not written
    elif how == "out is self":
        ops.IndexCopy(self, dim, ix, src_t, self)
        _same(self, want)
    else:
        ops.InplaceIndexCopy(self, dim, ix, src_t)
        _same(self, want)


def test_index_copy_0d_source():
    x = _values((5,))
    got = ops.InplaceIndexCopy(x.copy(), 0, np.array([-2]), np.array(5.0, np.float32))
    want = x.copy()
    want[3] = 5.0
    _same(got, want)


@pytest.mark.parametrize("call", ["IndexSelect", "IndexCopy", "InplaceIndexCopy"])
def test_out_of_range_index_writes_nothing(call):
    x = _values((4, 3))
    self = pyaclnn.from_numpy(x)
    out = pyaclnn.from_numpy(np.full((4, 3), 7.0, np.float32))
    bad = np.array([0, 4], np.int64)        # the second row is past the end
    src = pyaclnn.from_numpy(_values((2, 3)))
    stream = runtime.Stream()
    try:
        with pytest.raises(AclError, match="out of bounds"):
            if call == "IndexSelect":
                ops.IndexSelect(self, 0, bad, out[:2], stream=stream)
            elif call == "IndexCopy":
                ops.IndexCopy(self, 0, bad, src, out, stream=stream)
            else:
                ops.InplaceIndexCopy(self, 0, bad, src, stream=stream)
            stream.synchronize()
    finally:
        stream.close()
    _same(self, x)
    _same(out, np.full((4, 3), 7.0, np.float32))
