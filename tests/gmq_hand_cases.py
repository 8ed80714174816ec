"""Hand-worked aclnnGroupedDynamicMxQuant blocks (spec §4): one group holding `values` as a column,
the expected [S_A, S_B] E8M0 scales of row 0 and the element codes, each derived by hand from the
spec (the derivation next to each case). Run through the NumPy reference
(test_reference_grouped_mx.py) and through the C library (test_grouped_dynamic_mx_quant.py).
This module holds no tests."""
from __future__ import annotations

import ml_dtypes
import numpy as np

BF16 = ml_dtypes.bfloat16

HAND_CASES = [
    # (values, dtype, dst, kwargs, [S_A, S_B], codes)        derivation
    ([480, 1], BF16, "float8_e4m3fn", {}, [127, 0], [0x7E, 0x38]),   # 2^8*1.875 -> S 135-8, sat
    ([1.0], BF16, "float8_e4m3fn", {}, [119, 0], [0x78]),            # 1 * 2^8 = 256
    ([2.0 ** -120, -(2.0 ** -120)], BF16, "float8_e4m3fn", {}, [0, 0], [0x00, 0x80]),  # E<=emax
    ([0.0, -0.0], BF16, "float8_e4m3fn", {}, [0, 0], [0x00, 0x80]),
    ([61440, -61440], BF16, "float8_e5m2", {}, [127, 0], [0x7B, 0xFB]),  # sat to 57344
    ([1.9990234375], np.float16, "float8_e4m3fn", {}, [119, 0], [0x7E]),  # trunc: exp 0, 511.75
    ([2.0 ** 127], BF16, "float4_e1m2", {}, [254, 0], [4]),        # S 254, R = 2^-127 -> 1.0
    ([7, 5, -0.2, 0.3], BF16, "float4_e2m1", {}, [127, 0], [7, 6, 8, 1]),
    ([7, 5, -0.2, 0.3], BF16, "float4_e2m1", dict(round_mode="round"), [127, 0], [7, 7, 8, 1]),
    ([7, 5, -0.2, 0.3], BF16, "float4_e2m1", dict(round_mode="floor"), [127, 0], [7, 6, 9, 0]),
    ([1.0, 0.3], BF16, "float4_e1m2", {}, [127, 0], [4, 1]),       # 0.30078125*4 -> 1 -> 0.25
    ([1.0, -0.3], BF16, "float4_e1m2", dict(round_mode="floor"), [127, 0], [4, 10]),  # -> -0.5
    # scale_alg 1 (cuBLAS)
    ([500], BF16, "float8_e4m3fn", dict(scale_alg=1), [128, 0], [0x78]),   # 250 -> 256
    ([448], BF16, "float8_e4m3fn", dict(scale_alg=1), [127, 0], [0x7E]),   # 448*fl(1/448) = 1
    ([2.0 ** -118], BF16, "float8_e4m3fn", dict(scale_alg=1), [1, 0], [0x78]),  # subnormal bump
    ([2.0 ** -120], BF16, "float8_e4m3fn", dict(scale_alg=1), [0, 0], [0x70]),  # no bump: 128
    # 2^-119 * fl(1/256) = 2^-127: a float32 subnormal whose mantissa is exactly 0x400000 -- the rule
    # bumps only man > 0x400000, so S = 0 and 2^-119 * 2^127 = 256 -> 0x78
    ([2.0 ** -119], BF16, "float8_e4m3fn", dict(scale_alg=1, dst_type_max=256.0), [0, 0], [0x78]),
    # one bf16 ulp above: mantissa 0x408000 > 0x400000 -> S = 1, 2^-119*(1+2^-7)*2^126 = 129 -> 128
    ([2.0 ** -119 * (1 + 2 ** -7)], BF16, "float8_e4m3fn", dict(scale_alg=1, dst_type_max=256.0),
     [1, 0], [0x70]),
    ([0.0, -0.0], BF16, "float8_e4m3fn", dict(scale_alg=1), [0, 0], [0x00, 0x80]),
    ([512], BF16, "float8_e4m3fn", dict(scale_alg=1, dst_type_max=256.0), [128, 0], [0x78]),
    # scale_alg 2, dynamic-range templates
    ([6.0], BF16, "float4_e2m1", dict(scale_alg=2), [127, 0], [7]),        # mantissa 0x40: none
    ([6.5], BF16, "float4_e2m1", dict(scale_alg=2), [128, 0], [5]),        # bump: 3.25 -> 3
    ([6.5], BF16, "float4_e2m1", {}, [127, 0], [7]),                       # alg 0: 6.5 -> sat
    ([7.0], BF16, "float4_e2m1", dict(scale_alg=2, dst_type_max=7.0), [127, 0], [7]),
    ([7.5], BF16, "float4_e2m1", dict(scale_alg=2, dst_type_max=7.0), [128, 0], [6]),
    ([1.875], BF16, "float4_e1m2", dict(scale_alg=2, dst_type_max=1.875), [127, 0], [7]),
    ([1.90625], BF16, "float4_e1m2", dict(scale_alg=2, dst_type_max=1.875), [128, 0], [4]),
    ([2.0 ** -126], BF16, "float4_e2m1", dict(scale_alg=2), [0, 0], [4]),  # ef < emf: R 2^127
    ([2.0 ** -126], BF16, "float4_e2m1", {}, [0, 0], [0]),                 # alg 0: R = 0
    ([6.0234375], np.float16, "float4_e2m1", dict(scale_alg=2), [128, 0], [5]),  # fp16 RNE bump
    # scale_alg 2, generic template T0 (E1M2 with dstTypeMax 0: inv = fl(1/1.75))
    ([1.75], BF16, "float4_e1m2", dict(scale_alg=2), [127, 0], [7]),       # 1.75*fl(4/7) = 1
    ([1.765625], BF16, "float4_e1m2", dict(scale_alg=2), [128, 0], [4]),   # 0.88 -> 1.0
]


def hand_case_ids() -> list[str]:
    """Readable test ids: index, destination type, options and the values."""
    ids = []
    for i, (values, _dtype, dst, kwargs, _scales, _codes) in enumerate(HAND_CASES):
        opts = ",".join(f"{k}={v}" for k, v in kwargs.items())
        ids.append(f"{i:02d}-{dst}{'-' + opts if opts else ''}-" + ",".join(f"{v:g}" for v in values))
    return ids
