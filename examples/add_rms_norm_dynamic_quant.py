"""aclnnAddRmsNormDynamicQuant through pyaclnn.capi, ported line by line from the vendor's sample
(hicann/ops-nn norm/add_rms_norm_dynamic_quant/examples/test_aclnn_add_rms_norm_dynamic_quant.cpp),
written anew: the same helpers (GetShapeSize, Init, CreateAclTensor), the CHECK_RET and LOG_PRINT
macros as functions, the same main(), the same calls in the same order and the same output.

    python examples/add_rms_norm_dynamic_quant.py
    -> result[0] is: 127  ...  result[15] is: 127

How the C++ reads in Python:
    aclrtStream stream;              stream = aclrtStream()
    void* addr = nullptr;            addr = c_void_p()
    aclTensor* x1 = nullptr;         x1 = aclTensor_p()
    uint64_t workspaceSize = 0;      workspaceSize = c_uint64(0)    (read: workspaceSize.value)
    f(&x)                            f(byref(x))
    *deviceAddr (in a helper)        deref(deviceAddr)
    aclDataType::ACL_FLOAT16         aclDataType.ACL_FLOAT16
    std::vector<short>(n, v)         vector(c_int16, n, v)
    CHECK_RET(c, stmts; return r);   CHECK_RET(c, lambda: stmts, returns=r)   in a @c_function

One difference from the sample: it keeps every host buffer as `short`, which gives the two FLOAT
scale outputs (shape [2], 8 bytes) 4-byte device buffers; here each buffer has its element type.
"""
from __future__ import annotations

import functools
import sys
from ctypes import byref, c_float, c_int8, c_int16, c_int64, c_uint64, c_void_p, sizeof

from pyaclnn.capi import *  # noqa: F401,F403  (the C names: functions, constants, enums, typedefs)
from pyaclnn.capi import deref


# ---- the sample's macros ---------------------------------------------------------------------------

class _Return(Exception):
    """CHECK_RET's `return` out of the function it is used in (see c_function)."""

    def __init__(self, value):
        super().__init__(value)
        self.value = value


def c_function(fn):
    """Lets CHECK_RET return from ``fn`` as the macro returns from the enclosing C++ function."""
    @functools.wraps(fn)
    def wrapper(*args):
        try:
            return fn(*args)
        except _Return as ret:
            return ret.value
    return wrapper


def CHECK_RET(cond, then=None, *, returns):
    """``CHECK_RET(cond, stmts; return r)``: when cond is false, run ``then()`` and return ``returns``."""
    if not cond:
        if then is not None:
            then()
        raise _Return(returns)


def LOG_PRINT(message, *args):
    print(message % args, end="")


def vector(T, count, value=0):
    """``std::vector<T>(count, value)``: a ctypes array (what .data() would point to)."""
    return (T * count)(*([value] * count))


# ---- the sample's helpers ----------------------------------------------------------------------------

def GetShapeSize(shape):
    shape_size = 1
    for i in shape:
        shape_size *= i
    return shape_size


@c_function
def Init(deviceId, stream):
    # Resource initialisation, always the same.
    ret = aclInit(None)
    CHECK_RET(ret == ACL_SUCCESS, lambda: LOG_PRINT("aclInit failed. ERROR: %d\n", ret), returns=ret)
    ret = aclrtSetDevice(deviceId)
    CHECK_RET(ret == ACL_SUCCESS, lambda: (LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret), aclFinalize()),
              returns=ret)
    ret = aclrtCreateStream(stream)
    CHECK_RET(ret == ACL_SUCCESS, lambda: (LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret),
                                           aclrtResetDevice(deviceId), aclFinalize()), returns=ret)
    return 0


@c_function
def CreateAclTensor(hostData, shape, deviceAddr, dataType, tensor):
    """hostData: a ctypes array (std::vector<T>); deviceAddr: byref(void*); tensor: byref(aclTensor*)."""
    size = GetShapeSize(shape) * sizeof(hostData._type_)
    # aclrtMalloc: device memory, written through the out-parameter deviceAddr (void**).
    ret = aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST)
    CHECK_RET(ret == ACL_SUCCESS, lambda: LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret), returns=ret)

    # aclrtMemcpy: host data to the device memory.
    ret = aclrtMemcpy(deref(deviceAddr), size, hostData, size, ACL_MEMCPY_HOST_TO_DEVICE)
    CHECK_RET(ret == ACL_SUCCESS, lambda: LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret), returns=ret)

    # Strides of a contiguous tensor.
    strides = vector(c_int64, len(shape), 1)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1]

    # aclCreateTensor, written through the out-parameter tensor (aclTensor**).
    dims = (c_int64 * len(shape))(*shape)        # shape.data()
    deref(tensor).value = aclCreateTensor(dims, len(shape), dataType, strides, 0, aclFormat.ACL_FORMAT_ND,
                                          dims, len(shape), deref(deviceAddr))
    return 0


# ---- main ----------------------------------------------------------------------------------------------

@c_function
def main():
    # 1. Device and stream (always the same; see the acl API reference). Set deviceId to your device.
    deviceId = 0
    stream = aclrtStream()
    ret = Init(deviceId, byref(stream))
    CHECK_RET(ret == 0, lambda: LOG_PRINT("Init acl failed. ERROR: %d\n", ret), returns=ret)
    # 2. Inputs and outputs, built for this operator's interface.
    xShape = [2, 8]
    gammaShape = [8]
    reduceShape = [2]

    x1DeviceAddr = c_void_p()
    x2DeviceAddr = c_void_p()
    gammaDeviceAddr = c_void_p()
    smooth1DeviceAddr = c_void_p()
    smooth2DeviceAddr = c_void_p()

    y1DeviceAddr = c_void_p()
    y2DeviceAddr = c_void_p()
    xDeviceAddr = c_void_p()
    scale1DeviceAddr = c_void_p()
    scale2DeviceAddr = c_void_p()

    x1 = aclTensor_p()
    x2 = aclTensor_p()
    gamma = aclTensor_p()
    smooth1 = aclTensor_p()
    smooth2 = aclTensor_p()
    y1 = aclTensor_p()
    y2 = aclTensor_p()
    x = aclTensor_p()
    scale1 = aclTensor_p()
    scale2 = aclTensor_p()

    xShapeSize = GetShapeSize(xShape)
    gammaShapeSize = GetShapeSize(gammaShape)
    reduceShapeSize = GetShapeSize(reduceShape)

    x1HostData = vector(c_int16, xShapeSize, 0x3800)         # 0.5 in fp16
    x2HostData = vector(c_int16, xShapeSize, 0x3800)
    gammaHostData = vector(c_int16, gammaShapeSize, 0x3e00)  # 1.5 in fp16
    smooth1HostData = vector(c_int16, gammaShapeSize, 0x3e00)
    smooth2HostData = vector(c_int16, gammaShapeSize, 0x3e00)

    y1HostData = vector(c_int8, xShapeSize, 0)
    y2HostData = vector(c_int8, xShapeSize, 0)
    xHostData = vector(c_int16, xShapeSize, 0)
    scale1HostData = vector(c_float, reduceShapeSize, 0)
    scale2HostData = vector(c_float, reduceShapeSize, 0)

    epsilon = 1e-6

    # x1 aclTensor
    ret = CreateAclTensor(x1HostData, xShape, byref(x1DeviceAddr), aclDataType.ACL_FLOAT16, byref(x1))
    CHECK_RET(ret == ACL_SUCCESS, returns=ret)
    # x2 aclTensor
    ret = CreateAclTensor(x2HostData, xShape, byref(x2DeviceAddr), aclDataType.ACL_FLOAT16, byref(x2))
    CHECK_RET(ret == ACL_SUCCESS, returns=ret)
    # gamma aclTensor
    ret = CreateAclTensor(gammaHostData, gammaShape, byref(gammaDeviceAddr), aclDataType.ACL_FLOAT16, byref(gamma))
    CHECK_RET(ret == ACL_SUCCESS, returns=ret)
    # smooth1 aclTensor
    ret = CreateAclTensor(smooth1HostData, gammaShape, byref(smooth1DeviceAddr), aclDataType.ACL_FLOAT16,
                          byref(smooth1))
    CHECK_RET(ret == ACL_SUCCESS, returns=ret)
    # smooth2 aclTensor
    ret = CreateAclTensor(smooth2HostData, gammaShape, byref(smooth2DeviceAddr), aclDataType.ACL_FLOAT16,
                          byref(smooth2))
    CHECK_RET(ret == ACL_SUCCESS, returns=ret)

    # y1 aclTensor
    ret = CreateAclTensor(y1HostData, xShape, byref(y1DeviceAddr), aclDataType.ACL_INT8, byref(y1))
    CHECK_RET(ret == ACL_SUCCESS, returns=ret)
    # y2 aclTensor
    ret = CreateAclTensor(y2HostData, xShape, byref(y2DeviceAddr), aclDataType.ACL_INT8, byref(y2))
    CHECK_RET(ret == ACL_SUCCESS, returns=ret)
    # x aclTensor
    ret = CreateAclTensor(xHostData, xShape, byref(xDeviceAddr), aclDataType.ACL_FLOAT16, byref(x))
    CHECK_RET(ret == ACL_SUCCESS, returns=ret)
    # scale1 aclTensor
    ret = CreateAclTensor(scale1HostData, reduceShape, byref(scale1DeviceAddr), aclDataType.ACL_FLOAT, byref(scale1))
    CHECK_RET(ret == ACL_SUCCESS, returns=ret)
    # scale2 aclTensor
    ret = CreateAclTensor(scale2HostData, reduceShape, byref(scale2DeviceAddr), aclDataType.ACL_FLOAT, byref(scale2))
    CHECK_RET(ret == ACL_SUCCESS, returns=ret)

    # 3. The CANN operator API.
    workspaceSize = c_uint64(0)
    executor = aclOpExecutor_p()
    # First phase of aclnnAddRmsNormDynamicQuant.
    ret = aclnnAddRmsNormDynamicQuantGetWorkspaceSize(x1, x2, gamma, smooth1, smooth2, epsilon, y1, y2, x, scale1,
                                                      scale2, byref(workspaceSize), byref(executor))
    CHECK_RET(ret == ACL_SUCCESS,
              lambda: LOG_PRINT("aclnnAddRmsNormDynamicQuantGetWorkspaceSize failed. ERROR: %d\n", ret), returns=ret)
    # Device memory for the workspace the first phase asked for.
    workspaceAddr = c_void_p()
    if workspaceSize.value > 0:
        ret = aclrtMalloc(byref(workspaceAddr), workspaceSize.value, ACL_MEM_MALLOC_HUGE_FIRST)
        CHECK_RET(ret == ACL_SUCCESS, lambda: LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret), returns=ret)
    # Second phase of aclnnAddRmsNormDynamicQuant.
    ret = aclnnAddRmsNormDynamicQuant(workspaceAddr, workspaceSize.value, executor, stream)
    CHECK_RET(ret == ACL_SUCCESS, lambda: LOG_PRINT("aclnnAddRmsNormDynamicQuant failed. ERROR: %d\n", ret), returns=ret)
    # 4. Wait for the task to finish (always the same).
    ret = aclrtSynchronizeStream(stream)
    CHECK_RET(ret == ACL_SUCCESS, lambda: LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret), returns=ret)

    # 5. Copy the output from the device to the host.
    size = GetShapeSize(xShape)
    y1Ret = vector(c_int8, size, 0)
    ret = aclrtMemcpy(y1Ret, len(y1Ret) * sizeof(y1Ret._type_), y1DeviceAddr, size * sizeof(c_int8),
                      ACL_MEMCPY_DEVICE_TO_HOST)
    CHECK_RET(ret == ACL_SUCCESS, lambda: LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret),
              returns=ret)
    for i in range(size):
        LOG_PRINT("result[%ld] is: %d\n", i, y1Ret[i])

    # 6. Destroy the aclTensors.
    aclDestroyTensor(x1)
    aclDestroyTensor(x2)
    aclDestroyTensor(gamma)
    aclDestroyTensor(smooth1)
    aclDestroyTensor(smooth2)
    aclDestroyTensor(y1)
    aclDestroyTensor(y2)
    aclDestroyTensor(x)
    aclDestroyTensor(scale1)
    aclDestroyTensor(scale2)

    # 7. Release the device resources.
    aclrtFree(x1DeviceAddr)
    aclrtFree(x2DeviceAddr)
    aclrtFree(gammaDeviceAddr)
    aclrtFree(smooth1DeviceAddr)
    aclrtFree(smooth2DeviceAddr)
    aclrtFree(y1DeviceAddr)
    aclrtFree(y2DeviceAddr)
    aclrtFree(xDeviceAddr)
    aclrtFree(scale1DeviceAddr)
    aclrtFree(scale2DeviceAddr)

    if workspaceSize.value > 0:
        aclrtFree(workspaceAddr)
    aclrtDestroyStream(stream)
    aclrtResetDevice(deviceId)
    aclFinalize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
