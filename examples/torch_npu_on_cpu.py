"""torch_npu on the CPU emulator: both emulated quantisers through torch_npu, on their published inputs.

    pip install torch==2.13.0 torch-npu==2.13.0
    python -m pyaclnn exec -- python examples/torch_npu_on_cpu.py

Expected (the values the demo and the vendor documentation publish):
    npu_grouped_dynamic_mx_quant   y bytes [0, 72, 96, 120, 0, 72, 96, 120], mxscale [[[128, 0]], [[128, 0]]]
    npu_add_rms_norm_dynamic_quant y1 [127 x 8], y2 [127 x 8], xOut 1.0, scale1 = scale2 = [0.017716526985168457] x 2
NPU tensors are made with torch.empty(device="npu") and filled with aclrtMemcpy (pyaclnn.capi), so the
example runs even where the stub lacks aclnnInplaceCopy; with it, `.npu()` / `.cpu()` do the same.
"""
import os

import ml_dtypes
import numpy as np
import torch
import torch_npu  # noqa: F401  (runs on the emulator under `python -m pyaclnn exec`)

from pyaclnn import capi


def to_npu(array: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    t = torch.empty(array.shape, dtype=dtype, device="npu")
    assert capi.aclrtMemcpy(t.data_ptr(), array.nbytes, array.ctypes.data, array.nbytes,
                            capi.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    return t


def to_host(t: torch.Tensor, dtype) -> np.ndarray:
    torch.npu.synchronize()
    out = np.empty(tuple(t.shape), dtype)
    assert capi.aclrtMemcpy(out.ctypes.data, out.nbytes, t.data_ptr(), out.nbytes,
                            capi.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    return out


print(f"torch {torch.__version__}, torch_npu {torch_npu.__version__}, device {torch.npu.get_device_name(0)}, "
      f"ASCEND_HOME_PATH={os.environ.get('ASCEND_HOME_PATH')}")

# aclnnGroupedDynamicMxQuantV2 via torch_npu (Ascend 950): the published bf16 -> FLOAT8_E4M3FN example.
x = to_npu(np.array([0, 8, 64, 512] * 2, ml_dtypes.bfloat16).reshape(8, 1).view(np.uint16), torch.bfloat16)
group_index = to_npu(np.array([4, 8], np.int32), torch.int32)
y, mxscale = torch_npu.npu_grouped_dynamic_mx_quant(x, group_index, dst_type=torch.float8_e4m3fn)
print("npu_grouped_dynamic_mx_quant   y bytes", to_host(y, np.uint8).ravel().tolist(),
      "mxscale", to_host(mxscale, np.uint8).tolist())

# aclnnAddRmsNormDynamicQuantV2 via torch_npu: the vendor sample's inputs (x1 = x2 = 0.5, gamma = smooth = 1.5).
half = to_npu(np.full((2, 8), 0.5, np.float16), torch.float16)
vec = to_npu(np.full(8, 1.5, np.float16), torch.float16)
y1, y2, x_out, scale1, scale2 = torch_npu.npu_add_rms_norm_dynamic_quant(
    half, half, vec, smooth_scale1=vec, smooth_scale2=vec, epsilon=1e-6)
print("npu_add_rms_norm_dynamic_quant y1", to_host(y1, np.int8)[0].tolist(), "y2", to_host(y2, np.int8)[0].tolist(),
      "xOut", float(to_host(x_out, np.float16)[0, 0]), "scale1", to_host(scale1, np.float32).tolist(),
      "scale2", to_host(scale2, np.float32).tolist())
