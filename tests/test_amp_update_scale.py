"""aclnnAmpUpdateScale against spec section A (/work/shared/spec/amp_update_scale_and_add_rms_norm_
dynamic_quant.md): validation order and codes (A.2), published values (A.4), the documented
example variants, and randomized / edge cases against the NumPy reference (A.3)."""
from __future__ import annotations

import ctypes
import math

import ml_dtypes
import numpy as np
import pytest
from helpers import DeviceArray, create_tensor, run_python
from reference.amp_update_scale import amp_update_scale as reference

from pyaclnn import capi

NULLPTR = capi.ACLNN_ERR_PARAM_NULLPTR           # 161001
INVALID = capi.ACLNN_ERR_PARAM_INVALID           # 161002
TILING = capi.ACLNN_ERR_INNER_TILING_ERROR       # 561002
NO_KERNEL = capi.ACLNN_ERR_INNER_FIND_KERNEL_ERROR   # 561003

NP_TYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}
ACL_TYPES = {"float32": capi.ACL_FLOAT, "float16": capi.ACL_FLOAT16, "bfloat16": capi.ACL_BF16}
DTYPES = list(NP_TYPES)
INT32_MAX = 2**31 - 1


def bits(value, dtype: str) -> int:
    """The stored bit pattern of a scale value (compares NaN and -0.0 exactly)."""
    arr = np.array(value, dtype=NP_TYPES[dtype])
    return int(arr.view(np.uint32 if dtype == "float32" else np.uint16))


class Scalars:
    """Device buffers + [1]-shaped aclTensors for the five parameters; reused across calls."""

    def __init__(self, dtype: str, shapes=None, storage=None):
        self.dtype = dtype
        np_type, acl_type = NP_TYPES[dtype], ACL_TYPES[dtype]
        self.acl_types = [acl_type, capi.ACL_INT32, acl_type, acl_type, capi.ACL_INT32]
        self.np_types = [np_type, np.int32, np_type, np_type, np.int32]
        shapes = shapes or [[1]] * 5
        storage = storage or shapes
        self.buffers = [DeviceArray(np.zeros(max(1, int(np.prod(s))) + 1, t)) for s, t in zip(shapes, self.np_types)]
        self.tensors = [create_tensor(sh, dt, b.ptr, storage_shape=st)
                        for sh, st, dt, b in zip(shapes, storage, self.acl_types, self.buffers)]

    def write(self, scale, tracker, found_inf):
        for buf, value, t in zip(self.buffers[:3], (scale, tracker, found_inf), self.np_types):
            arr = np.zeros(buf.shape, t)
            arr[0] = value
            capi.aclrtMemcpy(buf.ptr, arr.nbytes, arr.ctypes.data, arr.nbytes, capi.ACL_MEMCPY_HOST_TO_DEVICE)

    def outputs(self):
        return self.buffers[3].numpy()[0], int(self.buffers[4].numpy()[0])

    def close(self):
        for t in self.tensors:
            capi.aclDestroyTensor(t)
        for b in self.buffers:
            b.free()


def phase1(tensors, growth_factor=2.0, backoff_factor=0.5, growth_interval=5, ws=True, ex=True):
    workspace_size, executor = ctypes.c_uint64(7), ctypes.c_void_p()
    status = capi.aclnnAmpUpdateScaleGetWorkspaceSize(
        *tensors[:3], growth_factor, backoff_factor, growth_interval, *tensors[3:],
        ctypes.byref(workspace_size) if ws else None, ctypes.byref(executor) if ex else None)
    return status, workspace_size.value, executor.value


def run_op(s: Scalars, stream, scale, tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
           growth_interval=5):
    s.write(scale, tracker, found_inf)
    status, ws, executor = phase1(s.tensors, growth_factor, backoff_factor, growth_interval)
    assert status == 0 and ws == 0
    assert capi.aclnnAmpUpdateScale(None, 0, executor, stream) == 0
    assert capi.aclrtSynchronizeStream(stream) == 0
    return s.outputs()


@pytest.fixture(params=DTYPES)
def scalars(request, acl):
    s = Scalars(request.param)
    yield s
    s.close()


def check_against_reference(s, stream, scale, tracker, found_inf, gf=2.0, bf=0.5, gi=5, rounding="rne"):
    got_scale, got_tracker = run_op(s, stream, scale, tracker, found_inf, gf, bf, gi)
    want_scale, want_tracker = reference(scale, tracker, found_inf, gf, bf, gi, s.dtype, rounding)
    case = f"{s.dtype} scale={scale!r} tracker={tracker} found_inf={found_inf!r} gf={gf!r} bf={bf!r} gi={gi}"
    assert (hex(bits(got_scale, s.dtype)), got_tracker) == (hex(bits(want_scale, s.dtype)), want_tracker), case


# ------------------------------------------------------------------------------------------------
# A.2 validation, in order, with codes and messages
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("missing", range(5))
def test_null_tensor(acl, recent_error, missing):
    s = Scalars("float32")
    try:
        tensors = list(s.tensors)
        tensors[missing] = None
        assert phase1(tensors)[0] == NULLPTR
        name = ["currentScale", "growthTracker", "foundInf", "updatedScale", "updatedGrowthTracker"][missing]
        assert name in recent_error()
    finally:
        s.close()


def test_null_workspace_size_or_executor(acl, recent_error):
    s = Scalars("float32")
    try:
        assert phase1(s.tensors, ws=False)[0] == NULLPTR
        assert "workspaceSize" in recent_error()
        assert phase1(s.tensors, ex=False)[0] == NULLPTR
        assert "executor" in recent_error()
    finally:
        s.close()


@pytest.mark.parametrize("position,acl_type,words", [
    (0, capi.ACL_INT32, "currentScale"), (0, capi.ACL_DOUBLE, "currentScale"),
    (2, capi.ACL_FLOAT16, "foundInf"), (3, capi.ACL_BF16, "updatedScale"),
    (1, capi.ACL_INT64, "growthTracker"), (4, capi.ACL_FLOAT, "updatedGrowthTracker"),
])
def test_dtype_rules(acl, recent_error, position, acl_type, words):
    s = Scalars("float32")
    try:
        tensors = list(s.tensors)
        tensors[position] = create_tensor([1], acl_type, s.buffers[position].ptr)
        assert phase1(tensors)[0] == INVALID
        message = recent_error()
        assert words in message and "dtype" in message
        capi.aclDestroyTensor(tensors[position])
    finally:
        s.close()


@pytest.mark.parametrize("acl_type", [capi.ACL_DOUBLE, capi.ACL_INT32])
def test_unsupported_scale_dtype_is_rejected_even_when_consistent(acl, recent_error, acl_type):
    """Spec A.2: currentScale, foundInf and updatedScale are FLOAT, FLOAT16 or BFLOAT16. Here all three
    share the unsupported dtype, so only the dtype list itself can reject the call."""
    s = Scalars("float32")
    try:
        tensors = list(s.tensors)
        for i in (0, 2, 3):
            tensors[i] = create_tensor([1], acl_type, s.buffers[i].ptr)
        assert phase1(tensors)[0] == INVALID
        assert "currentScale dtype" in recent_error()
        for i in (0, 2, 3):
            capi.aclDestroyTensor(tensors[i])
    finally:
        s.close()


def test_format_must_be_nd(acl, recent_error):
    s = Scalars("float32")
    try:
        tensors = list(s.tensors)
        tensors[3] = create_tensor([1], capi.ACL_FLOAT, s.buffers[3].ptr, fmt=capi.ACL_FORMAT_NCHW)
        assert phase1(tensors)[0] == INVALID
        assert "ND" in recent_error()
        capi.aclDestroyTensor(tensors[3])
    finally:
        s.close()


@pytest.mark.parametrize("interval", [0, -1, 2**31, 2**40])
def test_growth_interval_out_of_range(acl, recent_error, interval):
    s = Scalars("float32")
    try:
        assert phase1(s.tensors, growth_interval=interval)[0] == TILING
        assert "growthInterval" in recent_error()
    finally:
        s.close()


@pytest.mark.parametrize("interval", [1, INT32_MAX])
def test_growth_interval_bounds_are_accepted(acl, stream, interval):
    s = Scalars("float32")
    try:
        # tracker 0: interval 1 grows at once; INT32_MAX only counts
        got = run_op(s, stream, 8.0, 0, 0.0, growth_interval=interval)
        assert got == ((16.0, 0) if interval == 1 else (8.0, 1))
    finally:
        s.close()


@pytest.mark.parametrize("position", range(3))
@pytest.mark.parametrize("shape", [[1, 1], [2], [0]])
def test_input_storage_shape_must_be_one_element(acl, recent_error, position, shape):
    shapes = [[1]] * 5
    shapes[position] = shape
    s = Scalars("float32", shapes=shapes)
    try:
        assert phase1(s.tensors)[0] == TILING
        assert ["currentScale", "growthTracker", "foundInf"][position] in recent_error()
    finally:
        s.close()


def test_zero_dim_inputs_are_scalars(acl, stream):
    s = Scalars("float32", shapes=[[], [], [], [1], [1]])
    try:
        assert run_op(s, stream, 100.0, 4, 0.0) == (200.0, 0)
    finally:
        s.close()


def test_output_shapes_are_not_checked_and_one_element_is_written(acl, stream):
    s = Scalars("float32", shapes=[[1], [1], [1], [2, 2], [3]])
    try:
        sentinel = np.full(5, 7, np.float32)
        capi.aclrtMemcpy(s.buffers[3].ptr, sentinel.nbytes, sentinel.ctypes.data, sentinel.nbytes,
                         capi.ACL_MEMCPY_HOST_TO_DEVICE)
        assert run_op(s, stream, 100.0, 4, 0.0) == (200.0, 0)
        assert list(s.buffers[3].numpy()) == [200.0, 7, 7, 7, 7]
    finally:
        s.close()


def test_all_outputs_empty_skips_tiling_and_launch(acl, stream):
    # empty outputs: success with workspace 0, even with an interval tiling would refuse
    s = Scalars("float32", shapes=[[1], [1], [1], [0], [0]])
    try:
        s.write(100.0, 4, 0.0)
        status, ws, executor = phase1(s.tensors, growth_interval=0)
        assert (status, ws) == (0, 0)
        assert capi.aclnnAmpUpdateScale(None, 0, executor, stream) == 0
        assert capi.aclrtSynchronizeStream(stream) == 0
        assert s.buffers[0].numpy()[0] == 100.0        # nothing ran
    finally:
        s.close()


def test_one_empty_output_is_not_enough(acl, recent_error):
    s = Scalars("float32", shapes=[[0], [1], [1], [0], [1]])
    try:
        assert phase1(s.tensors)[0] == TILING
        assert recent_error()
    finally:
        s.close()


def test_validation_order(acl, recent_error):
    s = Scalars("float32")
    try:
        bad_dtype = create_tensor([1], capi.ACL_INT64, s.buffers[1].ptr)
        bad_shape = create_tensor([2], capi.ACL_FLOAT, s.buffers[0].ptr)
        t = s.tensors
        # NULL (row 1) before dtype (row 2)
        assert phase1([None, bad_dtype, t[2], t[3], t[4]])[0] == NULLPTR
        # dtype (row 2) before interval (row 3)
        assert phase1([t[0], bad_dtype, t[2], t[3], t[4]], growth_interval=0)[0] == INVALID
        # interval (row 3) before shapes (rows 4-5)
        assert phase1([bad_shape, t[1], t[2], t[3], t[4]], growth_interval=0)[0] == TILING
        assert "growthInterval" in recent_error()
        capi.aclDestroyTensor(bad_dtype)
        capi.aclDestroyTensor(bad_shape)
    finally:
        s.close()


def test_stale_tensor(acl, recent_error):
    s = Scalars("float32")
    try:
        stale = create_tensor([1], capi.ACL_FLOAT, s.buffers[0].ptr)
        capi.aclDestroyTensor(stale)
        assert phase1([stale] + s.tensors[1:])[0] == INVALID
        assert "not a live aclTensor" in recent_error()
    finally:
        s.close()


def test_unknown_rounding_option_is_refused(acl, recent_error, set_switch):
    set_switch("PYACLNN_STUB_AMP_FP16_ROUNDING", "up")
    s = Scalars("float16")
    try:
        assert phase1(s.tensors)[0] == INVALID
        assert "PYACLNN_STUB_AMP_FP16_ROUNDING" in recent_error()
    finally:
        s.close()


SOC_SCRIPT = """
    import ctypes, sys
    sys.path.insert(0, {tests!r})
    from pyaclnn import capi
    from helpers import create_tensor
    from pyaclnn.errors import recent_error_message
    assert capi.aclInit(None) == 0 and capi.aclrtSetDevice(0) == 0
    types = [capi.ACL_FLOAT, capi.ACL_INT32, capi.ACL_{found_inf}, capi.ACL_FLOAT, capi.ACL_INT32]
    tensors = [create_tensor([1], dt, 0) for dt in types]
    ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
    status = capi.aclnnAmpUpdateScaleGetWorkspaceSize(*tensors[:3], 2.0, 0.5, 5, *tensors[3:],
                                                      ctypes.byref(ws), ctypes.byref(ex))
    print(status, recent_error_message())
"""


@pytest.mark.parametrize("found_inf", ["FLOAT", "FLOAT16"])
def test_unsupported_soc(found_inf):
    from helpers import REPO_ROOT
    code, out, err = run_python(SOC_SCRIPT.format(tests=str(REPO_ROOT / "tests"), found_inf=found_inf),
                                env_overrides={"PYACLNN_STUB_SOC": "Ascend310P3"})
    assert code == 0, err
    status, message = out.split(" ", 1)
    assert int(status) == NO_KERNEL                  # the SoC check comes before the dtype rules
    assert "Ascend310P3" in message


# ------------------------------------------------------------------------------------------------
# A.4 published values and the documented example variants
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,scale,tracker,found_inf,want_scale,want_tracker", [
    ("float32", 65536.0, 3, 1.0, 32768.0, 0),        # test_fp32_found_inf
    ("float32", 100.0, 4, 0.0, 200.0, 0),            # test_fp32_growth_triggered
    ("float32", 100.0, 2, 0.0, 100.0, 3),            # test_fp32_no_growth
    # test_fp32_scale_inf_check: the UT expects tracker 4, but kernel and doc reset it to 0 (A.4 note)
    ("float32", 3.4e38, 4, 0.0, np.float32(3.4e38), 0),
    ("float16", 100.0, 4, 0.0, 200.0, 0),            # test_fp16_found_inf (really a growth case)
    ("bfloat16", 100.0, 4, 0.0, 200.0, 0),           # test_bf16_basic
])
def test_kernel_ut_values(acl, stream, dtype, scale, tracker, found_inf, want_scale, want_tracker):
    s = Scalars(dtype)
    try:
        got_scale, got_tracker = run_op(s, stream, scale, tracker, found_inf, 2.0, 0.5, 5)
        assert (float(got_scale), got_tracker) == (float(want_scale), want_tracker)
    finally:
        s.close()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("tracker,found_inf,want", [(900, 0.0, (65536.0, 901)),     # the doc example
                                                    (999, 0.0, (131072.0, 0)),
                                                    (900, 1.0, (32768.0, 0))])
def test_documented_example_and_variants(acl, stream, dtype, tracker, found_inf, want):
    s = Scalars(dtype)
    try:
        got_scale, got_tracker = run_op(s, stream, 65536.0, tracker, found_inf, 2.0, 0.5, 1000)
        assert (float(got_scale), got_tracker) == want
    finally:
        s.close()


@pytest.mark.parametrize("tracker,found_inf,want", [(900, 0.0, (16384.0, 901)), (999, 0.0, (32768.0, 0)),
                                                    (900, 1.0, (8192.0, 0))])
def test_documented_variants_fp16(acl, stream, tracker, found_inf, want):
    # 65536 is past fp16's range (it is +inf as fp16), so the fp16 variants start from 16384
    s = Scalars("float16")
    try:
        got_scale, got_tracker = run_op(s, stream, 16384.0, tracker, found_inf, 2.0, 0.5, 1000)
        assert (float(got_scale), got_tracker) == want
    finally:
        s.close()


def test_fp16_example_values_as_given(acl, stream):
    # the doc's 65536 stored as fp16 is +inf: it stays inf, whatever happens
    s = Scalars("float16")
    try:
        for tracker, found_inf in ((900, 0.0), (999, 0.0), (900, 1.0)):
            check_against_reference(s, stream, np.float16(np.inf), tracker, found_inf, 2.0, 0.5, 1000)
    finally:
        s.close()


# ------------------------------------------------------------------------------------------------
# A.3 arithmetic: edge cases and randomized cases against the reference
# ------------------------------------------------------------------------------------------------

def test_found_inf_is_any_nonzero_value(scalars, stream):
    for found_inf in (np.nan, -np.nan, np.inf, -np.inf, 1.0, -1.0, 1e-30):
        check_against_reference(scalars, stream, 96.0, 2, found_inf)
    got = run_op(scalars, stream, 96.0, 2, np.nan)
    assert (float(got[0]), got[1]) == (48.0, 0)     # NaN counts as found


def test_negative_zero_found_inf_counts_as_zero(scalars, stream):
    got = run_op(scalars, stream, 96.0, 2, -0.0)
    assert (float(got[0]), got[1]) == (96.0, 3)


def test_growth_overflow(acl, stream):
    # fp32: the grown value is inf -> rejected; fp16/bf16: finite in fp32, accepted, narrowed to inf
    cases = [("float32", 3.0e38, 2.0, np.float32(3.0e38)), ("float16", 65504.0, 2.0, np.inf),
             ("float16", 40000.0, 1.75, np.inf),
             ("bfloat16", float(np.array(3.3895e38, ml_dtypes.bfloat16)), 1 + 2**-8, np.inf)]
    for dtype, scale, factor, want in cases:
        s = Scalars(dtype)
        try:
            got_scale, got_tracker = run_op(s, stream, scale, 4, 0.0, growth_factor=factor)
            assert (float(got_scale), got_tracker) == (float(want), 0), dtype
            check_against_reference(s, stream, scale, 4, 0.0, gf=factor)
        finally:
            s.close()


def test_nonfinite_scale(scalars, stream):
    for scale in (np.inf, -np.inf, np.nan):
        for tracker, found_inf in ((4, 0.0), (2, 0.0), (2, 1.0)):
            check_against_reference(scalars, stream, scale, tracker, found_inf)


def test_tracker_wraps_at_int32_max(scalars, stream):
    assert run_op(scalars, stream, 4.0, INT32_MAX, 0.0)[1] == -2**31
    got = run_op(scalars, stream, 4.0, -1, 0.0, growth_interval=1)      # 0 != 1: no growth, just counts
    assert (float(got[0]), got[1]) == (4.0, 0)
    got = run_op(scalars, stream, 4.0, 10, 0.0, growth_interval=5)      # past the interval: keeps counting
    assert (float(got[0]), got[1]) == (4.0, 11)
    got = run_op(scalars, stream, 4.0, -3, 0.0, growth_interval=5)
    assert (float(got[0]), got[1]) == (4.0, -2)


def test_backoff_underflow(scalars, stream):
    tiny = {"float32": 1e-45, "float16": 6e-8, "bfloat16": 1e-38}[scalars.dtype]
    for factor in (0.5, 0.3, 1e-10):
        check_against_reference(scalars, stream, tiny, 1, 1.0, bf=factor)


def test_factors_are_rounded_to_float32(acl, stream):
    s = Scalars("float32")
    try:
        # 1 + 2^-30 is 1.0 in float32: growth must leave the scale exactly unchanged
        got = run_op(s, stream, 3.0, 4, 0.0, growth_factor=1 + 2**-30)
        assert (float(got[0]), got[1]) == (3.0, 0)
        check_against_reference(s, stream, 3.0, 4, 0.0, gf=0.1, bf=0.1)
    finally:
        s.close()


def test_in_place_update(acl, stream):
    # torch_npu passes the input tensors as the outputs
    for dtype in DTYPES:
        s = Scalars(dtype)
        try:
            t = s.tensors
            aliased = [t[0], t[1], t[2], t[0], t[1]]
            for step, (want_scale, want_tracker) in enumerate([(256.0, 3), (256.0, 4), (512.0, 0)]):
                if step == 0:
                    s.write(256.0, 2, 0.0)
                status, _, executor = phase1(aliased)
                assert status == 0
                assert capi.aclnnAmpUpdateScale(None, 0, executor, stream) == 0
                assert capi.aclrtSynchronizeStream(stream) == 0
                assert (float(s.buffers[0].numpy()[0]), int(s.buffers[1].numpy()[0])) == (want_scale, want_tracker)
        finally:
            s.close()


def test_view_offset_is_honoured(acl, stream):
    s = Scalars("float32")
    try:
        # describe element 1 of each two-element buffer (offset 1, storage [1])
        shifted = [create_tensor([1], dt, b.ptr, offset=1, storage_shape=[1])
                   for dt, b in zip(s.acl_types, s.buffers)]
        for buf, value, t in zip(s.buffers[:3], (9.0, 4, 0.0), s.np_types):
            arr = np.array([-1, value], t)
            capi.aclrtMemcpy(buf.ptr, arr.nbytes, arr.ctypes.data, arr.nbytes, capi.ACL_MEMCPY_HOST_TO_DEVICE)
        status, _, executor = phase1(shifted)
        assert status == 0
        assert capi.aclnnAmpUpdateScale(None, 0, executor, stream) == 0
        assert capi.aclrtSynchronizeStream(stream) == 0
        assert list(s.buffers[3].numpy()) == [0.0, 18.0]
        assert list(s.buffers[4].numpy()) == [0, 0]
        for t in shifted:
            capi.aclDestroyTensor(t)
    finally:
        s.close()


def _random_value(rng, dtype):
    kind = rng.integers(6)
    if kind == 0:
        return float(2.0 ** rng.integers(-20, 20))
    if kind == 1:
        return float(rng.choice([np.inf, -np.inf, np.nan, 0.0, -0.0]))
    if kind == 2:
        return float(ml_dtypes.finfo(NP_TYPES[dtype]).max) * float(rng.uniform(0.3, 1.0))
    if kind == 3:
        return float(ml_dtypes.finfo(NP_TYPES[dtype]).smallest_subnormal) * float(rng.integers(1, 9))
    return float(rng.normal() * 10.0 ** rng.integers(-3, 5))


def test_randomized_against_reference(scalars, stream):
    rng = np.random.default_rng(20260822 + DTYPES.index(scalars.dtype))
    for _ in range(60):
        gi = int(rng.choice([1, 2, 5, 1000, INT32_MAX, int(rng.integers(1, 100))]))
        tracker = int(rng.choice([gi - 1, gi - 2, gi, 0, -1, INT32_MAX, int(rng.integers(-2**31, 2**31))]))
        tracker = (tracker + 2**31) % 2**32 - 2**31
        found_inf = float(rng.choice([0.0, 0.0, -0.0, 1.0, np.nan, np.inf, float(rng.normal())]))
        gf = float(rng.choice([2.0, 1.5, 1 + 2**-8, float(rng.uniform(0.5, 4.0))]))
        bf = float(rng.choice([0.5, 0.25, float(rng.uniform(0.0, 1.0))]))
        scale = NP_TYPES[scalars.dtype](_random_value(rng, scalars.dtype))
        check_against_reference(scalars, stream, scale, tracker, found_inf, gf, bf, gi)


# ------------------------------------------------------------------------------------------------
# The fp16 rounding option (spec Q12): round-to-odd behind PYACLNN_STUB_AMP_FP16_ROUNDING=odd
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rounding", ["rne", "odd"])
def test_fp16_rounding_option(acl, stream, set_switch, rounding):
    set_switch("PYACLNN_STUB_AMP_FP16_ROUNDING", rounding)
    s = Scalars("float16")
    try:
        # 1.0 * 1.0001f is between two fp16 values: RNE gives 1.0 (0x3C00), round-to-odd 0x3C01
        got_scale, _ = run_op(s, stream, 1.0, 4, 0.0, growth_factor=1.0001)
        assert bits(got_scale, "float16") == (0x3C00 if rounding == "rne" else 0x3C01)
        # 60000 * 1.5 is finite in fp32 but past fp16: inf with RNE, 65504 with round-to-odd
        got_scale, _ = run_op(s, stream, 60000.0, 4, 0.0, growth_factor=1.5)
        assert float(got_scale) == (math.inf if rounding == "rne" else 65504.0)
        rng = np.random.default_rng(7)
        for _ in range(20):
            scale = np.float16(rng.uniform(-1000, 1000))
            check_against_reference(s, stream, scale, 4, 0.0, gf=float(rng.uniform(0.5, 3.0)), rounding=rounding)
            check_against_reference(s, stream, scale, 1, 1.0, bf=float(rng.uniform(0.0, 1.0)), rounding=rounding)
    finally:
        s.close()


def test_switches_are_read_once_until_reread(acl, stream, monkeypatch):
    """The stub reads its switches once per process (pyaclnn._switches), not per call: changing the
    variable alone changes nothing until pyaclnn_stub_reread_switches."""
    from pyaclnn._switches import reread
    monkeypatch.delenv("PYACLNN_STUB_AMP_FP16_ROUNDING", raising=False)
    reread()
    s = Scalars("float16")
    try:
        assert bits(run_op(s, stream, 1.0, 4, 0.0, growth_factor=1.0001)[0], "float16") == 0x3C00   # rne
        monkeypatch.setenv("PYACLNN_STUB_AMP_FP16_ROUNDING", "odd")
        assert bits(run_op(s, stream, 1.0, 4, 0.0, growth_factor=1.0001)[0], "float16") == 0x3C00   # kept
        reread()
        assert bits(run_op(s, stream, 1.0, 4, 0.0, growth_factor=1.0001)[0], "float16") == 0x3C01   # odd
    finally:
        s.close()
        monkeypatch.delenv("PYACLNN_STUB_AMP_FP16_ROUNDING", raising=False)
        reread()


# ------------------------------------------------------------------------------------------------
# Faults surface at synchronisation, as on the device
# ------------------------------------------------------------------------------------------------

def test_bad_device_address_faults_at_sync(acl, stream, recent_error):
    s = Scalars("float32")
    try:
        s.write(100.0, 4, 0.0)
        unset = create_tensor([1], capi.ACL_FLOAT, None)        # data address never set
        status, _, executor = phase1([s.tensors[0], s.tensors[1], s.tensors[2], unset, s.tensors[4]])
        assert status == 0
        assert capi.aclnnAmpUpdateScale(None, 0, executor, stream) == 0
        assert capi.aclrtSynchronizeStream(stream) == capi.ACL_ERROR_RT_AICORE_EXCEPTION
        assert "updatedScale" in recent_error()
        assert int(s.buffers[4].numpy()[0]) == 0               # nothing was written
        capi.aclDestroyTensor(unset)
    finally:
        s.close()
