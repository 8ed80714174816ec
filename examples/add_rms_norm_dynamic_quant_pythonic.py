"""AddRmsNormDynamicQuant the Pythonic way: numpy in, numpy out, one call.

The inputs of the vendor sample (x1 = x2 = 0.5, gamma = beta = smooth scales = 1.5, fp16 [2, 8]),
then a random bfloat16 batch quantised to int8 and dequantised again.

    python examples/add_rms_norm_dynamic_quant_pythonic.py
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from pyaclnn import ops


def main() -> None:
    x = np.full((2, 8), 0.5, np.float16)
    ones = np.full(8, 1.5, np.float16)
    y1, y2, x_out, scale1, scale2 = ops.add_rms_norm_dynamic_quant(
        x, x, ones, smooth_scale1=ones, smooth_scale2=ones, beta=ones, epsilon=1e-6)
    print("y1 =", y1[0].tolist(), "scale1 =", [f"{s:.8f}" for s in scale1])
    print("y2 =", y2[0].tolist(), "scale2 =", [f"{s:.8f}" for s in scale2])
    print("x_out =", x_out[0].tolist())

    # A random batch: one int8 output (no smooth scale), dequantised back (y1 * scale1 per row).
    rng = np.random.default_rng(0)
    x1 = rng.standard_normal((4, 256)).astype(ml_dtypes.bfloat16)
    x2 = rng.standard_normal((4, 256)).astype(ml_dtypes.bfloat16)
    gamma = rng.uniform(0.5, 1.5, 256).astype(ml_dtypes.bfloat16)
    y1, y2, x_out, scale1, scale2 = ops.add_rms_norm_dynamic_quant(x1, x2, gamma)
    assert y2 is None and scale2 is None       # one output unless both smooth scales are given
    x = x1.astype(np.float64) + x2.astype(np.float64)
    exact = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * gamma.astype(np.float64)
    dequantised = y1.astype(np.float64) * scale1[:, None]
    print(f"int8 round trip: max error {np.abs(dequantised - exact).max():.4f} "
          f"(half a quantisation step: {scale1.max() / 2:.4f})")


if __name__ == "__main__":
    main()
