"""Tracked device and host memory (abi.md §1.6, §5.5): size rounding, capacity, frees that refuse
what they did not hand out, aclrtGetMemInfo, the cross-library range lookup and live counts."""
from __future__ import annotations

import ctypes
import json

import numpy as np
import pytest

from helpers import run_python
from pyaclnn import capi
from test_runtime_support import (expect_failure, free, live_counts, malloc, mem_lookup, mem_register,
                                  mem_unregister, upload)


def mem_info(attr=capi.ACL_HBM_MEM) -> tuple[int, int]:
    free_, total = ctypes.c_size_t(), ctypes.c_size_t()
    assert capi.aclrtGetMemInfo(attr, ctypes.byref(free_), ctypes.byref(total)) == 0
    return free_.value, total.value


def padded(size: int, pad: bool) -> int:
    """The vendor's rule: round up to 32, plus 32 bytes of padding for aclrtMalloc."""
    return (size + (64 if pad else 32) - 1) // 32 * 32


@pytest.mark.parametrize("size", [1, 31, 32, 33, 100, 4096, 1000003])
@pytest.mark.parametrize("api, pad", [("aclrtMalloc", True), ("aclrtMallocAlign32", False)])
def test_allocation_size_rounding_is_what_a_copy_may_touch(acl, recent_error, size, api, pad):
    free_before, _ = mem_info()
    p = ctypes.c_void_p()
    assert getattr(capi, api)(ctypes.byref(p), size, capi.ACL_MEM_MALLOC_HUGE_FIRST) == 0
    try:
        assert p.value % 32 == 0
        usable = padded(size, pad)
        assert free_before - mem_info()[0] == usable
        host = np.zeros(usable + 1, np.uint8)
        assert capi.aclrtMemcpy(p, usable, host.ctypes.data, usable, capi.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        status = capi.aclrtMemcpy(p, usable + 1, host.ctypes.data, usable + 1, capi.ACL_MEMCPY_HOST_TO_DEVICE)
        expect_failure(status, 107000, "aclrtMemcpy", "runs 1 bytes past the end")
    finally:
        free(p.value)
    assert mem_info()[0] == free_before


def test_huge1g_policy_has_no_padding(acl):
    free_before, _ = mem_info()
    p = malloc(100, capi.ACL_MEM_MALLOC_HUGE1G_ONLY)
    assert free_before - mem_info()[0] == padded(100, False)
    free(p)


def test_malloc_argument_errors(acl, recent_error):
    p = ctypes.c_void_p()
    expect_failure(capi.aclrtMalloc(None, 16, 0), 100000, "aclrtMalloc")
    expect_failure(capi.aclrtMalloc(ctypes.byref(p), 0, 0), 100000, "aclrtMalloc")
    expect_failure(capi.aclrtMallocAlign32(ctypes.byref(p), 0, 0), 100000, "aclrtMallocAlign32")
    expect_failure(capi.aclrtMalloc(ctypes.byref(p), 2 ** 64 - 8, 0), 100000, "aclrtMalloc")
    expect_failure(capi.aclrtMallocHost(None, 16), 100000, "aclrtMallocHost")
    expect_failure(capi.aclrtMallocHost(ctypes.byref(p), 0), 100000, "aclrtMallocHost")


def test_free_refuses_what_it_did_not_hand_out(acl, recent_error):
    expect_failure(capi.aclrtFree(None), 100000, "aclrtFree")
    host = np.zeros(64, np.uint8)
    expect_failure(capi.aclrtFree(host.ctypes.data), 107000, "aclrtFree", "not a live allocation")
    p = malloc(256)
    expect_failure(capi.aclrtFree(p + 32), 107000, "aclrtFree", "points 32 bytes into the allocation")
    expect_failure(capi.aclrtFreeHost(p), 107000, "aclrtFreeHost", "was allocated by aclrtMalloc")
    upload(p, np.full(256, 7, np.uint8))
    free(p)
    expect_failure(capi.aclrtFree(p), 107000, "aclrtFree", "already freed")


def test_freeing_memory_with_work_still_queued_is_safe(acl, stream, recent_error, hazards_off):
    from test_runtime_support import Gate
    p = malloc(1 << 16)
    gate = Gate()
    gate.submit(stream)
    assert capi.aclrtMemsetAsync(p, 1 << 16, 1, 1 << 16, stream) == 0
    free(p)                                            # the fill has not run yet
    expect_failure(capi.aclrtFree(p), 107000, "aclrtFree")   # gone for the API at once
    gate.open()
    assert capi.aclrtSynchronizeStream(stream) == 0    # the late fill wrote to memory still held


def test_pinned_host_memory(acl, recent_error):
    h = ctypes.c_void_p()
    assert capi.aclrtMallocHost(ctypes.byref(h), 100) == 0
    ctypes.memset(h, 0x5A, 100)                        # plain host memory: the host may touch it
    expect_failure(capi.aclrtFree(h), 107000, "aclrtFree", "was allocated by aclrtMallocHost")
    expect_failure(capi.aclrtFreeHost(None), 100000, "aclrtFreeHost")
    assert capi.aclrtFreeHost(h) == 0
    expect_failure(capi.aclrtFreeHost(h), 107000, "aclrtFreeHost")


def test_mem_info(acl, recent_error):
    free_, total = mem_info()
    assert 0 < free_ <= total
    for attr in (capi.ACL_HBM_MEM, capi.ACL_HBM_MEM_HUGE, capi.ACL_MEM_NORMAL, capi.ACL_MEM_P2P_HUGE1G):
        assert mem_info(attr)[1] == total
    assert mem_info(capi.ACL_DDR_MEM) == (0, 0)         # the emulated cards have no device DDR
    f, t = ctypes.c_size_t(), ctypes.c_size_t()
    expect_failure(capi.aclrtGetMemInfo(capi.ACL_HBM_MEM, None, ctypes.byref(t)), 100000, "aclrtGetMemInfo")
    expect_failure(capi.aclrtGetMemInfo(capi.ACL_HBM_MEM, ctypes.byref(f), None), 100000, "aclrtGetMemInfo")
    expect_failure(capi.aclrtGetMemInfo(18, ctypes.byref(f), ctypes.byref(t)), 107016, "aclrtGetMemInfo")
    expect_failure(capi.aclrtGetMemInfo(-1, ctypes.byref(f), ctypes.byref(t)), 107016, "aclrtGetMemInfo")


def test_capacity_is_enforced_per_device():
    code, out, err = run_python("""
import ctypes, json
from pyaclnn import capi
def info():
    f, t = ctypes.c_size_t(), ctypes.c_size_t()
    capi.aclrtGetMemInfo(capi.ACL_HBM_MEM, ctypes.byref(f), ctypes.byref(t))
    return [f.value, t.value]
r = {}
capi.aclrtSetDevice(0)
a, b = ctypes.c_void_p(), ctypes.c_void_p()
r["fill"] = capi.aclrtMalloc(ctypes.byref(a), 1048576 - 32, 0)     # + 32 padding: 1 MiB
r["full"] = info()
r["one_more"] = capi.aclrtMalloc(ctypes.byref(b), 1, 0)
r["msg"] = capi.aclGetRecentErrMsg().decode()
capi.aclrtSetDevice(1)                                            # another device has its own
r["other_device"] = [capi.aclrtMalloc(ctypes.byref(b), 1000, 0), info()]
capi.aclrtSetDevice(0)
r["after_free"] = [capi.aclrtFree(a), info(), capi.aclrtMalloc(ctypes.byref(a), 1, 0)]
print(json.dumps(r))
""", {"PYACLNN_STUB_DEVICE_MEMORY": str(1 << 20), "PYACLNN_STUB_DEVICE_COUNT": "2"})
    assert code == 0, err
    r = json.loads(out.strip().splitlines()[-1])
    assert r["fill"] == 0 and r["full"] == [0, 1 << 20]
    assert r["one_more"] == 207001 and "aclrtMalloc(207001)" in r["msg"]
    assert r["other_device"] == [0, [(1 << 20) - 1056, 1 << 20]]
    assert r["after_free"] == [0, [1 << 20, 1 << 20], 0]


def test_memory_lookup_for_other_libraries(acl, recent_error):
    p = malloc(100)
    base, size = ctypes.c_void_p(), ctypes.c_size_t()
    assert mem_lookup(p + 10, 118, ctypes.byref(base), ctypes.byref(size)) == 1
    assert (base.value, size.value) == (p, 128 + 32)
    assert mem_lookup(p + 10, 151, None, None) == 0          # runs past the padded end
    assert mem_lookup(p + 160, 0, None, None) == 1           # an empty range at the very end
    host = np.zeros(64, np.uint8)
    assert mem_lookup(host.ctypes.data, 1, None, None) == 0
    free(p)
    assert mem_lookup(p, 1, None, None) == 0


def test_registered_host_memory_is_device_addressable(acl, recent_error):
    arr = np.arange(64, dtype=np.uint8)
    out = np.zeros(64, np.uint8)
    expect_failure(mem_register(None, 8), 100000, "pyaclnn_stub_mem_register")
    expect_failure(mem_register(arr.ctypes.data, 0), 100000, "pyaclnn_stub_mem_register")
    registered = live_counts().host_registrations
    assert mem_register(arr.ctypes.data, arr.nbytes) == 0
    try:
        expect_failure(mem_register(arr.ctypes.data + 8, 8), 107000, "pyaclnn_stub_mem_register", "overlaps")
        assert live_counts().host_registrations == registered + 1     # (the refused one not counted)
        assert mem_lookup(arr.ctypes.data, 64, None, None) == 1
        # Usable as the device side of a copy, within its bounds.
        assert capi.aclrtMemcpy(out.ctypes.data, 64, arr.ctypes.data, 64, capi.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        np.testing.assert_array_equal(out, arr)
        status = capi.aclrtMemcpy(out.ctypes.data, 64, arr.ctypes.data + 1, 64, capi.ACL_MEMCPY_DEVICE_TO_HOST)
        expect_failure(status, 107000, "aclrtMemcpy", "past the end")
    finally:
        assert mem_unregister(arr.ctypes.data) == 0
    assert mem_lookup(arr.ctypes.data, 64, None, None) == 0
    assert live_counts().host_registrations == registered
    expect_failure(mem_unregister(arr.ctypes.data), 107000, "pyaclnn_stub_mem_unregister")
    assert live_counts().host_registrations == registered


def test_live_counts(acl, stream):
    before = live_counts()
    p = malloc(100)
    h = ctypes.c_void_p()
    assert capi.aclrtMallocHost(ctypes.byref(h), 10) == 0
    s, e = ctypes.c_void_p(), ctypes.c_void_p()
    assert capi.aclrtCreateStream(ctypes.byref(s)) == 0 and capi.aclrtCreateEvent(ctypes.byref(e)) == 0
    during = live_counts()
    assert during.device_allocations - before.device_allocations == 1
    assert during.device_bytes - before.device_bytes == 100      # as requested, not padded
    assert during.host_allocations - before.host_allocations == 1
    assert (during.streams - before.streams, during.events - before.events) == (1, 1)
    free(p)
    assert capi.aclrtFreeHost(h) == 0
    assert capi.aclrtDestroyStream(s) == 0 and capi.aclrtDestroyEvent(e) == 0
    after = live_counts()
    assert (after.device_allocations, after.device_bytes, after.host_allocations, after.streams,
            after.events) == (before.device_allocations, before.device_bytes, before.host_allocations,
                              before.streams, before.events)
