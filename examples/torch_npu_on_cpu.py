"""torch_npu on the CPU emulator: both emulated quantisers through torch_npu, on their published inputs.

    pip install torch==2.13.0 torch-npu==2.13.0
    python -m pyaclnn exec -- python examples/torch_npu_on_cpu.py

prints (after a line naming the versions and the emulated toolkit), the values the demo and the vendor
documentation publish:

    npu_grouped_dynamic_mx_quant   y bytes [0, 72, 96, 120, 0, 72, 96, 120] mxscale [[[128, 0]], [[128, 0]]]
    npu_add_rms_norm_dynamic_quant y1 [127, 127, 127, 127, 127, 127, 127, 127] y2 [127, 127, 127, 127, 127, 127, 127, 127] xOut 1.0 scale1 [0.017716526985168457, 0.017716526985168457] scale2 [0.017716526985168457, 0.017716526985168457]

Inputs go to the NPU with `.npu()` and results come back with `.cpu()`, as in any torch_npu program.
"""
import os

# torch_npu's allocator warns once that "the current CANN and Soc versions require processing for 32
# padding size": it pads every block by 32 bytes unless the toolkit reports CANN >= 9.1.0 on Ascend 950,
# and the emulator reports no CANN release number (see native_stubs/src/compat/compat.h). The padding is
# harmless; TORCH_NPU_WARNING_DISABLE=1 is torch_npu's documented switch for its warnings.
os.environ.setdefault("TORCH_NPU_WARNING_DISABLE", "1")

import torch  # noqa: E402
import torch_npu  # noqa: E402  (runs on the emulator under `python -m pyaclnn exec`)

print(f"torch {torch.__version__}, torch_npu {torch_npu.__version__}, device {torch.npu.get_device_name(0)}, "
      f"ASCEND_HOME_PATH={os.environ.get('ASCEND_HOME_PATH')}")

# aclnnGroupedDynamicMxQuantV2 via torch_npu (Ascend 950): the published bf16 -> FLOAT8_E4M3FN example.
x = torch.tensor([0, 8, 64, 512] * 2, dtype=torch.bfloat16).reshape(8, 1).npu()
group_index = torch.tensor([4, 8], dtype=torch.int32).npu()
y, mxscale = torch_npu.npu_grouped_dynamic_mx_quant(x, group_index, dst_type=torch.float8_e4m3fn)
print("npu_grouped_dynamic_mx_quant   y bytes", y.cpu().view(torch.uint8).ravel().tolist(),
      "mxscale", mxscale.cpu().view(torch.uint8).tolist())

# aclnnAddRmsNormDynamicQuantV2 via torch_npu: the vendor sample's inputs (x1 = x2 = 0.5, gamma = smooth = 1.5).
half = torch.full((2, 8), 0.5, dtype=torch.float16, device="npu")
vec = torch.full((8,), 1.5, dtype=torch.float16, device="npu")
y1, y2, x_out, scale1, scale2 = torch_npu.npu_add_rms_norm_dynamic_quant(
    half, half, vec, smooth_scale1=vec, smooth_scale2=vec, epsilon=1e-6)
print("npu_add_rms_norm_dynamic_quant y1", y1[0].cpu().tolist(), "y2", y2[0].cpu().tolist(),
      "xOut", x_out[0, 0].item(), "scale1", scale1.cpu().tolist(), "scale2", scale2.cpu().tolist())
