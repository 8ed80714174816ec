"""GroupedMatmulFinalizeRouting V2 / V3 (native_stubs/src/ops/moe/gmm_finalize_routing.toml). The op_api's ND-weight
entries (hicann/ops-transformer gmm/grouped_matmul_finalize_routing/op_host/op_api/aclnn_grouped_matmul_finalize_routing.cpp)
accept only the A8W4 path (an INT32-packed INT4 weight): these tests check the vendor's checks up to CheckDtypeValid
in its order, codes and words (161001 / 161002) on Atlas A2 (V2 on Ascend 950 too, which the emulator then refuses:
161002 naming the limit; V3 on Ascend 950 takes the MX paths of the newer op_api: test_gmm_finalize_routing_mx.py),
that a valid call runs on Atlas A2 (its arithmetic and later checks: test_gmmfr_a8w4.py), and torch_npu's
npu_grouped_matmul_finalize_routing reaching V3 with an ND weight.
The cases below are written from the op_api's source, never from our C."""
from __future__ import annotations

import numpy as np
import pytest

from pyaclnn import ops
from reference import elementwise as R
from _op_helpers import INVALID, NULLPTR
import _fused_ops as F

M, K, N, E, BS = 4, 256, 128, 2, 4
LIMIT = "the emulator does not implement the A8W4 computation"


def args(**kw):
    """V3's arguments (tuningConfig before out): a valid A8W4 call by default."""
    a = dict(x1=np.ones((M, K), np.int8), x2=np.ones((E, K, N // 8), np.int32),
             scale=np.ones((E, 1, N), np.int64), bias=np.zeros((E, N), np.float32), offset=None, aqs=None, aqo=None,
             pts=np.ones(M, np.float32), gl=np.array([2, 2], np.int64), shared=R.cast(np.zeros((BS, N)), "bfloat16"),
             logit=np.ones(M, np.float32), row=np.arange(M, dtype=np.int64), dtype=0, siw=1.0, sio=0, t1=False,
             t2=False, glt=1, tuning=None, out=np.zeros((BS, N), np.float32))
    a.update(kw)
    return tuple(a.values())


def v2(a):
    """V3's arguments as V2's (no tuningConfig)."""
    return a[:18] + a[19:]


V3 = "aclnnGroupedMatmulFinalizeRoutingV3"
# (arguments, code, message text): one fault each, in the op_api's order; a later case keeps the earlier ones valid
CASES = [
    (args(logit=None), NULLPTR, f"{V3} weightNd do not support input nullptr."),
    (args(bias=None), NULLPTR, f"{V3} weightNd do not support input nullptr."),
    (args(aqs=np.ones((E, N), np.float32)), NULLPTR, f"{V3} weightNd do not support input nullptr."),
    (args(dtype=1), INVALID, f"{V3} weightNd dtype must be 0, but is 1."),
    (args(x2=np.ones(8, np.int32)), INVALID, f"{V3} weightNd x2's view dimNum should greater than 1, but is 1."),
    (args(t2=True), INVALID, f"{V3} weightNd transpose should be false"),
    (args(x2=np.ones((E, K, N), np.int8)), INVALID, f"{V3} weightNd weight type should be INT_32, but now is INT8"),
    (args(out=None), NULLPTR, "out is NULL"),
    (args(x2=np.ones((K, N // 8), np.int32)), INVALID, "x2's storage dimNum should be in [3, 7], but is 2."),
    (args(x1=np.ones(K, np.int8)), INVALID, "The params.x1 tensor must have at least 2 dimensions."),
    (args(scale=np.ones((E, N), np.int64)), INVALID,
     "Expected 3 dimension input, but got params.scale with sizes [2, 128]."),
    (args(offset=np.ones((E, N), np.float32)), INVALID, "but got params.offset with sizes [2, 128]."),
    (args(row=np.zeros((M, 1), np.int64)), INVALID, "but got params.rowIndex with sizes [4, 1]."),
    (args(x1=np.ones((M, K), np.float16)), INVALID, "Tensor params.x1 not implemented for FLOAT16, should be in dtype support list [INT8]."),
    (args(scale=np.ones((E, 1, N), np.float32)), INVALID, "Tensor params.scale not implemented for FLOAT, should be in dtype support list [INT64]."),
    (args(row=np.arange(M, dtype=np.int32)), INVALID, "Tensor params.rowIndex not implemented for INT32, should be in dtype support list [INT64]."),
    (args(shared=np.zeros((BS, N), np.float32)), INVALID, "Tensor params.shareInput not implemented for FLOAT, should be in dtype support list [BFLOAT16]."),
    (args(out=np.zeros((BS, N), np.float16)), INVALID, "Tensor params.out not implemented for FLOAT16, should be in dtype support list [FLOAT]."),
]


A2_ONLY = pytest.mark.skipif(not F.ON_A2, reason="V3's Atlas A2 entry (Ascend 950: test_gmm_finalize_routing_mx.py); "
                             "test_atlas_a2 reruns it there")


@A2_ONLY
@pytest.mark.parametrize("a,code,text", CASES)
def test_checks_in_order(a, code, text):
    F.expect_error(ops.GroupedMatmulFinalizeRoutingV3, a, code, text)


@A2_ONLY
def test_first_fault_wins():
    """dtype (step 2) is reported before the INT8 weight (step 3), and the weight before out's NULL (step 4)."""
    F.expect_error(ops.GroupedMatmulFinalizeRoutingV3, args(dtype=2, x2=np.ones((E, K, N), np.int8)), INVALID,
                   "dtype must be 0, but is 2.")
    F.expect_error(ops.GroupedMatmulFinalizeRoutingV3, args(x2=np.ones((E, K, N), np.int8), out=None), INVALID,
                   "weight type should be INT_32")


@A2_ONLY
def test_valid_calls_run():
    """What passes the checks runs the A8W4 kernel on Atlas A2 (with and without offset / tuningConfig); out is
    rewritten: zeros here (the words' fp32 bits 1 keep no fp19 scale, and sharedInput is 0)."""
    for a in (args(), args(offset=np.zeros((E, 1, N), np.float32), tuning=[2])):
        out = np.asarray(ops.GroupedMatmulFinalizeRoutingV3(*a[:-1], np.full((BS, N), 5, np.float32))[-1])
        assert out.shape == (BS, N) and (out == 0).all()


def test_v2_names_itself():
    """V2 runs the same checks; its messages carry the name its op_api writes (without the aclnn prefix). A valid call
    runs on Atlas A2; on Ascend 950 the emulator refuses it (the vendor's A8W4 kernel is an Atlas A2 / A3 one)."""
    F.expect_error(ops.GroupedMatmulFinalizeRoutingV2, v2(args(row=None)), NULLPTR,
                   "GroupedMatmulFinalizeRoutingV2 weightNd do not support input nullptr.")
    F.expect_error(ops.GroupedMatmulFinalizeRoutingV2, v2(args(t1=True)), INVALID,
                   "GroupedMatmulFinalizeRoutingV2 weightNd transpose should be false")
    if F.ON_A2:
        assert (np.asarray(ops.GroupedMatmulFinalizeRoutingV2(*v2(args()))[-1]) == 0).all()
    else:
        F.expect_error(ops.GroupedMatmulFinalizeRoutingV2, v2(args()), INVALID, LIMIT)


A2_CALLS = """
for a, code, text in T.CASES:
    T.test_checks_in_order(a, code, text)
T.test_first_fault_wins()
T.test_valid_calls_run()
T.test_v2_names_itself()
"""


def test_atlas_a2():
    """The vendor ships these kernels for Atlas A2 / A3: the same checks there."""
    F.run_on_a2("test_grouped_matmul_finalize_routing", A2_CALLS)


def test_null_status_is_nullptr():
    F.null_status_is_nullptr("GroupedMatmulFinalizeRoutingV3", 20)


TORCH_BODY = """
def err(f):
    try:
        f()
    except RuntimeError as e:
        return str(e)
    return "no error"

m, k, n, e = 4, 256, 128, 2
x = torch.ones(m, k, dtype=torch.int8).npu()
gl = torch.tensor([2, 2]).npu()
kw = dict(scale=torch.ones(e, 1, n, dtype=torch.int64).npu(), bias=torch.zeros(e, n).npu(),
          pertoken_scale=torch.ones(m).npu(), shared_input=torch.zeros(m, n, dtype=torch.bfloat16).npu(),
          logit=torch.ones(m).npu(), row_index=torch.arange(m).npu())
w8 = torch.ones(e, k, n, dtype=torch.int8).npu()
w4 = torch.ones(e, k, n // 8, dtype=torch.int32).npu()
OUT["a8w8_nd"] = err(lambda: torch_npu.npu_grouped_matmul_finalize_routing(x, w8, gl, **kw))
OUT["a8w4_nd"] = err(lambda: torch_npu.npu_grouped_matmul_finalize_routing(x, w4, gl, **kw))
OUT["no_logit"] = err(lambda: torch_npu.npu_grouped_matmul_finalize_routing(x, w4, gl, **dict(kw, logit=None)))
"""


def test_torch_npu_reaches_v3():
    """An ND weight goes to aclnnGroupedMatmulFinalizeRoutingV3 (op-plugin's choice while V3 exists): its checks come
    back through torch_npu with the vendor's words, and the A8W4 call runs."""
    from _math_ops import torch_npu_run
    out = torch_npu_run(TORCH_BODY, {}, soc="Ascend910B4")
    assert "weightNd weight type should be INT_32, but now is INT8" in out["a8w8_nd"], out["a8w8_nd"]
    assert out["a8w4_nd"] == "no error", out["a8w4_nd"]
    assert f"{V3} weightNd do not support input nullptr." in out["no_logit"], out["no_logit"]
