"""Copy and fill checks (abi.md §5.5): zero count, NULL pointers, kind, count vs destMax, in that order,
then the kind against where the pointers really are, with the bounds of the real (padded)
allocation. Every failure must leave a message naming the function and code."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from pyaclnn import capi
from test_runtime_support import download, expect_failure, free, malloc, upload

H2H, H2D, D2H, D2D = (capi.ACL_MEMCPY_HOST_TO_HOST, capi.ACL_MEMCPY_HOST_TO_DEVICE,
                      capi.ACL_MEMCPY_DEVICE_TO_HOST, capi.ACL_MEMCPY_DEVICE_TO_DEVICE)
DEFAULT, BUF = capi.ACL_MEMCPY_DEFAULT, capi.ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE


@pytest.fixture
def dev(acl):
    """A 64-byte device allocation (96 usable bytes once padded) holding 0..63."""
    p = malloc(64)
    upload(p, np.arange(64, dtype=np.uint8))
    yield p
    free(p)


@pytest.fixture
def host():
    return np.zeros(256, np.uint8)


def memcpy(dst, dmax, src, count, kind, stream=None, asynchronous=False):
    if asynchronous:
        return capi.aclrtMemcpyAsync(dst, dmax, src, count, kind, stream)
    return capi.aclrtMemcpy(dst, dmax, src, count, kind)


@pytest.fixture(params=[False, True], ids=["sync", "async"])
def variant(request, stream):
    """Runs each check for aclrtMemcpy and aclrtMemcpyAsync; yields (call, function name)."""
    asynchronous = request.param
    name = "aclrtMemcpyAsync" if asynchronous else "aclrtMemcpy"
    yield (lambda *a: memcpy(*a, stream=stream, asynchronous=asynchronous)), name
    assert capi.aclrtSynchronizeStream(stream) == 0


def test_round_trip(dev, host, variant):
    call, _ = variant
    assert call(host.ctypes.data, 64, dev, 64, D2H) == 0
    np.testing.assert_array_equal(host[:64], np.arange(64))
    other = malloc(64)
    assert call(other, 64, dev + 16, 48, D2D) == 0
    assert call(host.ctypes.data, 48, other, 48, D2H) == 0
    np.testing.assert_array_equal(host[:48], np.arange(16, 64))
    free(other)


def test_zero_count_succeeds_before_any_check(acl, variant, recent_error):
    call, _ = variant
    assert call(None, 0, None, 0, 99) == 0
    assert recent_error() is None


def test_null_pointers(dev, host, variant, recent_error):
    call, name = variant
    expect_failure(call(None, 64, host.ctypes.data, 64, H2D), 100000, name, "dst is NULL")
    expect_failure(call(dev, 64, None, 64, H2D), 100000, name, "src is NULL")
    # NULL is checked before the kind.
    expect_failure(call(None, 64, host.ctypes.data, 64, 99), 100000, name, "dst is NULL")


@pytest.mark.parametrize("kind", [-1, 6, 7, 99])
def test_unsupported_kind(dev, host, variant, recent_error, kind):
    call, name = variant
    expect_failure(call(dev, 64, host.ctypes.data, 64, kind), 100000, name, f"kind {kind} is invalid")
    # The kind is checked before count > destMax.
    expect_failure(call(dev, 8, host.ctypes.data, 64, kind), 100000, name)


def test_count_greater_than_dest_max(dev, host, variant, recent_error):
    call, name = variant
    expect_failure(call(dev, 32, host.ctypes.data, 64, H2D), 107000, name, "count 64 > destMax 32")


@pytest.mark.parametrize("kind", [H2H, H2D, D2H, D2D], ids=["H2H", "H2D", "D2H", "D2D"])
def test_dest_max_bound_is_exact(dev, host, variant, recent_error, kind):
    """abi.md §5.5: count > destMax fails, count == destMax copies. One byte over must fail (an
    off-by-one bound would copy it) and must leave the destination untouched."""
    call, name = variant
    dst = dev if kind in (H2D, D2D) else host.ctypes.data
    src = dev if kind in (D2H, D2D) else host.ctypes.data + 128
    expect_failure(call(dst, 31, src, 32, kind), 107000, name, "count 32 > destMax 31")
    assert call(dst, 32, src, 32, kind) == 0


def test_refused_copy_writes_nothing(acl, recent_error):
    """The bound is checked before any byte moves: a count one past destMax leaves dst as it was."""
    dst, src = np.zeros(8, np.uint8), np.full(8, 0xEE, np.uint8)
    expect_failure(memcpy(dst.ctypes.data, 4, src.ctypes.data, 5, H2H), 107000, "aclrtMemcpy",
                   "count 5 > destMax 4")
    assert dst.tolist() == [0] * 8
    assert memcpy(dst.ctypes.data, 4, src.ctypes.data, 4, H2H) == 0
    assert dst.tolist() == [0xEE] * 4 + [0] * 4


@pytest.mark.parametrize("kind, dst_on_device, src_on_device, complaint", [
    (H2D, False, False, "needs device memory at dst"),
    (H2D, True, True, "needs host memory at src"),
    (BUF, False, False, "needs device memory at dst"),
    (D2H, False, False, "needs device memory at src"),
    (D2H, True, True, "needs host memory at dst"),
    (D2D, False, True, "needs device memory at dst"),
    (D2D, True, False, "needs device memory at src"),
    (H2H, True, False, "needs host memory at dst"),
    (H2H, False, True, "needs host memory at src"),
])
def test_kind_must_match_where_the_pointers_are(dev, host, variant, recent_error, kind, dst_on_device,
                                                src_on_device, complaint):
    call, name = variant
    dst = dev if dst_on_device else host.ctypes.data
    src = dev if src_on_device else host.ctypes.data + 128
    expect_failure(call(dst, 32, src, 32, kind), 107000, name, complaint)


def test_device_ranges_must_stay_inside_one_allocation(dev, host, variant, recent_error):
    call, name = variant
    # 64 requested -> 96 usable (rounded to 32, plus 32 of padding): the NPU accepts all of it.
    assert call(dev + 32, 64, host.ctypes.data, 64, H2D) == 0
    expect_failure(call(dev + 33, 64, host.ctypes.data, 64, H2D), 107000, name, "runs 1 bytes past the end")
    expect_failure(call(host.ctypes.data, 97, dev, 97, D2H), 107000, name, "src range")
    other = malloc(64)
    try:
        expect_failure(call(other, 128, dev, 128, D2D), 107000, name, "past the end")
    finally:
        free(other)


def test_freed_device_memory_is_not_device_memory(acl, host, variant, recent_error):
    call, name = variant
    p = malloc(64)
    free(p)
    expect_failure(call(p, 64, host.ctypes.data, 64, H2D), 107000, name, "needs device memory at dst")


def test_default_kind_infers_the_direction(dev, host, variant, recent_error):
    call, name = variant
    host[:64] = 200
    assert call(dev, 64, host.ctypes.data, 64, DEFAULT) == 0           # host -> device
    assert call(host.ctypes.data + 64, 64, dev, 64, DEFAULT) == 0      # device -> host
    np.testing.assert_array_equal(host[64:128], 200)
    assert call(host.ctypes.data + 128, 64, host.ctypes.data, 64, DEFAULT) == 0   # host -> host
    other = malloc(64)
    assert call(other, 64, dev, 64, DEFAULT) == 0                      # device -> device
    expect_failure(call(other, 128, dev, 128, DEFAULT), 107000, name, "past the end")
    assert capi.aclrtSynchronizeDevice() == 0     # the async copy must be done before its memory goes
    free(other)


def test_host_to_buf_to_device_behaves_as_host_to_device(dev, host, variant):
    call, _ = variant
    host[:64] = 9
    assert call(dev, 64, host.ctypes.data, 64, BUF) == 0
    assert call(host.ctypes.data + 64, 64, dev, 64, D2H) == 0
    np.testing.assert_array_equal(host[64:128], 9)


def test_pinned_host_bounds_are_checked(dev, variant, recent_error):
    call, name = variant
    h = ctypes.c_void_p()
    assert capi.aclrtMallocHost(ctypes.byref(h), 48) == 0
    try:
        assert call(h, 48, dev, 48, D2H) == 0
        expect_failure(call(h, 64, dev, 64, D2H), 107000, name, "aclrtMallocHost")
    finally:
        assert capi.aclrtSynchronizeDevice() == 0   # the async copy must be done before its memory goes
        assert capi.aclrtFreeHost(h) == 0


def test_memcpy_to_itself_is_a_no_op(dev):
    assert capi.aclrtMemcpy(dev, 64, dev, 64, D2D) == 0
    np.testing.assert_array_equal(download(dev, 64), np.arange(64))


# ---- 2-D copies -------------------------------------------------------------------------------

@pytest.fixture(params=[False, True], ids=["sync", "async"])
def copy2d(request, stream):
    name = "aclrtMemcpy2dAsync" if request.param else "aclrtMemcpy2d"

    def call(dst, dpitch, src, spitch, width, height, kind):
        if request.param:
            return capi.aclrtMemcpy2dAsync(dst, dpitch, src, spitch, width, height, kind, stream)
        return capi.aclrtMemcpy2d(dst, dpitch, src, spitch, width, height, kind)

    yield call, name
    assert capi.aclrtSynchronizeStream(stream) == 0


def test_copy2d_round_trip(acl, copy2d):
    call, _ = copy2d
    image = np.arange(6 * 10, dtype=np.uint8).reshape(6, 10)
    p = malloc(6 * 4)
    out = np.zeros((6, 8), np.uint8)
    assert call(p, 4, image.ctypes.data + 3, 10, 4, 6, H2D) == 0       # columns 3..6 of each row
    assert call(out.ctypes.data, 8, p, 4, 4, 6, D2H) == 0
    np.testing.assert_array_equal(out[:, :4], image[:, 3:7])
    np.testing.assert_array_equal(out[:, 4:], 0)
    free(p)


def test_copy2d_checks(dev, host, copy2d, recent_error):
    call, name = copy2d
    assert call(None, 8, None, 8, 0, 5, 99) == 0                        # zero width: nothing to do
    assert call(None, 8, None, 8, 4, 0, 99) == 0
    expect_failure(call(None, 8, host.ctypes.data, 8, 4, 2, H2D), 100000, name, "dst is NULL")
    expect_failure(call(dev, 8, None, 8, 4, 2, H2D), 100000, name, "src is NULL")
    expect_failure(call(dev, 8, host.ctypes.data, 4, 5, 2, H2D), 100000, name, "width 5")
    expect_failure(call(dev, 4, host.ctypes.data, 8, 5, 2, H2D), 100000, name, "width 5")
    for kind in (H2H, BUF, 6):
        expect_failure(call(dev, 8, host.ctypes.data, 8, 4, 2, kind), 100000, name, f"kind {kind}")
    # 12 rows of pitch 8: the last row starts at byte 88 and ends at 92 (<= 96 usable).
    assert call(dev, 8, host.ctypes.data, 8, 4, 12, H2D) == 0
    expect_failure(call(dev, 8, host.ctypes.data, 8, 4, 13, H2D), 107000, name, "past the end")
    expect_failure(call(host.ctypes.data, 8, host.ctypes.data, 8, 4, 2, H2D), 107000, name,
                   "needs device memory at dst")
    expect_failure(call(dev, 2 ** 62, host.ctypes.data, 8, 4, 8, H2D), 107000, name, "overflows")


# ---- memset -----------------------------------------------------------------------------------

@pytest.fixture(params=[False, True], ids=["sync", "async"])
def memset(request, stream):
    name = "aclrtMemsetAsync" if request.param else "aclrtMemset"

    def call(ptr, max_count, value, count):
        if request.param:
            return capi.aclrtMemsetAsync(ptr, max_count, value, count, stream)
        return capi.aclrtMemset(ptr, max_count, value, count)

    yield call, name
    assert capi.aclrtSynchronizeStream(stream) == 0


def test_memset(dev, memset, stream):
    call, _ = memset
    assert call(dev + 8, 96, 0x1AB, 16) == 0                             # the low byte is used
    assert capi.aclrtSynchronizeStream(stream) == 0
    got = download(dev, 64)
    expected = np.arange(64, dtype=np.uint8)
    expected[8:24] = 0xAB
    np.testing.assert_array_equal(got, expected)


def test_memset_checks(dev, host, memset, recent_error):
    call, name = memset
    assert call(None, 0, 0, 0) == 0
    expect_failure(call(None, 64, 0, 64), 100000, name, "devPtr is NULL")
    expect_failure(call(dev, 32, 0, 64), 107000, name, "count 64 > maxCount 32")
    expect_failure(call(dev, 128, 0, 97), 107000, name, "past the end")
    expect_failure(call(host.ctypes.data, 64, 0, 64), 107000, name, "needs device memory")
