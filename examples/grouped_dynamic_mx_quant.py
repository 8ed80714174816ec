"""aclnnGroupedDynamicMxQuant and aclnnGroupedDynamicMxQuantV2 end to end through pyaclnn.capi: a
line-by-line port of examples/cpp/grouped_dynamic_mx_quant.cpp (same calls, same order, same
output) on the published example: x BFLOAT16 [8, 1] = (0, 8, 64, 512) twice, groupIndex [4, 8],
FLOAT8_E4M3FN.

    python examples/grouped_dynamic_mx_quant.py
    -> aclnnGroupedDynamicMxQuant y: 0 72 96 120 0 72 96 120
       aclnnGroupedDynamicMxQuant mxscale: 128 0 128 0
       (the same two lines for aclnnGroupedDynamicMxQuantV2)
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
    """Device buffer holding a copy of ``host``, described by a contiguous ND aclTensor of
    ``shape``. Returns (device address, aclTensor handle)."""
    host_array = (ctype * len(host))(*host)
    nbytes = len(host) * ctypes.sizeof(ctype)
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


def print_bytes(api: str, name: str, data) -> None:
    print(f"{api} {name}:" + "".join(f" {b}" for b in data))


def run_example(version: int, stream) -> int:
    """One quantisation with either API version: tensors, phase 1, workspace, phase 2, sync,
    results."""
    api = "aclnnGroupedDynamicMxQuant" if version == 1 else "aclnnGroupedDynamicMxQuantV2"
    x_shape = [8, 1]
    group_index_shape = [2]
    y_shape = [8, 1]
    mxscale_shape = [2, 1, 2]   # [8 // 64 + 2, 1, 2]
    # bfloat16 bit patterns of 0, 8, 64, 512
    x_host = [0, 16640, 17024, 17408, 0, 16640, 17024, 17408]
    group_index_host = [4, 8]
    y_host = [0] * 8
    mxscale_host = [0] * 4
    x_addr, x = make_device_tensor(x_host, ctypes.c_uint16, x_shape, capi.ACL_BF16)
    group_index_addr, group_index = make_device_tensor(group_index_host, ctypes.c_int32, group_index_shape,
                                                       capi.ACL_INT32)
    y_addr, y = make_device_tensor(y_host, ctypes.c_uint8, y_shape, capi.ACL_FLOAT8_E4M3FN)
    mxscale_addr, mxscale = make_device_tensor(mxscale_host, ctypes.c_uint8, mxscale_shape, capi.ACL_FLOAT8_E8M0)

    # Phase 1: validate, get the workspace size and an executor.
    round_mode = "rint"                  # const char*: str (or bytes)
    dst_type = capi.ACL_FLOAT8_E4M3FN
    blocksize = 32
    scale_alg = 0
    dst_type_max = 0.0
    workspace_size = ctypes.c_uint64(0)
    executor = ctypes.c_void_p()
    if version == 1:
        check_ok(capi.aclnnGroupedDynamicMxQuantGetWorkspaceSize(x, group_index, round_mode, dst_type, blocksize, y,
                                                                 mxscale, ctypes.byref(workspace_size),
                                                                 ctypes.byref(executor)),
                 "aclnnGroupedDynamicMxQuantGetWorkspaceSize")
    else:
        check_ok(capi.aclnnGroupedDynamicMxQuantV2GetWorkspaceSize(x, group_index, round_mode, dst_type, blocksize,
                                                                   scale_alg, dst_type_max, y, mxscale,
                                                                   ctypes.byref(workspace_size),
                                                                   ctypes.byref(executor)),
                 "aclnnGroupedDynamicMxQuantV2GetWorkspaceSize")

    # Workspace, only when one is needed.
    workspace = ctypes.c_void_p()
    if workspace_size.value > 0:
        check_ok(capi.aclrtMalloc(ctypes.byref(workspace), workspace_size.value, capi.ACL_MEM_MALLOC_HUGE_FIRST),
                 "allocate workspace")

    # Phase 2: enqueue on the stream, then wait for it.
    if version == 1:
        check_ok(capi.aclnnGroupedDynamicMxQuant(workspace, workspace_size.value, executor, stream), api)
    else:
        check_ok(capi.aclnnGroupedDynamicMxQuantV2(workspace, workspace_size.value, executor, stream), api)
    check_ok(capi.aclrtSynchronizeStream(stream), "aclrtSynchronizeStream")

    # Results back to the host.
    y_out = (ctypes.c_uint8 * len(y_host))()
    mxscale_out = (ctypes.c_uint8 * len(mxscale_host))()
    check_ok(capi.aclrtMemcpy(y_out, len(y_out), y_addr, len(y_out), capi.ACL_MEMCPY_DEVICE_TO_HOST), "copy y")
    check_ok(capi.aclrtMemcpy(mxscale_out, len(mxscale_out), mxscale_addr, len(mxscale_out),
                              capi.ACL_MEMCPY_DEVICE_TO_HOST), "copy mxscale")
    print_bytes(api, "y", y_out)
    print_bytes(api, "mxscale", mxscale_out)

    # Release this run's tensors and buffers.
    capi.aclDestroyTensor(x)
    capi.aclDestroyTensor(group_index)
    capi.aclDestroyTensor(y)
    capi.aclDestroyTensor(mxscale)
    capi.aclrtFree(x_addr)
    capi.aclrtFree(group_index_addr)
    capi.aclrtFree(y_addr)
    capi.aclrtFree(mxscale_addr)
    if workspace_size.value > 0:
        capi.aclrtFree(workspace)
    return 0


def main() -> int:
    # Runtime: init, device 0, one stream.
    device_id = 0
    stream = ctypes.c_void_p()
    check_ok(capi.aclInit(None), "aclInit")
    check_ok(capi.aclrtSetDevice(device_id), "aclrtSetDevice")
    check_ok(capi.aclrtCreateStream(ctypes.byref(stream)), "aclrtCreateStream")

    # The same example through both API versions.
    check_ok(run_example(1, stream), "RunExample(1)")
    check_ok(run_example(2, stream), "RunExample(2)")

    capi.aclrtDestroyStream(stream)
    check_ok(capi.aclrtResetDevice(device_id), "reset device")
    check_ok(capi.aclFinalize(), "finalize acl")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CheckFailed as failure:
        sys.exit(failure.status)
