"""The real torch_npu on the emulator (torch==2.13.0 CPU build + torch-npu==2.13.0, the measured pair).

Each test module run starts five child processes (torch_npu cannot be unloaded, preload_stub must run
before `import torch_npu`, and the SoC is fixed per process): one child per SoC runs many checks
(tests/_torch_npu_child.py) and reports JSON. Ordinary torch code on npu tensors (creation, copies,
casts, + - * /) comes from tests/_torch_npu_cases.py, each case with its golden value: torch CPU where
the arithmetic is IEEE-exact, else the independent NumPy references in tests/reference/; the
quantisers against their NumPy references and published example values.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import _torch_npu_cases as cases
import helpers
from pyaclnn import get_library_dir
from reference.add_rms_norm_dynamic_quant import add_rms_norm_dynamic_quant
from reference.grouped_dynamic_mx_quant import grouped_dynamic_mx_quant

CHILD = Path(__file__).with_name("_torch_npu_child.py")


def _pair_reason() -> str | None:
    from pyaclnn._torch_npu_check import pair_problem
    return pair_problem()


# The ASan CI run (LD_PRELOAD'ed libasan, PYACLNN_STUB_LIBDIR = sanitizer build) skips this module:
# torch and torch_npu are large uninstrumented C++ libraries; the plain run covers it without skips.
_UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")
pytestmark = [pytest.mark.skipif(_pair_reason() is not None, reason=_pair_reason() or ""),
              pytest.mark.skipif(_UNDER_ASAN, reason="not run under the ASan CI pass (LD_PRELOAD=libasan): torch and "
                                 "torch_npu are uninstrumented; the plain pytest run covers this module")]


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
CASES = cases.all_cases()
# 48 random bytes per mapped dtype (bool: 0/1, the only bytes a torch bool may hold).
ROUNDTRIP_DATA = {n: (RNG.integers(0, 2, 48) if n == "bool" else RNG.integers(0, 256, 48)).astype(np.uint8)
                  for n in cases.MAPPED_DTYPES}
GMQ_X = np.array([0, 8, 64, 512] * 2, ml_dtypes.bfloat16).reshape(8, 1)      # the published example
GMQ_WIDE = RNG.standard_normal((96, 40)).astype(ml_dtypes.bfloat16)
GMQ_WIDE_GROUPS = (32, 64, 96)
# torch.npu.graph (aclmdlRI capture, src/runtime/model.c): relu(x @ w + 1) * 2 captured, replayed on new x.
GRAPH_W = RNG.standard_normal((8, 8)).astype(np.float32)
GRAPH_XS = [RNG.standard_normal((3, 8)).astype(np.float32) for _ in range(2)]


def _spec(checks):
    return {"checks": checks,
            "dtypes": {n: _hex(v) for n, v in DTYPE_DATA.items()},
            "arnq": {"dtype": "float16", "epsilon": 1e-6,
                     **{k: _hex(v.view(np.uint16)) for k, v in ARNQ.items()},
                     "shape": {k: list(v.shape) for k, v in ARNQ.items()}},
            "gmq": {"x": _hex(GMQ_X.view(np.uint16)), "shape": list(GMQ_X.shape), "group_index": [4, 8]},
            "graph": {"shape_x": [3, 8], "w": GRAPH_W.tolist(), "xs": [x.tolist() for x in GRAPH_XS]},
            "gmq_wide": {"x": _hex(GMQ_WIDE.view(np.uint16)), "shape": list(GMQ_WIDE.shape),
                         "group_index": list(GMQ_WIDE_GROUPS)},
            "stream_rounds": 20, "copy_dtypes": ["float32", "float16", "bfloat16", "int32", "int64"],
            "creation": cases.creation_spec(),
            "roundtrip": {n: {"dtype": n, "shape": [48 // cases.ITEMSIZE[n]], "hex": _hex(ROUNDTRIP_DATA[n])}
                          for n in cases.MAPPED_DTYPES},
            "cases": [{"name": c.name, "code": c.code, "inputs": {k: cases.encode(v) for k, v in c.inputs.items()}}
                      for c in CASES]}


def _run(spec: dict, mode: str = "exec", env: dict | None = None) -> dict:
    script = [sys.executable, str(CHILD), mode]
    cmd = [sys.executable, "-m", "pyaclnn", "exec", "--", *script] if mode == "exec" else script
    proc = subprocess.run(cmd, input=json.dumps(spec), env=helpers.subprocess_env(env), capture_output=True,
                          text=True, timeout=300)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, f"child failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr[-4000:]}"
    return json.loads(lines[-1][len("RESULT "):])


# One child per SoC runs every check (torch_npu takes seconds to import; CI time matters).
@pytest.fixture(scope="module")
def on_950():
    checks = ["dtypes", "arnq", "gmq", "gmq_wide", "interop", "streams", "npu_copies", "creation", "roundtrip",
              "cases", "printing", "bool_indexing", "random", "layer_norm", "gelu", "topk_cumsum", "relu_mlp"]
    return _run(_spec(checks), env={"PYACLNN_STUB_SOC": "Ascend950PR"})


@pytest.fixture(scope="module")
def on_910b4():
    return _run(_spec(["arnq", "gmq", "random", "graph"]), env={"PYACLNN_STUB_SOC": "Ascend910B4"})


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


def test_npu_and_cpu_round_trips(on_950):
    assert _ok(on_950["npu_copies"]) == {n: True for n in ["float32", "float16", "bfloat16", "int32", "int64"]}


def test_npu_cpu_round_trip_of_every_mapped_dtype(on_950):
    # .npu() then .cpu() keep the bytes of every dtype torch_npu maps (read back with aclrtMemcpy too);
    # a device-to-device clone works wherever aclnnInplaceCopy takes the dtype.
    result = _ok(on_950["roundtrip"])
    assert sorted(result) == sorted(cases.MAPPED_DTYPES)
    for name, row in result.items():
        want = _hex(ROUNDTRIP_DATA[name])
        assert "error" not in row, (name, row.get("error"))
        assert row["device"] == "npu:0" and row["h2d"] == want and row["d2h"] == want, name
        if name in ("complex32", "complex64", "complex128", "float4_e2m1fn_x2"):   # emulator gap (no such elements)
            assert row["d2d_error"].startswith("RuntimeError:") and "aclnnInplaceCopy" in row["d2d_error"], name
            assert "aclnnInplaceCopyGetWorkspaceSize(161002)" in row["d2d_error"], name
        else:
            assert row.get("d2d") == want, (name, row.get("d2d_error"))


def test_creation_ops_for_every_mapped_dtype(on_950):
    result = _ok(on_950["creation"])
    for name in cases.MAPPED_DTYPES:
        for op, (aclnn, vendor_dtypes) in cases.VENDOR_CREATION.items():
            got = result[name][op]
            if name in vendor_dtypes and name not in cases.EMULATOR_GAPS[op]:
                assert got == {"hex": _hex(cases.expected_fill(name, op))}, (name, op, got)
            else:     # refused in phase 1, as torch_npu's RuntimeError carrying our message
                error = got.get("error", "")
                assert error.startswith("RuntimeError:") and f"call {aclnn} failed, error code is 161002" in error, \
                    (name, op, got)
                assert f"{aclnn}GetWorkspaceSize(161002): selfRef dtype" in error and "is not supported" in error


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.name for c in CASES])
def test_torch_code_on_npu_matches_its_reference(on_950, index):
    case = CASES[index]
    got = _ok(on_950["cases"])[case.name]
    npu = got["npu"]
    assert "error" not in npu, f"{case.code!r} failed on npu: {npu['error']}"
    assert npu["device"] in ("npu", "cpu")
    if case.ref == "torch":
        want = got["cpu"]
        assert "error" not in want, want
    else:
        want = cases.encode(case.ref(**case.inputs))
    assert (npu["dtype"], npu["shape"]) == (want["dtype"], want["shape"]), case.code
    if case.tol is not None:   # class c operators (matmul, sums, softmax): a stated tolerance
        g, w = _decode(npu).astype(np.float64), _decode(want).astype(np.float64)
        assert np.max(np.abs(g - w), initial=0.0) <= case.tol * np.max(np.abs(w), initial=0.0), \
            f"{case.name}: {case.code!r} off by {np.max(np.abs(g - w))} (tol {case.tol} * max|ref|) {case.why}"
        return
    assert _same(npu, want), _first_difference(npu, want, case)


def _decode(enc: dict) -> np.ndarray:
    return np.frombuffer(bytes.fromhex(enc["hex"]), cases.np_dtype(enc["dtype"]))


def _same(got: dict, want: dict) -> bool:
    """Bit for bit, except that a NaN equals any NaN: IEEE 754 leaves the sign and payload of a NaN
    result unspecified and nothing documents the NPU's (x86 and the emulator differ in both)."""
    g, w = _decode(got), _decode(want)
    if g.dtype.kind in "iub" or g.dtype.name.startswith("float8_e8m0"):
        return got["hex"] == want["hex"]
    nan_g, nan_w = np.isnan(g.astype(np.float64)), np.isnan(w.astype(np.float64))
    return bool(np.array_equal(nan_g, nan_w)) and g[~nan_g].tobytes() == w[~nan_w].tobytes()


def _first_difference(got: dict, want: dict, case) -> str:
    g, w = _decode(got), _decode(want)
    bad = np.flatnonzero((g.view(np.uint8).reshape(g.size, -1) != w.view(np.uint8).reshape(w.size, -1)).any(axis=1))
    i = int(bad[0]) if bad.size else 0
    return (f"{case.name}: {case.code!r} ({case.why or 'reference: ' + str(case.ref)}) differs at flat index {i} "
            f"of {g.size}: npu {g[i]!r} vs reference {w[i]!r}; {bad.size} elements differ")


PRINTED = {"int64": "tensor([[ 1, -2,  3],\n        [40,  5,  6]], device='npu:0')",
           "bool": "tensor([ True, False], device='npu:0')",
           "int32_0dim": "tensor(7, device='npu:0', dtype=torch.int32)",
           "float32": "tensor([ 1.5000, -2.0000,  3.2500], device='npu:0')"}


def _without_suffix(text: str) -> str:
    """A tensor's repr without the device and dtype suffixes (whose line breaks depend on their length)."""
    return re.sub(r",\s*(device='npu:0'|dtype=torch\.\w+)", "", text)


def test_printing_npu_tensors(on_950):
    # print(t) / repr(t) of an npu tensor of any dtype prints what torch prints for the CPU tensor, with
    # the device: float tensors run isfinite, ne, abs, min, max, masked_select ... on the device.
    res = _ok(on_950["printing"])
    for name, row in res.items():
        assert "error" not in row, (name, row.get("error"))
        assert _without_suffix(row["npu"]) == _without_suffix(row["cpu"]), name
        assert "device='npu:0'" in row["npu"]
        if "dtype=" in row["cpu"]:
            assert row["cpu"].split("dtype=")[1] == row["npu"].split("dtype=")[1], name
    for name, want in PRINTED.items():
        assert res[name]["npu"] == want, name
    assert res["int64"]["item"] == 1 and res["bool"]["item"] is True
    assert "..." in res["float32_summarised"]["npu"] and "e+" in res["float32_sci"]["npu"]


def test_boolean_mask_indexing_on_npu_matches_cpu(on_950):
    res = _ok(on_950["bool_indexing"])
    assert len(res) == 25
    for name, row in res.items():
        assert "error" not in row, (name, row.get("error"))
        assert row["npu"] == row["cpu"], name


def _assert_random(res):
    # Statistical checks only (fidelity class s): the NPU's own streams are not reproducible.
    res = _ok(res)
    for name, st in res.items():
        if "/" not in name:
            continue
        kind, dt = name.split("/")
        assert st["dtype"] == f"torch.{dt}" and st["device"] == "npu", name
        slack = {"float32": 0.0, "float16": 0.01, "bfloat16": 0.03}[dt]      # the dtype's rounding
        if kind in ("randn", "normal_"):
            mean, std = (0.0, 1.0) if kind == "randn" else (1.0, 2.0)
            assert abs(st["mean"] - mean) < 5 * std / st["n"] ** 0.5 + slack * std, name
            assert abs(st["std"] / std - 1) < 0.015 + slack, name
            assert st["max"] - st["min"] > 7 * std, name
        else:
            lo, hi = (0.0, 1.0) if kind == "rand" else (-2.0, 3.0)
            assert lo <= st["min"] and st["max"] < hi, name
            assert abs(st["mean"] - (lo + hi) / 2) < 5 * (hi - lo) / (12 * st["n"]) ** 0.5 + slack, name
            assert abs(st["std"] / ((hi - lo) / 12 ** 0.5) - 1) < 0.015 + slack, name
    bound = 1 / 300 ** 0.5                     # kaiming_uniform_(a=sqrt(5)) on fan_in 300: U(-1/sqrt(300), ..)
    k = res["kaiming_uniform_"]
    assert -bound <= k["min"] and k["max"] <= bound and abs(k["std"] / (bound / 3 ** 0.5) - 1) < 0.02
    assert abs(res["xavier_normal_"]["std"] / (2 / 600) ** 0.5 - 1) < 0.02
    lw = res["linear_weight"]
    assert lw["device"] == "npu" and lw["max"] <= 1 / 20 and abs(lw["std"] / (1 / 20 / 3 ** 0.5) - 1) < 0.03
    assert res["determinism"] == {"same_seed_same_values": True, "next_call_differs": True}
    d = res["dropout"]
    assert abs(d["kept_fraction"] - 0.7) < 5 * (0.21 / 20_000) ** 0.5, d
    assert d["kept_scaled"] and d["grad_matches_mask"] and d["eval_is_identity"], d


def test_random_numbers_on_npu_950(on_950):
    _assert_random(on_950["random"])


def test_random_numbers_on_npu_910b4(on_910b4):
    _assert_random(on_910b4["random"])


def test_layer_norm_forward_and_backward_on_npu_match_cpu(on_950):
    res = _ok(on_950["layer_norm"])
    assert res["out"] <= 1e-6 and res["dx"] <= 1e-5 and res["dw"] <= 1e-5 and res["db"] <= 1e-5, res
    assert res["half_dtype"] == "torch.float16" and res["half"] <= 2e-3, res


def test_gelu_forward_and_backward_on_npu_match_cpu(on_950):
    res = _ok(on_950["gelu"])
    for mode in ("none", "tanh"):
        assert res[mode]["out"] <= 2e-6 and res[mode]["grad"] <= 2e-6, res       # fp32, values up to 6
        assert res[mode]["bf16"] <= 0.05, res                                     # bf16 input and output rounding


def test_topk_and_cumsum_on_npu_match_cpu(on_950):
    res = _ok(on_950["topk_cumsum"])
    assert res["topk"] and res["cumsum_int64"] and res["cumsum_bool_to_int"], res
    assert res["cumsum_fp32"] <= 2e-7, res


def test_relu_mlp_forward_and_backward_on_npu_match_cpu(on_950):
    res = _ok(on_950["relu_mlp"])
    assert res["loss"] <= 1e-6 and res["inplace"], res
    assert len(res["grads"]) == 4 and max(res["grads"].values()) <= 1e-5, res


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


def test_add_rms_norm_dynamic_quant_bit_exact_910b4(on_910b4):
    assert on_910b4["soc"] == "Ascend910B4"
    _assert_arnq(on_910b4["arnq"], "a2")


def test_grouped_dynamic_mx_quant_published_values(on_950):
    res = _ok(on_950["gmq"])
    e4m3 = res["float8_e4m3fn"]
    assert bytes.fromhex(e4m3["y"]) == bytes([0, 72, 96, 120, 0, 72, 96, 120])     # published example
    assert bytes.fromhex(e4m3["scale"]) == bytes([128, 0, 128, 0]) and e4m3["scale_shape"] == [2, 1, 2]
    for dst, got in res.items():
        y, scale, _mask = grouped_dynamic_mx_quant(GMQ_X, np.array([4, 8], np.int32), dst_type=dst)
        assert got["y"] == _hex(y.view(np.uint8)) and got["scale"] == _hex(scale.view(np.uint8)), dst
        assert got["y_dtype"] == f"torch.{dst}"


def test_grouped_dynamic_mx_quant_bit_exact_wide(on_950):
    for dst, got in _ok(on_950["gmq_wide"]).items():
        y, scale, mask = grouped_dynamic_mx_quant(GMQ_WIDE, np.array(GMQ_WIDE_GROUPS, np.int32), dst_type=dst)
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


def test_unsupported_call_raises_runtime_error_with_our_message(on_910b4):
    error = on_910b4["gmq"]["error"]
    assert error.startswith("RuntimeError:") and "aclnnGroupedDynamicMxQuantV2" in error
    assert "GroupedDynamicMxQuant runs only on Ascend950" in error      # the emulator's own message


def test_example_prints_the_published_values():
    example = Path(__file__).resolve().parent.parent / "examples" / "torch_npu_on_cpu.py"
    proc = subprocess.run([sys.executable, "-m", "pyaclnn", "exec", "--", sys.executable, str(example)],
                          env=helpers.subprocess_env({"PYACLNN_STUB_SOC": "Ascend950PR"}),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Warning" not in proc.stderr, proc.stderr[-3000:]     # torch_npu's allocator warning is switched off
    assert ("npu_grouped_dynamic_mx_quant   y bytes [0, 72, 96, 120, 0, 72, 96, 120] "
            "mxscale [[[128, 0]], [[128, 0]]]") in proc.stdout
    assert ("y1 [127, 127, 127, 127, 127, 127, 127, 127] y2 [127, 127, 127, 127, 127, 127, 127, 127] xOut 1.0 "
            "scale1 [0.017716526985168457, 0.017716526985168457]") in proc.stdout


def test_npu_graph_capture_and_replay(on_910b4):
    # Nothing runs during the capture (y stays as allocated: zeros on the emulator's fresh memory is not
    # promised, so only the replays are compared); each replay recomputes y from x's data at that time.
    res = _ok(on_910b4["graph"])
    assert len(res["replays"]) == len(GRAPH_XS)
    for x, y in zip(GRAPH_XS, res["replays"]):
        ref = np.maximum(x.astype(np.float64) @ GRAPH_W.astype(np.float64) + 1.0, 0.0) * 2
        np.testing.assert_allclose(np.float32(y), ref, rtol=1e-5, atol=1e-5)
    assert res["rng_replays_repeat_eager"] == [True] * 4
