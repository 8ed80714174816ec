"""pyaclnn.ops.add_rms_norm_dynamic_quant, the friendly function (on this process's SoC), against the
NumPy reference: outputs allocated with the right shapes and dtypes, inactive outputs None, values
bit-identical, operator rejections raised as AclError."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from reference.add_rms_norm_dynamic_quant import add_rms_norm_dynamic_quant as reference
from reference.add_rms_norm_dynamic_quant import normalise_soc

from pyaclnn import capi, ops
from pyaclnn.errors import AclError


@pytest.fixture(scope="module")
def soc(acl):
    return normalise_soc(capi.aclrtGetSocName().decode())


def _inputs(dtype, shape=(3, 64), seed=0):
    rng = np.random.default_rng(seed)
    n = shape[-1]
    return dict(x1=rng.standard_normal(shape).astype(dtype), x2=rng.standard_normal(shape).astype(dtype),
                gamma=rng.uniform(0.5, 1.5, n).astype(dtype), s1=rng.uniform(0.5, 2, n).astype(dtype),
                s2=rng.uniform(0.5, 2, n).astype(dtype), beta=(rng.standard_normal(n) * 0.1).astype(dtype))


CASES = [
    # dtype, smooth (s1, s2), beta, mask, y dtype
    (np.float16, (True, True), False, None, "int8"),
    (ml_dtypes.bfloat16, (False, False), True, None, "int8"),
    (np.float16, (True, False), True, (True, True), "int4"),
    (ml_dtypes.bfloat16, (False, True), False, (False, True), "int32"),
    (np.float16, (False, False), False, (True, False), "int8"),
]


def _bits(a):
    return None if a is None else np.ascontiguousarray(a).view(np.uint8).tobytes()


@pytest.mark.parametrize("dtype,smooth,beta,mask,y", CASES)
def test_matches_reference(soc, dtype, smooth, beta, mask, y):
    a = _inputs(dtype)
    s1, s2 = (a["s1"] if smooth[0] else None), (a["s2"] if smooth[1] else None)
    b = a["beta"] if beta else None
    got = ops.add_rms_norm_dynamic_quant(a["x1"], a["x2"], a["gamma"], smooth_scale1=s1, smooth_scale2=s2,
                                         beta=b, epsilon=1e-5, output_mask=mask, y_dtype=y)
    want = reference(a["x1"], a["x2"], a["gamma"], s1, s2, b, epsilon=1e-5, output_mask=mask, y_dtype=y,
                     soc=soc, version=2)
    y1, y2, x_out, scale1, scale2 = got
    assert x_out.shape == (3, 64) and x_out.dtype == np.dtype(dtype)
    assert _bits(x_out) == _bits(want["x_out"])
    for k, (yk, sk) in enumerate(((y1, scale1), (y2, scale2)), start=1):
        if want[f"y{k}"] is None:
            assert yk is None and sk is None
            continue
        assert sk.shape == (3,) and sk.dtype == np.float32
        assert _bits(sk) == _bits(want[f"scale{k}"])
        if y == "int4":      # pyaclnn returns one ml_dtypes.int4 per element; the reference packs
            assert yk.shape == (3, 64)
            packed = (yk.astype(np.int8).view(np.uint8) & 0xF)
            assert _bits(packed[:, 0::2] | (packed[:, 1::2] << 4)) == _bits(want[f"y{k}"])
        else:
            assert yk.shape == (3, 8 if y == "int32" else 64)
            assert _bits(yk) == _bits(want[f"y{k}"])


def test_rejections_raise(soc):
    a = _inputs(np.float16)
    with pytest.raises(AclError) as err:
        ops.add_rms_norm_dynamic_quant(a["x1"], a["x2"], a["gamma"], output_mask=(False, False))
    assert err.value.code == 161002 and "outputMask" in str(err.value)
    with pytest.raises(AclError) as err:   # smoothScale2 without smoothScale1 and no mask
        ops.add_rms_norm_dynamic_quant(a["x1"], a["x2"], a["gamma"], smooth_scale2=a["s2"])
    assert err.value.code == 161002
