"""Tensor.numpy(): bit-identical host copies of every view kind, made with one copy of the data.

The reference for each view is numpy's own indexing of the host array the tensor was uploaded
from (independent of pyaclnn's strides and offsets). Peak host memory is measured with
tracemalloc, to which numpy reports its data allocations.
"""
from __future__ import annotations

import tracemalloc

import ml_dtypes
import numpy as np
import pytest

import pyaclnn

RNG = np.random.default_rng(13)


def _host(kind: str, shape):
    """A host array of ``kind`` with varied bit patterns, and the dtype argument for from_numpy."""
    n = int(np.prod(shape))
    if kind in ("int4", "float4_e2m1"):                      # 4-bit: codes 0..15 (two per device byte)
        codes = RNG.integers(0, 16, n, dtype=np.uint8)
        if kind == "int4":
            return ((codes.astype(np.int8) ^ 8) - 8).astype(ml_dtypes.int4).reshape(shape), None
        return codes.view(ml_dtypes.float4_e2m1fn).reshape(shape), None
    if kind in ("float4_e1m2", "hifloat8"):                 # uint8 carriers of codes
        top = 16 if kind == "float4_e1m2" else 256
        return RNG.integers(0, top, n, dtype=np.uint8).reshape(shape), kind
    dt = {"bool": np.bool_, "bfloat16": ml_dtypes.bfloat16, "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
          "float8_e5m2": ml_dtypes.float8_e5m2}.get(kind, kind)
    dt = np.dtype(dt)
    if dt == np.bool_:
        return RNG.integers(0, 2, n).astype(np.bool_).reshape(shape), None
    raw = RNG.integers(0, 256, n * dt.itemsize, dtype=np.uint8)
    arr = raw.view(dt).reshape(shape)
    if dt.kind == "f" or dt.name.startswith(("bfloat", "float8")):
        arr = np.where(np.isnan(arr.astype(np.float64)), arr.dtype.type(1), arr).astype(dt)   # no NaN payload games
    return arr, None


KINDS = ["float32", "float16", "bfloat16", "float64", "int8", "uint8", "int16", "int32", "int64", "bool",
         "float8_e4m3fn", "float8_e5m2", "hifloat8", "int4", "float4_e2m1", "float4_e1m2"]

# (name, how to make the view from the tensor, the same view of the host array)
VIEWS = [
    ("whole", lambda t: t, lambda a: a),
    ("row_offset", lambda t: t[1:], lambda a: a[1:]),
    ("one_row_odd", lambda t: t[3], lambda a: a[3]),
    ("transpose", lambda t: t.transpose(0, 1), lambda a: a.T),
    ("columns_step", lambda t: t[:, 1::2], lambda a: a[:, 1::2]),
    ("block", lambda t: t[1:4, 3:6], lambda a: a[1:4, 3:6]),
    ("transposed_block", lambda t: t[1:5, 2:7].transpose(0, 1), lambda a: a[1:5, 2:7].T),
    ("flat_odd_start", lambda t: t.reshape(42)[5:], lambda a: a.reshape(42)[5:]),
]


@pytest.mark.parametrize("kind", KINDS)
def test_every_view_is_bit_identical(acl, kind):
    host, dtype = _host(kind, (6, 7))
    t = pyaclnn.from_numpy(host, dtype=dtype)
    for name, make, ref in VIEWS:
        want = np.asarray(ref(host))
        got = make(t).numpy()
        assert got.dtype == want.dtype and got.shape == want.shape, (kind, name)
        assert np.ascontiguousarray(got).view(np.uint8).tobytes() == \
            np.ascontiguousarray(want).view(np.uint8).tobytes(), (kind, name)
        got[...] = want                         # the caller owns what it got (writeable, its own memory)
    t.close()


def test_layouts_of_the_result(acl):
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = pyaclnn.from_numpy(a)
    assert t.numpy().flags.c_contiguous and t[1:3].numpy().flags.c_contiguous
    assert t[:, ::2].numpy().flags.c_contiguous                  # gathered: C order
    tt = t.transpose(0, 1).numpy()                               # a permutation: strided over its own copy
    assert np.array_equal(tt, a.T) and tt.flags.writeable
    base = tt
    while base.base is not None:
        base = base.base
    assert base.nbytes == a.nbytes
    t.close()


def _peak_extra(fn) -> tuple[object, int]:
    """fn()'s result and the peak host bytes traced while it ran, above what was traced before."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, peak - before


SLACK = 64 * 1024     # Python objects, small index arrays: far below one copy of the data


@pytest.mark.parametrize("case", ["contiguous", "offset", "transpose", "bfloat16", "int4", "int4_odd_offset"])
def test_numpy_copies_the_data_once(acl, case):
    """Peak extra host memory of .numpy() is one copy of the result (plus the packed bytes for
    4-bit types), not two."""
    if case.startswith("int4"):
        host = ((np.arange(2 ** 21, dtype=np.int64) % 16) - 8).astype(ml_dtypes.int4)
    elif case == "bfloat16":
        host = np.arange(2 ** 20, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(1024, 1024)
    else:
        host = np.arange(2 ** 20, dtype=np.float32).reshape(1024, 1024)
    t = pyaclnn.from_numpy(host)
    view = {"offset": lambda: t[1:], "transpose": lambda: t.transpose(0, 1),
            "int4_odd_offset": lambda: t[1:]}.get(case, lambda: t)()
    t.numpy()                                                     # warm up (imports, caches)
    got, extra = _peak_extra(view.numpy)
    packed = got.size // 2 if case.startswith("int4") else 0     # the device bytes, before unpacking
    assert extra <= got.nbytes + packed + SLACK, (case, extra, got.nbytes)
    ref = host[1:] if case in ("offset", "int4_odd_offset") else host.T if case == "transpose" else host
    assert np.array_equal(got.view(np.uint8), ref.view(np.uint8)) if case.startswith("int4") else \
        np.array_equal(got, ref)
    t.close()


def test_gathered_view_holds_its_span_and_one_result(acl):
    """A view with holes: the span it covers, downloaded once, plus its C-ordered result."""
    host = np.arange(2 ** 20, dtype=np.float32).reshape(1024, 1024)
    t = pyaclnn.from_numpy(host)
    view = t[:, ::4]
    got, extra = _peak_extra(view.numpy)
    span = (1023 * 1024 + 1021) * 4
    assert extra <= span + got.nbytes + SLACK
    assert np.array_equal(got, host[:, ::4])
    t.close()

