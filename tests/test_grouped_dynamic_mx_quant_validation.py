"""aclnnGroupedDynamicMx{Quant,QuantV2}GetWorkspaceSize validation (spec §2, generation G2):
every row of the table with its exact status code and a non-empty recent-error message, the check
order (a call breaking two rules reports the earlier one), the published UT expectations (§2.4),
the stub-only rules (NULL out-pointers, tiling rejections the toolkit aborts on -> 561103), phase
2 failures (-> 561000) and the refusal on an Atlas A2 SoC. Expected codes come from the
independent table tests/reference/gmq_validation.py (expected_status)."""
from __future__ import annotations

import ctypes
from dataclasses import replace

import pytest
from helpers import run_python
from reference.gmq_validation import (ACL_BF16, ACL_FLOAT, ACL_FLOAT4_E1M2, ACL_FLOAT4_E2M1,
                                      ACL_FLOAT8_E4M3FN, ACL_FLOAT8_E5M2, ACL_FLOAT8_E8M0,
                                      ACL_FLOAT16, ACL_INT32, ACL_INT64, GmqCall, TensorArg,
                                      expected_status, make_call)
from test_grouped_dynamic_mx_quant_harness import call, operand

from pyaclnn import capi

NULLPTR, INVALID, INNER, INNER_NULLPTR = 161001, 161002, 561000, 561103
ACL_INT8, ACL_UINT8, ACL_DOUBLE = 2, 4, 11


def group_ends(g: int, m: int):
    return [m * (k + 1) // g for k in range(g)]


def build_operands(c: GmqCall):
    """Device tensors for a call description (None stays NULL). Non-contiguous tensors view every
    other element. x holds ones, groupIndex valid ends."""
    import numpy as np
    ops = []
    for name in ("x", "group_index", "y", "mxscale"):
        arg: TensorArg | None = getattr(c, name)
        if arg is None:
            ops.append(None)
            continue
        data = None
        if name == "group_index" and arg.dtype in (ACL_INT32, ACL_INT64) and len(arg.shape) == 1:
            m = c.x.shape[0] if c.x is not None and len(c.x.shape) >= 1 else 0
            dtype = np.int32 if arg.dtype == ACL_INT32 else np.int64
            data = np.array(group_ends(arg.shape[0], m), dtype=dtype)
        ops.append(operand(arg.dtype, arg.shape, data, step=1 if arg.contiguous else 2).create())
    return ops


def run_call(stream, c: GmqCall, **kw):
    ops = build_operands(c)
    try:
        return call(stream, *ops, round_mode=c.round_mode, dst_type=c.dst_type,
                    blocksize=c.blocksize, scale_alg=c.scale_alg, dst_type_max=c.dst_type_max,
                    version=c.version, **kw)
    finally:
        for op in ops:
            if op is not None:
                op.close()


# ------------------------------------------------------------------------------------------------
# The table: (id, call, words expected in the message)
# ------------------------------------------------------------------------------------------------

def fp8(m=64, n=5, g=2, **kw):
    return make_call(m, n, g, **kw)


def fp4(dst=ACL_FLOAT4_E2M1, m=64, n=6, g=2, **kw):
    return make_call(m, n, g, y_dtype=dst, **kw)


def bad_tensor(c: GmqCall, name: str, **changes) -> GmqCall:
    return replace(c, **{name: replace(getattr(c, name), **changes)})


CASES = [
    # row 1: NULL pointers, in order x, groupIndex, roundMode, y, mxscale
    ("null x", replace(fp8(), x=None), ["x"]),
    ("null groupIndex", replace(fp8(), group_index=None), ["groupIndex"]),
    ("null roundMode", replace(fp8(), round_mode=None), ["roundMode"]),
    ("null y", replace(fp8(), y=None), ["y"]),
    ("null mxscale", replace(fp8(), mxscale=None), ["mxscale"]),
    ("null x before bad dtype", replace(bad_tensor(fp8(), "y", dtype=ACL_INT8), x=None), ["x"]),
    ("null mxscale v1", replace(fp8(version=1), mxscale=None), ["mxscale"]),
    # row 3: x dtype
    ("x float32", bad_tensor(fp8(), "x", dtype=ACL_FLOAT), ["x dtype"]),
    ("x int8", bad_tensor(fp8(), "x", dtype=ACL_INT8), ["x dtype"]),
    ("x fp16 ok", fp8(x_dtype=ACL_FLOAT16), []),
    # row 4: groupIndex dtype
    ("groupIndex int64", bad_tensor(fp8(), "group_index", dtype=ACL_INT64), ["groupIndex dtype"]),
    ("groupIndex int64 v1", bad_tensor(fp8(version=1), "group_index", dtype=ACL_INT64),
     ["groupIndex dtype"]),
    ("groupIndex float", bad_tensor(fp8(), "group_index", dtype=ACL_FLOAT), ["groupIndex dtype"]),
    # row 5: y dtype
    ("y float16", replace(bad_tensor(fp8(), "y", dtype=ACL_FLOAT16), dst_type=ACL_FLOAT16),
     ["y dtype"]),
    ("y e8m0", replace(bad_tensor(fp8(), "y", dtype=ACL_FLOAT8_E8M0), dst_type=ACL_FLOAT8_E8M0),
     ["y dtype"]),
    ("y fp4 on v1", fp4(version=1), ["y dtype"]),
    ("y e1m2 on v1", fp4(ACL_FLOAT4_E1M2, version=1), ["y dtype"]),
    ("y e5m2 ok", fp8(y_dtype=ACL_FLOAT8_E5M2), []),
    ("y e1m2 ok", fp4(ACL_FLOAT4_E1M2), []),
    # row 6: mxscale dtype
    ("mxscale uint8", bad_tensor(fp8(), "mxscale", dtype=ACL_UINT8), ["mxscale dtype"]),
    ("mxscale int32", bad_tensor(fp8(), "mxscale", dtype=ACL_INT32), ["mxscale dtype"]),
    # row 7: roundMode
    ("v1 round", fp8(version=1, round_mode="round"), ["roundMode"]),
    ("v1 floor", fp8(version=1, round_mode="floor"), ["roundMode"]),
    ("v2 ceil", fp8(round_mode="ceil"), ["roundMode"]),
    ("v2 RINT", fp4(round_mode="RINT"), ["roundMode"]),
    ("v2 empty", fp4(round_mode=""), ["roundMode"]),
    ("v2 fp4 floor ok", fp4(round_mode="floor"), []),
    ("v2 fp4 round ok", fp4(ACL_FLOAT4_E1M2, round_mode="round"), []),
    # row 8: blocksize
    ("blocksize 64", fp8(blocksize=64), ["blocksize"]),
    ("blocksize 0", fp8(blocksize=0), ["blocksize"]),
    ("blocksize -32 v1", fp8(version=1, blocksize=-32), ["blocksize"]),
    # row 9: scaleAlg (V2)
    ("scaleAlg -1", fp8(scale_alg=-1), ["scaleAlg"]),
    ("scaleAlg 3", fp4(scale_alg=3), ["scaleAlg"]),
    ("scaleAlg 1 fp8 ok", fp8(scale_alg=1), []),
    ("scaleAlg 2 fp4 ok", fp4(scale_alg=2), []),
    # row 10: dstType must equal y's dtype
    ("dstType e5m2 vs e4m3 y", fp8(dst_type=ACL_FLOAT8_E5M2), ["dstType"]),
    ("dstType e2m1 vs e4m3 y", fp8(dst_type=ACL_FLOAT4_E2M1), ["dstType"]),
    ("dstType huge", fp8(dst_type=2**40), ["dstType"]),
    ("dstType fp16 v1", fp8(version=1, dst_type=ACL_FLOAT16), ["dstType"]),
    # row 11: ranks, in order x, groupIndex, y, mxscale
    ("x 3-D", bad_tensor(fp8(), "x", shape=(64, 5, 1)), ["x", "2D"]),
    ("groupIndex 2-D", bad_tensor(fp8(), "group_index", shape=(2, 4)), ["groupIndex", "1D"]),
    ("y 3-D", bad_tensor(fp8(), "y", shape=(64, 5, 1)), ["y", "2D"]),
    ("mxscale 1-D", bad_tensor(fp8(), "mxscale", shape=(30,)), ["mxscale", "3D"]),
    ("mxscale 2-D and y 1-D", bad_tensor(bad_tensor(fp8(), "mxscale", shape=(3, 10)), "y",
                                         shape=(320,)), ["y", "2D"]),
    # row 12: y shape
    ("y [64, 10]", bad_tensor(fp8(), "y", shape=(64, 10)), ["y shape"]),
    ("y [63, 5]", bad_tensor(fp8(), "y", shape=(63, 5)), ["y shape"]),
    # row 13: mxscale shape, in order dim2, dim1, dim0
    ("mxscale dim2 3", bad_tensor(fp8(), "mxscale", shape=(3, 5, 3)), ["dim2"]),
    ("mxscale dim1", bad_tensor(fp8(), "mxscale", shape=(3, 6, 2)), ["dim1"]),
    ("mxscale dim0", bad_tensor(fp8(), "mxscale", shape=(5, 5, 2)), ["dim0"]),
    ("mxscale dim0 ceil", bad_tensor(fp8(m=65), "mxscale", shape=(4, 5, 2)), ["dim0"]),
    # row 14: empty groupIndex (after the shape checks)
    ("groupIndex empty", fp8(g=0), ["groupIndex", "empty"]),
    ("groupIndex empty v1", fp8(g=0, version=1), ["groupIndex", "empty"]),
    # row 15: empty x succeeds (workspace 0); even with an FP4 odd n or a non-contiguous mxscale
    ("x m=0", fp8(m=0), []),
    ("x n=0", fp8(n=0), []),
    ("x m=0 fp4 odd n", fp4(m=0, n=3), []),
    ("x m=0 noncontiguous mxscale", bad_tensor(fp8(m=0), "mxscale", contiguous=False), []),
    # row 16: FP4 y must be contiguous (V2)
    ("fp4 y strided", bad_tensor(fp4(), "y", contiguous=False), ["contiguous"]),
    ("fp8 y strided ok", bad_tensor(fp8(), "y", contiguous=False), []),
    ("x strided ok", bad_tensor(fp8(), "x", contiguous=False), []),
    ("groupIndex strided ok", bad_tensor(fp8(), "group_index", contiguous=False), []),
    # row 18: tiling-only rejections (real toolkit aborts; stub: 561103)
    ("fp8 round", fp8(round_mode="round"), ["tiling", "rint", "aborts"]),
    ("fp8 floor e5m2", fp8(y_dtype=ACL_FLOAT8_E5M2, round_mode="floor"), ["tiling", "rint"]),
    ("fp4 scaleAlg 1", fp4(scale_alg=1), ["tiling", "scaleAlg 1"]),
    ("fp8 scaleAlg 2", fp8(scale_alg=2), ["tiling", "scaleAlg 2"]),
    ("e2m1 dtm 5", fp4(dst_type_max=5.0), ["tiling", "dstTypeMax"]),
    ("e2m1 dtm 12.5", fp4(dst_type_max=12.5), ["tiling", "dstTypeMax"]),
    ("e2m1 dtm -1", fp4(dst_type_max=-1.0), ["tiling", "dstTypeMax"]),
    ("e2m1 dtm inf", fp4(dst_type_max=float("inf")), ["tiling", "dstTypeMax"]),
    ("e1m2 dtm 1.5", fp4(ACL_FLOAT4_E1M2, dst_type_max=1.5), ["tiling", "dstTypeMax"]),
    ("e1m2 dtm 6", fp4(ACL_FLOAT4_E1M2, dst_type_max=6.0), ["tiling", "dstTypeMax"]),
    ("fp4 odd n", fp4(n=5), ["tiling", "even"]),
    ("e1m2 odd n", fp4(ACL_FLOAT4_E1M2, n=7), ["tiling", "even"]),
    ("e2m1 dtm 6 ok", fp4(dst_type_max=6.0), []),
    ("e2m1 dtm 12 ok", fp4(dst_type_max=12.0), []),
    ("e2m1 dtm -0 ok", fp4(dst_type_max=-0.0), []),
    ("e1m2 dtm 3.5 ok", fp4(ACL_FLOAT4_E1M2, dst_type_max=3.5), []),
    ("fp8 dtm ok (G2 master)", fp8(scale_alg=1, dst_type_max=2.2e-16), []),
    # row 19: mxscale must be contiguous (checked last)
    ("mxscale strided", bad_tensor(fp8(), "mxscale", contiguous=False), ["mxscale", "contiguous"]),
    ("mxscale strided after tiling", bad_tensor(fp8(round_mode="round"), "mxscale",
                                                contiguous=False), ["tiling"]),
]


@pytest.mark.parametrize("case_id, c, words", CASES, ids=[c[0] for c in CASES])
def test_validation_table(stream, case_id, c, words):
    expected = expected_status(c)
    got = run_call(stream, c)
    assert got.status == expected.status, (case_id, expected.rule, got.message)
    if expected.status == 0:
        assert got.workspace_size == (32 if expected.launches else 0)
        assert (got.launch, got.sync) == (0, 0), got.message
    else:
        assert got.message, "aclGetRecentErrMsg is empty"
        assert all(w in got.message for w in words), (words, got.message)
        api = "V2GetWorkspaceSize" if c.version == 2 else "QuantGetWorkspaceSize"
        assert api in got.message and f"({got.status})" in got.message


# ------------------------------------------------------------------------------------------------
# Published UT expectations (§2.4)
# ------------------------------------------------------------------------------------------------

V1 = dict(m=64, n=5, g=2, version=1)
UT_V1_OK = [(x, y) for x in (ACL_BF16, ACL_FLOAT16) for y in (ACL_FLOAT8_E4M3FN, ACL_FLOAT8_E5M2)]
UT_V1_BAD = {
    "x 3-D": bad_tensor(make_call(**V1), "x", shape=(64, 5, 1)),
    "group [2,4]": bad_tensor(make_call(**V1), "group_index", shape=(2, 4)),
    "y 3-D": bad_tensor(make_call(**V1), "y", shape=(64, 5, 1)),
    "mxscale 1-D": bad_tensor(make_call(**V1), "mxscale", shape=(30,)),
    "y [64,10]": bad_tensor(make_call(**V1), "y", shape=(64, 10)),
    "mxscale [5,5,2]": bad_tensor(make_call(**V1), "mxscale", shape=(5, 5, 2)),
    "x FLOAT": bad_tensor(make_call(**V1), "x", dtype=ACL_FLOAT),
    "group INT64": bad_tensor(make_call(**V1), "group_index", dtype=ACL_INT64),
    "y FLOAT16": replace(bad_tensor(make_call(**V1), "y", dtype=ACL_FLOAT16), dst_type=ACL_FLOAT16),
    "mxscale INT32": bad_tensor(make_call(**V1), "mxscale", dtype=ACL_INT32),
    "roundMode floor": replace(make_call(**V1), round_mode="floor"),
    "blocksize 64": replace(make_call(**V1), blocksize=64),
    "dstType FLOAT16": replace(make_call(**V1), dst_type=ACL_FLOAT16),
}


@pytest.mark.parametrize("x_dtype, y_dtype", UT_V1_OK)
def test_published_ut_v1_accepts(stream, x_dtype, y_dtype):
    got = run_call(stream, make_call(x_dtype=x_dtype, y_dtype=y_dtype, **V1))
    assert (got.status, got.launch, got.sync) == (0, 0, 0)


@pytest.mark.parametrize("name", list(UT_V1_BAD))
def test_published_ut_v1_rejects(stream, name):
    got = run_call(stream, UT_V1_BAD[name])
    assert got.status == INVALID and got.message


@pytest.mark.parametrize("y_dtype, n, status", [
    (ACL_FLOAT8_E4M3FN, 5, 0), (ACL_FLOAT8_E5M2, 5, 0),          # FP8 odd n
    (ACL_FLOAT4_E2M1, 4, 0), (ACL_FLOAT4_E1M2, 4, 0),            # FP4 [64, 4]
    # FP4 [64, 5]: 161002 in the G2+ op_api (UT); on G2 the tiling rejects it (-> 561103 here)
    (ACL_FLOAT4_E2M1, 5, INNER_NULLPTR), (ACL_FLOAT4_E1M2, 5, INNER_NULLPTR),
])
def test_published_ut_v2_shapes(stream, y_dtype, n, status):
    got = run_call(stream, make_call(64, n, 2, y_dtype=y_dtype))
    assert got.status == status


# ------------------------------------------------------------------------------------------------
# Stub-only rules, phase 2, handles
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["workspace_size_ptr", "executor_ptr"])
@pytest.mark.parametrize("version", [1, 2])
def test_null_out_pointers(stream, which, version):
    """The vendor writes through workspaceSize / executor unchecked (a crash); the stub refuses."""
    got = run_call(stream, make_call(64, 4, 2, version=version), **{which: False})
    assert got.status == NULLPTR
    assert ("workspaceSize" if which == "workspace_size_ptr" else "executor") in got.message


def test_rule_failures_win_over_null_out_pointers(stream):
    got = run_call(stream, make_call(64, 4, 2, blocksize=16), workspace_size_ptr=False)
    assert got.status == INVALID and "blocksize" in got.message


def test_destroyed_tensor_is_rejected(acl, recent_error):
    c = make_call(64, 4, 2)
    ops = build_operands(c)
    try:
        capi.aclDestroyTensor(ops[0].handle)
        handles = [o.handle for o in ops]
        ops[0].handle = 0
        ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
        status = capi.aclnnGroupedDynamicMxQuantV2GetWorkspaceSize(
            handles[0], handles[1], b"rint", ACL_FLOAT8_E4M3FN, 32, 0, 0.0, handles[2], handles[3],
            ctypes.byref(ws), ctypes.byref(ex))
        assert status == INVALID
        assert "not a live aclTensor" in recent_error()
    finally:
        for op in ops:
            op.close()


@pytest.mark.parametrize("version", [1, 2])
def test_phase2_failures_become_inner_error(stream, recent_error, version):
    """§1.1: any launch failure of phase 2 returns ACLNN_ERR_INNER (561000); the one message line
    names the API and the cause."""
    phase2 = capi.aclnnGroupedDynamicMxQuant if version == 1 else capi.aclnnGroupedDynamicMxQuantV2
    assert phase2(None, 0, None, stream) == INNER
    message = recent_error()
    name = "aclnnGroupedDynamicMxQuant" if version == 1 else "aclnnGroupedDynamicMxQuantV2"
    assert f"{name}(" in message and "executor" in message and message.count("\n") == 1
    # workspace too small for the 32 bytes phase 1 asked for
    c = make_call(64, 4, 2, version=version)
    ops = build_operands(c)
    try:
        got = call(stream, *ops, version=version, run=False)
        assert got.status == 0 and got.workspace_size == 32
        ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
        args = ([ops[0].handle, ops[1].handle, b"rint", ACL_FLOAT8_E4M3FN, 32]
                + ([] if version == 1 else [0, 0.0]) + [ops[2].handle, ops[3].handle])
        phase1 = (capi.aclnnGroupedDynamicMxQuantGetWorkspaceSize if version == 1
                  else capi.aclnnGroupedDynamicMxQuantV2GetWorkspaceSize)
        assert phase1(*args, ctypes.byref(ws), ctypes.byref(ex)) == 0
        assert phase2(None, 0, ex, stream) == INNER
        assert "workspaceSize" in recent_error()
    finally:
        for op in ops:
            op.close()


# ------------------------------------------------------------------------------------------------
# Platform: only the Ascend950 family runs this op (row 2)
# ------------------------------------------------------------------------------------------------

A2_SCRIPT = r"""
import ctypes, sys
sys.path.insert(0, sys.argv[1])
from pyaclnn import capi
from pyaclnn.errors import recent_error_message
from test_grouped_dynamic_mx_quant_harness import operand
assert capi.aclInit(None) in (0, 100002) and capi.aclrtSetDevice(0) == 0
import numpy as np
ops = [operand(27, (64, 4), None, fill=0).create(),
       operand(3, (2,), np.array([32, 64], np.int32)).create(),
       operand(36, (64, 4), None).create(), operand(37, (3, 4, 2), None).create()]
h = [o.handle for o in ops]
ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
s1 = capi.aclnnGroupedDynamicMxQuantGetWorkspaceSize(h[0], h[1], b"rint", 36, 32, h[2], h[3],
                                                     ctypes.byref(ws), ctypes.byref(ex))
m1 = recent_error_message()
s2 = capi.aclnnGroupedDynamicMxQuantV2GetWorkspaceSize(h[0], h[1], b"rint", 36, 32, 0, 0.0, h[2],
                                                       h[3], ctypes.byref(ws), ctypes.byref(ex))
m2 = recent_error_message()
s3 = capi.aclnnGroupedDynamicMxQuantV2GetWorkspaceSize(None, h[1], b"rint", 36, 32, 0, 0.0, h[2],
                                                       h[3], ctypes.byref(ws), ctypes.byref(ex))
print(s1, s2, s3)
print(m1.strip().replace("\n", " | "))
print(m2.strip().replace("\n", " | "))
"""


@pytest.mark.parametrize("soc", ["Ascend910B4", "Ascend910_9391", "Ascend310P3"])
def test_refused_outside_the_950_family(soc):
    """The op_api's regbase check: 161002 on A2/A3 (and unknown SoCs); NULL checks come first."""
    from helpers import REPO_ROOT
    code, out, err = run_python(A2_SCRIPT, env_overrides={"PYACLNN_STUB_SOC": soc},
                                args=[str(REPO_ROOT / "tests")])
    assert code == 0, err
    statuses, m1, m2 = out.strip().splitlines()
    assert statuses.split() == [str(INVALID), str(INVALID), str(NULLPTR)]
    for message in (m1, m2):
        assert soc in message and "Ascend950" in message
