"""aclnnAmpUpdateScale end to end through pyaclnn.capi: a line-by-line port of
examples/cpp/amp_update_scale.cpp (same calls, same order, same output).

    python examples/amp_update_scale.py
    -> aclnnAmpUpdateScale result: updatedScale = 65536.000000, updatedGrowthTracker = 901
"""
from __future__ import annotations

import ctypes
import sys

from pyaclnn import capi


class CheckFailed(Exception):
    """A call returned non-zero; carries the status that main() exits with."""

    def __init__(self, status: int):
        super().__init__(status)
        self.status = status


def check_ok(status: int, what: str) -> None:
    if status != 0:
        print(f"{what} failed. ERROR: {status}")
        raise CheckFailed(status)


def make_device_tensor(host: list, ctype, shape: list[int], dtype: int):
    """Device buffer holding a copy of ``host``, described by a contiguous ND aclTensor.
    Returns (device address, aclTensor handle)."""
    host_array = (ctype * len(host))(*host)
    nbytes = ctypes.sizeof(ctype)
    for dim in shape:
        nbytes *= dim
    device_addr = ctypes.c_void_p()
    check_ok(capi.aclrtMalloc(ctypes.byref(device_addr), nbytes, capi.ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")
    check_ok(capi.aclrtMemcpy(device_addr, nbytes, host_array, nbytes, capi.ACL_MEMCPY_HOST_TO_DEVICE),
             "aclrtMemcpy")
    strides = [1] * len(shape)
    for i in range(len(shape) - 1, 0, -1):
        strides[i - 1] = strides[i] * shape[i]
    dims = (ctypes.c_int64 * len(shape))(*shape)
    tensor = capi.aclCreateTensor(dims, len(shape), dtype, (ctypes.c_int64 * len(strides))(*strides), 0,
                                  capi.ACL_FORMAT_ND, dims, len(shape), device_addr)
    return device_addr.value, tensor


def main() -> int:
    # 1. Runtime: init, device 0, one stream.
    device_id = 0
    stream = ctypes.c_void_p()
    check_ok(capi.aclInit(None), "aclInit")
    check_ok(capi.aclrtSetDevice(device_id), "aclrtSetDevice")
    check_ok(capi.aclrtCreateStream(ctypes.byref(stream)), "aclrtCreateStream")

    # 2. Inputs and outputs: five one-element tensors.
    shape = [1]
    scale_addr, current_scale = make_device_tensor([65536.0], ctypes.c_float, shape, capi.ACL_FLOAT)
    tracker_addr, growth_tracker = make_device_tensor([900], ctypes.c_int32, shape, capi.ACL_INT32)
    found_inf_addr, found_inf = make_device_tensor([0.0], ctypes.c_float, shape, capi.ACL_FLOAT)
    new_scale_addr, updated_scale = make_device_tensor([0.0], ctypes.c_float, shape, capi.ACL_FLOAT)
    new_tracker_addr, updated_growth_tracker = make_device_tensor([0], ctypes.c_int32, shape, capi.ACL_INT32)

    # 3. Phase 1: validate, get the workspace size and an executor.
    growth_factor = 2.0
    backoff_factor = 0.5
    growth_interval = 1000
    workspace_size = ctypes.c_uint64(0)
    executor = ctypes.c_void_p()
    check_ok(capi.aclnnAmpUpdateScaleGetWorkspaceSize(current_scale, growth_tracker, found_inf, growth_factor,
                                                      backoff_factor, growth_interval, updated_scale,
                                                      updated_growth_tracker, ctypes.byref(workspace_size),
                                                      ctypes.byref(executor)),
             "aclnnAmpUpdateScaleGetWorkspaceSize")

    # 4. Workspace, only when one is needed.
    workspace = ctypes.c_void_p()
    if workspace_size.value > 0:
        check_ok(capi.aclrtMalloc(ctypes.byref(workspace), workspace_size.value, capi.ACL_MEM_MALLOC_HUGE_FIRST),
                 "allocate workspace")

    # 5. Phase 2: enqueue on the stream, 6. wait for it.
    check_ok(capi.aclnnAmpUpdateScale(workspace, workspace_size.value, executor, stream), "aclnnAmpUpdateScale")
    check_ok(capi.aclrtSynchronizeStream(stream), "aclrtSynchronizeStream")

    # 7. Results back to the host.
    new_scale = ctypes.c_float(0.0)
    new_tracker = ctypes.c_int32(0)
    check_ok(capi.aclrtMemcpy(ctypes.byref(new_scale), ctypes.sizeof(new_scale), new_scale_addr,
                              ctypes.sizeof(new_scale), capi.ACL_MEMCPY_DEVICE_TO_HOST), "copy updatedScale")
    check_ok(capi.aclrtMemcpy(ctypes.byref(new_tracker), ctypes.sizeof(new_tracker), new_tracker_addr,
                              ctypes.sizeof(new_tracker), capi.ACL_MEMCPY_DEVICE_TO_HOST),
             "copy updatedGrowthTracker")
    print(f"aclnnAmpUpdateScale result: updatedScale = {new_scale.value:f}, "
          f"updatedGrowthTracker = {new_tracker.value}")

    # 8. Release everything, then the device and the runtime.
    capi.aclDestroyTensor(current_scale)
    capi.aclDestroyTensor(growth_tracker)
    capi.aclDestroyTensor(found_inf)
    capi.aclDestroyTensor(updated_scale)
    capi.aclDestroyTensor(updated_growth_tracker)
    capi.aclrtFree(scale_addr)
    capi.aclrtFree(tracker_addr)
    capi.aclrtFree(found_inf_addr)
    capi.aclrtFree(new_scale_addr)
    capi.aclrtFree(new_tracker_addr)
    if workspace_size.value > 0:
        capi.aclrtFree(workspace)
    capi.aclrtDestroyStream(stream)
    check_ok(capi.aclrtResetDevice(device_id), "reset device")
    check_ok(capi.aclFinalize(), "finalize acl")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CheckFailed as failure:
        sys.exit(failure.status)
