"""aclnnFusedInferAttentionScoreV2 / V3 / V4 / V5, aclnnIncreFlashAttentionV4 and aclnnPromptFlashAttentionV3
(native_stubs/src/ops/attention/fused_infer_attention.toml): the inference attention of hicann/ops-transformer
attention/fused_infer_attention_score (incre_flash_attention, prompt_flash_attention) on FlashAttentionScore's
forward kernel -- decode and prefill, BSH / BSND / BNSD / TND, GQA, actual sequence lengths, sparse modes 0-4, the
paged KV cache (both cache forms) and softmaxLse -- against the float64 model of tests/reference/infer_attention.py
(written from the vendor docs), class c with the measured figures below; the docs' example; the tiling's
validation codes in its order; a block id past the cache as a device fault; IFA / PFA on Atlas A2 (one
subprocess) with FIA's bits; and torch_npu's npu_fused_infer_attention_score (V2 on Atlas A2 at the emulator's CANN
version, V5 on Ascend 950), npu_fused_infer_attention_score_v2 (V4 / V5) and, on Atlas A2,
npu_incre_flash_attention / npu_prompt_flash_attention in one child per SoC, compared bit for bit with the direct
call."""
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
BIG = 2147483647
DTYPES = ["float16", "bfloat16"]
# max |got - float64| / max |float64| over the cases below (measured: fp16 4.1e-4, bf16 2.8e-3); softmaxLse, fp32
# from the fp32 scores: absolute (measured 6.1e-7 for both)
BOUND = {"float16": 1e-3, "bfloat16": 6e-3}
LSE_BOUND = {"float16": 4e-6, "bfloat16": 4e-6}
CAUSAL = np.triu(np.ones((2048, 2048), bool), 1)   # the compressed mask sparse modes 2-4 read

_TENSORS = ["pse", "mask", "asl", "askv", "deq1", "qs1", "deq2", "qs2", "qo2", "as", "ao", "bt", "qps", "kvps", "kas",
            "kao", "vas", "vao", "ksp", "vsp", "aspl"]
_BY_VERSION = {2: [], 3: ["qrope", "krope", "kras"], 4: ["qrope", "krope", "kras", "dsq", "sink"],
               5: ["qrope", "krope", "kras", "dsq", "sink", "qstart", "kvstart"]}


def fia(q, k, v, n1, layout, *, version=4, n2=0, scale=None, bs=0, sparse=0, inner=0, pre=BIG, nxt=BIG, lse=True,
        out=None, lse_out=None, pse_type=0, **tensors):
    """The direct call with torch_npu's defaults; returns (attentionOut, softmaxLse)."""
    d = q.shape[2] // n1 if layout in ("BSH", "SBH") else q.shape[-1]
    dv = d if v.shape[-1] == k.shape[-1] else v.shape[-1] * d // k.shape[-1]
    if out is None:
        shape = list(q.shape)
        shape[-1] = n1 * dv if layout == "BSH" else dv
        out = np.zeros(shape, q.dtype)
    if lse_out is None:
        b, s1 = q.shape[0], q.shape[2] if layout == "BNSD" else q.shape[1]
        lse_out = np.zeros((q.shape[0], n1, 1) if layout == "TND" else (b, n1, s1, 1), np.float32) if lse else \
            np.zeros((0,), np.float32)
    args = [q, [k] if not isinstance(k, list) else k, [v] if not isinstance(v, list) else v]
    args += [tensors.get(n) for n in _TENSORS + _BY_VERSION[version]]
    args += [n1, d ** -0.5 if scale is None else scale, pre, nxt, layout, n2, sparse, inner, bs, 0, lse, 0, 0]
    args += [0] * (version >= 4) + [pse_type] * (version == 5) + [out, lse_out]
    r = getattr(ops, f"FusedInferAttentionScoreV{version}")(*args)
    return r[0], r[1]


def heads_first(x, layout, n):
    """Per batch [N, S, D] float64 views of a query-like array."""
    x = np.asarray(x).astype(np.float64)
    if layout == "BSH":
        return [x[b].reshape(x.shape[1], n, -1).transpose(1, 0, 2) for b in range(x.shape[0])]
    if layout == "BSND":
        return [x[b].transpose(1, 0, 2) for b in range(x.shape[0])]
    return [x[b] for b in range(x.shape[0])]


def from_heads(outs, layout):
    if layout == "BSH":
        return np.stack([o.transpose(1, 0, 2).reshape(o.shape[1], -1) for o in outs])
    if layout == "BSND":
        return np.stack([o.transpose(1, 0, 2) for o in outs])
    return np.stack(outs)


def paged(kv, bs, rng, bnbsd=False, spare=3):
    """A [B, S2, N2, D] float array as a shuffled block cache and its table."""
    b, s2, n2, d = kv.shape
    per = -(-s2 // bs)
    ids = rng.permutation(b * per + spare).astype(np.int32)
    table = ids[:b * per].reshape(b, per)
    cache = rng.standard_normal((b * per + spare, bs, n2, d))   # unused blocks hold noise
    for bb in range(b):
        for j in range(per):
            rows = kv[bb, j * bs:(j + 1) * bs]
            cache[table[bb, j], :len(rows)] = rows
    cache = cache.transpose(0, 2, 1, 3) if bnbsd else cache.reshape(cache.shape[0], bs, n2 * d)
    return np.ascontiguousarray(cache), table


def rel_err(got, want):
    got, want = np.asarray(got).astype(np.float64), np.asarray(want)
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


def check(got_out, got_lse, want_out, want_lse, name):
    assert rel_err(got_out, want_out) <= BOUND[name], (rel_err(got_out, want_out), name)
    fin = np.isfinite(want_lse)
    assert np.array_equal(np.isinf(got_lse), ~fin)
    assert np.abs(got_lse[fin] - want_lse[fin]).max(initial=0) <= LSE_BOUND[name]


# ---- decode and prefill with the paged cache -------------------------------------------------------------------

@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", ["BSH", "BSND", "BNSD"])
def test_decode_with_the_paged_cache(name, layout):
    """Q_S = 1 (the IFA path): GQA 8 / 2, block size 16, per-batch kv lengths, one batch with none (out 0, lse
    +inf), the BnBsH cache (BNSD also BnNBsD)."""
    rng = np.random.default_rng(1)
    b, n1, n2, d, bs, s2 = 3, 8, 2, 32, 16, 50
    kvl = [50, 0, 23]
    qh = rng.standard_normal((b, n1, 1, d))
    q = R.cast({"BSH": qh.transpose(0, 2, 1, 3).reshape(b, 1, n1 * d), "BSND": qh.transpose(0, 2, 1, 3),
                "BNSD": qh}[layout], name)
    kv = [rng.standard_normal((b, s2, n2, d)) for _ in range(2)]
    bnbsd = layout == "BNSD"
    (kc, table), (vc, _) = (paged(x, bs, np.random.default_rng(7), bnbsd) for x in kv)
    kc, vc = R.cast(kc, name), R.cast(vc, name)
    out, lse = fia(q, kc, vc, n1, layout, n2=n2, bs=bs, bt=table, askv=kvl)

    def rows(bb, n):
        return [IA.paged_rows(c.astype(np.float64), table, bb, n, bs, bnbsd).reshape(n, n2, d) if not bnbsd else
                IA.paged_rows(c.astype(np.float64), table, bb, n, bs, True) for c in (kc, vc)]
    want, wl = IA.fia(heads_first(q, layout, n1), rows, n1, n2, d ** -0.5, [1] * b, kvl)
    check(out, lse.reshape(b, n1), from_heads(want, layout), np.stack(wl).reshape(b, n1), name)
    assert not np.any(out.astype(np.float64).reshape(b, -1)[1])


@pytest.mark.parametrize("name", DTYPES)
def test_prefill_with_the_paged_cache_and_the_causal_mask(name):
    """Q_S > 1, BNSD with the BnNBsD cache, sparseMode 3 (the lower-right causal mask over each batch's actual
    lengths, 2048 x 2048 compressed), query lengths shorter than the padded S (rows past them: 0, lse +inf)."""
    rng = np.random.default_rng(2)
    b, n1, n2, d, dv, bs, s1, s2 = 2, 4, 4, 64, 64, 32, 20, 90
    ql, kvl = [20, 7], [90, 41]
    q = R.cast(rng.standard_normal((b, n1, s1, d)), name)
    (kc, table), (vc, _) = (paged(rng.standard_normal((b, s2, n2, x)), bs, np.random.default_rng(3), True)
                            for x in (d, dv))
    kc, vc = R.cast(kc, name), R.cast(vc, name)
    out, lse = fia(q, kc, vc, n1, "BNSD", n2=n2, bs=bs, bt=table, asl=ql, askv=kvl, sparse=3, mask=CAUSAL)
    rows = lambda bb, n: [IA.paged_rows(c.astype(np.float64), table, bb, n, bs, True) for c in (kc, vc)]
    want, wl = IA.fia(heads_first(q, "BNSD", n1), rows, n1, n2, d ** -0.5, ql, kvl,
                      lambda bb, n, a, c: IA.causal(a, c, 3))
    check(out, lse[..., 0], np.stack(want), np.stack(wl), name)


# ---- the padded layouts without a cache ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("how", ["mask", "band", "causal2", "none"])
def test_prefill_masks(name, how):
    """sparseMode 0 with a [B, 1, Q_S, KV_S] bool mask (padded KV_S) and, for "band", preTokens 5 / nextTokens 2
    from the upper-left corner; sparseMode 2 (upper-left causal); no mask. BSND, GQA 4 / 2, actual lengths."""
    rng = np.random.default_rng(4)
    b, n1, n2, d, s1, s2 = 2, 4, 2, 32, 12, 40
    ql, kvl = [12, 9], [40, 30]
    q = R.cast(rng.standard_normal((b, s1, n1, d)), name)
    k, v = (R.cast(rng.standard_normal((b, s2, n2, d)), name) for _ in range(2))
    m = rng.random((b, 1, s1, s2 + 8)) < 0.3
    m[:, :, :, 0] = False
    kw = {"mask": dict(mask=m), "band": dict(mask=m, pre=5, nxt=2), "causal2": dict(mask=CAUSAL, sparse=2),
          "none": {}}[how]
    out, lse = fia(q, k, v, n1, "BSND", n2=n2, asl=ql, askv=kvl, **kw)

    def mask_of(bb, n, a, c):
        i, j = np.arange(a)[:, None], np.arange(c)[None, :]
        if how == "causal2":
            return IA.causal(a, c, 2)
        if how == "none":
            return None
        mm = m[bb, 0, :a, :c].copy()
        return mm | (j - i > 2) | (i - j > 5) if how == "band" else mm
    rows = lambda bb, n: (k[bb, :n].astype(np.float64), v[bb, :n].astype(np.float64))
    want, wl = IA.fia(heads_first(q, "BSND", n1), rows, n1, n2, d ** -0.5, ql, kvl, mask_of)
    check(out, lse[..., 0], from_heads(want, "BSND"), np.stack(wl), name)


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("s1", [1, 5])
def test_output_layouts_and_nsd(name, s1):
    """The "_"-joined layouts (BNSD_BSND, BSH_BNSD, BSND_BNSD: the query's layout, then the output's) and NSD (BNSD
    without B), with value's D smaller than key's (op-plugin's Ascend 950 cases): against the float64 model, and bit
    for bit the plain layout's result moved into the output's layout (the same steps per head)."""
    rng = np.random.default_rng(21)
    b, n1, n2, d, dv, s2 = 2, 4, 2, 32, 16, 9
    q = R.cast(rng.standard_normal((b, n1, s1, d)), name)
    k = R.cast(rng.standard_normal((b, n2, s2, d)), name)
    v = R.cast(rng.standard_normal((b, n2, s2, dv)), name)
    lse_shape = (b, n1, s1, 1)
    base, base_lse = fia(q, k, v, n1, "BNSD", n2=n2)
    rows = lambda bb, n: (k[bb].transpose(1, 0, 2)[:n].astype(np.float64), v[bb].transpose(1, 0, 2)[:n].astype(np.float64))
    want, wl = IA.fia(heads_first(q, "BNSD", n1), rows, n1, n2, d ** -0.5, [s1] * b, [s2] * b)
    check(base, base_lse[..., 0], np.stack(want), np.stack(wl), name)
    bsnd = lambda x: np.ascontiguousarray(x.transpose(0, 2, 1, 3))
    bsh = lambda x: bsnd(x).reshape(x.shape[0], x.shape[2], -1)
    forms = [("BNSD_BSND", q, k, v, bsnd(base)), ("BSH_BNSD", bsh(q), bsh(k), bsh(v), base),
             ("BSND_BNSD", bsnd(q), bsnd(k), bsnd(v), base)]
    for layout, qq, kk, vv, want_out in forms:
        out, lse = fia(qq, kk, vv, n1, layout, n2=n2, scale=d ** -0.5, out=np.zeros(want_out.shape, q.dtype),
                       lse_out=np.zeros(lse_shape, np.float32))
        assert F.bits_equal(out, want_out) and F.bits_equal(lse, base_lse), layout
    out, lse = fia(q[0], k[0], v[0], n1, "NSD", n2=n2, out=np.zeros((n1, s1, dv), q.dtype),
                   lse_out=np.zeros((1,) + lse_shape[1:], np.float32))
    one, one_lse = fia(q[:1], k[:1], v[:1], n1, "BNSD", n2=n2)
    assert F.bits_equal(out, one[0]) and F.bits_equal(lse, one_lse)
    check(out, lse[0, ..., 0], want[0], wl[0], name)
    with pytest.raises(AclError) as e:   # the output's shape is the output layout's
        fia(q, k, v, n1, "BNSD_BSND", n2=n2, out=np.zeros(base.shape, q.dtype), lse_out=np.zeros(lse_shape, np.float32))
    assert e.value.code == TILING and "attentionOut shape" in str(e.value)
    for layout in ("NTD", "BSH_NBSD"):   # not taken
        with pytest.raises(AclError) as e:
            fia(q, k, v, n1, layout, n2=n2, out=np.zeros(base.shape, q.dtype), lse_out=np.zeros(lse_shape, np.float32))
        assert e.value.code == INVALID and "not supported by the emulator" in str(e.value)


@pytest.mark.parametrize("paged_kv", [False, True])
def test_tnd(paged_kv):
    """TND: actualSeqLengths are cumulative ends (their count is B); actualSeqLengthsKv too without a cache, per
    batch with one (vLLM-Ascend's chunked prefill); sparseMode 3; softmaxLse [T, N1, 1]."""
    name = "bfloat16"
    rng = np.random.default_rng(5)
    n1, n2, d, bs = 4, 1, 32, 16
    ql, kvl = [5, 1, 8], [9, 17, 8]
    cq = np.cumsum(ql)
    q = R.cast(rng.standard_normal((cq[-1], n1, d)), name)
    kvs = [rng.standard_normal((3, max(kvl), n2, d)) for _ in range(2)]
    if paged_kv:
        (kc, table), (vc, _) = (paged(x, bs, np.random.default_rng(6)) for x in kvs)
        kc, vc = R.cast(kc, name), R.cast(vc, name)
        out, lse = fia(q, kc, vc, n1, "TND", n2=n2, bs=bs, bt=table, asl=list(cq), askv=kvl, sparse=3, mask=CAUSAL)
        rows = lambda bb, n: [IA.paged_rows(c.astype(np.float64), table, bb, n, bs, False).reshape(n, n2, d)
                              for c in (kc, vc)]
    else:
        flat = [R.cast(np.concatenate([x[bb, :kvl[bb]] for bb in range(3)]), name) for x in kvs]
        ck = np.cumsum(kvl)
        out, lse = fia(q, flat[0], flat[1], n1, "TND", n2=n2, asl=list(cq), askv=list(ck), sparse=3, mask=CAUSAL)
        rows = lambda bb, n: [f[ck[bb] - kvl[bb]:ck[bb] - kvl[bb] + n].astype(np.float64) for f in flat]
    qs = [q[c - l:c].astype(np.float64).transpose(1, 0, 2) for c, l in zip(cq, ql)]
    want, wl = IA.fia(qs, rows, n1, n2, d ** -0.5, ql, kvl, lambda bb, n, a, c: IA.causal(a, c, 3))
    check(out, lse[..., 0], np.concatenate([w.transpose(1, 0, 2) for w in want]),
          np.concatenate([w.T for w in wl]), name)


def test_invalid_rows_and_inner_precise():
    """A row whose every key is masked: with innerPrecise 2 out 0 and lse +inf (row-invalid processing); with 0 every
    score is -FLT_MAX and the row averages the values (the kernel's arithmetic, not the definition's)."""
    rng = np.random.default_rng(8)
    q = R.cast(rng.standard_normal((1, 4, 2 * 16)), "float16")
    k, v = (R.cast(rng.standard_normal((1, 6, 2 * 16)), "float16") for _ in range(2))
    m = np.zeros((1, 4, 6), bool)
    m[0, 2] = True
    o2, l2 = fia(q, k, v, 2, "BSH", mask=m, inner=2)
    assert not np.any(o2[0, 2].astype(np.float64)) and np.all(np.isinf(l2[0, :, 2]))
    o0, _ = fia(q, k, v, 2, "BSH", mask=m, inner=0)
    mean = v[0].astype(np.float64).mean(axis=0)
    assert np.abs(o0[0, 2].astype(np.float64) - mean).max() < 2e-3


def test_versions_agree_and_lse_is_optional():
    """V2, V3, V4 and V5 run one plan: the same bits; softmaxLseFlag false writes nothing there (an empty tensor, as
    op-plugin passes)."""
    rng = np.random.default_rng(9)
    q = R.cast(rng.standard_normal((2, 3, 64)), "float16")
    k, v = (R.cast(rng.standard_normal((2, 10, 32)), "float16") for _ in range(2))
    outs = [fia(q, k, v, 4, "BSH", n2=2, version=ver) for ver in (2, 3, 4, 5)]
    for o, l in outs[1:]:
        assert F.bits_equal(o, outs[0][0]) and F.bits_equal(l, outs[0][1])
    o, l = fia(q, k, v, 4, "BSH", n2=2, lse=False)
    assert F.bits_equal(o, outs[0][0]) and l.size == 0


def test_the_docs_example():
    """docs/aclnnFusedInferAttentionScoreV4.md "调用示例": BNSD q [1, 2, 1, 16], k / v [1, 2, 2, 16] FLOAT16 filled
    from float32 ones (the example copies sizeof(float) bytes per element: the halves read 0, 1.875, 0, 1.875 ...),
    numHeads 2, scale 1/sqrt(2), innerPrecise 1, softmaxLse NULL. Both keys score alike: out = the value rows."""
    def filled(shape):
        return np.ones(int(np.prod(shape)), np.float32).view(np.float16)[:int(np.prod(shape))].reshape(shape).copy()
    q, k = filled((1, 2, 1, 16)), filled((1, 2, 2, 16))
    args = [q, [k], [k]] + [None] * 26 + [2, 1 / np.sqrt(2), BIG, BIG, "BNSD", 2, 0, 1, 0, 0, False, 0, 0, 0,
                                           np.zeros((1, 2, 1, 16), np.float16), None]
    out = ops.FusedInferAttentionScoreV4(*args)
    out = out[0] if isinstance(out, tuple) else out
    assert np.array_equal(out.reshape(-1), np.tile(np.array([0, 1.875], np.float16), 16))


# ---- IncreFlashAttentionV4 and PromptFlashAttentionV3: the same steps and kernel --------------------------------

def ifa(q, k, v, n1, layout, *, n2=0, scale=None, kvl=None, bt=None, bs=0, mask=None, inner=0):
    d = q.shape[2] // n1 if layout == "BSH" else q.shape[-1]
    return ops.IncreFlashAttentionV4(q, [k], [v], None, mask, kvl, None, None, None, None, None, None, None, bt, None,
                                     n1, d ** -0.5 if scale is None else scale, layout, n2, bs, inner,
                                     np.zeros(q.shape, q.dtype))


def pfa(q, k, v, n1, layout, *, n2=0, scale=None, ql=None, kvl=None, mask=None, sparse=0, inner=1, pre=BIG, nxt=BIG):
    d = q.shape[2] // n1 if layout == "BSH" else q.shape[-1]
    return ops.PromptFlashAttentionV3(q, k, v, None, mask, ql, kvl, None, None, None, None, None, n1,
                                      d ** -0.5 if scale is None else scale, pre, nxt, layout, n2, sparse, inner,
                                      np.zeros(q.shape, q.dtype))


def test_incre_and_prompt_flash_attention():
    """IncreFlashAttentionV4 (decode, paged; actualSeqLengths are the kv lengths) and PromptFlashAttentionV3 (prefill,
    causal sparseMode 3 with lengths) give FusedInferAttentionScoreV4's bits, which match the float64 model above;
    Atlas A2 / A3 only (on Ascend 950 the dtype check refuses them: 161002)."""
    if not F.ON_A2:   # (the Atlas A2 part runs in test_atlas_a2's subprocess)
        q = np.zeros((1, 1, 64), np.float16)
        err = pytest.raises(AclError, ifa, q, q, q, 4, "BSH").value
        assert err.code == INVALID
        return
    rng = np.random.default_rng(13)
    b, n1, n2, d, bs = 2, 8, 2, 32, 16
    q = R.cast(rng.standard_normal((b, 1, n1 * d)), "bfloat16")
    (kc, table), (vc, _) = (paged(rng.standard_normal((b, 40, n2, d)), bs, np.random.default_rng(14)) for _ in "kv")
    kc, vc = R.cast(kc, "bfloat16"), R.cast(vc, "bfloat16")
    got = ifa(q, kc, vc, n1, "BSH", n2=n2, kvl=[40, 9], bt=table, bs=bs)
    want, _ = fia(q, kc, vc, n1, "BSH", n2=n2, askv=[40, 9], bt=table, bs=bs)
    assert F.bits_equal(got, want)
    q = R.cast(rng.standard_normal((b, 4, 6, 16)), "float16")
    k, v = (R.cast(rng.standard_normal((b, 2, 9, 16)), "float16") for _ in "kv")
    got = pfa(q, k, v, 4, "BNSD", n2=2, ql=[6, 3], kvl=[9, 7], mask=CAUSAL, sparse=3)
    want, _ = fia(q, k, v, 4, "BNSD", n2=2, asl=[6, 3], askv=[9, 7], mask=CAUSAL, sparse=3, inner=1)
    assert F.bits_equal(got, want)
    rows = lambda bb, n: (k[bb].transpose(1, 0, 2)[:n].astype(np.float64), v[bb].transpose(1, 0, 2)[:n].astype(np.float64))
    ref, _ = IA.fia(heads_first(q, "BNSD", 4), rows, 4, 2, 0.25, [6, 3], [9, 7], lambda bb, n, a, c: IA.causal(a, c, 3))
    assert rel_err(got, np.stack(ref)) <= BOUND["float16"]
    err = pytest.raises(AclError, ifa, q, k, v, 4, "BNSD").value      # the decode form takes Q_S = 1 only
    assert (err.code, "IncreFlashAttention takes a query of S = 1" in str(err)) == (TILING, True), str(err)
    err = pytest.raises(AclError, ifa, q[:, :, :1].copy(), k, v, 4, "BNSD", n2=2, inner=2).value
    assert (err.code, "innerPrecise [2] should be 0, 1" in str(err)) == (TILING, True), str(err)


# ---- validation -------------------------------------------------------------------------------------------------

def _validation_cases():
    h = np.zeros((1, 1, 64), np.float16)
    kc = np.zeros((4, 16, 64), np.float16)
    bt = np.zeros((1, 2), np.int32)
    pa = dict(bt=bt, bs=16, askv=[20])
    return [
        ("fp32 query", dict(q=h.astype(np.float32), k=kc.astype(np.float32), v=kc.astype(np.float32)), INVALID, "query"),
        # (INT8 key/value: tests/test_fia_antiquant.py)
        ("int8 query", dict(q=h.astype(np.int8)), INVALID, "not supported by the emulator"),
        ("pse", dict(extra=dict(pse=np.zeros((1, 4, 1, 32), np.float16))), INVALID, "pseShiftOptional is not supported"),
        ("layout", dict(layout="SBH"), TILING, "Input layout SBH is invalid"),
        ("heads", dict(n1=4, n2=3), TILING, "numHeads 4 should be a multiple of numKeyValueHeads 3"),
        ("group", dict(n1=128, n2=1, q=np.zeros((1, 1, 128 * 8), np.float16), k=np.zeros((4, 16, 8), np.float16),
                       v=np.zeros((4, 16, 8), np.float16)), TILING, "cannot be greater than 64"),
        ("blockSize 0", dict(extra=dict(pa, bs=0)), TILING, "blocksize can not be 0"),
        ("blockSize 1024", dict(extra=dict(pa, bs=1024)), TILING, "can not be larger than 512"),
        ("blockSize 24", dict(extra=dict(pa, bs=24)), TILING, "16 aligned"),
        ("cache 5d", dict(k=np.zeros((4, 4, 1, 16, 16), np.float16), v=np.zeros((4, 4, 1, 16, 16), np.float16),
                          extra=pa), INVALID, "NZ"),
        ("table dtype", dict(extra=dict(pa, bt=bt.astype(np.int64))), TILING, "should be int32"),
        ("no kv lengths", dict(extra=dict(bt=bt, bs=16)), TILING, "actualSeqLengthsKvOptional cannot be nullptr"),
        ("kv length", dict(extra=dict(pa, askv=[33])), TILING, "actualSeqLengthsKvOptional[0] = 33 is invalid"),
        ("sparse 5", dict(q=np.zeros((1, 2, 64), np.float16), extra=dict(sparse=5)), TILING, "sparse_mode = 5"),
        ("sparse 3 no mask", dict(q=np.zeros((1, 2, 64), np.float16), extra=dict(sparse=3)), TILING,
         "attenMask should not be null"),
        ("mask shape", dict(q=np.zeros((1, 2, 64), np.float16), extra=dict(sparse=2, mask=np.zeros((1024, 1024), bool))),
         TILING, "should be (2048, 2048)"),
        ("inner 4", dict(extra=dict(inner=4)), TILING, "innerPrecise"),
        ("out dtype", dict(extra=dict(out=np.zeros((1, 1, 64), np.float32))), INVALID, "attentionOut"),
        ("lse shape", dict(extra=dict(lse_out=np.zeros((1, 4, 1), np.float32))), TILING, "softmaxLse shape"),
    ]


@pytest.mark.parametrize("case", _validation_cases(), ids=lambda c: c[0])
def test_validation_codes(case):
    _, kw, code, text = case
    q = kw.get("q", np.zeros((1, 1, 64), np.float16))
    k = kw.get("k", np.zeros((1, 20, 64), np.float16))
    v = kw.get("v", k)
    extra = dict(kw.get("extra", {}))
    if "bt" in extra and "k" not in kw:
        k = v = np.zeros((4, 16, 64), np.float16)
    err = pytest.raises(AclError, fia, q, k, v, kw.get("n1", 4), kw.get("layout", "BSH"), n2=kw.get("n2", 0), **extra)
    assert (err.value.code, text in str(err.value)) == (code, True), str(err.value)


def test_null_query_and_the_vendor_order():
    """161001 for a NULL query before anything else; the generated layer's dtype check (161002) before the tiling's
    (561002: here a bad layout)."""
    from _op_helpers import raw_null_status
    assert raw_null_status("aclnnFusedInferAttentionScoreV4GetWorkspaceSize", 45) == NULLPTR
    f32 = np.zeros((1, 1, 64), np.float32)
    err = pytest.raises(AclError, fia, f32, f32, f32, 4, "SBH").value
    assert err.code == INVALID


def test_block_id_past_the_cache_is_a_device_fault():
    kc = np.zeros((4, 16, 64), np.float16)
    with pytest.raises(AclError) as e:
        fia(np.zeros((1, 1, 64), np.float16), kc, kc, 4, "BSH", bs=16, bt=np.array([[1, 9]], np.int32), askv=[20])
    assert "blockTable[0][1] = 9" in str(e.value)


# ---- Atlas A2 and torch_npu -------------------------------------------------------------------------------------

def test_atlas_a2():
    """Atlas A2 takes the same dtypes and runs the same plan: checks above rerun there, in one subprocess, with
    IncreFlashAttention's and PromptFlashAttention's (Atlas A2 / A3 only)."""
    F.run_on_a2("test_fused_infer_attention", "T.test_decode_with_the_paged_cache('bfloat16', 'BSH')\n"
                "T.test_versions_agree_and_lse_is_optional()\nT.test_validation_codes(T._validation_cases()[0])\n"
                "T.test_incre_and_prompt_flash_attention()")


_TORCH_BODY = """

def decode():
    s = SPEC["decode"]
    q, kc, vc = (T(dec(s[x])).npu() for x in ("q", "kc", "vc"))
    bt = T(dec(s["bt"])).npu()
    o, l = torch_npu.npu_fused_infer_attention_score(q, kc, vc, num_heads=8, num_key_value_heads=2,
        input_layout="BSH", scale=0.125, block_table=bt, block_size=16, actual_seq_lengths_kv=s["kvl"],
        softmax_lse_flag=True)
    o2, l2 = torch_npu.npu_fused_infer_attention_score_v2(q, kc, vc, num_query_heads=8, num_key_value_heads=2,
        input_layout="BSH", softmax_scale=0.125, block_table=bt, block_size=16, actual_seq_kvlen=s["kvl"],
        return_softmax_lse=True)
    return {"o": enc(to_np(o)), "l": enc(to_np(l)), "o2": enc(to_np(o2)), "l2": enc(to_np(l2))}
run("decode", decode)

def prefill():
    s = SPEC["prefill"]
    q, k, v = (T(dec(s[x])).npu() for x in "qkv")
    m = torch.triu(torch.ones(2048, 2048, dtype=torch.bool), 1).npu()
    o, _ = torch_npu.npu_fused_infer_attention_score(q, k, v, num_heads=4, input_layout="BNSD", scale=0.25,
        atten_mask=m, sparse_mode=3, actual_seq_lengths=s["ql"], actual_seq_lengths_kv=s["kvl"])
    return {"o": enc(to_np(o))}
run("prefill", prefill)

def ifa_pfa():
    s = SPEC["decode"]
    q, kc, vc = (T(dec(s[x])).npu() for x in ("q", "kc", "vc"))
    o = torch_npu.npu_incre_flash_attention(q, kc, vc, num_heads=8, num_key_value_heads=2, input_layout="BSH",
        scale_value=0.125, block_table=T(dec(s["bt"])).npu(), block_size=16, actual_seq_lengths=s["kvl"])
    p = SPEC["prefill"]
    qq, k, v = (T(dec(p[x])).npu() for x in "qkv")
    m = torch.triu(torch.ones(2048, 2048, dtype=torch.bool), 1).npu()
    o2 = torch_npu.npu_prompt_flash_attention(qq, k, v, num_heads=4, input_layout="BNSD", scale_value=0.25,
        atten_mask=m, sparse_mode=3, actual_seq_lengths=p["ql"], actual_seq_lengths_kv=p["kvl"])
    return {"ifa": enc(to_np(o)), "pfa": enc(to_np(o2))}
if SPEC["a2"]:
    run("ifa_pfa", ifa_pfa)

def layouts():
    s = SPEC["prefill"]
    q, k, v = (T(dec(s[x])).npu() for x in "qkv")
    o, _ = torch_npu.npu_fused_infer_attention_score(q, k, v[..., :8], num_heads=4, input_layout="BNSD_BSND",
        scale=0.25)
    o2, _ = torch_npu.npu_fused_infer_attention_score(q[0], k[0], v[0], num_heads=4, input_layout="NSD", scale=0.25)
    return {"bnsd_bsnd": enc(to_np(o)), "nsd": enc(to_np(o2))}
run("layouts", layouts)
"""


def _torch_spec():
    rng = np.random.default_rng(11)
    kv = [rng.standard_normal((2, 40, 2, 64)) for _ in range(2)]
    (kc, table), (vc, _) = (paged(x, 16, np.random.default_rng(12)) for x in kv)
    return {"decode": {"q": enc(R.cast(rng.standard_normal((2, 1, 8 * 64)), "float16")),
                       "kc": enc(R.cast(kc, "float16")), "vc": enc(R.cast(vc, "float16")), "bt": enc(table),
                       "kvl": [40, 27]},
            "prefill": {"q": enc(R.cast(rng.standard_normal((2, 4, 6, 16)), "bfloat16")),
                        "k": enc(R.cast(rng.standard_normal((2, 4, 9, 16)), "bfloat16")),
                        "v": enc(R.cast(rng.standard_normal((2, 4, 9, 16)), "bfloat16")),
                        "ql": [6, 4], "kvl": [9, 5]}}


@pytest.mark.parametrize("soc", ["Ascend910B4", "Ascend950PR"])
def test_torch_npu_calls_match_the_direct_call(soc):
    """npu_fused_infer_attention_score (Atlas A2: V2 at the emulator's CANN version; Ascend 950: V5) and
    npu_fused_infer_attention_score_v2 (V4 / V5) on the emulator give the direct call's bits; on Atlas A2 so do
    npu_incre_flash_attention (IncreFlashAttentionV4) and npu_prompt_flash_attention (PromptFlashAttentionV3)."""
    res = torch_npu_run(_TORCH_BODY, dict(_torch_spec(), a2=soc == "Ascend910B4"), soc=soc)
    spec = _torch_spec()
    for key in ("decode", "prefill"):
        assert "error" not in res[key], res[key]
    s = spec["decode"]
    q, kc, vc, bt = (dec(s[x]) for x in ("q", "kc", "vc", "bt"))
    want_o, want_l = fia(q, kc, vc, 8, "BSH", n2=2, scale=0.125, bs=16, bt=bt, askv=s["kvl"],
                    version=2)
    for o, l in (("o", "l"), ("o2", "l2")):
        assert F.bits_equal(dec(res["decode"][o]), want_o) and F.bits_equal(dec(res["decode"][l]), want_l)
    s = spec["prefill"]
    o, _ = fia(*(dec(s[x]) for x in "qkv"), 4, "BNSD", scale=0.25, mask=CAUSAL, sparse=3, asl=s["ql"], askv=s["kvl"],
               lse=False)
    assert F.bits_equal(dec(res["prefill"]["o"]), o)
    assert "error" not in res["layouts"], res["layouts"]   # the output layouts and NSD
    q, k, v = (dec(s[x]) for x in "qkv")
    lo, _ = fia(q, k, np.ascontiguousarray(v[..., :8]), 4, "BNSD", scale=0.25, lse=False)
    assert F.bits_equal(dec(res["layouts"]["bnsd_bsnd"]), np.ascontiguousarray(lo.transpose(0, 2, 1, 3)))
    lo, _ = fia(q[:1], k[:1], v[:1], 4, "BNSD", scale=0.25, lse=False)
    assert F.bits_equal(dec(res["layouts"]["nsd"]), lo[0])
    if soc == "Ascend910B4":   # npu_incre_flash_attention / npu_prompt_flash_attention: Atlas A2 / A3 only
        assert "error" not in res["ifa_pfa"], res["ifa_pfa"]
        assert F.bits_equal(dec(res["ifa_pfa"]["ifa"]), want_o)
        assert F.bits_equal(dec(res["ifa_pfa"]["pfa"]), o)   # (sparse_mode 3, innerPrecise 1: the same plan)
