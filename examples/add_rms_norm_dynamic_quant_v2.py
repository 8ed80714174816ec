"""aclnnAddRmsNormDynamicQuantV2 end to end through pyaclnn.capi: a line-by-line port of
examples/cpp/add_rms_norm_dynamic_quant_v2.cpp (same calls, same order, same output).

    python examples/add_rms_norm_dynamic_quant_v2.py
    -> result[0] is: 127  ...  result[15] is: 127
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


def shape_size(shape: list[int]) -> int:
    size = 1
    for dim in shape:
        size *= dim
    return size


def make_device_tensor(host: list, ctype, shape: list[int], dtype: int):
    """Device buffer holding a copy of ``host``, described by a contiguous ND aclTensor.
    Returns (device address, aclTensor handle)."""
    host_array = (ctype * len(host))(*host)
    nbytes = ctypes.sizeof(ctype) * shape_size(shape)
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

    # 2. Inputs and outputs.
    x_shape = [2, 8]
    gamma_shape = [8]
    beta_shape = [8]
    reduce_shape = [2, 1]
    x_size = shape_size(x_shape)
    gamma_size = shape_size(gamma_shape)
    reduce_size = shape_size(reduce_shape)
    half05 = 0x3800  # 0.5 in fp16
    half15 = 0x3E00  # 1.5 in fp16
    epsilon = 1e-6
    x1_addr, x1 = make_device_tensor([half05] * x_size, ctypes.c_uint16, x_shape, capi.ACL_FLOAT16)
    x2_addr, x2 = make_device_tensor([half05] * x_size, ctypes.c_uint16, x_shape, capi.ACL_FLOAT16)
    gamma_addr, gamma = make_device_tensor([half15] * gamma_size, ctypes.c_uint16, gamma_shape, capi.ACL_FLOAT16)
    beta_addr, beta = make_device_tensor([half15] * gamma_size, ctypes.c_uint16, beta_shape, capi.ACL_FLOAT16)
    smooth1_addr, smooth1 = make_device_tensor([half15] * gamma_size, ctypes.c_uint16, gamma_shape,
                                               capi.ACL_FLOAT16)
    smooth2_addr, smooth2 = make_device_tensor([half15] * gamma_size, ctypes.c_uint16, gamma_shape,
                                               capi.ACL_FLOAT16)
    y1_addr, y1 = make_device_tensor([0] * x_size, ctypes.c_int8, x_shape, capi.ACL_INT8)
    y2_addr, y2 = make_device_tensor([0] * x_size, ctypes.c_int8, x_shape, capi.ACL_INT8)
    x_addr, x = make_device_tensor([0] * x_size, ctypes.c_uint16, x_shape, capi.ACL_FLOAT16)
    scale1_addr, scale1 = make_device_tensor([0.0] * reduce_size, ctypes.c_float, reduce_shape, capi.ACL_FLOAT)
    scale2_addr, scale2 = make_device_tensor([0.0] * reduce_size, ctypes.c_float, reduce_shape, capi.ACL_FLOAT)

    # 3. Phase 1: validate, get the workspace size and an executor (outputMask NULL).
    workspace_size = ctypes.c_uint64(0)
    executor = ctypes.c_void_p()
    check_ok(capi.aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize(x1, x2, gamma, smooth1, smooth2, beta, epsilon,
                                                                None, y1, y2, x, scale1, scale2,
                                                                ctypes.byref(workspace_size), ctypes.byref(executor)),
             "aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize")

    # 4. Workspace, only when one is needed.
    workspace_addr = ctypes.c_void_p()
    if workspace_size.value > 0:
        check_ok(capi.aclrtMalloc(ctypes.byref(workspace_addr), workspace_size.value,
                                  capi.ACL_MEM_MALLOC_HUGE_FIRST), "allocate workspace")

    # 5. Phase 2: enqueue on the stream, 6. wait for it.
    check_ok(capi.aclnnAddRmsNormDynamicQuantV2(workspace_addr, workspace_size.value, executor, stream),
             "aclnnAddRmsNormDynamicQuantV2")
    check_ok(capi.aclrtSynchronizeStream(stream), "aclrtSynchronizeStream")

    # 7. y1 back to the host.
    y1_result = (ctypes.c_int8 * x_size)()
    check_ok(capi.aclrtMemcpy(y1_result, ctypes.sizeof(y1_result), y1_addr, x_size * ctypes.sizeof(ctypes.c_int8),
                              capi.ACL_MEMCPY_DEVICE_TO_HOST), "copy result from device to host")
    for i in range(x_size):
        print(f"result[{i}] is: {y1_result[i]}")

    # 8. Release the tensors, the device memory, then the stream, the device and the runtime.
    for tensor in (x1, x2, gamma, beta, smooth1, smooth2, y1, y2, x, scale1, scale2):
        capi.aclDestroyTensor(tensor)
    for addr in (x1_addr, x2_addr, gamma_addr, beta_addr, smooth1_addr, smooth2_addr, y1_addr, y2_addr, x_addr,
                 scale1_addr, scale2_addr):
        capi.aclrtFree(addr)
    if workspace_size.value > 0:
        capi.aclrtFree(workspace_addr)
    capi.aclrtDestroyStream(stream)
    check_ok(capi.aclrtResetDevice(device_id), "reset device")
    check_ok(capi.aclFinalize(), "finalize acl")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CheckFailed as failure:
        sys.exit(failure.status)
