"""What pyaclnn does must not depend on behaviour that changes between the ml_dtypes / numpy
releases pyproject.toml allows (CI runs the suite at the oldest and at the newest of them):

* 4-bit packing takes integers (or the type's own value type / codes) and refuses floats with a
  TypeError naming the explicit codec; ml_dtypes' float -> int4 cast rounds and wraps differently
  from one release to the next (0.7 turns out-of-range values into 0).
* an aclScalar of FLOAT8_E8M0 is encoded by our codec with the NPU's cast (exponent field), not by
  ml_dtypes (whose float -> e8m0 rounding of ties and fp32 subnormals changed in 0.5.x / 0.7).
* the dtype table is the same whether or not ml_dtypes has uint1 / complex32 (0.6+).
* .ci/lower_bounds.py pins exactly the lower bounds pyproject.toml states.

Goldens come from tests/reference (NumPy written from the specs) or are worked out by hand.
"""
from __future__ import annotations

import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from helpers import REPO_ROOT
from pyaclnn import capi, codecs, dtypes, from_numpy, ops
from reference import formats as R

ISSUE_VALUES = np.array([2.7, -2.5, 7.9, 8, -9, 100, np.nan, np.inf], np.float32)


# ---- 4-bit packing ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, ml_dtypes.bfloat16])
def test_int4_pack_refuses_floats_and_names_the_codec(dtype):
    with pytest.raises(TypeError) as err:
        dtypes.pack(ISSUE_VALUES.astype(dtype), capi.ACL_INT4)
    message = str(err.value)
    assert np.dtype(dtype).name in message and "pyaclnn.codecs.encode_int4" in message


def test_int4_upload_of_floats_is_refused_not_cast():
    with pytest.raises(TypeError, match="encode_int4"):
        from_numpy(ISSUE_VALUES, dtype="int4")


def test_explicit_int4_codec_then_pack_gives_the_reference_bytes():
    # rint + saturate: [3, -2, 7, 7, -8, 7, 0 (NaN), 7 (inf)] -> nibbles, element 2k low
    codes = codecs.encode_int4(ISSUE_VALUES)
    assert codes.tolist() == R.encode_int(ISSUE_VALUES, 4, R.RINT | R.SAT).tolist()
    packed = dtypes.pack(codes, capi.ACL_INT4)
    assert packed.tolist() == [0xE3, 0x77, 0x78, 0x70]
    assert bytes(packed) == bytes(R.pack4(codes))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, ml_dtypes.int4])
def test_int4_pack_takes_any_integer_type(dtype):
    values = np.array([1, -1, 7, -8, 3] if np.dtype(dtype).kind != "u" else [1, 15 - 8, 7, 0, 3])
    packed = dtypes.pack(values.astype(dtype), capi.ACL_INT4)
    assert bytes(packed) == bytes(R.pack4(values))


@pytest.mark.parametrize("bad", [[8], [-9], [0, 100]])
def test_int4_pack_refuses_out_of_range_integers(bad):
    with pytest.raises(ValueError, match=r"-8\.\.7"):
        dtypes.pack(np.array(bad), capi.ACL_INT4)


def test_int4_upload_roundtrip_from_plain_integers():
    t = from_numpy(np.array([[-8, 7, 0], [1, -1, 5]], np.int8), dtype="int4")
    assert t.numpy().astype(np.int8).tolist() == [[-8, 7, 0], [1, -1, 5]]


def test_fp4_packing_refuses_floats_and_takes_value_types_or_codes():
    x = np.array([0.5, -6.0, 2.5, 7.0], np.float32)
    with pytest.raises(TypeError, match="encode_float4_e2m1"):
        dtypes.pack(x, capi.ACL_FLOAT4_E2M1)
    with pytest.raises(TypeError, match="encode_float4_e1m2"):
        dtypes.pack(x, capi.ACL_FLOAT4_E1M2)
    codes = codecs.encode_float4_e2m1(x)             # 2.5 -> 2 (rint), 7 -> 6 (saturate)
    assert codes.tolist() == R.encode_float(R.E2M1, x, R.RINT).tolist() == [0x1, 0xF, 0x4, 0x7]
    expected = bytes(R.pack4(codes))
    assert bytes(dtypes.pack(codes, capi.ACL_FLOAT4_E2M1)) == expected
    assert bytes(dtypes.pack(codes.view(ml_dtypes.float4_e2m1fn), capi.ACL_FLOAT4_E2M1)) == expected
    with pytest.raises(TypeError):                   # int64 [1, 2] would be ambiguous: values or codes?
        dtypes.pack(np.array([1, 2]), capi.ACL_FLOAT4_E2M1)
    with pytest.raises(ValueError, match=r"0\.\.15"):
        dtypes.pack(np.array([16], np.uint8), capi.ACL_FLOAT4_E1M2)


# ---- FLOAT8_E8M0 scalars ------------------------------------------------------------------------------

E8M0_VALUES = [3.0, 1.5, -2.0, 0.0, 0.75, 1.5 * 2.0 ** -124, 2.0 ** -127, 0.75 * 2.0 ** -126,
               0.7 * 2.0 ** -126, 2.0 ** -149, 2.0 ** 127, 3e38, 1e39, float("inf"), float("nan")]


@pytest.mark.parametrize("value", E8M0_VALUES)
def test_e8m0_scalar_uses_the_npu_cast_on_every_ml_dtypes(value):
    """Exponent field of the value rounded to float32 (spec grouped_dynamic_mx_quant 5.1)."""
    with np.errstate(over="ignore"):         # 1e39 rounds to inf in float32
        expected = int(R.encode_e8m0(np.array([value], np.float32), R.FLOOR)[0])
    scalar = ops.Scalar(value, capi.ACL_FLOAT8_E8M0)
    assert scalar.key() == ("Scalar", capi.ACL_FLOAT8_E8M0, bytes([expected]))


def test_e8m0_scalar_values_by_hand():
    codes = [ops.Scalar(v, "float8_e8m0").key()[2][0] for v in (3.0, 0.75, -8.0, 0.0)]
    assert codes == [128, 126, 130, 0]   # 2^1, 2^-1, 2^3, 2^-127


def test_e8m0_scalar_keeps_a_given_e8m0_code():
    value = np.array([0x85], np.uint8).view(ml_dtypes.float8_e8m0fnu)[0]
    assert ops.Scalar(value, "float8_e8m0").key()[2] == b"\x85"


# ---- the dtype table ---------------------------------------------------------------------------------

def test_uint1_and_complex32_are_carriers_whatever_the_ml_dtypes_release():
    assert dtypes.to_numpy("ACL_UINT1") == np.dtype(np.uint8) and dtypes.info("ACL_UINT1").carrier
    assert dtypes.to_numpy("ACL_COMPLEX32") == np.dtype(np.uint32)
    assert dtypes.info("ACL_COMPLEX32").carrier
    assert dtypes.from_numpy(np.uint8) == capi.ACL_UINT8 and dtypes.from_numpy(np.uint32) == capi.ACL_UINT32


def test_complex32_tensor_holds_real_and_imaginary_fp16_bits():
    real, imag = np.array([1.0, -0.5], np.float16), np.array([2.0, 0.25], np.float16)
    raw = real.view(np.uint16).astype(np.uint32) | (imag.view(np.uint16).astype(np.uint32) << 16)
    t = from_numpy(raw, dtype="complex32")
    assert t.dtype_name == "ACL_COMPLEX32"
    assert t.numpy().dtype == np.uint32 and t.numpy().tolist() == raw.tolist()
    if hasattr(ml_dtypes, "complex32"):        # 0.6+: its value type uploads to the same bytes
        values = (real.astype(np.float32) + 1j * imag.astype(np.float32)).astype(ml_dtypes.complex32)
        assert dtypes.from_numpy(values.dtype) == capi.ACL_COMPLEX32
        assert from_numpy(values).numpy().tolist() == raw.tolist()


# ---- lower bounds ------------------------------------------------------------------------------------

def test_lower_bounds_script_pins_the_stated_bounds():
    sys.path.insert(0, str(REPO_ROOT / ".ci"))
    try:
        from lower_bounds import lower_bound_pin
    finally:
        sys.path.pop(0)
    assert lower_bound_pin("numpy>=1.24") == "numpy==1.24"
    assert lower_bound_pin("pytest >= 7.0, <10") == "pytest==7.0"
    assert lower_bound_pin("foo[bar]~=2.1; python_version < '3.12'") == "foo==2.1; python_version < '3.12'"
    with pytest.raises(ValueError, match="no lower bound"):
        lower_bound_pin("torch")
    out = subprocess.run([sys.executable, str(REPO_ROOT / ".ci" / "lower_bounds.py")], capture_output=True,
                         text=True, check=True).stdout
    pins = [line for line in out.splitlines() if line and not line.startswith("#")]
    assert {p.split("==")[0] for p in pins} == {"numpy", "ml_dtypes", "pytest", "tomli"}
