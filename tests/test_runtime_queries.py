"""Memory, device and copy entry points torch_npu 2.13 looks up by name: pointer
attributes, host registration, aclrtMallocHostWithCfg, device info and UUID, primary-context state, memory
usage, logical device ids, CANN attributes, batch copies, cache maintenance and stream ids -- their real
behaviour and the vendor's codes for bad arguments. Also: the ctypes layouts of the public structures
against the C compiler's.
"""
from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from helpers import run_python
from pyaclnn import capi, get_include, get_library_dir
from test_runtime_support import (Gate, create_stream, download, expect_failure, free, live_counts, malloc,
                                  run_in_thread, upload)

PARAM_INVALID, INVALID_PARAM, FEATURE_NOT_SUPPORT = 107000, 100000, 207000
INVALID_DEVICEID, CONTEXT_NULL = 107001, 107002
ALREADY_REGISTERED, NOT_REGISTERED = 507910, 507911
PAGE = os.sysconf("SC_PAGE_SIZE")
SIZE_MAX = 2**64 - 1
MIB = 1 << 20


def attributes_of(ptr) -> tuple[int, int, int]:
    a = capi.aclrtPtrAttributes()
    assert capi.aclrtPointerGetAttributes(ptr, ctypes.byref(a)) == 0
    return a.location.type, a.location.id, a.pageSize


# ---- pointer attributes and host registration ----------------------------------------------------

def test_pointer_attributes(acl):
    dev = malloc(256)
    pinned = ctypes.c_void_p()
    host = np.zeros(64, np.uint8)
    assert capi.aclrtMallocHost(ctypes.byref(pinned), 64) == 0
    try:
        assert attributes_of(dev) == (capi.ACL_MEM_LOCATION_TYPE_DEVICE, 0, PAGE)
        assert attributes_of(dev + 100)[0] == capi.ACL_MEM_LOCATION_TYPE_DEVICE      # inside the allocation
        assert attributes_of(pinned)[:2] == (capi.ACL_MEM_LOCATION_TYPE_HOST, 0)
        assert attributes_of(host.ctypes.data)[:2] == (capi.ACL_MEM_LOCATION_TYPE_UNREGISTERED, 0)
        a = capi.aclrtPtrAttributes()
        expect_failure(capi.aclrtPointerGetAttributes(None, ctypes.byref(a)), INVALID_PARAM,
                       "aclrtPointerGetAttributes", "ptr is NULL")
        expect_failure(capi.aclrtPointerGetAttributes(dev, None), INVALID_PARAM, "aclrtPointerGetAttributes",
                       "attributes is NULL")
    finally:
        capi.aclrtFreeHost(pinned)
        free(dev)


def test_host_register_makes_host_memory_device_addressable(acl, stream):
    host = np.arange(64, dtype=np.float32)
    dev = malloc(host.nbytes)
    dev_ptr = ctypes.c_void_p()
    assert capi.aclrtHostRegister(host.ctypes.data, host.nbytes, capi.ACL_HOST_REGISTER_MAPPED,
                                  ctypes.byref(dev_ptr)) == 0
    try:
        assert dev_ptr.value == host.ctypes.data               # one address space
        assert attributes_of(host.ctypes.data)[0] == capi.ACL_MEM_LOCATION_TYPE_HOST
        # Device-side for copies, and page-locked: an async copy from it does not wait for the stream.
        assert capi.aclrtMemcpy(dev, host.nbytes, dev_ptr, host.nbytes, capi.ACL_MEMCPY_DEVICE_TO_DEVICE) == 0
        gate = Gate()
        gate.submit(stream)
        back = np.zeros_like(host)
        assert capi.aclrtHostRegisterV2(back.ctypes.data, back.nbytes, capi.ACL_HOST_REG_PINNED) == 0
        assert capi.aclrtMemcpyAsync(back.ctypes.data, back.nbytes, dev, back.nbytes,
                                     capi.ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
        assert not back.any()                                   # queued behind the gate, the call returned
        gate.open()
        assert capi.aclrtSynchronizeStream(stream) == 0
        np.testing.assert_array_equal(back, host)
        assert capi.aclrtHostUnregister(back.ctypes.data) == 0
        expect_failure(capi.aclrtHostRegister(host.ctypes.data + 4, 8, 0, ctypes.byref(dev_ptr)), ALREADY_REGISTERED,
                       "aclrtHostRegister", "overlaps")
        expect_failure(capi.aclrtHostRegisterV2(dev, 64, capi.ACL_HOST_REG_MAPPED), ALREADY_REGISTERED,
                       "aclrtHostRegisterV2")
        expect_failure(capi.aclrtHostUnregister(host.ctypes.data + 4), NOT_REGISTERED, "aclrtHostUnregister")
    finally:
        assert capi.aclrtHostUnregister(host.ctypes.data) == 0
        free(dev)
    assert attributes_of(host.ctypes.data)[0] == capi.ACL_MEM_LOCATION_TYPE_UNREGISTERED
    expect_failure(capi.aclrtHostUnregister(host.ctypes.data), NOT_REGISTERED, "aclrtHostUnregister")


def test_host_register_argument_checks(acl):
    buf = np.zeros(64, np.uint8)
    p, out = buf.ctypes.data, ctypes.c_void_p()
    expect_failure(capi.aclrtHostRegister(None, 64, 0, ctypes.byref(out)), INVALID_PARAM, "aclrtHostRegister")
    expect_failure(capi.aclrtHostRegister(p, 64, 0, None), INVALID_PARAM, "aclrtHostRegister", "devPtr is NULL")
    expect_failure(capi.aclrtHostRegister(p, 0, 0, ctypes.byref(out)), INVALID_PARAM, "aclrtHostRegister", "size")
    expect_failure(capi.aclrtHostRegister(p, 64, 0x1, ctypes.byref(out)), FEATURE_NOT_SUPPORT, "aclrtHostRegister")
    expect_failure(capi.aclrtHostRegisterV2(p, 64, 0), PARAM_INVALID, "aclrtHostRegisterV2", "flag 0")
    expect_failure(capi.aclrtHostRegisterV2(p, 64, capi.ACL_HOST_REG_MAPPED | 0x1), PARAM_INVALID,
                   "aclrtHostRegisterV2")
    expect_failure(capi.aclrtHostRegisterV2(None, 64, capi.ACL_HOST_REG_MAPPED), INVALID_PARAM, "aclrtHostRegisterV2")
    expect_failure(capi.aclrtHostUnregister(None), INVALID_PARAM, "aclrtHostUnregister")
    # A thread without a current context
    status = run_in_thread(lambda: capi.aclrtHostRegisterV2(p, 64, capi.ACL_HOST_REG_MAPPED))
    assert status == CONTEXT_NULL


def test_malloc_host_with_cfg(acl, recent_error):
    before = live_counts().host_allocations
    value = capi.aclrtMallocAttrValue(vaFlag=1)
    attrs = (capi.aclrtMallocAttribute * 2)(capi.aclrtMallocAttribute(capi.ACL_RT_MEM_ATTR_VA_FLAG, value),
                                            capi.aclrtMallocAttribute(capi.ACL_RT_MEM_ATTR_MODULE_ID,
                                                                      capi.aclrtMallocAttrValue(moduleId=3)))
    cfg = capi.aclrtMallocConfig(attrs, 2)
    p, q = ctypes.c_void_p(), ctypes.c_void_p()
    assert capi.aclrtMallocHostWithCfg(ctypes.byref(p), 100, ctypes.byref(cfg)) == 0
    assert capi.aclrtMallocHostWithCfg(ctypes.byref(q), 10, None) == 0
    assert live_counts().host_allocations == before + 2
    assert attributes_of(p)[0] == capi.ACL_MEM_LOCATION_TYPE_HOST
    ctypes.memset(p, 0xAB, 128)                                 # 100 rounded up to 32-byte units
    assert capi.aclrtFreeHost(p) == 0 and capi.aclrtFreeHost(q) == 0
    assert live_counts().host_allocations == before
    bad = capi.aclrtMallocConfig((capi.aclrtMallocAttribute * 1)(
        capi.aclrtMallocAttribute(capi.ACL_RT_MEM_ATTR_DEVICE_ID, value)), 1)
    expect_failure(capi.aclrtMallocHostWithCfg(ctypes.byref(p), 64, ctypes.byref(bad)), PARAM_INVALID,
                   "aclrtMallocHostWithCfg", "attrs[0].attr 2")
    expect_failure(capi.aclrtMallocHostWithCfg(ctypes.byref(p), 64, ctypes.byref(capi.aclrtMallocConfig(None, 0))),
                   PARAM_INVALID, "aclrtMallocHostWithCfg", "cfg->attrs is NULL")
    expect_failure(capi.aclrtMallocHostWithCfg(None, 64, None), INVALID_PARAM, "aclrtMallocHostWithCfg")
    expect_failure(capi.aclrtMallocHostWithCfg(ctypes.byref(p), 0, None), INVALID_PARAM, "aclrtMallocHostWithCfg")
    assert run_in_thread(lambda: capi.aclrtMallocHostWithCfg(ctypes.byref(ctypes.c_void_p()), 64, None)) == CONTEXT_NULL


# ---- device queries ------------------------------------------------------------------------------

def device_info(attr, device=0):
    v = ctypes.c_int64(-7)
    status = capi.aclrtGetDeviceInfo(device, attr, ctypes.byref(v))
    return status, v.value


def test_device_info_of_the_default_soc(acl):
    assert capi.aclrtGetSocName() == b"Ascend950PR"
    total = ctypes.c_size_t()
    assert capi.aclrtGetMemInfo(capi.ACL_HBM_MEM, ctypes.byref(ctypes.c_size_t()), ctypes.byref(total)) == 0
    A = capi.aclrtDevAttr
    expected = {A.ACL_DEV_ATTR_AICORE_CORE_NUM: 32, A.ACL_DEV_ATTR_CUBE_CORE_NUM: 32,
                A.ACL_DEV_ATTR_VECTOR_CORE_NUM: 64, A.ACL_DEV_ATTR_L2_CACHE_SIZE: 128 * MIB,
                A.ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE: 253952, A.ACL_DEV_ATTR_NPU_ARCH: 3510,
                A.ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE: total.value, A.ACL_DEV_ATTR_PHY_CHIP_ID: 0,
                A.ACL_DEV_ATTR_IS_VIRTUAL: 0, A.ACL_DEV_ATTR_SMP_ID: 0}
    for attr, value in expected.items():
        assert device_info(attr) == (0, value), attr
    for attr in (A.ACL_DEV_ATTR_AICPU_CORE_NUM, A.ACL_DEV_ATTR_WARP_SIZE, A.ACL_DEV_ATTR_MAX_GRID_DIM_X,
                 A.ACL_DEV_ATTR_SUPER_POD_ID, A.ACL_DEV_ATTR_HD_CONNECT_TYPE):
        expect_failure(device_info(attr)[0], FEATURE_NOT_SUPPORT, "aclrtGetDeviceInfo",
                       "not supported by the pyaclnn CPU emulator")
    expect_failure(device_info(999)[0], PARAM_INVALID, "aclrtGetDeviceInfo", "attr 999")
    expect_failure(device_info(A.ACL_DEV_ATTR_CUBE_CORE_NUM, device=5)[0], PARAM_INVALID, "aclrtGetDeviceInfo",
                   "deviceId 5")
    expect_failure(capi.aclrtGetDeviceInfo(0, A.ACL_DEV_ATTR_CUBE_CORE_NUM, None), INVALID_PARAM,
                   "aclrtGetDeviceInfo", "value is NULL")


_SOC_PROBE = """
    import ctypes, json, pyaclnn
    from pyaclnn import capi
    lib = ctypes.CDLL(pyaclnn.get_library_dir() + "/libascendcl.so")
    out = {}
    for name in ("ACL_DEV_ATTR_CUBE_CORE_NUM", "ACL_DEV_ATTR_VECTOR_CORE_NUM", "ACL_DEV_ATTR_AICPU_CORE_NUM",
                 "ACL_DEV_ATTR_L2_CACHE_SIZE", "ACL_DEV_ATTR_NPU_ARCH", "ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE"):
        v = ctypes.c_int64(-1)
        out[name] = [capi.aclrtGetDeviceInfo(0, getattr(capi, name), ctypes.byref(v)), v.value]
    caps = []
    for info in (0, 1, 2):                       # aclGetDeviceCapability: AI_CORE_NUM, VECTOR_CORE_NUM, L2_SIZE
        v = ctypes.c_int64(-1)
        caps.append([lib.aclGetDeviceCapability(0, info, ctypes.byref(v)), v.value])
    out["capability"] = caps
    attrs = []
    for a in (capi.ACL_CANN_ATTR_INF_NAN, capi.ACL_CANN_ATTR_BF16, capi.ACL_CANN_ATTR_JIT_COMPILE):
        v = ctypes.c_int32(-1)
        attrs.append([capi.aclGetCannAttribute(a, ctypes.byref(v)), v.value])
    out["cann"] = attrs
    lst, n = ctypes.POINTER(ctypes.c_int)(), ctypes.c_size_t(99)
    capi.aclGetCannAttributeList(ctypes.byref(lst), ctypes.byref(n))
    out["cann_list"] = [lst[i] for i in range(n.value)]
    print(json.dumps(out))
"""


def _probe(soc: str) -> dict:
    code, out, err = run_python(_SOC_PROBE, env_overrides={"PYACLNN_STUB_SOC": soc})
    assert code == 0, err
    return json.loads(out)


def test_device_info_follows_the_soc():
    b4 = _probe("Ascend910B4")
    assert b4["ACL_DEV_ATTR_CUBE_CORE_NUM"] == [0, 20] and b4["ACL_DEV_ATTR_VECTOR_CORE_NUM"] == [0, 40]
    assert b4["ACL_DEV_ATTR_AICPU_CORE_NUM"] == [0, 6] and b4["ACL_DEV_ATTR_L2_CACHE_SIZE"] == [0, 96 * MIB]
    assert b4["ACL_DEV_ATTR_NPU_ARCH"] == [0, 2201] and b4["ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE"] == [0, 196608]
    assert b4["capability"] == [[0, 20], [0, 40], [0, 96 * MIB]]
    assert b4["cann"] == [[0, 1], [0, 1], [0, 0]] and b4["cann_list"] == [0, 1]
    pr = _probe("Ascend950PR")
    assert pr["capability"] == [[0, 32], [0, 64], [0, 128 * MIB]]
    p3 = _probe("Ascend310P3")                   # a SoC the emulator has no figures for, and no inf/nan
    assert p3["ACL_DEV_ATTR_CUBE_CORE_NUM"][0] == FEATURE_NOT_SUPPORT and p3["capability"][0][0] == FEATURE_NOT_SUPPORT
    assert p3["cann"] == [[0, 0], [0, 0], [0, 0]] and p3["cann_list"] == []


def test_device_capability_and_cann_attribute_checks(acl):
    lib = ctypes.CDLL(get_library_dir() + "/libascendcl.so")   # aclGetDeviceCapability: not in the public headers
    v = ctypes.c_int64()
    assert lib.aclGetDeviceCapability(0, 3, ctypes.byref(v)) == INVALID_PARAM
    assert lib.aclGetDeviceCapability(1, 0, ctypes.byref(v)) == INVALID_PARAM          # one device
    assert lib.aclGetDeviceCapability(0, 0, None) == INVALID_PARAM
    capi.aclGetRecentErrMsg()
    i = ctypes.c_int32()
    expect_failure(capi.aclGetCannAttribute(7, ctypes.byref(i)), INVALID_PARAM, "aclGetCannAttribute", "cannAttr 7")
    expect_failure(capi.aclGetCannAttribute(capi.ACL_CANN_ATTR_BF16, None), INVALID_PARAM, "aclGetCannAttribute")
    expect_failure(capi.aclGetCannAttributeList(None, ctypes.byref(ctypes.c_size_t())), INVALID_PARAM,
                   "aclGetCannAttributeList")


def _uuid(device=0) -> bytes:
    u = capi.aclrtUuid()
    assert capi.aclrtDeviceGetUuid(device, ctypes.byref(u)) == 0
    return bytes(u)


def test_device_uuid_is_stable(acl):
    first = _uuid()
    assert len(first) == 16 and first == _uuid()
    assert first[6] >> 4 == 8 and first[8] >> 6 == 0b10           # RFC 9562 version 8, variant 10
    code, out, err = run_python("""
        import ctypes
        from pyaclnn import capi
        ids = []
        for d in (0, 1):
            u = capi.aclrtUuid()
            assert capi.aclrtDeviceGetUuid(d, ctypes.byref(u)) == 0
            ids.append(bytes(u).hex())
        print(*ids)
    """, env_overrides={"PYACLNN_STUB_DEVICE_COUNT": "2"})
    assert code == 0, err
    zero, one = out.split()
    assert zero == first.hex() and one != zero                   # the same in another process; per device
    expect_failure(capi.aclrtDeviceGetUuid(0, None), INVALID_PARAM, "aclrtDeviceGetUuid", "uuid is NULL")
    expect_failure(capi.aclrtDeviceGetUuid(3, ctypes.byref(capi.aclrtUuid())), INVALID_DEVICEID,
                   "aclrtDeviceGetUuid")


def test_primary_context_state():
    code, out, err = run_python("""
        import ctypes
        from pyaclnn import capi
        def state(d=0):
            a = ctypes.c_int32(-1)
            rc = capi.aclrtGetPrimaryCtxState(d, None, ctypes.byref(a))
            return rc, a.value
        print(state(), end=" ")
        capi.aclrtSetDevice(0)
        capi.aclrtSetDevice(0)
        print(state(), end=" ")
        capi.aclrtResetDevice(0)
        print(state(), end=" ")
        capi.aclrtResetDevice(0)
        print(state(), end=" ")
        print(state(2)[0], capi.aclrtGetPrimaryCtxState(0, ctypes.byref(ctypes.c_uint32()),
                                                         ctypes.byref(ctypes.c_int32())),
              capi.aclrtGetPrimaryCtxState(0, None, None))
    """)
    assert code == 0, err
    assert out.split() == ["(0,", "0)", "(0,", "1)", "(0,", "1)", "(0,", "0)", "107001", "100000", "100000"]


def test_mem_usage_info(acl):
    info = (capi.aclrtMemUsageInfo * 4)()
    n = ctypes.c_size_t()
    assert capi.aclrtGetMemUsageInfo(0, info, 4, ctypes.byref(n)) == 0
    assert n.value == 1 and info[0].name == b"APP"
    before = info[0].curMemSize
    p = malloc(4 * MIB)
    try:
        assert capi.aclrtGetMemUsageInfo(0, info, 4, ctypes.byref(n)) == 0
        assert info[0].curMemSize >= before + 4 * MIB and info[0].memPeakSize >= info[0].curMemSize
    finally:
        free(p)
    assert capi.aclrtGetMemUsageInfo(0, info, 1, ctypes.byref(n)) == 0 and info[0].curMemSize == before
    assert info[0].memPeakSize >= before + 4 * MIB
    expect_failure(capi.aclrtGetMemUsageInfo(0, info, 0, ctypes.byref(n)), PARAM_INVALID, "aclrtGetMemUsageInfo")
    expect_failure(capi.aclrtGetMemUsageInfo(0, None, 4, ctypes.byref(n)), INVALID_PARAM, "aclrtGetMemUsageInfo")
    expect_failure(capi.aclrtGetMemUsageInfo(0, info, 4, None), INVALID_PARAM, "aclrtGetMemUsageInfo")
    expect_failure(capi.aclrtGetMemUsageInfo(9, info, 4, ctypes.byref(n)), INVALID_DEVICEID, "aclrtGetMemUsageInfo")


def test_logic_device_ids_follow_visible_devices():
    code, out, err = run_python("""
        import ctypes
        from pyaclnn import capi
        res = []
        for user in (0, 1, 2):
            v = ctypes.c_int32(-1)
            res.append((capi.aclrtGetLogicDevIdByUserDevId(user, ctypes.byref(v)), v.value))
        print(res, capi.aclrtGetLogicDevIdByUserDevId(0, None))
    """, env_overrides={"PYACLNN_STUB_DEVICE_COUNT": "4", "ASCEND_RT_VISIBLE_DEVICES": "1,3"})
    assert code == 0, err
    assert out.strip() == "[(0, 1), (0, 3), (107001, -1)] 100000"


# ---- copies ----------------------------------------------------------------------------------------

def _location(kind, device=0):
    return capi.aclrtMemLocation(device, kind)


H2D = capi.aclrtMemcpyBatchAttr(_location(capi.ACL_MEM_LOCATION_TYPE_DEVICE), _location(capi.ACL_MEM_LOCATION_TYPE_HOST))
D2H = capi.aclrtMemcpyBatchAttr(_location(capi.ACL_MEM_LOCATION_TYPE_HOST), _location(capi.ACL_MEM_LOCATION_TYPE_DEVICE))


def _arrays(dsts, srcs, sizes, dest_maxs=None):
    n = len(dsts)
    P, S = ctypes.c_void_p * n, ctypes.c_size_t * n
    return P(*dsts), S(*(dest_maxs or sizes)), P(*srcs), S(*sizes)


def test_memcpy_batch(acl):
    a, b = np.arange(16, dtype=np.float32), np.arange(16, 32, dtype=np.float32)
    d1, d2 = malloc(64), malloc(64)
    out = np.zeros(16, np.float32)
    try:
        dsts, maxs, srcs, sizes = _arrays([d1, d2, out.ctypes.data], [a.ctypes.data, b.ctypes.data, d2],
                                          [64, 64, 64])
        attrs = (capi.aclrtMemcpyBatchAttr * 2)(H2D, D2H)
        idx, fail = (ctypes.c_size_t * 2)(0, 2), ctypes.c_size_t(7)
        assert capi.aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 3, attrs, idx, 2, ctypes.byref(fail)) == 0
        assert fail.value == SIZE_MAX
        np.testing.assert_array_equal(out, b)
        np.testing.assert_array_equal(download(d1, 64).view(np.float32), a)
        # A pair whose declared location is wrong: nothing copied (all pairs are checked first).
        out[:] = 0
        bad = (capi.aclrtMemcpyBatchAttr * 1)(H2D)
        expect_failure(capi.aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 3, bad, idx, 1, ctypes.byref(fail)),
                       PARAM_INVALID, "aclrtMemcpyBatch", "pair 2")
        assert fail.value == 2 and not out.any()
        # Device to device is not a batch direction.
        dd = _arrays([d1], [d2], [64])
        dev_dev = (capi.aclrtMemcpyBatchAttr * 1)(capi.aclrtMemcpyBatchAttr(
            _location(capi.ACL_MEM_LOCATION_TYPE_DEVICE), _location(capi.ACL_MEM_LOCATION_TYPE_DEVICE)))
        expect_failure(capi.aclrtMemcpyBatch(*dd, 1, dev_dev, idx, 1, ctypes.byref(fail)), PARAM_INVALID,
                       "aclrtMemcpyBatch", "only host-to-device and device-to-host")
        assert fail.value == 0
    finally:
        free(d1)
        free(d2)


def test_memcpy_batch_argument_checks(acl):
    d = malloc(64)
    host = np.zeros(16, np.float32)
    try:
        dsts, maxs, srcs, sizes = _arrays([d], [host.ctypes.data], [64])
        attrs, idx, fail = (capi.aclrtMemcpyBatchAttr * 1)(H2D), (ctypes.c_size_t * 2)(0, 0), ctypes.c_size_t()
        f = capi.aclrtMemcpyBatch
        expect_failure(f(dsts, maxs, srcs, sizes, 1, attrs, idx, 1, None), INVALID_PARAM, "aclrtMemcpyBatch",
                       "failIndex is NULL")
        expect_failure(f(dsts, maxs, srcs, sizes, 0, attrs, idx, 1, ctypes.byref(fail)), INVALID_PARAM,
                       "aclrtMemcpyBatch", "numBatches")
        zero = (ctypes.c_size_t * 1)(0)
        assert f(None, None, None, zero, 1, None, None, 0, ctypes.byref(fail)) == 0 and fail.value == SIZE_MAX
        expect_failure(f(dsts, (ctypes.c_size_t * 1)(32), srcs, sizes, 1, attrs, idx, 1, ctypes.byref(fail)),
                       INVALID_PARAM, "aclrtMemcpyBatch", "exceeds the size 32")
        expect_failure(f(None, maxs, srcs, sizes, 1, attrs, idx, 1, ctypes.byref(fail)), INVALID_PARAM,
                       "aclrtMemcpyBatch", "dsts is NULL")
        reserved = (capi.aclrtMemcpyBatchAttr * 1)(H2D)
        reserved[0].rsv[3] = 1
        expect_failure(f(dsts, maxs, srcs, sizes, 1, reserved, idx, 1, ctypes.byref(fail)), INVALID_PARAM,
                       "aclrtMemcpyBatch", "rsv")
        expect_failure(f(dsts, maxs, srcs, sizes, 1, attrs, idx, 0, ctypes.byref(fail)), PARAM_INVALID,
                       "aclrtMemcpyBatch", "numAttrs")
        two = (capi.aclrtMemcpyBatchAttr * 2)(H2D, H2D)
        expect_failure(f(dsts, maxs, srcs, sizes, 1, two, idx, 2, ctypes.byref(fail)), PARAM_INVALID,
                       "aclrtMemcpyBatch", "must not exceed")
        expect_failure(f(dsts, maxs, srcs, sizes, 1, attrs, (ctypes.c_size_t * 1)(1), 1, ctypes.byref(fail)),
                       PARAM_INVALID, "aclrtMemcpyBatch", "attrsIndexes[0]")
        many = 4097
        big = _arrays([d] * many, [host.ctypes.data] * many, [4] * many)
        expect_failure(f(*big, many, attrs, idx, 1, ctypes.byref(fail)), PARAM_INVALID, "aclrtMemcpyBatch", "4096")
    finally:
        free(d)


def test_memcpy_batch_async(acl, stream, hazards_off):   # reads d behind the gate on purpose
    src = ctypes.c_void_p()
    assert capi.aclrtMallocHost(ctypes.byref(src), 64) == 0
    ctypes.memmove(src, np.arange(16, dtype=np.float32).ctypes.data, 64)
    d = malloc(64)
    assert capi.aclrtMemset(d, 64, 0, 64) == 0
    try:
        gate = Gate()
        gate.submit(stream)
        dsts, maxs, srcs, sizes = _arrays([d, d], [src.value, 0x10], [64, 64])
        attrs, idx, fail = (capi.aclrtMemcpyBatchAttr * 1)(H2D), (ctypes.c_size_t * 1)(0), ctypes.c_size_t()
        # Pair 1 is declared device-to-host, but it goes host to device: it fails, after pair 0 was queued.
        attrs2 = (capi.aclrtMemcpyBatchAttr * 2)(H2D, D2H)
        idx2 = (ctypes.c_size_t * 2)(0, 1)
        expect_failure(capi.aclrtMemcpyBatchAsync(dsts, maxs, srcs, sizes, 2, attrs2, idx2, 2, ctypes.byref(fail),
                                                  stream), PARAM_INVALID, "aclrtMemcpyBatchAsync", "pair 1")
        assert fail.value == 1                                # pair 0 is queued, behind the gate
        assert not download(d, 64).any()
        gate.open()
        assert capi.aclrtSynchronizeStream(stream) == 0
        np.testing.assert_array_equal(download(d, 64).view(np.float32), np.arange(16, dtype=np.float32))
        assert capi.aclrtMemcpyBatchAsync(dsts, maxs, srcs, sizes, 1, attrs, idx, 1, ctypes.byref(fail), stream) == 0
        assert fail.value == SIZE_MAX
        expect_failure(capi.aclrtMemcpyBatchAsync(dsts, maxs, srcs, sizes, 1, attrs, idx, 1, ctypes.byref(fail),
                                                  0x1234), PARAM_INVALID, "aclrtMemcpyBatchAsync")
        assert capi.aclrtSynchronizeStream(stream) == 0
    finally:
        capi.aclrtFreeHost(src)
        free(d)


def test_memcpy_async_with_condition(acl, stream):
    host = np.arange(8, dtype=np.float64)
    d = malloc(64)
    try:
        assert capi.aclrtMemcpyAsyncWithCondition(d, 64, host.ctypes.data, 64, capi.ACL_MEMCPY_HOST_TO_DEVICE,
                                                  stream) == 0
        assert capi.aclrtSynchronizeStream(stream) == 0
        np.testing.assert_array_equal(download(d, 64).view(np.float64), host)
        assert capi.aclrtMemcpyAsyncWithCondition(d, 64, host.ctypes.data, 0, capi.ACL_MEMCPY_HOST_TO_DEVICE,
                                                  stream) == 0
        expect_failure(capi.aclrtMemcpyAsyncWithCondition(None, 64, host.ctypes.data, 64,
                                                          capi.ACL_MEMCPY_HOST_TO_DEVICE, stream),
                       INVALID_PARAM, "aclrtMemcpyAsyncWithCondition", "dst is NULL")
        expect_failure(capi.aclrtMemcpyAsyncWithCondition(d, 64, host.ctypes.data, 64,
                                                          capi.ACL_MEMCPY_DEVICE_TO_HOST, stream),
                       PARAM_INVALID, "aclrtMemcpyAsyncWithCondition", "needs host memory at dst")
    finally:
        free(d)


def test_cmo_async(acl, stream):
    d = malloc(256)
    host = np.zeros(8)
    try:
        for kind in range(4):
            assert capi.aclrtCmoAsync(d, 256, kind, stream) == 0
        assert capi.aclrtSynchronizeStream(stream) == 0
        expect_failure(capi.aclrtCmoAsync(None, 8, 0, stream), INVALID_PARAM, "aclrtCmoAsync")
        expect_failure(capi.aclrtCmoAsync(d, 0, 0, stream), INVALID_PARAM, "aclrtCmoAsync")
        expect_failure(capi.aclrtCmoAsync(d, 8, 4, stream), PARAM_INVALID, "aclrtCmoAsync", "cmoType 4")
        expect_failure(capi.aclrtCmoAsync(host.ctypes.data, 8, 0, stream), PARAM_INVALID, "aclrtCmoAsync")
        expect_failure(capi.aclrtCmoAsync(d, 4096, 0, stream), PARAM_INVALID, "aclrtCmoAsync")
    finally:
        free(d)


def test_stream_ids(acl, stream):
    other = create_stream()
    try:
        ids = []
        for s in (stream, other, None):
            i = ctypes.c_int32(-1)
            assert capi.aclrtStreamGetId(s, ctypes.byref(i)) == 0
            ids.append(i.value)
        assert len(set(ids)) == 3 and min(ids) >= 0
        expect_failure(capi.aclrtStreamGetId(stream, None), INVALID_PARAM, "aclrtStreamGetId")
        expect_failure(capi.aclrtStreamGetId(0x1234, ctypes.byref(ctypes.c_int32())), PARAM_INVALID,
                       "aclrtStreamGetId")
    finally:
        capi.aclrtDestroyStream(other)


# ---- layouts ---------------------------------------------------------------------------------------

LAYOUT_PROGRAM = r"""
#include <stddef.h>
#include <stdio.h>
#include "acl/acl.h"
#define F(T, m) printf("%s.%s %zu\n", #T, #m, offsetof(T, m))
#define S(T) printf("%s %zu\n", #T, sizeof(T))
int main(void) {
    S(aclrtPtrAttributes); F(aclrtPtrAttributes, location); F(aclrtPtrAttributes, pageSize); F(aclrtPtrAttributes, rsv);
    S(aclrtMemLocation); F(aclrtMemLocation, type);
    S(aclrtMemUsageInfo); F(aclrtMemUsageInfo, curMemSize); F(aclrtMemUsageInfo, memPeakSize); F(aclrtMemUsageInfo, reserved);
    S(aclrtMemcpyBatchAttr); F(aclrtMemcpyBatchAttr, srcLoc); F(aclrtMemcpyBatchAttr, rsv);
    S(aclrtMallocAttrValue); S(aclrtMallocAttribute); F(aclrtMallocAttribute, value);
    S(aclrtMallocConfig); F(aclrtMallocConfig, numAttrs); S(aclrtUuid);
    return 0;
}
"""


def test_structure_layouts_match_the_c_compiler(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler on PATH")
    src = tmp_path / "layout.c"
    src.write_text(LAYOUT_PROGRAM)
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-I", get_include(), "-o", str(exe), str(src)], check=True)
    for line in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines():
        name, value = line.split()
        if "." in name:
            struct, field = name.split(".")
            assert getattr(getattr(capi, struct), field).offset == int(value), name
        else:
            assert ctypes.sizeof(getattr(capi, name)) == int(value), name
