"""aclnnScatterPaKvCache (native_stubs/src/ops/attention/scatter_pa_kv_cache.toml): the paged KV cache writer of
hicann/ops-transformer attention/scatter_pa_kv_cache, class a -- bit-exact against the NumPy model of
tests/reference/infer_attention.py (the Norm cache written row by row at slot * tokenSize, PA_NZ's
[blocks, H / L, blockSize, L] tiles, slots < 0 skipped) for every dtype of each SoC's list, the key-only form, the
docs' example, the validation codes in the order of the generated layer (161001, 161002) and the tiling (561002), a
slot past the cache as a device fault, and torch_npu.npu_scatter_pa_kv_cache (in place and functional) against the
direct call."""
from __future__ import annotations

import numpy as np
import pytest

from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from reference import infer_attention as IA
import _fused_ops as F
from _math_ops import dec, enc, torch_npu_run

NULLPTR, INVALID, TILING = 161001, 161002, 561002
A2_DTYPES = ["float16", "bfloat16", "int8"]
DTYPES_950 = A2_DTYPES + ["float32", "uint8", "int16", "uint16", "int32", "uint32"]


def scatter(key, kc, slots, value, vc, mode="Norm", scatter_mode="None"):
    return ops.ScatterPaKvCache(key, kc, slots, value, vc, None, None, None, mode, scatter_mode, None, None)


def data(shape, name, rng):
    if name.startswith(("int", "uint")):
        return rng.integers(0, 100, shape).astype(name)
    return R.cast(rng.standard_normal(shape), name)


@pytest.mark.parametrize("name", DTYPES_950)
@pytest.mark.parametrize("slot_dtype", [np.int32, np.int64])
def test_norm_cache(name, slot_dtype):
    """[tokens, N, D] rows into [blocks, blockSize, N, D] caches (k and v head sizes differ); a -1 slot skipped."""
    rng = np.random.default_rng(1)
    k, v = data((5, 2, 16), name, rng), data((5, 2, 8), name, rng)
    kc, vc = data((3, 4, 2, 16), name, rng), data((3, 4, 2, 8), name, rng)
    slots = np.array([7, 0, -1, 11, 4], slot_dtype)
    got_k, got_v = scatter(k, kc, slots, v, vc)
    assert F.bits_equal(got_k, IA.scatter_pa_kv_cache(k, kc, slots))
    assert F.bits_equal(got_v, IA.scatter_pa_kv_cache(v, vc, slots))


def test_8_bit_float_dtypes_on_ascend_950():
    """HIFLOAT8, FLOAT8_E5M2, FLOAT8_E4M3FN (Ascend 950's list): the bytes moved as for INT8 (Norm and PA_NZ)."""
    if F.ON_A2:
        return
    import ml_dtypes
    from pyaclnn.tensor import from_numpy
    rng = np.random.default_rng(5)
    host = {"hifloat8": lambda x: x, "float8_e5m2": lambda x: x.view(ml_dtypes.float8_e5m2),
            "float8_e4m3fn": lambda x: x.view(ml_dtypes.float8_e4m3fn)}
    for dt in ("hifloat8", "float8_e5m2", "float8_e4m3fn"):
        k, v = (rng.integers(0, 256, (3, 2, 32)).astype(np.uint8) for _ in "kv")
        for nz in (False, True):
            shape = (2, 2, 8, 32) if nz else (2, 8, 2, 32)
            kc, vc = (rng.integers(0, 256, shape).astype(np.uint8) for _ in "kv")
            slots = np.array([3, 12, -1], np.int32)
            t = [from_numpy(host[dt](x), dtype=dt) for x in (k, kc, v, vc)]
            ops.ScatterPaKvCache(t[0], t[1], slots, t[2], t[3], None, None, None, "PA_NZ" if nz else "Norm", None,
                                 None, None)
            assert t[1].numpy().view(np.uint8).tobytes() == IA.scatter_pa_kv_cache(k, kc, slots, nz=nz).tobytes()
            assert t[3].numpy().view(np.uint8).tobytes() == IA.scatter_pa_kv_cache(v, vc, slots, nz=nz).tobytes()


@pytest.mark.parametrize("name", ["float16", "bfloat16", "int8"])
def test_pa_nz_cache(name):
    """PA_NZ (torch_npu's default cache_mode): the cache [blocks, N * D / L, blockSize, L], L = 32 bytes / element."""
    rng = np.random.default_rng(2)
    last = 32 // np.dtype(R.np_dtype(name)).itemsize
    k, v = data((4, 2, 2 * last), name, rng), data((4, 2, last), name, rng)
    kc = data((3, 2 * 2 * last // last, 8, last), name, rng)
    vc = data((3, 2 * last // last, 8, last), name, rng)
    slots = np.array([9, 23, 0, 15], np.int32)
    got_k, got_v = scatter(k, kc, slots, v, vc, "PA_NZ")
    assert F.bits_equal(got_k, IA.scatter_pa_kv_cache(k, kc, slots, nz=True))
    assert F.bits_equal(got_v, IA.scatter_pa_kv_cache(v, vc, slots, nz=True))


def test_key_only_form():
    """value and valueCacheRef 0-dimensional: only the key cache is written."""
    rng = np.random.default_rng(3)
    k, kc = data((3, 1, 16), "float16", rng), data((2, 4, 1, 16), "float16", rng)
    slots = np.array([1, 6, 2], np.int32)
    got_k, _ = scatter(k, kc, slots, np.zeros((), np.float16), np.zeros((), np.float16))
    assert F.bits_equal(got_k, IA.scatter_pa_kv_cache(k, kc, slots))


def test_the_docs_example():
    """docs/aclnnScatterPaKvCache.md "调用示例": key / value [2, 2, 32] FLOAT16 and PA_NZ caches [1, 4, 32, 16] all of
    the bits 0x0001 (int16 ones), slotMapping [1, 1], scatterMode "None": the caches come back all 0x0001."""
    k = np.ones((2, 2, 32), np.int16).view(np.float16)
    c = np.ones((1, 4, 32, 16), np.int16).view(np.float16)
    got_k, got_v = scatter(k, c, np.array([1, 1], np.int32), k, c, "PA_NZ")
    assert np.all(got_k.view(np.int16) == 1) and np.all(got_v.view(np.int16) == 1)
    c0 = np.zeros_like(c)   # and what the example's slot 1 receives, seen on a zero cache: row 1 of every tile
    got_k, _ = scatter(k, c0, np.array([1, 1], np.int32), k, c0.copy(), "PA_NZ")
    assert np.all(got_k[0, :, 1, :].view(np.int16) == 1) and np.count_nonzero(got_k.view(np.int16)) == 64


def test_atlas_a2_list():
    """Atlas A2/A3 take FLOAT16, BFLOAT16 and INT8 only."""
    if not F.ON_A2:
        F.run_on_a2("test_scatter_pa_kv_cache", "T.test_atlas_a2_list()\nT.test_norm_cache('bfloat16', T.np.int32)")
        return
    f = np.zeros((2, 1, 8), np.float32)
    err = pytest.raises(AclError, scatter, f, np.zeros((1, 4, 1, 8), np.float32), np.zeros(2, np.int32), f,
                        np.zeros((1, 4, 1, 8), np.float32)).value
    assert err.code == INVALID and "key" in str(err)


def _cases():
    h = np.zeros((2, 2, 16), np.float16)
    c = np.zeros((2, 4, 2, 16), np.float16)
    s = np.zeros(2, np.int32)
    base = dict(key=h, kc=c, slots=s, value=h, vc=c)
    return [
        ("key NULL", dict(base, key=None), NULLPTR, "key"),
        ("dtype", dict(base, key=h.astype(np.float64), kc=c.astype(np.float64)), INVALID, "key"),
        ("cache dtype", dict(base, kc=c.astype(np.int8)), INVALID, "keyCacheRef"),
        ("value dtype", dict(base, value=h.astype(np.int8), vc=c.astype(np.int8)), INVALID, "value"),
        ("slot dtype", dict(base, slots=s.astype(np.int16)), INVALID, "slotMapping"),
        ("scatter mode", dict(base, scatter_mode="Alibi"), INVALID, "not supported by the emulator"),
        ("key dims", dict(base, key=h[0]), TILING, "key should be is 3 dim."),
        ("cache dims", dict(base, kc=c[0]), TILING, "key_cache should be is 4 dim."),
        ("slot dims", dict(base, slots=s.reshape(1, 2)), TILING, "slot_mapping should be is 1 dim."),
        ("value shape", dict(base, value=np.zeros((2, 1, 16), np.float16)), TILING,
         "dim0 and dim1 of key and value should be same."),
        ("cache shapes", dict(base, vc=np.zeros((3, 4, 2, 16), np.float16)), TILING,
         "dim0 and dim1 of key_cache and value_cache should be same."),
        ("capacity", dict(base, key=np.zeros((9, 2, 16), np.float16), value=np.zeros((9, 2, 16), np.float16)), TILING,
         "numBlocks * blockSize should larger than numTokens."),
        ("nz dim1", dict(base, kc=np.zeros((2, 3, 4, 16), np.float16), vc=np.zeros((2, 2, 4, 16), np.float16),
                         mode="PA_NZ"), TILING, "dim1 of keyCache is invalid."),
        ("nz dim3", dict(base, kc=np.zeros((2, 2, 4, 16), np.float16).reshape(2, 2, 4, 16)[..., :8].copy(),
                         vc=np.zeros((2, 2, 4, 16), np.float16), mode="PA_NZ"), TILING, "dim3 of keyCache is invalid."),
    ]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
def test_validation_codes(case):
    _, kw, code, text = case
    if kw["key"] is None:   # the first of the five NULL
        from _op_helpers import raw_null_status
        assert raw_null_status("aclnnScatterPaKvCacheGetWorkspaceSize", 12) == code
        return
    err = pytest.raises(AclError, scatter, kw["key"], kw["kc"], kw["slots"], kw["value"], kw["vc"],
                        kw.get("mode", "Norm"), kw.get("scatter_mode", "None")).value
    assert (err.code, text in str(err)) == (code, True), str(err)


def test_slot_past_the_cache_is_a_device_fault():
    h = np.ones((2, 2, 16), np.float16)
    c = np.zeros((2, 4, 2, 16), np.float16)
    with pytest.raises(AclError) as e:
        scatter(h, c, np.array([3, 8], np.int32), h, c)
    assert "slotMapping[1] = 8" in str(e.value)


_TORCH_BODY = """

def go():
    s = SPEC
    k, v, kc, vc = (T(dec(s[x])).npu() for x in ("k", "v", "kc", "vc"))
    slots = T(dec(s["slots"])).npu()
    torch_npu.npu_scatter_pa_kv_cache(k, v, kc, vc, slots, cache_mode="Norm")
    nk, nv = (T(dec(s[x])).npu() for x in ("nk", "nv"))
    fk, fv = torch_npu.npu_scatter_pa_kv_cache_functional(k, v, nk, nv, slots)   # cache_mode PA_NZ
    return {"kc": enc(to_np(kc)), "vc": enc(to_np(vc)), "fk": enc(to_np(fk)), "fv": enc(to_np(fv))}
run("spkv", go)
"""


def test_torch_npu_matches_the_direct_call():
    rng = np.random.default_rng(4)
    k, v = data((3, 2, 16), "bfloat16", rng), data((3, 2, 16), "bfloat16", rng)
    kc, vc = data((2, 8, 2, 16), "bfloat16", rng), data((2, 8, 2, 16), "bfloat16", rng)
    nk, nv = data((2, 2, 8, 16), "bfloat16", rng), data((2, 2, 8, 16), "bfloat16", rng)
    slots = np.array([5, -1, 12], np.int32)
    spec = {x: enc(y) for x, y in dict(k=k, v=v, kc=kc, vc=vc, nk=nk, nv=nv, slots=slots).items()}
    res = torch_npu_run(_TORCH_BODY, spec, soc="Ascend910B4")["spkv"]
    assert "error" not in res, res
    for got, want in zip((res["kc"], res["vc"]), scatter(k, kc, slots, v, vc)):
        assert F.bits_equal(dec(got), want)
    for got, want in zip((res["fk"], res["fv"]), scatter(k, nk, slots, v, nv, "PA_NZ")):
        assert F.bits_equal(dec(got), want)
