"""The real torch_npu on the emulator (torch==2.13.0 CPU build + torch-npu==2.13.0, the measured pair).

Each test module run starts a few child processes (torch_npu cannot be unloaded, and preload_stub must
run before `import torch_npu`); one child runs many checks (tests/_torch_npu_child.py) and reports JSON.
Goldens: the independent NumPy references in tests/reference/ and the published example values.
Checks that need the aclnn copy/elementwise operators run only when the stub exports aclnnInplaceCopy.
"""
from __future__ import annotations

import ctypes
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import helpers
from pyaclnn import get_library_dir
from reference.add_rms_norm_dynamic_quant import add_rms_norm_dynamic_quant
from reference.grouped_dynamic_mx_quant import grouped_dynamic_mx_quant

PINNED = "2.13.0"
CHILD = Path(__file__).with_name("_torch_npu_child.py")


def _pair_reason() -> str | None:
    try:
        torch_v = importlib.metadata.version("torch").split("+")[0]
        npu_v = importlib.metadata.version("torch-npu")
    except importlib.metadata.PackageNotFoundError:
        return f"torch_npu tests need torch=={PINNED} and torch-npu=={PINNED} (pip install torch=={PINNED} torch-npu=={PINNED})"
    if (torch_v, npu_v) != (PINNED, PINNED):
        return f"torch_npu tests need the pinned pair {PINNED}/{PINNED}; found torch {torch_v}, torch-npu {npu_v}"
    return None


# The ASan CI run (LD_PRELOAD'ed libasan, PYACLNN_STUB_LIBDIR = sanitizer build) skips this module:
# torch and torch_npu are large uninstrumented C++ libraries; the plain run covers it without skips.
_UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")
pytestmark = [pytest.mark.skipif(_pair_reason() is not None, reason=_pair_reason() or ""),
              pytest.mark.skipif(_UNDER_ASAN, reason="not run under the ASan CI pass (LD_PRELOAD=libasan): torch and "
                                 "torch_npu are uninstrumented; the plain pytest run covers this module")]

HAS_COPY = hasattr(ctypes.CDLL(str(Path(get_library_dir()) / "libopapi.so")), "aclnnInplaceCopyGetWorkspaceSize")
NEEDS_COPY = pytest.mark.skipif(not HAS_COPY, reason="needs the aclnn copy/fill/elementwise operators "
                                "(aclnnInplaceCopy is not exported by this stub's libopapi.so yet)")

# Every dtype torch_npu maps to an aclDataType that has a torch dtype.
DTYPES = ["float32", "float16", "bfloat16", "float64", "int8", "uint8", "int16", "int32", "int64", "bool",
          "complex64", "float8_e4m3fn", "float8_e5m2"]
RNG = np.random.default_rng(20261201)
DTYPE_DATA = {n: RNG.integers(0, 256, 48, dtype=np.uint8) for n in DTYPES}


def _hex(a: np.ndarray) -> str:
    return np.ascontiguousarray(a).tobytes().hex()


def _arnq_inputs():
    shape = (3, 64)
    x1 = RNG.standard_normal(shape).astype(np.float16)
    x2 = (RNG.standard_normal(shape) * 0.5).astype(np.float16)
    gamma, s1, s2 = (RNG.uniform(0.5, 1.5, 64).astype(np.float16) for _ in range(3))
    return dict(x1=x1, x2=x2, gamma=gamma, smooth1=s1, smooth2=s2)


ARNQ = _arnq_inputs()
GMQ_X = np.array([0, 8, 64, 512] * 2, ml_dtypes.bfloat16).reshape(8, 1)      # the published example
GMQ_WIDE = RNG.standard_normal((96, 40)).astype(ml_dtypes.bfloat16)


def _spec(checks, gmq_x=GMQ_X, group_index=(4, 8)):
    return {"checks": checks,
            "dtypes": {n: _hex(v) for n, v in DTYPE_DATA.items()},
            "arnq": {"dtype": "float16", "epsilon": 1e-6,
                     **{k: _hex(v.view(np.uint16)) for k, v in ARNQ.items()},
                     "shape": {k: list(v.shape) for k, v in ARNQ.items()}},
            "gmq": {"x": _hex(gmq_x.view(np.uint16)), "shape": list(gmq_x.shape), "group_index": list(group_index)},
            "stream_rounds": 20, "copy_dtypes": ["float32", "float16", "bfloat16", "int32", "int64"]}


def _run(spec: dict, mode: str = "exec", env: dict | None = None) -> dict:
    script = [sys.executable, str(CHILD), json.dumps(spec), mode]
    cmd = [sys.executable, "-m", "pyaclnn", "exec", "--", *script] if mode == "exec" else script
    proc = subprocess.run(cmd, env=helpers.subprocess_env(env), capture_output=True, text=True, timeout=300)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, f"child failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr[-4000:]}"
    return json.loads(lines[-1][len("RESULT "):])


@pytest.fixture(scope="module")
def on_950():
    checks = ["dtypes", "arnq", "gmq", "interop", "streams"] + (["npu_copies"] if HAS_COPY else [])
    return _run(_spec(checks), env={"PYACLNN_STUB_SOC": "Ascend950PR"})


def _ok(result):
    assert not (isinstance(result, dict) and "error" in result), result.get("error")
    return result


def test_import_through_exec(on_950):
    assert on_950["available"] is True and on_950["device_count"] == 1 and on_950["soc"] == "Ascend950PR"


def test_import_after_preload_stub_in_one_process():
    result = _run(_spec(["dtypes"]), mode="preload", env={"PYACLNN_STUB_SOC": "Ascend950PR"})
    assert result["available"] and _ok(result["dtypes"])


def test_preload_stub_refuses_after_torch_npu():
    code, out, err = helpers.run_python("""
        import torch_npu, pyaclnn
        try:
            pyaclnn.preload_stub()
        except pyaclnn.errors.BackendError as exc:
            print("refused:", exc)
    """, env_overrides={"LD_LIBRARY_PATH": str(Path(get_library_dir()))})
    assert "refused: pyaclnn.preload_stub() must run before `import torch_npu`" in out, err


def test_npu_tensors_of_every_dtype_hold_their_bytes(on_950):
    result = _ok(on_950["dtypes"])
    assert sorted(result) == sorted(DTYPES)
    for name, data in result.items():
        assert data == _hex(DTYPE_DATA[name]), name             # torch.empty(device="npu") + memcpy both ways


@NEEDS_COPY
def test_npu_and_cpu_round_trips(on_950):
    assert _ok(on_950["npu_copies"]) == {n: True for n in ["float32", "float16", "bfloat16", "int32", "int64"]}


def _arnq_reference(soc):
    ref = add_rms_norm_dynamic_quant(ARNQ["x1"], ARNQ["x2"], ARNQ["gamma"], ARNQ["smooth1"], ARNQ["smooth2"],
                                     epsilon=1e-6, y_dtype="int8", soc=soc, version=2)
    return {"y1": ref["y1"], "y2": ref["y2"], "x_out": ref["x_out"], "scale1": ref["scale1"], "scale2": ref["scale2"]}


def _assert_arnq(result, soc):
    result = _ok(result)
    assert result["dtypes"] == ["torch.int8", "torch.int8", "torch.float16", "torch.float32", "torch.float32"]
    for name, want in _arnq_reference(soc).items():
        assert result[name] == _hex(want), f"{name} differs from the NumPy reference on {soc}"


def test_add_rms_norm_dynamic_quant_bit_exact_950(on_950):
    _assert_arnq(on_950["arnq"], "950")


def test_add_rms_norm_dynamic_quant_bit_exact_910b4():
    result = _run(_spec(["arnq"]), env={"PYACLNN_STUB_SOC": "Ascend910B4"})
    assert result["soc"] == "Ascend910B4"
    _assert_arnq(result["arnq"], "a2")


def test_grouped_dynamic_mx_quant_published_values(on_950):
    res = _ok(on_950["gmq"])
    e4m3 = res["float8_e4m3fn"]
    assert bytes.fromhex(e4m3["y"]) == bytes([0, 72, 96, 120, 0, 72, 96, 120])     # published example
    assert bytes.fromhex(e4m3["scale"]) == bytes([128, 0, 128, 0]) and e4m3["scale_shape"] == [2, 1, 2]
    for dst, got in res.items():
        y, scale, _mask = grouped_dynamic_mx_quant(GMQ_X, np.array([4, 8], np.int32), dst_type=dst)
        assert got["y"] == _hex(y.view(np.uint8)) and got["scale"] == _hex(scale.view(np.uint8)), dst
        assert got["y_dtype"] == f"torch.{dst}"


def test_grouped_dynamic_mx_quant_bit_exact_wide():
    result = _run(_spec(["gmq"], gmq_x=GMQ_WIDE, group_index=(32, 64, 96)))
    for dst, got in _ok(result["gmq"]).items():
        y, scale, mask = grouped_dynamic_mx_quant(GMQ_WIDE, np.array([32, 64, 96], np.int32), dst_type=dst)
        assert got["y"] == _hex(y.view(np.uint8)), dst
        written = np.frombuffer(bytes.fromhex(got["scale"]), np.uint8).reshape(scale.shape)
        assert np.array_equal(written[mask], scale.view(np.uint8)[mask]), dst


def test_pyaclnn_interop_with_npu_tensors(on_950):
    res = _ok(on_950["interop"])
    assert res["same_pointer"] and res["same_stream"]          # zero copy, torch_npu's current stream
    assert res["scale_after"] == [2048.0] and res["tracker_after"] == [0]   # growth_interval 1: x2
    assert res["back_device"] == "npu:0" and res["back_values"] == [1.5, -2.0, 3.25]


def test_stream_and_event_ordering(on_950):
    res = _ok(on_950["streams"])
    assert res["values"] == [2.0 ** (i % 20) * 2 for i in range(20)]
    assert res["event_query"] is True


def test_unsupported_call_raises_runtime_error_with_our_message():
    result = _run(_spec(["gmq"]), env={"PYACLNN_STUB_SOC": "Ascend910B4"})
    error = result["gmq"]["error"]
    assert error.startswith("RuntimeError:") and "aclnnGroupedDynamicMxQuantV2" in error
    assert "GroupedDynamicMxQuant runs only on Ascend950" in error      # the emulator's own message


def test_example_prints_the_published_values():
    example = Path(__file__).resolve().parent.parent / "examples" / "torch_npu_on_cpu.py"
    proc = subprocess.run([sys.executable, "-m", "pyaclnn", "exec", "--", sys.executable, str(example)],
                          env=helpers.subprocess_env({"PYACLNN_STUB_SOC": "Ascend950PR"}),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert ("npu_grouped_dynamic_mx_quant   y bytes [0, 72, 96, 120, 0, 72, 96, 120] "
            "mxscale [[[128, 0]], [[128, 0]]]") in proc.stdout
    assert ("y1 [127, 127, 127, 127, 127, 127, 127, 127] y2 [127, 127, 127, 127, 127, 127, 127, 127] xOut 1.0 "
            "scale1 [0.017716526985168457, 0.017716526985168457]") in proc.stdout
