"""Validation of aclnnAddRmsNormDynamicQuant[V2]GetWorkspaceSize and its run (spec B.3, B.4, B.5,
B.11 and the corrections box): every row has a call with its exact status code, the phase it
surfaces in, and a non-empty aclGetRecentErrMsg.

Expected codes come twice, independently: written here from the spec (per SoC family), and from
the table-driven reference tests/reference/arnq_validation.py; a row fails if either disagrees with
the stub (or with each other). Phase 2 means: GetWorkspaceSize returns 0 and the run returns 561103
(tiling / kernel-selection rejections, corrections box 1); "early" means success with workspace 0
and nothing written (B.11).
"""
from __future__ import annotations

import pytest
from test_add_rms_norm_dynamic_quant_harness import run_batch

from reference.add_rms_norm_dynamic_quant import Tensor, expected_status

NULLPTR, INVALID, TILING, INNER_NULL = 161001, 161002, 561002, 561103
OK, EARLY = (0, 0), "early"
P1 = lambda code: (1, code)  # noqa: E731
P2 = (2, INNER_NULL)


def T(shape, dtype="float16"):
    return Tensor(tuple(shape), dtype)


def describe(version, n=8, m=2, y="int8", smooth=(False, False), beta=False, mask=None, epsilon=1e-6,
             **over):
    """Tensors of a [m, n] call (reference Tensor descriptions; None = NULL) plus attributes; beta
    is True (a [n] tensor), False or a Tensor."""
    t = dict(x1=T((m, n)), x2=T((m, n)), gamma=T((n,)), y1=T((m, n), y), y2=T((m, n), y),
             x_out=T((m, n)), scale1=T((m,), "float32"), scale2=T((m,), "float32"),
             smooth1=T((n,)) if smooth[0] else None, smooth2=T((n,)) if smooth[1] else None,
             beta=beta if isinstance(beta, Tensor) else (T((n,)) if beta else None))
    if version == 1:
        t.pop("beta")
    t.update(over)
    return dict(version=version, tensors=t, epsilon=epsilon, mask=mask)


def empty(n=8, m=0, y="int8"):
    return dict(x1=T((m, n)), x2=T((m, n)), gamma=T((n,)), y1=T((m, n), y), y2=T((m, n), y),
                x_out=T((m, n)), scale1=T((m,), "float32"), scale2=T((m,), "float32"))


NAN = float("nan")

# id, description, expected on A2 (Atlas A2/A3), expected on 950
ROWS = [
    # ---- B.3 V1 ----------------------------------------------------------------------------
    *[(f"v1-null-{name}", describe(1, **{name: None}), P1(NULLPTR), P1(NULLPTR))
      for name in ("x1", "x2", "gamma", "y1", "y2", "x_out", "scale1", "scale2")],
    ("v1-x1-float32", describe(1, x1=T((2, 8), "float32")), P1(INVALID), P1(INVALID)),
    ("v1-x2-float32", describe(1, x2=T((2, 8), "float32")), P1(INVALID), P1(INVALID)),
    ("v1-gamma-int8", describe(1, gamma=T((8,), "int8")), P1(INVALID), P1(INVALID)),
    ("v1-smooth1-float32", describe(1, smooth=(True, True), smooth1=T((8,), "float32")), P1(INVALID), P1(INVALID)),
    ("v1-smooth2-int32", describe(1, smooth=(True, True), smooth2=T((8,), "int32")), P1(INVALID), P1(INVALID)),
    ("v1-y-int4", describe(1, y="int4"), P1(INVALID), P1(INVALID)),
    ("v1-y-int32", describe(1, y="int32"), P1(INVALID), P1(INVALID)),
    ("v1-y2-float16", describe(1, y2=T((2, 8), "float16")), P1(INVALID), P1(INVALID)),
    ("v1-y1-y2-differ", describe(1, y2=T((2, 8), "hifloat8")), P1(INVALID), P1(INVALID)),
    ("v1-xout-float32", describe(1, x_out=T((2, 8), "float32")), P1(INVALID), P1(INVALID)),
    ("v1-scale1-float16", describe(1, scale1=T((2,), "float16")), P1(INVALID), P1(INVALID)),
    ("v1-scale2-bfloat16", describe(1, scale2=T((2,), "bfloat16")), P1(INVALID), P1(INVALID)),
    ("v1-x2-shape", describe(1, x2=T((4, 4))), P1(TILING), P1(TILING)),
    ("v1-x2-rank", describe(1, x2=T((2, 8, 1))), P1(TILING), P1(TILING)),
    ("v1-gamma-2d", describe(1, gamma=T((1, 8))), P1(TILING), P1(TILING)),
    ("v1-gamma-length", describe(1, gamma=T((4,))), P1(TILING), P1(TILING)),
    ("v1-x1-rank0", describe(1, x1=T(()), x2=T(())), P1(TILING), P1(TILING)),
    ("v1-smooth1-shape", describe(1, smooth=(True, True), smooth1=T((4,))), P1(TILING), P1(TILING)),
    ("v1-smooth2-shape", describe(1, smooth=(True, True), smooth2=T((9,))), P1(TILING), P1(TILING)),
    ("v1-empty-x1", describe(1, **empty()), EARLY, EARLY),
    ("v1-empty-gamma", describe(1, **empty(n=0, m=2)), EARLY, EARLY),
    ("v1-empty-y2", describe(1, y2=T((0,), "int8")), EARLY, EARLY),
    ("v1-y1-shape", describe(1, y1=T((2, 9), "int8")), P1(INNER_NULL), P1(INNER_NULL)),
    ("v1-y2-shape-active", describe(1, smooth=(True, True), y2=T((2, 9), "int8")), P1(INNER_NULL), P1(INNER_NULL)),
    ("v1-y2-inactive-[1]", describe(1, y2=T((1,), "int8"), scale2=T((1,), "float32")), OK, OK),
    ("v1-two-smooth", describe(1, smooth=(True, True)), OK, OK),
    # ---- B.5 through V1 ---------------------------------------------------------------------
    ("v1-eps-0", describe(1, epsilon=0.0), P2, OK),
    ("v1-eps-negative", describe(1, epsilon=-1.0), P2, OK),
    ("v1-eps-underflows-to-0", describe(1, epsilon=1e-50), P2, OK),
    ("v1-eps-nan", describe(1, epsilon=NAN), OK, OK),
    ("v1-y-e4m3", describe(1, y="float8_e4m3fn"), P2, OK),
    ("v1-y-e5m2", describe(1, y="float8_e5m2"), P2, OK),
    ("v1-y-hif8", describe(1, y="hifloat8"), P2, OK),
    ("v1-smooth2-only", describe(1, smooth=(False, True)), P2, P2),
    ("v1-x2-bf16", describe(1, x2=T((2, 8), "bfloat16")), P2, P2),
    ("v1-gamma-bf16", describe(1, gamma=T((8,), "bfloat16")), P2, P2),
    ("v1-smooth1-bf16", describe(1, smooth=(True, False), smooth1=T((8,), "bfloat16")), P2, P2),
    ("v1-xout-bf16", describe(1, x_out=T((2, 8), "bfloat16")), P2, P2),
    ("v1-x1-rank1", describe(1, x1=T((8,)), x2=T((8,)), y1=T((8,), "int8"), y2=T((8,), "int8"),
                             x_out=T((8,)), scale1=T((1,), "float32")), OK, P2),
    ("v1-x1-rank9", describe(1, **{k: T((1,) * 8 + (8,), d) for k, d in
                                   (("x1", "float16"), ("x2", "float16"), ("y1", "int8"), ("y2", "int8"),
                                    ("x_out", "float16"))}, scale1=T((1,), "float32")), OK, P2),
    ("v1-xout-last-dim", describe(1, x_out=T((1, 16))), P2, P2),
    ("v1-xout-rows", describe(1, x_out=T((4, 8))), P2, P2),
    ("v1-scale1-too-long", describe(1, scale1=T((3,), "float32")), P2, P2),
    ("v1-scale1-[2,1]", describe(1, scale1=T((2, 1), "float32")), OK, OK),
    ("v1-scale1-[1,2]", describe(1, scale1=T((1, 2), "float32")), OK, P2),
    # ---- B.4 V2 ----------------------------------------------------------------------------
    ("v2-mask-size-3", describe(2, mask=[True, True, True]), P1(INVALID), P1(INVALID)),
    ("v2-mask-size-1", describe(2, mask=[True]), P1(INVALID), P1(INVALID)),
    ("v2-mask-both-false", describe(2, mask=[False, False]), P1(INVALID), P1(INVALID)),
    ("v2-smooth1-mask0-false", describe(2, smooth=(True, False), mask=[False, True]), P1(INVALID), P1(INVALID)),
    ("v2-smooth2-mask1-false", describe(2, smooth=(True, True), mask=[True, False]), P1(INVALID), P1(INVALID)),
    ("v2-smooth2-only-no-mask", describe(2, smooth=(False, True)), P1(INVALID), P1(INVALID)),
    *[(f"v2-null-{name}", describe(2, **{name: None}), P1(NULLPTR), P1(NULLPTR))
      for name in ("x1", "x2", "gamma", "x_out", "y1", "scale1")],
    ("v2-null-y2-active", describe(2, mask=[True, True], y2=None), P1(NULLPTR), P1(NULLPTR)),
    ("v2-null-scale2-active", describe(2, mask=[False, True], scale2=None), P1(NULLPTR), P1(NULLPTR)),
    ("v2-null-y2-inactive", describe(2, y2=None), P1(NULLPTR), P1(NULLPTR)),
    ("v2-null-y1-inactive", describe(2, mask=[False, True], y1=None), P1(NULLPTR), P1(NULLPTR)),
    ("v2-empty-x1", describe(2, **empty()), EARLY, EARLY),
    ("v2-empty-x2", describe(2, x2=T((0, 8))), EARLY, EARLY),
    ("v2-empty-y2", describe(2, y2=T((0,), "int8")), EARLY, EARLY),
    ("v2-empty-gamma", describe(2, **empty(n=0, m=2)), EARLY, OK),  # 950: reduce-empty template
    ("v2-empty-gamma-and-rows", describe(2, **empty(n=0, m=0)), EARLY, OK),
    ("v2-y1-y2-dtypes-differ", describe(2, mask=[True, True], y2=T((2, 8), "int4")), P1(INVALID), P1(INVALID)),
    ("v2-y1-y2-differ-inactive-ok", describe(2, y2=T((1,), "float16")), OK, OK),
    ("v2-int32-last-dim", describe(2, y="int32", y1=T((2, 2), "int32")), P1(INVALID), P1(INVALID)),
    ("v2-int32-y2-last-dim", describe(2, y="int32", mask=[True, True], y1=T((2, 1), "int32"),
                                      y2=T((2, 2), "int32")), P1(INVALID), P1(INVALID)),
    ("v2-int32", describe(2, y="int32", y1=T((2, 1), "int32")), OK, OK),
    ("v2-int32-rows", describe(2, y="int32", y1=T((1,), "int32")), P1(INNER_NULL), P1(INNER_NULL)),
    ("v2-y1-shape", describe(2, y1=T((2, 9), "int8")), P1(TILING), P1(TILING)),
    ("v2-y2-shape", describe(2, smooth=(False, True), mask=[False, True], y2=T((2, 9), "int8")),
     P1(TILING), P1(TILING)),
    # ---- B.5 through V2 ---------------------------------------------------------------------
    ("v2-int4", describe(2, y="int4"), OK, OK),
    ("v2-int4-odd", describe(2, y="int4", n=7), P2, P2),
    ("v2-hif8", describe(2, y="hifloat8"), P2, OK),
    ("v2-e4m3", describe(2, y="float8_e4m3fn", mask=[True, True]), P2, OK),
    ("v2-y-float16", describe(2, y="float16"), P2, P2),
    ("v2-beta-bf16", describe(2, beta=T((8,), "bfloat16")), P2, P2),
    ("v2-x2-shape", describe(2, x2=T((4, 4))), P2, P2),
    ("v2-x2-rank", describe(2, x2=T((2, 8, 1))), P2, P2),
    ("v2-gamma-2d", describe(2, gamma=T((1, 8))), P2, P2),
    ("v2-gamma-f32", describe(2, gamma=T((8,), "float32")), P2, P2),
    ("v2-smooth1-shape", describe(2, smooth=(True, False), smooth1=T((4,))), P2, P2),
    ("v2-smooth-bf16", describe(2, smooth=(True, True), smooth2=T((8,), "bfloat16")), P2, P2),
    ("v2-scale2-float16-active", describe(2, mask=[True, True], scale2=T((2,), "float16")), P2, P2),
    ("v2-scale2-float16-inactive", describe(2, scale2=T((1,), "float16")), P2, OK),
    ("v2-eps-0", describe(2, epsilon=0.0), P2, OK),
    ("v2-x1-rank9", describe(2, **{k: T((1,) * 8 + (8,), d) for k, d in
                                   (("x1", "float16"), ("x2", "float16"), ("y1", "int8"), ("x_out", "float16"))},
                             scale1=T((1,), "float32")), OK, P2),
    ("v2-mask-1-1-no-smooth", describe(2, mask=[True, True]), OK, OK),
    ("v2-bf16-all", describe(2, **{k: T((2, 8), "bfloat16") for k in ("x1", "x2", "x_out")},
                             gamma=T((8,), "bfloat16")), OK, OK),
]

IDS = [row[0] for row in ROWS]


def _verdict(soc, desc, **kw):
    t = desc["tensors"]
    return expected_status(desc["version"], soc, t["x1"], t["x2"], t["gamma"], t["y1"], t["y2"],
                           t["x_out"], t["scale1"], t["scale2"], smooth1=t.get("smooth1"),
                           smooth2=t.get("smooth2"), beta=t.get("beta"), epsilon=desc["epsilon"],
                           output_mask=desc["mask"], **kw)


def _call(desc, env=None):
    tensors = {name: None if t is None else {"shape": list(t.shape), "dtype": t.dtype}
               for name, t in desc["tensors"].items()}
    return {"version": desc["version"], "tensors": tensors, "epsilon": desc["epsilon"],
            "mask": desc["mask"], "env": env or {}}


@pytest.fixture(scope="module")
def results():
    """soc -> results of every row, default options and with PYACLNN_STUB_ARNQ_TILING_REJECT=phase1."""
    cache = {}

    def get(soc):
        if soc not in cache:
            calls = [_call(desc) for _, desc, _, _ in ROWS]
            calls += [_call(desc, {"PYACLNN_STUB_ARNQ_TILING_REJECT": "phase1"}) for _, desc, _, _ in ROWS]
            res = run_batch(soc, calls)
            cache[soc] = (res[: len(ROWS)], res[len(ROWS):])
        return cache[soc]
    return get


def _check(result, expected, what):
    assert "error" not in result, result
    if expected == EARLY:
        assert (result["phase1"], result["ws"], result["phase2"], result["sync"]) == (0, 0, 0, 0), (what, result)
    elif expected == OK:
        assert (result["phase1"], result["phase2"], result["sync"]) == (0, 0, 0), (what, result)
        assert result["ws"] > 0, what
    elif expected[0] == 1:
        assert result["phase1"] == expected[1], (what, result)
        assert result["msg1"], f"{what}: no aclGetRecentErrMsg"
    else:
        assert result["phase1"] == 0 and result["ws"] == 0, (what, result)
        assert result["phase2"] == expected[1], (what, result)
        assert result["msg2"] and "AddRmsNormDynamicQuant" in result["msg2"], (what, result["msg2"])


def _as_expected(verdict):
    if verdict.early_return:
        return EARLY
    return OK if verdict.phase == 0 else (verdict.phase, verdict.status)


@pytest.mark.parametrize("soc", ["a2", "950"])
@pytest.mark.parametrize("index", range(len(ROWS)), ids=IDS)
def test_validation_row(results, soc, index):
    name, desc, want_a2, want_950 = ROWS[index]
    want = want_a2 if soc == "a2" else want_950
    assert _as_expected(_verdict(soc, desc)) == want, f"{name}: the reference disagrees with the spec table"
    _check(results(soc)[0][index], want, name)


@pytest.mark.parametrize("soc", ["a2", "950"])
@pytest.mark.parametrize("index", range(len(ROWS)), ids=IDS)
def test_q8_alternative_reports_tiling_rejections_in_phase1(results, soc, index):
    """PYACLNN_STUB_ARNQ_TILING_REJECT=phase1: the documented 561002 from GetWorkspaceSize."""
    name, desc, want_a2, want_950 = ROWS[index]
    want = want_a2 if soc == "a2" else want_950
    if want == P2:
        want = P1(TILING)
    assert _as_expected(_verdict(soc, desc, tiling_reject="phase1")) == want
    _check(results(soc)[1][index], want, name)


@pytest.mark.parametrize("shape", [(4,), (1, 8)])
def test_beta_shape_is_refused(shape):
    """950 tiling: beta must be gamma's shape. The 910B tiling does not check it and its kernel
    would read N elements of whatever beta is; the emulator refuses there too (phase 2). (The
    reference's table accepts it on A2: reported as a difference.)"""
    desc = describe(2, beta=T(shape))
    assert _verdict("950", desc).phase == 2
    (a2,) = run_batch("a2", [_call(desc)])
    (r950,) = run_batch("950", [_call(desc)])
    _check(a2, P2, "a2 beta")
    _check(r950, P2, "950 beta")
    assert "beta" in a2["msg2"] and "beta" in r950["msg2"]


def test_reduce_empty_writes_minus_inf_scales_on_950_only():
    """B.11: V2 with an empty gamma runs the 950 reduce-empty template (scale = -inf per row, nothing
    else); on A2 it returns early and writes nothing."""
    desc = describe(2, mask=[True, True], **empty(n=0, m=3))
    call = _call(desc)
    (r950,) = run_batch("950", [call])
    (ra2,) = run_batch("a2", [call])
    assert r950["ws"] > 0 and r950["phase2"] == 0
    for name in ("scale1", "scale2"):
        assert r950["outputs"][name] == b"\x00\x00\x80\xff" * 3
        assert ra2["outputs"][name] == b"\x5a" * 12


def test_other_soc_has_no_kernel():
    (r,) = run_batch("Ascend310P3", [_call(describe(1))])
    _check(r, P2, "Ascend310P3")
    assert "Ascend310P3" in r["msg2"]


def test_emulator_argument_checks():
    """Beyond the tables: NULL out-parameters, stale tensor handles, unknown option values."""
    calls = [dict(_call(describe(1)), null="workspaceSize"), dict(_call(describe(2)), null="executor"),
             dict(_call(describe(1)), stale=["gamma"]), dict(_call(describe(2)), stale=["y1"]),
             _call(describe(1), {"PYACLNN_STUB_ARNQ_TREE64": "sideways"}),
             _call(describe(2), {"PYACLNN_STUB_ARNQ_UB_950": "12"})]
    res = run_batch("950", calls)
    assert [r["phase1"] for r in res] == [NULLPTR, NULLPTR, INVALID, INVALID, INVALID, INVALID]
    assert all(r["msg1"] for r in res)
    assert "sideways" in res[4]["msg1"] and "PYACLNN_STUB_ARNQ_UB_950" in res[5]["msg1"]


def test_output_outside_device_memory_faults_at_sync_and_writes_nothing():
    """A view larger than its allocation: the launch is accepted, the kernel refuses before writing
    anything, and the stream sync reports a device fault (ACL_ERROR_RT_AICORE_EXCEPTION). (aclrtMalloc
    pads a block by up to 64 bytes, as on the NPU, so the shortfall must be larger than that.)"""
    call = _call(describe(1, n=256))
    call["tensors"]["y1"]["storage"] = 4        # a 64-byte block for the 512 bytes y1 [2, 256] needs
    call["tensors"]["x_out"]["marker"] = 0x5A
    (r,) = run_batch("950", [call])
    assert (r["phase1"], r["phase2"]) == (0, 0)
    assert r["sync"] == 507015 and "y1Out" in r["msg_sync"]
    assert r["outputs"]["x_out"] == b"\x5a" * 1024
