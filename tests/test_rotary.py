"""Rotary position embeddings (native_stubs/src/ops/posembedding/rotary.toml): aclnnRotaryPositionEmbedding,
aclnnRotaryPositionEmbeddingGrad, aclnnApplyRotaryPosEmb, aclnnApplyRotaryPosEmbV2, aclnnInterleaveRope (hicann/ops-transformer posembedding/). The float64 references are the documented formulas (torch.cat / stack of the halves, quarters,
pairs), written as matrices: rot(x) = x @ R, x' = x @ P with R, P the formulas applied to the identity, so the
gradient is dy @ P.T and dy @ R.T. The kernels' steps as fp32 / fp16 models, bit-exact; every dtype of the
definitions (Ascend 950 in-process, Atlas A2 in one subprocess running the same checks), every mode and layout,
the tilings' codes, and one torch_npu child (npu_rotary_mul in every mode and its backward, npu_apply_rotary_pos_emb,
npu_interleave_rope)."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from _op_helpers import INVALID, NULLPTR, raw_null_status, strided
import _fused_ops as F

TILING = 561002
F32 = np.float32
RNG = np.random.default_rng(1907)
A2 = F.ON_A2
DTYPES = F.DTYPES
MODES = [0, 1] if A2 else [0, 1, 2, 3]
MODE_NAMES = {0: "half", 1: "interleave", 2: "quarter", 3: "interleave-half"}


_f64, _z, _bits_equal, _ulp = F.f64, F.zeros, F.bits_equal, F.ulp


# ---- the documented formulas ------------------------------------------------------------------------------------

def parts64(x, mode):
    """(x', rot(x)) of the documentation's formulas for the last dim."""
    x = _f64(x)
    D = x.shape[-1]
    if mode == 0:
        return x, np.concatenate([-x[..., D // 2:], x[..., :D // 2]], -1)
    if mode == 1:
        return x, np.stack([-x[..., 1::2], x[..., ::2]], -1).reshape(x.shape)
    if mode == 2:
        q = [x[..., i * D // 4:(i + 1) * D // 4] for i in range(4)]
        return x, np.concatenate([-q[1], q[0], -q[3], q[2]], -1)
    return np.concatenate([x[..., ::2], x[..., 1::2]], -1), np.concatenate([-x[..., 1::2], x[..., ::2]], -1)


def rope64(x, c, s, mode):
    xp, xr = parts64(x, mode)
    return xp * _f64(c) + xr * _f64(s)


def _mats(D, mode):
    return parts64(np.eye(D), mode)   # x' = x @ P, rot(x) = x @ R


def _reduce_to(v, shape):   # sum over the dims cos broadcasts
    axes = tuple(i for i, (a, b) in enumerate(zip(v.shape, shape)) if b == 1 and a != 1)
    return v.sum(axis=axes, keepdims=True).reshape(shape)


def rope_grad64(dy, c, s, x, mode):
    P, Rm = _mats(np.shape(dy)[-1], mode)
    dy = _f64(dy)
    dx = (dy * _f64(c)) @ P.T + (dy * _f64(s)) @ Rm.T
    xp, xr = parts64(x, mode)
    return dx, _reduce_to(dy * xp, np.shape(c)), _reduce_to(dy * xr, np.shape(c))


# ---- the kernels' steps ----------------------------------------------------------------------------------------

def rope32(x, c, s, mode, arith="f32"):
    """y = fl(fl(x' * cos) + fl(rot(x) * sin)) in fp32 ("f32"), every step rounded to fp16 ("f16"), or fp32 with
    a round-half-away bf16 cast ("bf16away"); returns float32 values exact in the result dtype for the latter two."""
    xp, xr = (v.astype(F32) for v in parts64(np.asarray(x).astype(F32), mode))
    c, s = np.asarray(c).astype(F32), np.asarray(s).astype(F32)
    a, b = xp * c, xr * s
    if arith == "f16":
        a, b = R.cast(a, "float16").astype(F32), R.cast(b, "float16").astype(F32)
        return R.cast(a + b, "float16").astype(F32)
    y = a + b
    if arith == "bf16away":
        u = y.view(np.uint32).astype(np.uint64)
        y = (((u + 0x8000) & 0xFFFF0000).astype(np.uint32)).view(F32)
    return y


def rope_grad_dx32(dy, c, s, mode):
    P, Rm = _mats(np.shape(dy)[-1], mode)
    dy, c, s = (np.asarray(v).astype(F32) for v in (dy, c, s))
    a, b = (dy * c).astype(np.float64), (dy * s).astype(np.float64)
    return (a @ P.T + b @ Rm.T).astype(F32)   # each element: one term of each, summed once


def _close64(got, want, scale, name, term_eps=2.0 ** -24):
    """within 1 ulp of the dtype at the value, plus 4 rounding units (fp32's, or fp16's where the products are
    rounded to fp16) of the terms' scale (x' cos and rot(x) sin may cancel)."""
    err = np.abs(_f64(got) - want)
    assert np.all(err <= _ulp(want, name) + 4 * term_eps * scale), (name, err.max())


COS_SHAPES = [(1, 1, 1, 8), (2, 3, 4, 8), (1, 3, 1, 8), (2, 1, 4, 8), (2, 3, 1, 8), (1, 1, 4, 8), (2, 1, 1, 8)]


def _rope_args(name, cshape, xshape=(2, 3, 4, 8)):
    x = R.cast(RNG.standard_normal(xshape) * 2, name)
    ang = RNG.uniform(-3, 3, cshape)
    return x, R.cast(np.cos(ang), name), R.cast(np.sin(ang), name)


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("mode", MODES)
def test_rotary_position_embedding(mode, name):
    for cshape in COS_SHAPES:
        x, c, s = _rope_args(name, cshape)
        got = ops.RotaryPositionEmbedding(x, c, s, mode, _z(x.shape, name))
        assert _bits_equal(got, R.cast(rope32(x, c, s, mode), name)), (mode, name, cshape)
        xp, xr = parts64(x, mode)
        _close64(got, rope64(x, c, s, mode), np.abs(xp * _f64(c)) + np.abs(xr * _f64(s)), name)


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("mode", MODES)
def test_rotary_position_embedding_grad(mode, name):
    for cshape in COS_SHAPES[:5]:
        x, c, s = _rope_args(name, cshape)
        dy = R.cast(RNG.standard_normal(x.shape), name)
        dx, dc, ds = ops.RotaryPositionEmbeddingGrad(dy, c, s, x, mode, _z(x.shape, name), _z(c.shape, name),
                                                     _z(c.shape, name))
        assert _bits_equal(dx, R.cast(rope_grad_dx32(dy, c, s, mode), name)), (mode, name, cshape)
        dx64, dc64, ds64 = rope_grad64(dy, c, s, x, mode)
        P, Rm = _mats(x.shape[-1], mode)
        _close64(dx, dx64, np.abs(_f64(dy) * _f64(c)) @ np.abs(P.T) + np.abs(_f64(dy) * _f64(s)) @ np.abs(Rm.T), name)
        for got, want in ((dc, dc64), (ds, ds64)):   # float64 sums rounded once (to fp32, then the dtype)
            assert np.all(R.ulp_distance(got, R.cast(R.cast(want, "float32"), name), name) == 0), (mode, name, cshape)
    keep = np.full(c.shape, 7, R.np_dtype(name))   # without x: dcos, dsin not written
    res = ops.RotaryPositionEmbeddingGrad(dy, c, s, None, mode, _z(x.shape, name), keep.copy(), keep.copy())
    assert _bits_equal(res[0], dx) and (res[1] == 7).all() and (res[2] == 7).all()


def test_rope_strided_and_empty():
    x, c, s = _rope_args("float32", (1, 3, 1, 8))
    got = ops.RotaryPositionEmbedding(strided(x), c, s, 0, _z(x.shape, "float32"))
    assert _bits_equal(got, rope32(x, c, s, 0))
    e = _z((0, 3, 4, 8), "float32")
    assert ops.RotaryPositionEmbedding(e, c, s, 0, e.copy()).shape == (0, 3, 4, 8)


# ---- ApplyRotaryPosEmb ---------------------------------------------------------------------------------------

# layout: (q shape, k shape, cos shape)
LAYOUTS = {1: ((2, 3, 4, 16), (2, 3, 2, 16), (2, 3, 1, 16)), 2: ((3, 2, 4, 16), (3, 2, 1, 16), (3, 2, 1, 16)),
           3: ((2, 4, 3, 16), (2, 2, 3, 16), (2, 1, 3, 16)), 4: ((5, 4, 16), (5, 2, 16), (5, 1, 16))}
A2_LAYOUTS = {1: ((2, 3, 4, 128), (2, 3, 2, 128), (2, 3, 1, 128))}
ARPE_MODES = {"half": 0, "quarter": 2, "interleave": 1}


def _arpe(name, layout, rmode):
    qs, ks, cs = (A2_LAYOUTS if A2 else LAYOUTS)[layout]
    q, k = R.cast(RNG.standard_normal(qs), name), R.cast(RNG.standard_normal(ks), name)
    ang = RNG.uniform(-3, 3, cs)
    c, s = R.cast(np.cos(ang), name), R.cast(np.sin(ang), name)
    tq, tk = pyaclnn.from_numpy(q.copy()), pyaclnn.from_numpy(k.copy())
    if rmode is None:
        ops.ApplyRotaryPosEmb(tq, tk, c, s, layout)
    else:
        ops.ApplyRotaryPosEmbV2(tq, tk, c, s, layout, rmode)
    return q, k, c, s, tq.numpy(), tk.numpy()


@pytest.mark.parametrize("name", DTYPES)
def test_apply_rotary_pos_emb(name):
    cases = [(1, None), (1, "half"), (1, "interleave"), (1, "quarter")] if A2 else \
        [(lay, m) for lay in LAYOUTS for m in (None, "half", "quarter", "interleave")]
    arith = {"float16": "f16", "bfloat16": "bf16away"}.get(name, "f32") if A2 else "f32"
    for layout, rmode in cases:
        q, k, c, s, gq, gk = _arpe(name, layout, rmode)
        mode = 0 if A2 or rmode is None else ARPE_MODES[rmode]   # Atlas A2's tiling never reads rotaryMode
        for got, x in ((gq, q), (gk, k)):
            assert _bits_equal(got, R.cast(rope32(x, c, s, mode, arith), name)), (name, layout, rmode)
            xp, xr = parts64(x, mode)
            _close64(got, rope64(x, c, s, mode), np.abs(xp * _f64(c)) + np.abs(xr * _f64(s)), name,
                     term_eps=2.0 ** -11 if arith == "f16" else 2.0 ** -24)


def test_documented_example_shapes():
    """The documentation's examples (aclnnRotaryPositionEmbedding.md, ...Grad.md: x, cos, sin [1, 1, 1, 128], mode 1;
    aclnnApplyRotaryPosEmb(V2).md: query, key, cos, sin [1, 1, 1, 128], layout 1, "half") with integer data of the
    docs' kind (0..128: the docs list 128 values per tensor and print no results), against the steps and float64."""
    q, k, c, s = (np.asarray(RNG.integers(0, 129, (1, 1, 1, 128)), F32) for _ in range(4))
    y = ops.RotaryPositionEmbedding(q, c, s, 1, _z(q.shape, "float32"))
    assert _bits_equal(y, rope32(q, c, s, 1)) and np.allclose(y, rope64(q, c, s, 1), rtol=1e-6)
    dx, dc, ds = ops.RotaryPositionEmbeddingGrad(k, c, s, q, 1, _z(q.shape, "float32"), _z(c.shape, "float32"),
                                                 _z(c.shape, "float32"))
    assert _bits_equal(dx, rope_grad_dx32(k, c, s, 1))
    tq, tk = pyaclnn.from_numpy(q.copy()), pyaclnn.from_numpy(k.copy())
    ops.ApplyRotaryPosEmbV2(tq, tk, c, s, 1, "half")
    assert _bits_equal(tq.numpy(), rope32(q, c, s, 0)) and _bits_equal(tk.numpy(), rope32(k, c, s, 0))


# ---- InterleaveRope ---------------------------------------------------------------------------------------------

def interleave_rope64(x, c, s):
    """The README's formula: q = x.reshape(B, N, S, D / 2, 2).transpose(-1, -2).reshape(B, N, S, D),
    q * cos + RotateHalf(q) * sin."""
    x = _f64(x)
    q = x.reshape(x.shape[:-1] + (x.shape[-1] // 2, 2)).swapaxes(-1, -2).reshape(x.shape)
    h = x.shape[-1] // 2
    return q * _f64(c) + np.concatenate([-q[..., h:], q[..., :h]], -1) * _f64(s)


@pytest.mark.parametrize("name", DTYPES)
def test_interleave_rope(name):
    if A2 and name == "float32":
        pytest.skip("Atlas A2's InterleaveRope takes FLOAT16 and BF16")
    cases = [((2, 3, 4, 64), (2, 1, 4, 64)), ((2, 3, 4, 64), (2, 1, 1, 64))]
    if not A2:   # Ascend 950 runs RotaryPositionEmbedding's mode 3: its shapes
        cases += [((1, 2, 3, 16), (1, 1, 3, 16)), ((2, 2, 2, 8), (1, 1, 1, 8))]
    for xs, cs in cases:
        x, c, s = _rope_args(name, cs, xs)
        got = ops.InterleaveRope(x, c, s, _z(xs, name))
        assert _bits_equal(got, R.cast(rope32(x, c, s, 3), name)), (name, xs, cs)
        xp, xr = parts64(x, 3)
        _close64(got, interleave_rope64(x, c, s), np.abs(xp * _f64(c)) + np.abs(xr * _f64(s)), name)


# ---- validation ------------------------------------------------------------------------------------------------

X4 = np.ones((2, 3, 4, 8), F32)
C4 = np.ones((1, 3, 1, 8), F32)
INVALID_CALLS = [
    ("RotaryPositionEmbedding", (X4, C4.astype(np.float16), C4, 0, X4), INVALID,
     "the dtype combination x FLOAT, cos FLOAT16, sin FLOAT, out FLOAT is not supported"),
    ("RotaryPositionEmbedding", (X4, C4, C4, 4, X4), TILING, "mode 4 is not supported"),
    ("RotaryPositionEmbedding", (X4[0], C4[0], C4[0], 0, X4[0]), TILING, "the input shape must be 4-dimensional."),
    ("RotaryPositionEmbedding", (X4[..., :7], C4[..., :7], C4[..., :7], 0, X4[..., :7]), TILING, "must be a multiple of 2"),
    ("RotaryPositionEmbedding", (X4, C4, np.ones((2, 3, 1, 8), F32), 0, X4), TILING, "cos shape and sin shape should be equal."),
    ("RotaryPositionEmbedding", (X4, C4[..., :4], C4[..., :4], 0, X4), TILING, "should be equal, but get x [8] and cos [4]"),
    ("RotaryPositionEmbedding", (X4, np.ones((1, 3, 4, 8), F32), np.ones((1, 3, 4, 8), F32), 0, X4), TILING,
     "the shape (1, S, N, D) is not supported"),
    ("RotaryPositionEmbedding", (X4, np.ones((1, 2, 1, 8), F32), np.ones((1, 2, 1, 8), F32), 0, X4), TILING,
     "does not broadcast to x"),
    ("RotaryPositionEmbedding", (X4, C4, C4, 0, np.ones((2, 3, 4, 4), F32)), TILING, "x and out shapes should be equal."),
    ("RotaryPositionEmbeddingGrad", (X4, C4, C4, None, 0, X4, np.ones((2, 3, 1, 8), F32), C4), TILING,
     "cos, dcos and dsin shapes should be equal."),
    ("RotaryPositionEmbeddingGrad", (X4, C4, C4, X4.astype(np.float16), 0, X4, C4, C4), INVALID, "xOptional FLOAT16"),
]
if not A2:
    INVALID_CALLS += [
        ("RotaryPositionEmbedding", (X4[..., :6], C4[..., :6], C4[..., :6], 2, X4[..., :6]), TILING, "multiple of 4"),
        ("RotaryPositionEmbedding", (np.ones((1, 1, 1, 1026), F32), np.ones((1, 1, 1, 1026), F32),
                                     np.ones((1, 1, 1, 1026), F32), 0, np.ones((1, 1, 1, 1026), F32)), TILING,
         "should be less than 1024"),
    ]


def _arpe_call(op, *args):
    return getattr(ops, op)(*args)


Q, K, CQ = np.ones((2, 3, 4, 16), F32), np.ones((2, 3, 2, 16), F32), np.ones((2, 3, 1, 16), F32)
ARPE_INVALID = [
    ("ApplyRotaryPosEmb", (Q, K, CQ.astype(np.float16), CQ, 1), INVALID, "dtype combination"),
    ("ApplyRotaryPosEmbV2", (Q, K, CQ, CQ, 1, "rope"), TILING, "rotaryMode rope is not supported"),
    ("ApplyRotaryPosEmbV2", (Q, K, CQ, CQ, 5, "half"), TILING, "layout 5 is not supported"),
    ("ApplyRotaryPosEmbV2", (Q, np.ones((2, 2, 2, 16), F32), CQ, CQ, 1, "half"), TILING, "differ in dim 1"),
    ("ApplyRotaryPosEmbV2", (Q, K, np.ones((2, 3, 2, 16), F32), np.ones((2, 3, 2, 16), F32), 1, "half"), TILING,
     "does not broadcast"),
    ("ApplyRotaryPosEmbV2", (Q, K, CQ, CQ, 4, "half"), TILING, "must have 3 dims (layout 4)"),
    ("ApplyRotaryPosEmbV2", (Q[..., :6], K[..., :6], CQ[..., :6], CQ[..., :6], 1, "quarter"), TILING, "multiple of 4"),
    ("ApplyRotaryPosEmbV2", (Q[:, :0], K[:, :0], CQ[:, :0], CQ[:, :0], 1, "half"), TILING, "input can not be empty."),
]
A2_ARPE_INVALID = [
    ("InterleaveRope", (X4, C4, C4, X4), INVALID, "the dtype combination x FLOAT"),
    ("InterleaveRope", (np.ones((2, 3, 4, 32), np.float16),) + (np.ones((2, 1, 4, 32), np.float16),) * 2 +
     (np.ones((2, 3, 4, 32), np.float16),), TILING, "hiddenDim must be 64."),
    ("InterleaveRope", (np.ones((2, 3, 4, 64), np.float16),) + (np.ones((2, 3, 4, 64), np.float16),) * 2 +
     (np.ones((2, 3, 4, 64), np.float16),), TILING, "cos or sin numHead must be 1."),
    ("InterleaveRope", (np.ones((2, 3, 0, 64), np.float16),) + (np.ones((2, 1, 1, 64), np.float16),) * 2 +
     (np.ones((2, 3, 0, 64), np.float16),), TILING, "seqLength should be greater than 0."),
    ("ApplyRotaryPosEmbV2", (Q, K, CQ, CQ, 1, "half"), TILING, "last dims is not 128"),
    ("ApplyRotaryPosEmbV2", (np.ones((2, 3, 4, 128), F32), np.ones((2, 3, 2, 128), F32), np.ones((2, 3, 1, 128), F32),
                             np.ones((2, 3, 1, 128), F32), 2, "half"), TILING, "layout is not one"),
    ("RotaryPositionEmbedding", (X4, C4, C4, 2, X4), TILING, "mode 2 is not supported (0 half, 1 interleave on Atlas A2)"),
]


@pytest.mark.parametrize("op,args,code,text", INVALID_CALLS + ([] if A2 else ARPE_INVALID))
def test_invalid_arguments(op, args, code, text):
    err = pytest.raises(AclError, getattr(ops, op), *args).value
    assert (err.code, text in str(err)) == (code, True), str(err)


@pytest.mark.parametrize("op,n", [("RotaryPositionEmbedding", 5), ("RotaryPositionEmbeddingGrad", 8),
                                  ("ApplyRotaryPosEmb", 5), ("ApplyRotaryPosEmbV2", 6), ("InterleaveRope", 4)])
def test_null_arguments(op, n):
    assert raw_null_status(f"aclnn{op}GetWorkspaceSize", n) == NULLPTR
    assert "is NULL" in (pyaclnn.errors.recent_error_message() or "")


A2_CALLS = """
T.test_documented_example_shapes()
for name in T.DTYPES:
    T.test_apply_rotary_pos_emb(name)
    if name != "float32":
        T.test_interleave_rope(name)
    for mode in T.MODES:
        T.test_rotary_position_embedding(mode, name)
        T.test_rotary_position_embedding_grad(mode, name)
for case in T.INVALID_CALLS + T.A2_ARPE_INVALID:
    T.test_invalid_arguments(*case)
"""


def test_atlas_a2_kernel_steps_and_tilings():
    F.run_on_a2("test_rotary", A2_CALLS)


TORCH_BODY = """
torch.manual_seed(0)
for dt in [torch.float32, torch.float16, torch.bfloat16]:
    for mode in ["half", "interleave", "quarter", "interleave-half"]:
        x = torch.randn(2, 3, 4, 8).to(dt); ang = torch.rand(1, 3, 1, 8) * 6 - 3
        c, s = ang.cos().to(dt), ang.sin().to(dt); g = torch.randn(2, 3, 4, 8).to(dt)
        xn, cn, sn = (t.npu().requires_grad_(True) for t in (x, c, s))
        y = torch_npu.npu_rotary_mul(xn, cn, sn, rotary_mode=mode)
        y.backward(g.npu())
        OUT[f"mul {dt} {mode}"] = [enc(to_np(v)) for v in (x, c, s, g, y, xn.grad, cn.grad, sn.grad)]
    for mode in ["half", "quarter", "interleave"]:
        q = torch.randn(2, 3, 4, 16).to(dt); k = torch.randn(2, 3, 2, 16).to(dt); ang = torch.rand(2, 3, 1, 16) * 6 - 3
        c, s = ang.cos().to(dt), ang.sin().to(dt)
        qo, ko = torch_npu.npu_apply_rotary_pos_emb(q.npu(), k.npu(), c.npu(), s.npu(), "BSND", mode)
        OUT[f"apply {dt} {mode}"] = [enc(to_np(v)) for v in (q, k, c, s, qo, ko)]
    x = torch.randn(2, 3, 4, 64).to(dt); ang = torch.rand(2, 1, 4, 64) * 6 - 3
    c, s = ang.cos().to(dt), ang.sin().to(dt)
    OUT[f"interleave {dt} interleave-half"] = [enc(to_np(v)) for v in (x, c, s, torch_npu.npu_interleave_rope(x.npu(), c.npu(), s.npu()))]
"""


def test_torch_npu_reaches_the_operators():
    out = F.torch_npu_arrays(TORCH_BODY)
    assert len(out) == 24
    modes = {"half": 0, "interleave": 1, "quarter": 2, "interleave-half": 3}
    for key, vals in out.items():
        kind, dt, m = key.split()
        name, mode = F.TORCH_NAMES[dt], modes[m]
        if kind == "mul":
            x, c, s, g, y, dx, dc, ds = vals
            assert _bits_equal(y, R.cast(rope32(x, c, s, mode), name)), key
            assert _bits_equal(dx, R.cast(rope_grad_dx32(g, c, s, mode), name)), key
            _, dc64, ds64 = rope_grad64(g, c, s, x, mode)
            assert R.ulp_distance(dc, R.cast(R.cast(dc64, "float32"), name), name).max() == 0, key
            assert R.ulp_distance(ds, R.cast(R.cast(ds64, "float32"), name), name).max() == 0, key
        elif kind == "interleave":
            x, c, s, y = vals
            assert _bits_equal(y, R.cast(rope32(x, c, s, 3), name)), key
        else:
            q, k, c, s, qo, ko = vals
            for got, x in ((qo, q), (ko, k)):
                assert _bits_equal(got, R.cast(rope32(x, c, s, mode), name)), key
