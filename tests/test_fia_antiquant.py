"""INT8 key/value (per-channel antiquant) in the decode path of aclnnFusedInferAttentionScoreV2..V5 and
aclnnIncreFlashAttentionV4 on Atlas A2 (native_stubs/src/ops/attention/fa_antiquant.c, fia_antiquant.c): the
vendor's MSD kernel against tests/reference/fia_antiquant.py (its steps, from the vendor kernel) and against the
float64 definition (dequantise, then attend) with the measured figures below; the tiling's antiquant checks in its
order; the Ascend 950 refusing INT8 key/value (not taken by the emulator); and torch_npu's
npu_fused_infer_attention_score / npu_incre_flash_attention with antiquant_scale / key_antiquant_scale on the
emulator equal to the direct call. The Atlas A2 checks run in one subprocess (the suite's SoC is the 950)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from reference import formats as FMT
from reference import fia_antiquant as M
from reference import infer_attention as IA
import _fused_ops as F
from _math_ops import dec, enc, torch_npu_run

INVALID, TILING = 161002, 561002
BIG = 2147483647
# attentionOut against the MSD model: max |got - model| / max |model| over 6 seeds with and without offsets
# (measured fp16 3.4e-4 -- one output ulp from the float32 sum order -- bf16 0); softmaxLse absolute (measured 4.8e-7)
MODEL_BOUND, MODEL_LSE = {"float16": 1e-3, "bfloat16": 8e-3}, 2e-6
# (per-token, 4 seeds: 0 / 0, 4.8e-7). Against the float64 definition: MSD's own error plus the output cast
# (measured per-channel fp16 3.4e-4, bf16 2.5e-3; per-token 4.5e-4, 3.4e-3); softmaxLse by pieces (measured 8.8e-6
# per-channel, 1.1e-5 per-token with 2 pieces; 4.0e-7 with 3)
EXACT_BOUND, EXACT_LSE = {"float16": 1e-3, "bfloat16": 6e-3}, {2: 3e-5, 3: 2e-6, 4: 3e-6}
EXACT_BOUND4 = EXACT_BOUND   # int4, 4 pieces: measured fp16 3.6e-4, bf16 2.7e-3; softmaxLse 1.1e-6

_TENSORS = ["pse", "mask", "asl", "askv", "deq1", "qs1", "deq2", "qs2", "qo2", "as", "ao", "bt", "qps", "kvps", "kas",
            "kao", "vas", "vao", "ksp", "vsp", "aspl"]
_EXTRA = {2: [], 3: ["qrope", "krope", "kras"], 4: ["qrope", "krope", "kras", "dsq", "sink"],
          5: ["qrope", "krope", "kras", "dsq", "sink", "qstart", "kvstart"]}


def fia(q, k, v, n1, layout, *, version=2, n2=0, scale=0.125, bs=0, inner=1, lse=True, mode=0, kmode=0, vmode=0,
        out_dtype=None, out=None, **tensors):
    """The direct call (Q_S = 1; Q_S > 1 with lse=False); returns (attentionOut, softmaxLse). `out`: an
    attentionOut of the query's shape given by the caller (e.g. a HIFLOAT8 pyaclnn tensor)."""
    d = q.shape[2] // n1 if layout == "BSH" else q.shape[-1]
    out = np.zeros(q.shape, out_dtype or q.dtype) if out is None else out
    lse_out = np.zeros((q.shape[0], n1, 1, 1), np.float32) if lse else np.zeros((0,), np.float32)
    args = [q, [k], [v]] + [tensors.get(n) for n in _TENSORS + _EXTRA[version]]
    args += [n1, scale, BIG, BIG, layout, n2, 0, inner, bs, mode, lse, kmode, vmode]
    args += [0] * (version >= 4) + [0] * (version == 5) + [out, lse_out]
    r = getattr(ops, f"FusedInferAttentionScoreV{version}")(*args)
    assert d == out.shape[-1] or layout == "BSH"
    return r[0], r[1]


def ifa(q, k, v, n1, layout, *, n2=0, scale=0.125, inner=1, **t):
    out = np.zeros(q.shape, q.dtype)
    return ops.IncreFlashAttentionV4(q, [k], [v], None, t.get("mask"), t.get("askv"), None, None, None, None, None,
                                     t.get("as"), t.get("ao"), t.get("bt"), None, n1, scale, layout, n2, t.get("bs", 0),
                                     inner, out)


def case(name, layout="BNSD", b=2, n1=4, n2=2, d=32, s2=40, seed=0, offset=True, per_tensor=False, int4=False):
    """Random INT8 key/value in `layout`, a query of the dtype, per-channel scales [2, N2, 1, D] (or per tensor [2])
    as the query's dtype; plus the per-head float views the models take."""
    rng = np.random.default_rng(seed)
    q = R.cast(rng.standard_normal((b, n1, 1, d)), name)
    k8, v8 = (rng.integers(-8, 8, (b, n2, s2, d)) if int4 else rng.integers(-128, 128, (b, n2, s2, d)).astype(np.int8)
              for _ in range(2))
    shape = (2,) if per_tensor else (2, n2, 1, d)
    sc = R.cast(rng.uniform(0.002, 0.02, shape), name)
    off = R.cast(rng.uniform(-4, 4, shape), name) if offset else None

    def to(x):
        return {"BNSD": x, "BSND": x.transpose(0, 2, 1, 3),
                "BSH": x.transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[2], -1)}[layout]
    kv = (lambda x: pack_int4(np.ascontiguousarray(to(x)))) if int4 else (lambda x: np.ascontiguousarray(to(x)))
    return dict(q=np.ascontiguousarray(to(q)), k=kv(k8), v=kv(v8), sc=sc, off=off, heads=(q, k8, v8))


def params(c, which, n2i, d):
    """Key (0) / value (1) scale and offset of kv head n2i as float32 [d] vectors."""
    def pick(t):
        if t is None:
            return None
        t = np.asarray(t).astype(np.float32)
        return np.full(d, t[which], np.float32) if t.ndim == 1 else t[which, n2i, 0]
    return pick(c["sc"]), pick(c["off"])


def models(c, n1, n2, scale, iters, lens=None, int4=False):
    """(MSD model out, lse), (float64 out, lse) per [B, N1, D] / [B, N1]."""
    q, k8, v8 = c["heads"]
    b, d, g = q.shape[0], q.shape[-1], n1 // n2
    mo, ml, eo, el = (np.zeros((b, n1, d)), np.zeros((b, n1)), np.zeros((b, n1, d)), np.zeros((b, n1)))
    for bb in range(b):
        s2 = k8.shape[2] if lens is None else lens[bb]
        for n in range(n1):
            ks, ko = params(c, 0, n // g, d)
            vs, vo = params(c, 1, n // g, d)
            kk, vv = k8[bb, n // g, :s2], v8[bb, n // g, :s2]
            qq = np.asarray(q[bb, n, 0]).astype(np.float32)
            mo[bb, n], ml[bb, n] = M.msd_row(qq, kk, vv, ks, ko, vs, vo, scale, iters, int4=int4)
            eo[bb, n], el[bb, n] = M.exact_row(qq, kk, vv, ks, ko, vs, vo, scale)
    return (mo, ml), (eo, el)


def heads_of(out, layout, n1):
    out = np.asarray(out).astype(np.float64)
    if layout == "BSH":
        return out.reshape(out.shape[0], n1, -1)
    return out[:, :, 0] if layout == "BNSD" else out[:, 0]


def rel(got, want):
    return float(np.abs(got - want).max() / np.abs(want).max())


def check(got, lse, c, name, layout, n1, n2, iters, lens=None, scale=0.125, int4=False, exact=None):
    (mo, ml), (eo, el) = models(c, n1, n2, scale, iters, lens, int4)
    g = heads_of(got, layout, n1)
    want_model = R.cast(mo, name).astype(np.float64)   # the output cast of the model's float32 values
    assert rel(g, want_model) <= MODEL_BOUND[name], rel(g, want_model)
    assert rel(g, eo) <= (exact or EXACT_BOUND)[name], rel(g, eo)
    lse = np.asarray(lse)[:, :, 0, 0]
    assert np.abs(lse - ml).max() <= MODEL_LSE, np.abs(lse - ml).max()
    assert np.abs(lse - el).max() <= EXACT_LSE[iters], np.abs(lse - el).max()


# ---- Atlas A2 (run in one subprocess by test_atlas_a2) -----------------------------------------------------------

def a2_layouts_dtypes_and_pieces():
    """Every layout, both dtypes, 2 and 3 pieces (innerPrecise 1 / 0), offsets or none, per tensor."""
    for name in ("float16", "bfloat16"):
        for layout, inner, kw in (("BNSD", 1, {}), ("BSND", 0, {}), ("BSH", 1, {"offset": False}),
                                  ("BNSD", 0, {"per_tensor": True})):
            c = case(name, layout, **kw)
            o, lse = fia(c["q"], c["k"], c["v"], 4, layout, n2=2, inner=inner, **{"as": c["sc"], "ao": c["off"]})
            check(o, lse, c, name, layout, 4, 2, 3 if inner == 0 else 2)


def a2_split_versions_and_ifa():
    """key/valueAntiquantScale (the split form, [1, N2, D]) on V2..V5 give the shared form's bits; IFA V4 too."""
    c = case("float16", "BSND", seed=3)
    base, _ = fia(c["q"], c["k"], c["v"], 4, "BSND", n2=2, **{"as": c["sc"], "ao": c["off"]})
    split = {"kas": c["sc"][:1, :, 0], "vas": c["sc"][1:, :, 0], "kao": c["off"][:1, :, 0], "vao": c["off"][1:, :, 0]}
    for version in (2, 3, 4, 5):
        o, _ = fia(c["q"], c["k"], c["v"], 4, "BSND", n2=2, version=version, **split)
        assert F.bits_equal(o, base), version
    o = ifa(c["q"], c["k"], c["v"], 4, "BSND", n2=2, **{"as": c["sc"].reshape(2, -1), "ao": c["off"].reshape(2, -1)})
    assert F.bits_equal(o, base)


def a2_paged_and_lengths():
    """The paged cache ([blockNum, blockSize, H]) with per-batch kv lengths."""
    name, bs = "bfloat16", 16
    c = case(name, "BSH", s2=48, seed=5)
    rng = np.random.default_rng(6)
    b, h, per = 2, 2 * 32, 3
    ids = rng.permutation(b * per + 2).astype(np.int32)
    table = ids[:b * per].reshape(b, per)
    kc, vc = (rng.integers(-128, 128, (b * per + 2, bs, h)).astype(np.int8) for _ in range(2))
    for bb in range(b):
        for j in range(per):
            kc[table[bb, j]] = c["k"][bb, j * bs:(j + 1) * bs]
            vc[table[bb, j]] = c["v"][bb, j * bs:(j + 1) * bs]
    lens = [48, 21]
    o, lse = fia(c["q"], kc, vc, 4, "BSH", n2=2, bs=bs, bt=table, askv=lens, **{"as": c["sc"], "ao": c["off"]})
    check(o, lse, c, name, "BSH", 4, 2, 2, lens=lens)


def a2_per_token():
    """antiquantMode 1 (fp32 [2, B, S] scale / offset, S past the kv length allowed), the split [B, S] form with
    key/valueAntiquantMode 1 (the same bits), both dtypes, 2 and 3 pieces."""
    for name, inner, offset in (("float16", 1, True), ("bfloat16", 0, True), ("float16", 0, False)):
        c = case(name, "BSH", seed=21)
        q, k8, v8 = c["heads"]
        rng = np.random.default_rng(22)
        sc = rng.uniform(0.002, 0.02, (2, 2, 44)).astype(np.float32)
        off = rng.uniform(-4, 4, (2, 2, 44)).astype(np.float32) if offset else None
        o, lse = fia(c["q"], c["k"], c["v"], 4, "BSH", n2=2, inner=inner, mode=1, **{"as": sc, "ao": off})
        it = 3 if inner == 0 else 2
        got = heads_of(o, "BSH", 4)
        for b in range(2):
            for n in range(4):
                qq = np.asarray(q[b, n, 0]).astype(np.float32)
                ks, ko = sc[0, b, :40], None if off is None else off[0, b, :40]
                vs, vo = sc[1, b, :40], None if off is None else off[1, b, :40]
                mo, ml = M.msd_row_per_token(qq, k8[b, n // 2], v8[b, n // 2], ks, ko, vs, vo, 0.125, it)
                eo, el = M.exact_row_per_token(qq, k8[b, n // 2], v8[b, n // 2], ks, ko, vs, vo, 0.125)
                assert rel(got[b, n], R.cast(mo, name).astype(np.float64)) <= MODEL_BOUND[name], (b, n)
                assert np.abs(got[b, n] - eo).max() <= EXACT_BOUND[name] * np.abs(eo).max(), (b, n)
                assert abs(lse[b, n, 0, 0] - ml) <= MODEL_LSE and abs(lse[b, n, 0, 0] - el) <= EXACT_LSE[it]
        split, _ = fia(c["q"], c["k"], c["v"], 4, "BSH", n2=2, inner=inner, kmode=1, vmode=1,
                       kas=sc[0], vas=sc[1], kao=None if off is None else off[0], vao=None if off is None else off[1])
        assert F.bits_equal(split, o)


_TIES = np.array([2.5, -2.5, 3.5, -0.5, 0.5, 127.6, -200, 1.5, 2.25, -6.75, 100.5, 63.5, -64.5, 7.0, 0.0, -1.25])


def _one_key_on_ties(name, rng):
    """q [1, 1, 4 heads x 16], zero keys and values on the rounding ties for one key position of 2 kv heads
    (softmax 1, so out = v exactly)."""
    q = R.cast(rng.standard_normal((1, 1, 4 * 16)), name)
    k = np.zeros((1, 1, 2 * 16), R.np_dtype(name))
    v = R.cast(np.concatenate([_TIES, _TIES[::-1] * 0.75]).reshape(1, 1, 32), name)
    return q, k, v


def a2_post_quant_bits():
    """quantScale2 / quantOffset2 -> INT8 attentionOut, bit for bit: one key position (softmax 1, out = v exactly), the
    value's entries chosen on the rounding ties; per tensor (fp32 and, with a bf16 query, bf16 scale) and per channel
    ([1, N1, 1, D], [N1 * D]), with and without the offset; float and INT8 key/value."""
    rng = np.random.default_rng(31)
    for name in ("float16", "bfloat16"):
        q, k, v = _one_key_on_ties(name, rng)
        vv = np.asarray(v).astype(np.float32).reshape(2, 16)
        want_rows = vv[[0, 0, 1, 1]]   # query head n reads kv head n // 2
        sdt = np.float32 if name == "float16" else R.np_dtype("bfloat16")
        for qs2, qo2 in ((np.array([1.0], np.float32), None), (np.array([0.3], np.float32), np.array([2.5], np.float32)),
                         (np.array([1.0004], np.float32), None)):   # (fp16(1.0004) = 1: AscendQuant's fp16 scale)
            o, _ = fia(q, k, v, 4, "BSH", n2=2, lse=False, out_dtype=np.int8, qs2=qs2.astype(sdt),
                       qo2=None if qo2 is None else qo2.astype(sdt))
            s32 = float(np.asarray(qs2.astype(sdt)).astype(np.float32)[0])
            o32 = 0.0 if qo2 is None else float(np.asarray(qo2.astype(sdt)).astype(np.float32)[0])
            assert F.bits_equal(o, M.post_quant_tensor(want_rows, s32, o32).reshape(1, 1, 64)), (name, qs2, qo2)
        sc = rng.uniform(0.5, 3, (1, 4, 1, 16)).astype(np.float32)
        of = rng.uniform(-3, 3, (1, 4, 1, 16)).round().astype(np.float32) + 0.5
        for scale, offset in ((sc, of), (sc.reshape(-1), None)):
            o, _ = fia(q, k, v, 4, "BSH", n2=2, lse=False, out_dtype=np.int8, qs2=scale, qo2=offset)
            want = M.post_quant_channel(want_rows, sc.reshape(4, 16), None if offset is None else of.reshape(4, 16))
            assert F.bits_equal(o, want.reshape(1, 1, 64)), name
    # INT8 key/value with a per-channel post-quant: the MSD output, quantised (within one step of the model's)
    c = case("float16", "BNSD", seed=41)
    o, lse = fia(c["q"], c["k"], c["v"], 4, "BNSD", n2=2, out_dtype=np.int8, qs2=np.full((4, 32), 50, np.float32),
                 **{"as": c["sc"], "ao": c["off"]})
    (mo, _), _ = models(c, 4, 2, 0.125, 2)
    want = M.post_quant_channel(mo, np.full((2, 4, 32), 50, np.float32))
    assert np.abs(heads_of(o, "BNSD", 4) - want).max() <= 1 and np.mean(heads_of(o, "BNSD", 4) == want) > 0.95


def a2_post_quant_float_attention():
    """A float decode with the paged cache and a per-channel post-quant: within one int8 step of the float64
    attention quantised the same way (the attention itself is class c)."""
    rng = np.random.default_rng(51)
    q = R.cast(rng.standard_normal((2, 1, 4 * 32)), "bfloat16")
    k, v = (R.cast(rng.standard_normal((2, 40, 2 * 32)), "bfloat16") for _ in range(2))
    sc = rng.uniform(20, 60, (4 * 32,)).astype(np.float32)
    o, _ = fia(q, k, v, 4, "BSH", n2=2, out_dtype=np.int8, lse=False, qs2=sc.astype(R.np_dtype("bfloat16")))
    qh = np.asarray(q).astype(np.float64).reshape(2, 4, 32)
    kh, vh = (np.asarray(x).astype(np.float64).reshape(2, 40, 2, 32) for x in (k, v))
    want = np.zeros((2, 4, 32))
    for b in range(2):
        for n in range(4):
            x = 0.125 * kh[b, :, n // 2] @ qh[b, n]
            e = np.exp(x - x.max())
            want[b, n] = e @ vh[b, :, n // 2] / e.sum()
    scb = np.asarray(sc.astype(R.np_dtype("bfloat16"))).astype(np.float32).reshape(4, 32)
    w8 = M.post_quant_channel(want.astype(np.float32), scb)
    assert np.abs(o.reshape(2, 4, 32).astype(int) - w8).max() <= 1


def a2_int4():
    """INT4 key/value in INT32 words of eight (op-plugin's form): the MSD kernel's KVINT4 constants (7.49 / 14.98, 4
    pieces whatever innerPrecise), both dtypes, with and without offsets."""
    for name, layout, offset in (("float16", "BNSD", True), ("bfloat16", "BSH", False)):
        c = case(name, layout, d=64, seed=71, offset=offset, int4=True)
        o, lse = fia(c["q"], c["k"], c["v"], 4, layout, n2=2, inner=1, **{"as": c["sc"], "ao": c["off"]})
        check(o, lse, c, name, layout, 4, 2, 4, int4=True, exact=EXACT_BOUND4)
    c = case("float16", "BNSD", d=32, seed=72, int4=True)
    with pytest.raises(AclError) as e:
        fia(c["q"], c["k"], c["v"], 4, "BNSD", n2=2, **{"as": c["sc"]})
    assert e.value.code == TILING and "current dim of D is 32" in str(e.value)
    c = case("float16", "BNSD", d=64, seed=72, int4=True)
    with pytest.raises(AclError) as e:
        fia(c["q"], c["k"], c["v"], 4, "BNSD", n2=2, out_dtype=np.int8, qs2=np.ones(1, np.float32), **{"as": c["sc"]})
    assert e.value.code == TILING and "PostQuant is not supported if Input Kv Dtype is INT4" in str(e.value)


def _validation_cases():
    """(what, kwargs changes, code, message) in the tiling's order (incre_flash_attention_tiling.cpp ProcessAntiQuant
    and the check functions it calls)."""
    c = case("float16", "BNSD", seed=9)
    sc, off = c["sc"], c["off"]
    ksc, kof = sc[:1, :, 0], off[:1, :, 0]
    return [
        ("value scale missing", {"kas": ksc}, TILING, "the value's dequant scale is null, but the key's"),
        ("key scale missing", {"vas": ksc}, TILING, "the key's dequant scale is null, but the value's"),
        ("value offset missing", {"kas": ksc, "vas": ksc, "kao": kof}, TILING, "value's dequant offset is null"),
        ("key offset missing", {"kas": ksc, "vas": ksc, "vao": kof}, TILING, "the key's dequant offset is null"),
        ("offset without scale", {"kao": kof, "vao": kof}, TILING, "the key's dequant scale is null, but the key's "
                                                                   "dequant offset exist"),
        ("offset dtypes", {"kas": ksc, "vas": ksc, "kao": kof, "vao": kof.astype(np.float32)}, TILING,
         "dequant offset should have the same data type"),
        ("scale shapes", {"kas": ksc, "vas": sc[1:]}, TILING, "dequant scale should have the same shape"),
        ("modes differ", {"kas": ksc, "vas": ksc, "kmode": 1, "vmode": 0}, TILING,
         "the key's quant mode and the value's quant mode should be the same"),
        ("mode invalid", {"as": sc, "mode": 7}, TILING, "antiquantMode value:7 is invalid, it should be 0 or 1 or 2"),
        ("per-head not taken", {"as": sc, "mode": 2}, INVALID, "not supported by the emulator"),
        ("per-token dims", {"as": sc.astype(np.float32), "mode": 1}, TILING, "The dim of antiquant is illegal, When "
                                                                                "per_token mode."),
        ("per-token batch", {"as": np.ones((2, 3, 40), np.float32), "mode": 1}, TILING,
         "The 2nd dim of antiquant should be 2 instead of the current 3"),
        ("per-token length", {"as": np.ones((2, 2, 39), np.float32), "mode": 1}, TILING,
         "The 3rd dim of antiquant should be greater than or equal to 40 instead of the current 39"),
        ("per-token split length", {"kas": np.ones((2, 39), np.float32), "vas": np.ones((2, 39), np.float32),
                                    "kmode": 1, "vmode": 1}, TILING, "The 2nd dim of antiquant should be greater"),
        ("per-token dtype", {"as": np.ones((2, 2, 40), np.float16), "mode": 1}, TILING,
         "per-token mode is enabled, datatype of antiquant scale should be float32"),
        ("paged-parameter modes", {"kas": ksc, "vas": ksc, "kmode": 4, "vmode": 4}, TILING,
         "must be used in page attention scene"),
        ("key channel, value token", {"kas": ksc, "vas": ksc, "kmode": 0, "vmode": 1}, INVALID,
         "not supported by the emulator"),
        ("no scale", {"ao": off}, TILING, "KV antiquant is enabled, but the input antiquant scale is NULL"),
        ("layouts differ", {"as": sc, "ao": off.reshape(2, -1)}, TILING, "antiquant params have different layouts"),
        ("per-tensor shape", {"as": sc.reshape(-1)[:3]}, TILING, "Expect[2] When per_tensor mode"),
        ("dim 5", {"as": sc.reshape(2, 2, 1, 1, 32)}, TILING, "does not match the dim of antiquant"),
        ("per-channel shape", {"as": sc[:, :1]}, TILING, "Expect [2, 2, 1, 32] or [2, 2, 32] or [2, 64]"),
        ("scale dtype", {"as": sc.astype(np.float32)}, TILING, "illegal datatype of antiquant scale"),
        ("offset dtype", {"as": sc, "ao": off.astype(np.float32)}, TILING,
         "datatype of antiquant scale and antiquant offset should be the same"),
        # ProcessQuant2 runs before ProcessAntiQuant
        ("post-quant scale, float out", {"as": sc[:, :1], "qs2": np.ones(1, np.float32)}, TILING,
         "the output's dequant scale exist, output data type should be INT8, but now it's DT_FLOAT16"),
        ("post-quant offset, float out", {"qo2": np.ones(1, np.float32)}, TILING,
         "the output's dequant offset exist, output data type should be INT8"),
        ("int8 out, no scale", {"out_dtype": np.int8}, TILING,
         "output data type is int8, but input tensor of the output's dequant scale is null"),
        ("post-quant scale dtype", {"out_dtype": np.int8, "qs2": np.ones(1, np.float16)}, TILING,
         "the output's dequant scale type(1) should be bf16 or fp32"),
        ("post-quant offset dtype", {"out_dtype": np.int8, "qs2": np.ones(1, np.float32),
                                     "qo2": np.ones(1, R.np_dtype("bfloat16"))}, TILING,
         "the output's dequant scale dtype(0) and offset dtype(27) are not the same"),
        ("post-quant bf16 scale, fp16 query", {"out_dtype": np.int8, "qs2": np.ones(1, R.np_dtype("bfloat16"))},
         TILING, "support bf16 when inputQ type is bf16"),
        ("post-quant shape", {"out_dtype": np.int8, "qs2": np.ones((1, 4, 2, 32), np.float32)}, TILING,
         "Expect [1, 4, 1, 32] or [1, 1, 4, 32]"),
        ("post-quant offset shape", {"out_dtype": np.int8, "qs2": np.ones((4, 32), np.float32),
                                     "qo2": np.ones((3, 32), np.float32)}, TILING, "is not expected[1, 128] or [4, 32]"),
    ]


def a2_validation():
    c = case("float16", "BNSD", seed=9)
    for what, kw, code, text in _validation_cases():
        with pytest.raises(AclError) as e:
            fia(c["q"], c["k"], c["v"], 4, "BNSD", n2=2, **kw)
        assert (e.value.code, text in str(e.value)) == (code, True), (what, str(e.value))
    # scales with a float key/value: the tiling's first antiquant check
    qf = np.zeros((2, 4, 1, 32), np.float16)
    kf = np.zeros((2, 2, 40, 32), np.float16)
    with pytest.raises(AclError) as e:
        fia(qf, kf, kf, 4, "BNSD", n2=2, **{"as": c["sc"]})
    assert e.value.code == TILING and "KV antiquant is unenabled" in str(e.value)
    # the prefill path's antiquant is not taken
    q2 = np.zeros((2, 4, 3, 32), np.float16)
    with pytest.raises(AclError) as e:
        fia(q2, c["k"], c["v"], 4, "BNSD", n2=2, lse=False, **{"as": c["sc"]})
    assert e.value.code == INVALID and "prefill" in str(e.value)


def test_atlas_a2():
    F.run_on_a2("test_fia_antiquant", "T.a2_layouts_dtypes_and_pieces()\nT.a2_split_versions_and_ifa()\n"
                "T.a2_paged_and_lengths()\nT.a2_per_token()\nT.a2_post_quant_bits()\n"
                "T.a2_post_quant_float_attention()\nT.a2_int4()\nT.a2_validation()")


def dequant_950(x, off, sc, name):
    """arch35 vf_antiquant_w8.h / _w4.h: int -> the query's dtype (exact), + offset, * scale, each rounded to nearest
    even in that dtype (the inputs here keep every sum exact in float32, so R.cast's float32 path rounds once)."""
    f = np.float64
    y = x.astype(f) if off is None else R.cast(x.astype(f) + np.asarray(off).astype(f), name).astype(f)
    return R.cast(y * np.asarray(sc).astype(f), name)


def pack_int4(x):
    """[..., D] int values in [-8, 7] as INT32 words of eight (element 8j + q in bits 4q .. 4q + 3)."""
    u = (x.astype(np.int64) & 0xF).reshape(*x.shape[:-1], -1, 8)
    return (u << (4 * np.arange(8))).sum(-1).astype(np.uint32).view(np.int32)


def test_ascend_950_dequantises_int8_and_int4():
    """The Ascend 950 (V5): INT8 and INT4-in-INT32 key/value dequantised to the query's dtype ahead of the float
    kernel. One key position (softmax 1) makes attentionOut the dequantised value itself: bit for bit against the
    vendor's steps; 40 positions against the float64 attention of the dequantised values (class c, the float
    kernel's bounds: measured over 8 seeds fp16 5.4e-4, bf16 3.0e-3)."""
    rng = np.random.default_rng(61)
    for name in ("float16", "bfloat16"):
        q = R.cast(rng.standard_normal((1, 4, 1, 32)), name)
        sc = R.cast(rng.uniform(0.01, 0.1, (2, 2, 1, 32)), name)
        off = R.cast(np.round(rng.uniform(-4, 4, (2, 2, 1, 32)) * 256) / 256, name)
        for packed in (False, True):
            lo, hi = (-8, 8) if packed else (-128, 128)
            k8, v8 = (rng.integers(lo, hi, (1, 2, 1, 32)) for _ in range(2))
            k, v = (pack_int4(x) if packed else x.astype(np.int8) for x in (k8, v8))
            o, _ = fia(q, k, v, 4, "BNSD", n2=2, version=5, lse=False, **{"as": sc, "ao": off})
            want = dequant_950(v8[0], off[1], sc[1], name)[[0, 0, 1, 1]].reshape(1, 4, 1, 32)
            assert F.bits_equal(o, want), (name, packed)
            split, _ = fia(q, k, v, 4, "BNSD", n2=2, version=5, lse=False, kas=sc[0].reshape(1, -1),
                           vas=sc[1].reshape(1, -1), kao=off[0].reshape(1, -1), vao=off[1].reshape(1, -1))
            assert F.bits_equal(split, want), (name, packed)
        k8, v8 = (rng.integers(-128, 128, (1, 2, 40, 32)) for _ in range(2))
        o, _ = fia(q, k8.astype(np.int8), v8.astype(np.int8), 4, "BNSD", n2=2, version=5, lse=False,
                   **{"as": sc, "ao": off})
        kd, vd = (dequant_950(x[0], off[w], sc[w], name).astype(np.float64) for w, x in ((0, k8), (1, v8)))
        qf = np.asarray(q).astype(np.float64)[0, :, 0]
        want = np.stack([IA.attend(qf[n:n + 1], kd[n // 2], vd[n // 2], 0.125)[0][0] for n in range(4)])
        got = np.asarray(o).astype(np.float64)[0, :, 0]
        assert np.abs(got - want).max() / np.abs(want).max() <= {"float16": 1e-3, "bfloat16": 6e-3}[name]


def test_ascend_950_refusals():
    """What the emulator does not take on the Ascend 950: the per-token antiquant (161002). (The prefill path's
    post-quant output is taken on the 950 -- test_ascend_950_post_quant_prefill -- and refused on Atlas A2.)"""
    c = case("float16", "BNSD")
    with pytest.raises(AclError) as e:
        fia(c["q"], c["k"], c["v"], 4, "BNSD", n2=2, version=5, mode=1, **{"as": np.ones((2, 2, 40), np.float32)})
    assert e.value.code == INVALID and "not supported by the emulator" in str(e.value)
    F.run_on_a2("test_fia_antiquant", "T.a2_prefill_post_quant_refused()")


def a2_prefill_post_quant_refused():
    qf = np.zeros((2, 3, 128), np.float16)   # Q_S 3: the prefill path (PFA's on Atlas A2: not taken)
    with pytest.raises(AclError) as e:
        fia(qf, np.zeros((2, 4, 64), np.float16), np.zeros((2, 4, 64), np.float16), 4, "BSH", n2=2, version=4,
            out_dtype=np.int8, qs2=np.ones(1, np.float32))
    assert e.value.code == INVALID and "in the decode path only" in str(e.value)


def post_quant_950(out32, scale, offset=None):
    """arch35 vf_post_quant.h: fp32 out * scale (+ offset), CAST_RINT to fp16, CAST_RINT to int8 (saturated)."""
    v = (np.asarray(out32, np.float32) * np.asarray(scale, np.float32)).astype(np.float32)
    if offset is not None:
        v = (v + np.asarray(offset, np.float32)).astype(np.float32)
    return np.clip(np.rint(v.astype(np.float16).astype(np.float64)), -128, 127).astype(np.int8)


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's step")
def test_ascend_950_post_quant_bits():
    """quantScale2 / quantOffset2 -> INT8 attentionOut on the Ascend 950 (V5), bit for bit: one key position (softmax
    1, out = v exactly), the value's entries on the rounding ties (fp32 scale kept: 1.0004 is not fp16's 1); per
    tensor and per channel, with and without the offset, fp16 and bf16 queries."""
    rng = np.random.default_rng(33)
    for name in ("float16", "bfloat16"):
        q, k, v = _one_key_on_ties(name, rng)
        rows = np.asarray(v).astype(np.float32).reshape(2, 16)[[0, 0, 1, 1]]   # query head n reads kv head n // 2
        sdt = np.float32 if name == "float16" else R.np_dtype("bfloat16")
        for qs2, qo2 in ((np.array([1.0], np.float32), None), (np.array([0.3], np.float32), np.array([2.5], np.float32)),
                         (np.array([1.0004], np.float32), None)):
            o, _ = fia(q, k, v, 4, "BSH", n2=2, lse=False, out_dtype=np.int8, version=5, qs2=qs2.astype(sdt),
                       qo2=None if qo2 is None else qo2.astype(sdt))
            s32 = np.asarray(qs2.astype(sdt)).astype(np.float32)[0]
            o32 = None if qo2 is None else np.asarray(qo2.astype(sdt)).astype(np.float32)[0]
            assert F.bits_equal(o, post_quant_950(rows, s32, o32).reshape(1, 1, 64)), (name, qs2, qo2)
        sc = rng.uniform(0.5, 3, (1, 4, 1, 16)).astype(np.float32)
        of = rng.uniform(-3, 3, (1, 4, 1, 16)).round().astype(np.float32) + 0.5
        for scale, offset in ((sc, of), (sc.reshape(-1), None), (np.ones_like(sc), None)):   # ones: ties to even
            o, _ = fia(q, k, v, 4, "BSH", n2=2, lse=False, out_dtype=np.int8, version=5, qs2=scale, qo2=offset)
            want = post_quant_950(rows, scale.reshape(4, 16), None if offset is None else of.reshape(4, 16))
            assert F.bits_equal(o, want.reshape(1, 1, 64)), name


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's step")
def test_ascend_950_post_quant_prefill():
    """The Ascend 950's FIA prefill path (Q_S > 1; arch35 flash_attention_score_infer.h runs vf_post_quant.h's step on
    every query row) with quantScale2 / quantOffset2 -> INT8 attentionOut: one key position (softmax 1, every query
    row's out = v exactly) bit for bit on the ties, per tensor and per channel, BSH and BNSD; then 40 key positions
    within one int8 step of the float64 attention quantised the same way (the attention itself is class c)."""
    rng = np.random.default_rng(35)
    for name in ("float16", "bfloat16"):
        _, k, v = _one_key_on_ties(name, rng)
        q = R.cast(rng.standard_normal((1, 3, 4 * 16)), name)   # Q_S 3
        rows = np.asarray(v).astype(np.float32).reshape(2, 16)[[0, 0, 1, 1]]   # query head n reads kv head n // 2
        sc = rng.uniform(0.5, 3, (4, 16)).astype(np.float32)
        of = rng.uniform(-3, 3, (4, 16)).round().astype(np.float32) + 0.5
        for qs2, qo2, s32, o32 in ((np.array([0.3], np.float32), np.array([2.5], np.float32), 0.3, 2.5),
                                   (sc.reshape(-1), of.reshape(-1), sc, of), (sc.reshape(-1), None, sc, None)):
            o, _ = fia(q, k, v, 4, "BSH", n2=2, lse=False, out_dtype=np.int8, version=5, qs2=qs2, qo2=qo2)
            want = post_quant_950(rows, np.float32(s32) if np.ndim(s32) == 0 else s32, o32)   # [4 heads, 16]
            assert F.bits_equal(o, np.broadcast_to(want.reshape(1, 1, 64), (1, 3, 64))), (name, np.ndim(s32))
            qn = np.ascontiguousarray(np.asarray(q).reshape(1, 3, 4, 16).transpose(0, 2, 1, 3))
            kn, vn = (np.ascontiguousarray(np.asarray(x).reshape(1, 1, 2, 16).transpose(0, 2, 1, 3)) for x in (k, v))
            o, _ = fia(qn, kn, vn, 4, "BNSD", n2=2, lse=False, out_dtype=np.int8, version=5, qs2=qs2, qo2=qo2)
            assert F.bits_equal(o, np.broadcast_to(want.reshape(1, 4, 1, 16), (1, 4, 3, 16))), (name, "BNSD")
    q = R.cast(rng.standard_normal((2, 4, 5, 32)), "float16")
    k, v = (R.cast(rng.standard_normal((2, 2, 40, 32)), "float16") for _ in range(2))
    sc = rng.uniform(20, 60, (4 * 32,)).astype(np.float32)
    o, _ = fia(q, k, v, 4, "BNSD", n2=2, lse=False, out_dtype=np.int8, version=5, qs2=sc)
    qh, kh, vh = (np.asarray(x).astype(np.float64) for x in (q, k, v))
    want = np.zeros((2, 4, 5, 32))
    for b in range(2):
        for n in range(4):
            x = 0.125 * qh[b, n] @ kh[b, n // 2].T
            e = np.exp(x - x.max(-1, keepdims=True))
            want[b, n] = e @ vh[b, n // 2] / e.sum(-1, keepdims=True)
    w8 = post_quant_950(want.astype(np.float32), sc.reshape(1, 4, 1, 32))
    assert np.abs(np.asarray(o).astype(int) - w8).max() <= 1 and np.mean(np.asarray(o) == w8) > 0.9


def _fp8_hif8_out(y, shape):
    return np.zeros(shape, ml_dtypes.float8_e4m3fn) if y == "float8_e4m3fn" else pyaclnn.zeros(shape, "hifloat8")


def _codes(o):
    return (o.numpy() if isinstance(o, pyaclnn.Tensor) else np.asarray(o)).view(np.uint8)


def post_quant_950_8bit(out32, scale, offset, y):
    """arch35 vf_post_quant_common.h CastToOutputFromMul / FromAdd for FLOAT8_E4M3FN / HIFLOAT8: fp32 out * scale (+
    offset), then cast straight from fp32: CAST_RINT (castTraitP0) / CAST_HYBRID (castTraitP1), NO_SAT."""
    v = (np.asarray(out32, np.float32) * np.asarray(scale, np.float32)).astype(np.float32)
    if offset is not None:
        v = (v + np.asarray(offset, np.float32)).astype(np.float32)
    if y == "hifloat8":
        return FMT.encode_hif8(v, FMT.HYBRID).astype(np.uint8)
    return FMT.encode_float(FMT.E4M3FN, v, FMT.RINT).astype(np.uint8)


_TIES8 = np.array([1.0625, 1.1875, -2.125, 0.3, 3.75, -100.5, 200.0, 440.0, 0.0078125, -0.01, 13.5, 0.1875, -7.25,
                   2.5, 9.0, -0.6875])


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's step")
def test_ascend_950_post_quant_fp8_hif8():
    """FLOAT8_E4M3FN and HIFLOAT8 attentionOut from quantScale2 / quantOffset2 on the Ascend 950 (post_quant_checker.cpp
    CheckFeatureAttenOut: INT8, FLOAT8_E4M3FN, HIFLOAT8), bit for bit against the NumPy number formats: one key
    position (softmax 1, out = v exactly) with values on E4M3FN's ties, per tensor and per channel, with and without
    the offset, decode (Q_S 1) and prefill (Q_S 3); then the checks: FLOAT8_E5M2 is not an attentionOut dtype
    (161002), no quantScale2 (561002), INT8 key/value with an FP8 output (CheckFeatureOutputEqual, 561002)."""
    rng = np.random.default_rng(37)
    for name in ("float16", "bfloat16"):
        k = np.zeros((1, 1, 2 * 16), R.np_dtype(name))
        v = R.cast(np.concatenate([_TIES8, _TIES8[::-1] * -0.5]).reshape(1, 1, 32), name)
        rows = np.asarray(v).astype(np.float32).reshape(2, 16)[[0, 0, 1, 1]]   # query head n reads kv head n // 2
        sc = rng.uniform(0.5, 2, (4, 16)).astype(np.float32)
        of = rng.uniform(-3, 3, (4, 16)).round().astype(np.float32) + 0.5
        for y in ("float8_e4m3fn", "hifloat8"):
            for qs2, qo2, s32, o32 in ((np.array([1.0], np.float32), None, np.float32(1), None),
                                       (np.array([0.75], np.float32), np.array([0.5], np.float32), np.float32(0.75),
                                        np.float32(0.5)),
                                       (sc.reshape(-1), of.reshape(-1), sc, of), (sc.reshape(-1), None, sc, None)):
                want = post_quant_950_8bit(rows, s32, o32, y).reshape(1, 1, 64)
                for s1 in (1, 3):
                    q = R.cast(rng.standard_normal((1, s1, 4 * 16)), name)
                    o, _ = fia(q, k, v, 4, "BSH", n2=2, lse=False, version=5, out=_fp8_hif8_out(y, q.shape),
                               qs2=qs2, qo2=qo2)
                    assert F.bits_equal(_codes(o), np.broadcast_to(want, (1, s1, 64))), (name, y, s1, np.ndim(s32))
    q = np.zeros((1, 1, 64), np.float16)
    k16 = np.zeros((1, 1, 32), np.float16)
    with pytest.raises(AclError) as e:
        fia(q, k16, k16, 4, "BSH", n2=2, lse=False, version=5, out=np.zeros(q.shape, ml_dtypes.float8_e5m2),
            qs2=np.ones(1, np.float32))
    assert e.value.code == INVALID and "FLOAT8_E5M2" in str(e.value)
    with pytest.raises(AclError) as e:
        fia(q, k16, k16, 4, "BSH", n2=2, lse=False, version=5, out=_fp8_hif8_out("hifloat8", q.shape))
    assert e.value.code == TILING and "quant_scale2 cannot be empty" in str(e.value)
    c = case("float16", "BNSD")
    with pytest.raises(AclError) as e:
        fia(c["q"], c["k"], c["v"], 4, "BNSD", n2=2, version=5, lse=False, out=_fp8_hif8_out("float8_e4m3fn", c["q"].shape),
            qs2=np.ones(1, np.float32), **{"as": c["sc"], "ao": c["off"]})
    assert e.value.code == TILING and "the same as the dtype of key and value" in str(e.value)


_PQ = "Parameter quant_scale2 of FusedInferAttentionScore has incorrect"


def _pq_950_cases():
    """(name, fia() keyword arguments, message words) for the Ascend 950's post_quant_checker.cpp (835b830), each
    a 561002 from the BSH decode call of _post_quant_950_base (N1 4, D 16, fp16 query, INT8 attentionOut unless
    given); the 'then' cases break two checks and expect the first's error (FIAChecker::Process's phase order:
    single parameter, existence, cross feature, multi parameter)."""
    f32, f16, bf16 = np.float32, np.float16, R.np_dtype("bfloat16")
    return [
        # CheckSingleDtype (also with a float attentionOut: it runs whether or not post-quant is on)
        ("scale dtype", dict(qs2=np.ones(1, f16)), _PQ + " dtype DT_FLOAT16. Reason: The dtype of quant_scale2 must be "
                                                   "BFLOAT16 or FLOAT32."),
        ("scale dtype, float out", dict(qs2=np.ones(1, f16), out_dtype=np.float16), "The dtype of quant_scale2 must be "
                                                                                     "BFLOAT16 or FLOAT32"),
        ("offset dtype", dict(qs2=np.ones(1, f32), qo2=np.ones(1, f16)), "Parameter quant_offset2 of "
         "FusedInferAttentionScore has incorrect dtype DT_FLOAT16. Reason: The dtype of quant_offset2 must be BFLOAT16 "
         "or FLOAT32."),
        ("scale then offset dtype", dict(qs2=np.ones(1, f16), qo2=np.ones(1, f16)), "dtype of quant_scale2 must be"),
        ("offset dtype then no scale", dict(qo2=np.ones(1, f16)), "The dtype of quant_offset2 must be BFLOAT16"),
        # CheckExistenceQuantScale2
        ("no scale", dict(), _PQ + " value empty. Reason: In post quant scenario, quant_scale2 cannot be empty."),
        ("empty scale", dict(qs2=np.ones(0, f32)), _PQ + " shape size 0. Reason: Shape size of quant_scale2 must be "
                                                        "positive in post quant scenario!"),
        ("empty bf16 scale then query dtype", dict(qs2=np.ones(0, bf16)), "Shape size of quant_scale2 must be positive"),
        # CheckFeatureQueryDType, CheckFeatureLayout
        ("bf16 scale, fp16 query", dict(qs2=np.ones(1, bf16)), _PQ + " dtype DT_BF16. Reason: When the dtype of query "
         "is not BFLOAT16, the dtype of quant_scale2 must be FLOAT32."),
        ("query dtype then layout", dict(qs2=np.ones(3, bf16)), "the dtype of quant_scale2 must be FLOAT32"),
        ("1-D neither [1] nor N1 * D", dict(qs2=np.ones(3, f32)), _PQ + " shape size 3. Reason: For post quant "
         "per-tensor, the shape size of quantScale2 should be equal to [1]."),
        ("2-D of 60", dict(qs2=np.ones((4, 15), f32)), _PQ + " shape size 60. Reason: In post quant per-channel "
         "scenario, when layout is BSH, the total element count of quantScale2 should be numHeads(4) * vHeadDim(16)."),
        ("2-D [1, 1]", dict(qs2=np.ones((1, 1), f32)), "the total element count of quantScale2 should be numHeads(4)"),
        ("layout then offset dtype", dict(qs2=np.ones(3, f32), qo2=np.ones(3, bf16)), "should be equal to [1]"),
        # CheckMultiParaQuantOffset2
        ("offset dtype differs", dict(qs2=np.ones(64, f32), qo2=np.ones(64, bf16)), "Parameter quant_offset2 of "
         "FusedInferAttentionScore has incorrect dtype DT_BF16. Reason: The dtype of QuantScale2 and quantOffset2 must "
         "be the same."),
        ("offset dims differ", dict(qs2=np.ones(64, f32), qo2=np.ones((4, 16), f32)), "Parameters quant_scale2 and "
         "quant_offset2 of FusedInferAttentionScore have incorrect shape dims 2D and 1D. Reason: The shape dims of "
         "quant_scale2 and quant_offset2 must be the same."),
        ("offset size differs", dict(qs2=np.ones(64, f32), qo2=np.ones(1, f32)), "Parameters quant_scale2 and "
         "quant_offset2 of FusedInferAttentionScore have incorrect shape sizes 64, 1. Reason: The shape sizes of "
         "quant_scale2 and quant_offset2 must be the same."),
        ("offset dtype then dims", dict(qs2=np.ones(64, f32), qo2=np.ones((4, 16), bf16)), "The dtype of QuantScale2 "
                                                                                          "and quantOffset2 must"),
        ("offset dims then size", dict(qs2=np.ones(64, f32), qo2=np.ones((1, 1), f32)), "The shape dims of "
                                                                                      "quant_scale2 and quant_offset2"),
    ]


def _post_quant_950_base(seed=39):
    rng = np.random.default_rng(seed)
    q, k, v = _one_key_on_ties("float16", rng)
    return q, k, v, np.asarray(v).astype(np.float32).reshape(2, 16)[[0, 0, 1, 1]]   # query head n reads kv head n // 2


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's checks")
@pytest.mark.parametrize("name,kw,words", _pq_950_cases(), ids=[c[0] for c in _pq_950_cases()])
def test_ascend_950_post_quant_checks(name, kw, words):
    q, k, v, _ = _post_quant_950_base()
    kw = dict(kw)
    kw.setdefault("out_dtype", np.int8)
    with pytest.raises(AclError) as e:
        fia(q, k, v, 4, "BSH", n2=2, lse=False, version=5, **kw)
    assert e.value.code == TILING and words in str(e.value), (name, str(e.value)[-400:])


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's checks")
def test_ascend_950_post_quant_checks_layouts_and_antiquant():
    """CheckFeatureLayout outside BSH / BSND / BNSD / BNSD_BSND (TND, BSND_BNSD: only [1] or exactly [N1, D]);
    CheckFeatureOutputEqual with INT8 key/value after the layout check and before the offset's checks."""
    q, k, v, _ = _post_quant_950_base()
    qt = np.ascontiguousarray(np.broadcast_to(np.asarray(q).reshape(1, 4, 16), (2, 4, 16)))   # TND: T 2, B 1
    kt, vt = (np.asarray(x).reshape(1, 2, 16) for x in (k, v))
    for qs2, words in ((np.ones(64, np.float32), "the shape size of quantScale2 should be equal to [1]"),
                       (np.ones((1, 64), np.float32), "Parameter quant_scale2 of FusedInferAttentionScore has incorrect "
                        "shape [1, 64]. Reason: In post quant per-channel scenario, when layout is TND, the shape of "
                        "quantScale2 should be [numHeads(4), vHeadDim(16)]."),
                       (np.ones((2, 32), np.float32), "when layout is TND, the shape of quantScale2 should be")):
        with pytest.raises(AclError) as e:
            fia(qt, kt, vt, 4, "TND", n2=2, lse=False, version=5, out_dtype=np.int8, asl=[2], askv=[1], qs2=qs2)
        assert e.value.code == TILING and words in str(e.value), str(e.value)[-400:]
    qb = np.asarray(q).reshape(1, 1, 4, 16)
    with pytest.raises(AclError) as e:
        fia(qb, np.asarray(k).reshape(1, 1, 2, 16), np.asarray(v).reshape(1, 1, 2, 16), 4, "BSND_BNSD", n2=2, lse=False,
            version=5, out=np.zeros((1, 4, 1, 16), np.int8), qs2=np.ones(64, np.float32))
    assert e.value.code == TILING and "should be equal to [1]" in str(e.value)
    c = case("float16", "BNSD")
    aq = {"as": c["sc"], "ao": c["off"]}
    fp8 = _fp8_hif8_out("float8_e4m3fn", c["q"].shape)
    for kw, words in ((dict(qs2=np.ones(3, np.float32)), "should be equal to [1]"),   # layout, then output equal
                      (dict(qs2=np.ones(1, np.float32), qo2=np.ones((1, 1), np.float32)),
                       "Parameter attention_out of FusedInferAttentionScore has incorrect dtype DT_FLOAT8_E4M3FN. "
                       "Reason: When quantScale2 is not empty, the dtype of attenOut must be the same as the dtype of "
                       "key and value.")):   # output equal, then the offset's dims
        with pytest.raises(AclError) as e:
            fia(c["q"], c["k"], c["v"], 4, "BNSD", n2=2, version=5, lse=False, out=fp8, **kw, **aq)
        assert e.value.code == TILING and words in str(e.value), str(e.value)[-400:]


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's checks")
def test_ascend_950_post_quant_shapes_taken():
    """Every quantScale2 shape the 950's CheckFeatureLayout takes, against post_quant_950: per tensor [1]; per channel
    any shape of N1 * D elements in BSH / BSND / BNSD / BNSD_BSND ([N1 * D], [N1, D], [2, 32], [N1, 1, D], [1, N1, 1,
    D], read flat as head n, element d), exactly [N1, D] in TND and BSND_BNSD; an offset of the scale's dims and size
    (its own shape); and a float attentionOut with a quantScale2 (post-quant off: the float attention, the scale
    unread)."""
    q, k, v, rows = _post_quant_950_base()
    rng = np.random.default_rng(43)
    sc = rng.uniform(0.5, 3, (4, 16)).astype(np.float32)
    of = rng.uniform(-3, 3, (4, 16)).round().astype(np.float32) + 0.5
    for shape in ((64,), (4, 16), (2, 32), (4, 1, 16), (1, 4, 1, 16)):
        for off in (None, of.reshape(shape[::-1]) if len(shape) == 2 else of.reshape(shape)):
            o, _ = fia(q, k, v, 4, "BSH", n2=2, lse=False, out_dtype=np.int8, version=5, qs2=sc.reshape(shape),
                       qo2=off)
            want = post_quant_950(rows, sc, None if off is None else off.reshape(4, 16))
            assert F.bits_equal(o, want.reshape(1, 1, 64)), shape
    o, _ = fia(q, k, v, 4, "BSH", n2=2, lse=False, out_dtype=np.int8, version=5, qs2=np.array([0.75], np.float32),
               qo2=np.array([1.5], np.float32))
    assert F.bits_equal(o, post_quant_950(rows, np.float32(0.75), np.float32(1.5)).reshape(1, 1, 64))
    want = post_quant_950(rows, sc, of)   # [4 heads, 16]
    qb, kb, vb = (np.asarray(x).reshape(1, 1, -1, 16) for x in (q, k, v))
    o, _ = fia(np.ascontiguousarray(qb.transpose(0, 2, 1, 3)), np.ascontiguousarray(kb.transpose(0, 2, 1, 3)),
               np.ascontiguousarray(vb.transpose(0, 2, 1, 3)), 4, "BNSD_BSND", n2=2, lse=False, version=5,
               out=np.zeros((1, 1, 4, 16), np.int8), qs2=sc.reshape(-1), qo2=of.reshape(-1))
    assert F.bits_equal(o, want.reshape(1, 1, 4, 16))
    o, _ = fia(qb, kb, vb, 4, "BSND_BNSD", n2=2, lse=False, version=5, out=np.zeros((1, 4, 1, 16), np.int8), qs2=sc,
               qo2=of)
    assert F.bits_equal(o, want.reshape(1, 4, 1, 16))
    qt = np.ascontiguousarray(np.broadcast_to(np.asarray(q).reshape(1, 4, 16), (2, 4, 16)))
    o, _ = fia(qt, np.asarray(k).reshape(1, 2, 16), np.asarray(v).reshape(1, 2, 16), 4, "TND", n2=2, lse=False,
               version=5, out_dtype=np.int8, asl=[2], askv=[1], qs2=sc, qo2=of)
    assert F.bits_equal(o, np.broadcast_to(want.reshape(1, 4, 16), (2, 4, 16)))
    o, _ = fia(qt, np.asarray(k).reshape(1, 2, 16), np.asarray(v).reshape(1, 2, 16), 4, "TND", n2=2, lse=False,
               version=5, out_dtype=np.int8, asl=[2], askv=[1], qs2=np.array([0.75], np.float32))
    assert F.bits_equal(o, np.broadcast_to(post_quant_950(rows, np.float32(0.75)).reshape(1, 4, 16), (2, 4, 16)))
    o, _ = fia(q, k, v, 4, "BSH", n2=2, lse=False, version=5, qs2=sc, qo2=of)
    assert F.bits_equal(o, np.asarray(v)[:, :, np.r_[0:16, 0:16, 16:32, 16:32]])   # out = v, the scale unread


# ---- torch_npu --------------------------------------------------------------------------------------------------

_TORCH_BODY = """
def calls():
    s = SPEC
    q, k, v, sc, off = (T(dec(s[x])).npu() for x in ("q", "k", "v", "sc", "off"))
    o, l = torch_npu.npu_fused_infer_attention_score(q, k, v, num_heads=4, num_key_value_heads=2, input_layout="BNSD",
        scale=0.125, antiquant_scale=sc, antiquant_offset=off, softmax_lse_flag=True, inner_precise=1)
    o2, _ = torch_npu.npu_fused_infer_attention_score(q, k, v, num_heads=4, num_key_value_heads=2,
        input_layout="BNSD", scale=0.125, key_antiquant_scale=sc[:1, :, 0], value_antiquant_scale=sc[1:, :, 0],
        key_antiquant_offset=off[:1, :, 0], value_antiquant_offset=off[1:, :, 0], inner_precise=1)
    o3 = torch_npu.npu_incre_flash_attention(q, k, v, num_heads=4, num_key_value_heads=2, input_layout="BNSD",
        scale_value=0.125, antiquant_scale=sc, antiquant_offset=off)
    o4, _ = torch_npu.npu_fused_infer_attention_score(q, k, v, num_heads=4, num_key_value_heads=2,
        input_layout="BNSD", scale=0.125, antiquant_scale=sc, antiquant_offset=off, inner_precise=1,
        quant_scale2=torch.full((4 * 32,), 50.0).npu(), quant_offset2=torch.full((4 * 32,), 0.5).npu())
    return {"o": enc(to_np(o)), "l": enc(to_np(l)), "o2": enc(to_np(o2)), "o3": enc(to_np(o3)), "o4": enc(to_np(o4))}
run("calls", calls)
"""


def test_torch_npu_calls_match_the_direct_call():
    """npu_fused_infer_attention_score with antiquant_scale / antiquant_offset and with the split
    key_/value_antiquant_scale, and npu_incre_flash_attention, on the Atlas A2 emulator: the direct call's bits."""
    c = case("float16", "BNSD", seed=13)
    res = torch_npu_run(_TORCH_BODY, {x: enc(c[x]) for x in ("q", "k", "v", "sc", "off")}, soc="Ascend910B4")
    assert "error" not in res["calls"], res["calls"]
    r = res["calls"]   # (the direct call runs in an Atlas A2 child: the suite's SoC is the 950)
    F.run_on_a2("test_fia_antiquant", "T.a2_compare_torch(" + repr({k: r[k] for k in ("o", "l", "o2", "o3", "o4")}) + ")")


def a2_compare_torch(r):
    c = case("float16", "BNSD", seed=13)
    o, lse = fia(c["q"], c["k"], c["v"], 4, "BNSD", n2=2, **{"as": c["sc"], "ao": c["off"]})
    assert F.bits_equal(dec(r["o"]), o) and F.bits_equal(dec(r["l"]), lse)
    assert F.bits_equal(dec(r["o2"]), o) and F.bits_equal(dec(r["o3"]), o)
    o4, _ = fia(c["q"], c["k"], c["v"], 4, "BNSD", n2=2, lse=False, out_dtype=np.int8, qs2=np.full(128, 50, np.float32),
                qo2=np.full(128, 0.5, np.float32), **{"as": c["sc"], "ao": c["off"]})
    assert F.bits_equal(dec(r["o4"]), o4)


_TORCH_950_BODY = """
def calls():
    s = SPEC
    q, k, v = (T(dec(s[x])).npu() for x in ("q", "k", "v"))
    o1, _ = torch_npu.npu_fused_infer_attention_score(q, k, v, num_heads=4, num_key_value_heads=2, input_layout="BNSD",
        scale=0.125, quant_scale2=torch.full((4 * 32,), 30.0).npu(), quant_offset2=torch.full((4 * 32,), 0.5).npu())
    o2 = torch_npu.npu_fused_infer_attention_score_v2(q, k, v, num_query_heads=4, num_key_value_heads=2,
        input_layout="BNSD", softmax_scale=0.125, quant_scale_out=torch.tensor([40.0]).npu(), out_dtype=torch.int8)[0]
    return {"o1": enc(to_np(o1)), "o2": enc(to_np(o2))}
run("calls", calls)
"""


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's step")
def test_torch_npu_post_quant_on_950():
    """npu_fused_infer_attention_score (quant_scale2 / quant_offset2 per channel) and npu_fused_infer_attention_score_v2
    (quant_scale_out per tensor, out_dtype int8) on the Ascend 950, decode: the direct V5 call's bits."""
    c = case("float16", "BNSD", seed=17)
    q = np.asarray(c["q"]).astype(np.float16)
    k, v = ((np.asarray(c[x]).astype(np.float32) * 0.02).astype(np.float16) for x in ("k", "v"))
    r = torch_npu_run(_TORCH_950_BODY, {"q": enc(q), "k": enc(k), "v": enc(v)}, soc="Ascend950PR")["calls"]
    assert "error" not in r, r
    o1, _ = fia(q, k, v, 4, "BNSD", n2=2, version=5, lse=False, out_dtype=np.int8, qs2=np.full(128, 30, np.float32),
                qo2=np.full(128, 0.5, np.float32))
    o2, _ = fia(q, k, v, 4, "BNSD", n2=2, version=5, lse=False, out_dtype=np.int8, qs2=np.array([40.0], np.float32))
    assert F.bits_equal(dec(r["o1"]), o1) and F.bits_equal(dec(r["o2"]), o2)
    assert np.abs(np.asarray(o2).astype(np.int64)).max() > 10   # not all zeros / saturation
