"""pyaclnn.ops: the generic launcher (call / attribute access), the friendly amp_update_scale, the
workspace pool, errors and the support matrix."""
from __future__ import annotations

import ctypes
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from helpers import DeviceTensor
from pyaclnn import capi, ops, runtime
from pyaclnn.errors import AclError
from pyaclnn.ops import _launcher, _marshal, _registry
from pyaclnn.signatures import OpSignature, Param
from pyaclnn.signatures.model import Kind, Role
from reference import amp_update_scale as ref

DTYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}

# (current scale, growth tracker, found_inf, growth factor, backoff factor, growth interval)
CASES = [
    (65536.0, 900, 0.0, 2.0, 0.5, 901),          # growth
    (65536.0, 3, 1.0, 2.0, 0.5, 5),               # backoff
    (100.0, 2, 0.0, 2.0, 0.5, 5),                 # count up
    (3.0e38, 4, 0.0, 2.0, 0.5, 5),                # growth overflows fp32: kept (or fp16/bf16 inf)
    (65504.0, 4, 0.0, 2.0, 0.5, 5),               # fp16: finite in fp32, inf once narrowed
    (1.0, 0, np.nan, 2.0, 0.5, 5),                # NaN counts as found
    (1.0, 4, -0.0, 2.0, 0.5, 5),                  # -0.0 does not
    (7.0, 4, 0.0, 1.1, 0.5, 5),                   # inexact factor (rounded to float32)
    (3.0e-39, 1, 1.0, 2.0, 0.3, 5),               # subnormal backoff
    (1.5, 2**31 - 1, 0.0, 2.0, 0.5, 2**31 - 1),   # tracker wraps to INT32_MIN
]


@pytest.fixture(autouse=True)
def default_stream_exists():
    return runtime.current_stream()


def bits(a) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def capi_path(case, dtype, stream_handle):
    """The line-by-line C sequence through pyaclnn.capi (the reference path)."""
    scale, tracker, found, gf, bf, gi = case
    npd = DTYPES[dtype]
    tensors = [DeviceTensor(np.array([scale], np.float32).astype(npd)),
               DeviceTensor(np.array([tracker], np.int32)),
               DeviceTensor(np.array([found], np.float32).astype(npd)),
               DeviceTensor(np.zeros(1, npd)), DeviceTensor(np.zeros(1, np.int32))]
    try:
        size, executor = ctypes.c_uint64(), ctypes.c_void_p()
        h = [t.handle for t in tensors]
        assert capi.aclnnAmpUpdateScaleGetWorkspaceSize(h[0], h[1], h[2], gf, bf, gi, h[3], h[4],
                                                        ctypes.byref(size), ctypes.byref(executor)) == 0
        assert size.value == 0
        assert capi.aclnnAmpUpdateScale(None, 0, executor, stream_handle) == 0
        assert capi.aclrtSynchronizeStream(stream_handle) == 0
        return tensors[3].numpy(), tensors[4].numpy()
    finally:
        for t in tensors:
            t.close()


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
def test_friendly_generic_and_attribute_paths_match_capi_bits(dtype, stream):
    npd = DTYPES[dtype]
    s = runtime.Stream.wrap(stream)
    for case in CASES:
        scale, tracker, found, gf, bf, gi = case
        want_scale, want_tracker = capi_path(case, dtype, stream)
        # independent NumPy reference of the spec
        ref_scale, ref_tracker = ref.amp_update_scale(np.array(scale, np.float32).astype(npd), tracker,
                                                      np.array(found, np.float32).astype(npd), gf, bf, gi, dtype)
        assert bits(want_scale) == bits(np.array([ref_scale], npd)), case
        assert int(want_tracker[0]) == ref_tracker, case

        host = (np.array([scale], np.float32).astype(npd), np.array([tracker], np.int32),
                np.array([found], np.float32).astype(npd))
        # 1. friendly, numpy in -> numpy out
        got = ops.amp_update_scale(*host, gf, bf, gi, stream=s)
        assert bits(got[0]) == bits(want_scale) and bits(got[1]) == bits(want_tracker), case
        # 2. friendly on device tensors (outputs allocated, asynchronous)
        dev = [pyaclnn.from_numpy(a, stream=s) for a in host]
        out = ops.amp_update_scale(*dev, gf, bf, gi, stream=s)
        assert all(isinstance(o, pyaclnn.Tensor) for o in out)
        assert bits(out[0].numpy()) == bits(want_scale) and bits(out[1].numpy()) == bits(want_tracker)
        # 3. generic call with caller-provided outputs
        outs = (pyaclnn.empty((1,), dtype, stream=s), pyaclnn.empty((1,), "int32", stream=s))
        ret = ops.call("AmpUpdateScale", *dev, gf, bf, gi, *outs, stream=s)
        assert ret[0] is outs[0] and ret[1] is outs[1]
        assert bits(outs[0].numpy()) == bits(want_scale) and bits(outs[1].numpy()) == bits(want_tracker)
        # 4. attribute access, numpy outputs filled in place
        a, b = np.zeros(1, npd), np.zeros(1, np.int32)
        ret = ops.AmpUpdateScale(*host, gf, bf, gi, a, b, stream=s)
        assert ret[0] is a and ret[1] is b
        assert bits(a) == bits(want_scale) and bits(b) == bits(want_tracker), case


def test_keyword_arguments_and_spellings():
    x = pyaclnn.from_numpy(np.array([8.0], np.float32))
    g = pyaclnn.from_numpy(np.array([4], np.int32))
    f = pyaclnn.zeros((1,))
    o1, o2 = pyaclnn.empty((1,)), pyaclnn.empty((1,), "int32")
    ops.aclnnAmpUpdateScale(currentScale=x, growthTracker=g, foundInf=f, growthFactor=2.0,
                            backoff_factor=0.5, growth_interval=5, updated_scale_out=o1,
                            updatedGrowthTrackerOut=o2)
    assert o1.numpy()[0] == 16.0 and o2.numpy()[0] == 0
    assert ops.get("amp_update_scale") is ops.get("aclnnAmpUpdateScale") is ops.AmpUpdateScale
    with pytest.raises(TypeError, match="missing argument 'updated_growth_tracker_out'"):
        ops.AmpUpdateScale(x, g, f, 2.0, 0.5, 5, o1)
    with pytest.raises(TypeError, match="unexpected keyword"):
        ops.AmpUpdateScale(x, g, f, 2.0, 0.5, 5, o1, o2, bogus=1)
    with pytest.raises(TypeError, match="takes 8 arguments"):
        ops.AmpUpdateScale(x, g, f, 2.0, 0.5, 5, o1, o2, o2)
    with pytest.raises(TypeError, match="expects a tensor"):
        ops.AmpUpdateScale("1.0", g, f, 2.0, 0.5, 5, o1, o2)
    # numbers that ctypes does not take as they are are converted (numpy scalars)
    ops.AmpUpdateScale(x, g, f, np.float32(2.0), np.float64(0.5), np.int64(5), o1, o2)
    assert o2.numpy()[0] == 0


def test_a_tensor_parameter_named_self_is_passed_by_keyword():
    # aclnn names the first tensor of most operators "self", as Python names a method's instance.
    x = pyaclnn.from_numpy(np.array([1.0, 2.0], np.float32))
    want = [3.0, 4.0]
    assert ops.Adds(self=x, other=2.0, alpha=1, out=pyaclnn.empty((2,))).numpy().tolist() == want
    assert ops.call("Adds", self=x, other=2.0, alpha=1, out=pyaclnn.empty((2,))).numpy().tolist() == want
    out = pyaclnn.empty((2,))
    with ops.get("Adds").prepare(self=x, other=2.0, alpha=1, out=out) as plan:
        plan(self=pyaclnn.from_numpy(np.array([5.0, 6.0], np.float32)))
        assert out.numpy().tolist() == [7.0, 8.0]
    with ops.plan("Adds", self=x, other=2.0, alpha=1, out=pyaclnn.empty((2,))) as plan:
        assert plan.execute(x)[0].numpy().tolist() == want


def test_friendly_defaults_results_and_inplace():
    s, t = ops.amp_update_scale(65536.0, 1999, 0.0)      # torch's GradScaler defaults: interval 2000
    assert s.dtype == np.float32 and s.tolist() == [131072.0] and t.tolist() == [0]
    scale = np.array([8.0], np.float16)
    tracker = np.array([0], np.int32)
    r = ops.amp_update_scale(scale, tracker, np.array([1.0], np.float16), inplace=True)
    assert r[0] is scale and r[1] is tracker
    assert scale.tolist() == [4.0] and tracker.tolist() == [0]
    dev = [pyaclnn.from_numpy(np.array([8.0], np.float32)), pyaclnn.from_numpy(np.array([2], np.int32))]
    r = ops.amp_update_scale(dev[0], dev[1], pyaclnn.zeros((1,)), growth_interval=10, inplace=True)
    assert r[0] is dev[0] and dev[1].numpy().tolist() == [3]
    assert "Returns" in ops.amp_update_scale.__doc__ and "growth_interval" in ops.amp_update_scale.__doc__


def test_operator_errors_name_the_operator_and_soc():
    soc = runtime.soc_name()
    with pytest.raises(AclError) as info:
        ops.amp_update_scale(np.array([1.0]), np.array([0], np.int32), np.array([0.0]))   # float64
    err = info.value
    assert err.code == capi.ACLNN_ERR_PARAM_INVALID and err.name == "ACLNN_ERR_PARAM_INVALID"
    assert err.func == "aclnnAmpUpdateScaleGetWorkspaceSize"
    assert "currentScale dtype DOUBLE is not supported" in err.message       # the vendor message
    assert soc in err.hint and "aclnnAmpUpdateScale" in err.hint
    with pytest.raises(AclError) as info:
        ops.amp_update_scale(1.0, 0, 0.0, growth_interval=0)
    assert info.value.code == capi.ACLNN_ERR_INNER_TILING_ERROR and "tiling" in info.value.hint
    with pytest.raises(AclError) as info:
        ops.AmpUpdateScale(None, None, None, 2.0, 0.5, 5, None, None)
    assert info.value.code == capi.ACLNN_ERR_PARAM_NULLPTR


def test_an_earlier_unread_failure_does_not_lend_its_hint():
    """A raw capi call that failed on a destroyed argument and whose message nobody read stays in the thread's
    message buffer; the next friendly failure reads both, and its hint is still its own (a dtype refusal)."""
    ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
    assert capi.aclnnAmpUpdateScaleGetWorkspaceSize(0xDEAD0, 0xDEAD0, 0xDEAD0, 2.0, 0.5, 10, 0xDEAD0, 0xDEAD0,
                                                    ctypes.byref(ws), ctypes.byref(ex)) == capi.ACLNN_ERR_PARAM_INVALID
    with pytest.raises(AclError) as info:
        ops.amp_update_scale(np.array([1.0]), np.array([0], np.int32), np.array([0.0]))   # float64
    assert "rejected an argument" in info.value.hint and "no longer exists" not in info.value.hint


def test_missing_operator_names_libraries_and_soc():
    with pytest.raises(ops.OperatorNotFoundError) as info:
        ops.call("NoSuchOperator")
    err = info.value
    assert isinstance(err, AclError) and isinstance(err, AttributeError)
    assert err.code == capi.ACL_ERROR_OP_NOT_FOUND and err.func == "aclnnNoSuchOperator"
    assert err.soc == runtime.soc_name() and err.soc in str(err)
    for path in pyaclnn.library_paths():
        assert path in str(err)
    assert not hasattr(ops, "NoSuchOperator")
    with pytest.raises(AttributeError):
        ops.no_such_thing


@pytest.fixture
def extra_headers():
    yield Path(__file__).parent / "data" / "signature_headers"
    _registry._signatures = None
    _registry._extra_dirs.clear()
    _registry._functions.clear()


def test_declared_but_not_exported_operator(extra_headers):
    added = ops.load_headers(extra_headers)
    assert "aclnnScaleShift" in added
    fn = ops.get("ScaleShift")          # declared: its launcher exists, but cannot bind
    assert [p.name for p in fn.params][:2] == ["self", "scaleOptional"]
    assert not fn.available
    assert not hasattr(ops, "ScaleShift") and "ScaleShift" not in ops.available()
    with pytest.raises(ops.OperatorNotFoundError) as info:
        fn(None, None, None, None, None, 1.0, None)
    assert "aclnnScaleShiftGetWorkspaceSize is declared by a header but not exported" in str(info.value)
    assert pyaclnn.library_paths()[-1] in str(info.value)


def test_the_launcher_calls_capis_functions_and_capi_learns_operators_headers_add(extra_headers):
    from pyaclnn import capi
    from pyaclnn.errors import MissingSymbolError
    gws, launch = ops.get("Add").bind()
    assert gws is capi.cfunc("aclnnAddGetWorkspaceSize") and launch is capi.cfunc("aclnnAdd")
    ops.load_headers(extra_headers)
    with pytest.raises(ops.OperatorNotFoundError):
        ops.get("ScaleShift").bind()
    # Declared in capi from the header's prototype, as every C name is; calling it says what is missing.
    assert "aclnnScaleShiftGetWorkspaceSize" in capi.__all__
    assert capi.DECLARATIONS["aclnnScaleShiftGetWorkspaceSize"].startswith(
        "aclnnStatus aclnnScaleShiftGetWorkspaceSize(const aclTensor*, const aclTensor*")
    with pytest.raises(MissingSymbolError):
        capi.aclnnScaleShiftGetWorkspaceSize(None, None, None, None, None, 1.0, None, None, None)


# ------------------------------------------------------------------------------------------------
# Workspace from the stream's pool (a fake operator that asks for one)
# ------------------------------------------------------------------------------------------------

GWS_PROTO = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64),
                             ctypes.POINTER(ctypes.c_void_p))
LAUNCH_PROTO = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p,
                                ctypes.c_void_p)


@pytest.fixture
def fake_op(monkeypatch):
    launches = []

    def gws(x, out, size, executor):
        size[0] = 3000
        executor[0] = 0x1234
        return 0

    def launch(workspace, size, executor, stream):
        launches.append((workspace, size, executor, stream))
        return 0

    fns = {"aclnnFakeWsGetWorkspaceSize": GWS_PROTO(gws), "aclnnFakeWs": LAUNCH_PROTO(launch)}
    monkeypatch.setattr(_launcher.capi, "operator_functions",
                        lambda sig: (fns[sig.workspace_function], fns[sig.name]))
    sig = OpSignature("aclnnFakeWs", (
        Param("x", "const aclTensor*", Kind.TENSOR), Param("out", "aclTensor*", Kind.TENSOR, Role.OUT),
        Param("workspaceSize", "uint64_t*", Kind.WORKSPACE_SIZE, Role.OUT),
        Param("executor", "aclOpExecutor**", Kind.EXECUTOR, Role.OUT)), "fake.h")
    return _launcher.OpFunction(sig), launches


def test_workspace_comes_from_the_stream_pool_and_goes_back(fake_op):
    fn, launches = fake_op
    a, b = runtime.Stream(), runtime.Stream()
    x, y = pyaclnn.zeros((4,), stream=a), pyaclnn.zeros((4,), stream=a)
    assert fn(x, y, stream=a) is y
    fn(x, y, stream=a)
    fn(x, y, stream=b)
    (ws1, n1, ex, s1), (ws2, _, _, _), (ws3, _, _, s3) = launches
    assert n1 == 3000 and ex == 0x1234 and s1 == a.handle and s3 == b.handle
    assert ws1 and ws1 == ws2                     # stream-ordered reuse on the same stream
    assert ws3 != ws1                             # never across streams
    for s in (a, b):
        st = s.pool.stats()
        assert st["cached_bytes"] == 3072
    assert a.pool.stats()["in_use_blocks"] == 2   # x and y only: no workspace kept
    assert b.pool.stats()["in_use_blocks"] == 0
    del x, y
    a.close()
    b.close()


# ------------------------------------------------------------------------------------------------
# Marshalling of attribute kinds
# ------------------------------------------------------------------------------------------------

def test_attribute_objects_are_made_and_destroyed():
    before = runtime.stub_live_counts()
    post: list = []
    stream = runtime.current_stream()
    ints = _marshal.converter(Param("dims", "const aclIntArray*", Kind.INT_ARRAY))(
        [1, 2, np.int64(3)], stream, post)
    n = ctypes.c_uint64()
    assert capi.aclGetIntArraySize(ints, ctypes.byref(n)) == 0 and n.value == 3
    floats = _marshal.converter(Param("w", "const aclFloatArray*", Kind.FLOAT_ARRAY))(np.ones(4), stream, post)
    assert capi.aclGetFloatArraySize(floats, ctypes.byref(n)) == 0 and n.value == 4
    mask = _marshal.converter(Param("m", "const aclBoolArray*", Kind.BOOL_ARRAY))((True, False), stream, post)
    assert capi.aclGetBoolArraySize(mask, ctypes.byref(n)) == 0 and n.value == 2
    scalar = _marshal.converter(Param("alpha", "const aclScalar*", Kind.SCALAR))(0.5, stream, post)
    assert scalar
    list_conv = _marshal.converter(Param("xs", "const aclTensorList*", Kind.TENSOR_LIST))
    tl = list_conv([pyaclnn.zeros((2,)), pyaclnn.from_numpy(np.ones(3, np.float32))], stream, post)
    assert capi.aclGetTensorListSize(tl, ctypes.byref(n)) == 0 and n.value == 2
    with pytest.raises(TypeError, match="pyaclnn._boundary"):    # host data never gets this far
        list_conv([np.ones(3, np.float32)], stream, post)
    assert _marshal.converter(Param("s", "const char*", Kind.STRING))("rint", stream, post) == b"rint"
    assert _marshal.converter(Param("d", "int64_t", Kind.INT))("float8_e4m3fn", stream, post) \
        == capi.ACL_FLOAT8_E4M3FN
    during = runtime.stub_live_counts()
    assert during["arrays"] == before["arrays"] + 3 and during["scalars"] == before["scalars"] + 1
    assert during["tensor_lists"] == before["tensor_lists"] + 1
    _marshal.finish(post, stream, ok=True)
    after = runtime.stub_live_counts()
    for key in ("arrays", "scalars", "tensor_lists"):
        assert after[key] == before[key], key
    assert after["tensors"] == before["tensors"]
    assert _marshal.as_scalar(3).acl_dtype == capi.ACL_INT64
    assert _marshal.as_scalar(True).acl_dtype == capi.ACL_BOOL
    assert _marshal.as_scalar(np.float16(1)).acl_dtype == capi.ACL_FLOAT16
    assert ops.Scalar(1.5, "bf16").acl_dtype == capi.ACL_BF16


def test_python_ints_are_int64_scalars_and_int64_tensors():
    """A Python int is torch's int64: an aclScalar of ACL_INT64, and tensor data of ACL_INT64 (
    point 11). 2**40 + 3 does not fit int32: as ACL_INT32 it would be refused or wrap."""
    big = 2 ** 40 + 3
    s = _marshal.as_scalar(big)
    assert s.acl_dtype == capi.ACL_INT64 and int(s._data) == big
    assert _marshal.as_scalar(7).acl_dtype == capi.ACL_INT64
    x = np.array([1, -2, 5], np.int64)
    got = ops.Adds(x, big, 1, np.zeros(3, np.int64))               # the scalar reaches the kernel whole
    np.testing.assert_array_equal(got, x + big)
    assert pyaclnn.from_numpy(7).dtype_name == "ACL_INT64"
    assert pyaclnn.from_numpy([1, 2]).dtype_name == "ACL_INT64"
    got = ops.Add(x, big, 1, np.zeros(3, np.int64))                # a Python int as tensor data
    np.testing.assert_array_equal(got, x + big)


def test_python_float_is_a_double_scalar():
    """A Python float is a C double, and torch_npu passes it as an ACL_DOUBLE aclScalar: its value
    must reach the operator unrounded. 0.1 is not a float32 value, so a float64 tensor plus 0.1 shows
    the difference (the expected values are NumPy's float64 arithmetic)."""
    scalar = _marshal.as_scalar(0.1)
    assert scalar.acl_dtype == capi.ACL_DOUBLE
    assert scalar._data.tobytes() == np.float64(0.1).tobytes()
    x = np.array([0.0, 1.0, -3.0], np.float64)
    got = ops.Adds(x, 0.1, 1, np.zeros(3, np.float64))
    assert got.tolist() == (x + np.float64(0.1)).tolist()
    got = ops.Muls(x, 0.1, np.zeros(3, np.float64))
    assert got.tolist() == (x * np.float64(0.1)).tolist()


# ------------------------------------------------------------------------------------------------
# Support matrix
# ------------------------------------------------------------------------------------------------

def test_support_matrix_here_and_on_another_soc():
    here = runtime.soc_name()
    rows = ops.support_matrix(ops=["AmpUpdateScale"], socs=[here, "Ascend310P3"])
    table = {(r["soc"], r["dtype"]): r for r in rows}
    for d in ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16"):
        assert table[(here, d)]["supported"] is True
        assert table[("Ascend310P3", d)]["supported"] is False
        assert table[("Ascend310P3", d)]["status"] == "ACLNN_ERR_INNER_FIND_KERNEL_ERROR"
    for d in ("ACL_DOUBLE", "ACL_INT32"):
        assert table[(here, d)] == {"op": "aclnnAmpUpdateScale", "dtype": d, "soc": here, "available": True,
                                    "supported": False, "status": "ACLNN_ERR_PARAM_INVALID"}
    md = ops.support_matrix_markdown(rows)
    assert md.splitlines()[0] == f"| operator | dtype | {here} | Ascend310P3 |"
    assert "| AmpUpdateScale | BF16 | yes | no (ACLNN_ERR_INNER_FIND_KERNEL_ERROR) |" in md


def test_support_matrix_lists_every_registry_operator():
    rows = ops.support_matrix()
    listed = {r["op"] for r in rows}
    assert listed == set(ops.signatures())
    for r in rows:
        if r["op"] != "aclnnAmpUpdateScale" and r["dtype"] is None:
            assert r["status"] in ("no probe", "not exported")
