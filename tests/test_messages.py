"""Errors say what would be valid; Python data gets torch's dtypes; friendly
functions take what the generic launcher takes; ops lists only what the libraries export."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops


@pytest.mark.parametrize("data, name", [([1.0, 2.0], "ACL_FLOAT"), (2.5, "ACL_FLOAT"), ([1, 2], "ACL_INT64"),
                                        ([[True], [False]], "ACL_BOOL"), ([1, 2.5], "ACL_FLOAT")])
def test_python_data_gets_torch_default_dtypes(data, name):
    # torch.tensor([1.0]) is float32, torch.tensor([1]) int64 (torch's documented defaults)
    t = pyaclnn.from_numpy(data)
    assert t.dtype_name == name
    assert t.numpy().tolist() == np.asarray(data).astype(t.dtype).tolist()


def test_numpy_arrays_keep_their_dtype():
    assert pyaclnn.from_numpy(np.float64([1.0])).dtype_name == "ACL_DOUBLE"


def test_non_numeric_data_is_refused_clearly():
    with pytest.raises(TypeError, match="numbers, nested lists of numbers or a numpy array"):
        pyaclnn.from_numpy(["a"])


# AmpUpdateScale by its definition (torch's _amp_update_scale_): no inf found, tracker 900 + 1;
# growth when it reaches growth_interval.
@pytest.mark.parametrize("interval, scale, tracker", [(2000, 65536.0, 901), (901, 131072.0, 0)])
def test_friendly_function_takes_python_lists_and_numbers(interval, scale, tracker):
    for args in (([65536.0], [900], [0.0]), (65536.0, 900, 0.0)):
        s, t = ops.amp_update_scale(*args, growth_interval=interval)
        assert s.dtype == np.float32 and t.dtype == np.int32
        assert s.tolist() == [scale] and t.tolist() == [tracker]


def test_generic_launcher_takes_python_lists():
    s, t = ops.AmpUpdateScale([65536.0], np.int32([900]), [0.0], 2.0, 0.5, 901,
                              np.zeros(1, np.float32), np.zeros(1, np.int32))
    assert s.tolist() == [131072.0] and t.tolist() == [0]
    with pytest.raises(TypeError, match="output updated_scale|output updatedScale"):
        ops.AmpUpdateScale([1.0], np.int32([0]), [0.0], 2.0, 0.5, 1, [0.0], np.zeros(1, np.int32))


def test_unknown_y_dtype_lists_the_accepted_names():
    x = np.ones((2, 64), np.float16)
    with pytest.raises(ValueError) as info:
        ops.add_rms_norm_dynamic_quant(x, x, np.ones(64, np.float16), y_dtype="int9")
    for name in ("int8", "int4", "int32", "float8_e4m3fn", "float8_e5m2", "hifloat8"):
        assert name in str(info.value)
    with pytest.raises(ValueError, match="y_dtype FLOAT16 is not accepted"):
        ops.add_rms_norm_dynamic_quant(x, x, np.ones(64, np.float16), y_dtype="float16")


def test_unknown_dst_type_lists_the_accepted_names():
    with pytest.raises(ValueError) as info:
        ops.grouped_dynamic_mx_quant(np.ones((8, 1), np.float16), [4, 8], dst_type="fp8")
    for name in ("float8_e5m2", "float8_e4m3fn", "float4_e2m1", "float4_e1m2"):
        assert name in str(info.value)


def test_unknown_dtype_says_what_is_accepted():
    with pytest.raises(ValueError, match="unknown dtype 'floot16'.*FLOAT16.*bfloat16"):
        pyaclnn.empty((1,), "floot16")


def test_layout_mismatch_names_dtypes_not_numbers():
    s, t, f = (pyaclnn.from_numpy(np.float32([8.0])), pyaclnn.from_numpy(np.int32([0])),
               pyaclnn.from_numpy(np.float32([0.0])))
    plan = ops.prepare("AmpUpdateScale", s, t, f, 2.0, 0.5, 1000, s, t)
    with pytest.raises(ValueError) as info:
        plan(pyaclnn.from_numpy(np.float16([8.0])), t, f, s, t)
    plan.close()
    assert "dtype FLOAT16 != FLOAT" in str(info.value)


@pytest.fixture
def extra_headers():
    from pyaclnn.ops import _registry
    yield Path(__file__).parent / "data" / "signature_headers"
    _registry._signatures = None
    _registry._extra_dirs.clear()
    _registry._functions.clear()


def test_declared_but_unexported_operator_is_not_an_attribute(extra_headers):
    assert "aclnnScaleShift" in ops.load_headers(extra_headers)
    assert "ScaleShift" in ops.names()
    assert not hasattr(ops, "ScaleShift") and not hasattr(ops, "aclnnScaleShift")
    assert "ScaleShift" not in ops.available() and "ScaleShift" not in dir(ops)


def test_not_found_hint_names_what_the_stub_implements():
    available = ops.available()
    assert {"AmpUpdateScale", "AddRmsNormDynamicQuantV2", "GroupedDynamicMxQuantV2"} <= set(available)
    from pyaclnn._loader import backend
    b = backend()
    for name in available:                     # computed from the exports, not a list
        assert b.find(f"aclnn{name}GetWorkspaceSize") and b.find(f"aclnn{name}")
    with pytest.raises(ops.OperatorNotFoundError) as info:
        ops.NoSuchOperatorAtAll
    assert info.value.hint.startswith("the bundled emulator implements ")
    for name in available[:40]:
        assert name in info.value.hint
    assert not hasattr(ops, "NoSuchOperatorAtAll")
