"""Shared harness of the aclnnAddRmsNormDynamicQuant[V2] tests (this module holds no tests).

PYACLNN_STUB_SOC is read once per process, so every call runs in a child interpreter per SoC family:
the parent describes calls as plain dicts, :func:`run_batch` sends a batch to a child running
:func:`child_main`, which makes the calls through ``pyaclnn.capi`` and sends back statuses, messages
and raw output bytes. Inputs are regenerated from a seed on both sides (:func:`make_inputs`), so the
parent can compute the NumPy reference (tests/reference/add_rms_norm_dynamic_quant.py) itself.

A call description:
    version   1 or 2
    tensors   {name: {"shape": [...], "dtype": "float16", ...} or None}; names x1 x2 gamma smooth1
              smooth2 beta y1 y2 x_out scale1 scale2; optional keys "strides" (elements),
              "offset" (elements), "storage" (elements allocated), "fill" (bytes of the buffer)
    epsilon   float
    mask      None or a list of bools (V2 outputMask)
    env       {PYACLNN_STUB_ARNQ_*: value} set for this call only
    repeat    run the executor this many times (repeatable executor) - default 1
    stale     names of tensors destroyed before the call (their handles are then stale)
    null      "workspaceSize" or "executor": pass NULL for that out-parameter
"""
from __future__ import annotations

import ctypes
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import ml_dtypes
import numpy as np

TESTS_DIR = Path(__file__).resolve().parent
SOC_NAMES = {"a2": "Ascend910B1", "950": "Ascend950PR"}

NAMES = ("x1", "x2", "gamma", "smooth1", "smooth2", "beta", "y1", "y2", "x_out", "scale1", "scale2")
NP_TYPES = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16),
            "float32": np.dtype(np.float32)}
BITS = {"float16": 16, "bfloat16": 16, "float32": 32, "int8": 8, "int4": 4, "int32": 32,
        "hifloat8": 8, "float8_e4m3fn": 8, "float8_e5m2": 8, "int64": 64, "double": 64,
        "uint8": 8}


def acl_type(name: str) -> int:
    from pyaclnn import capi
    return {"float16": capi.ACL_FLOAT16, "bfloat16": capi.ACL_BF16, "float32": capi.ACL_FLOAT,
            "int8": capi.ACL_INT8, "int4": capi.ACL_INT4, "int32": capi.ACL_INT32,
            "hifloat8": capi.ACL_HIFLOAT8, "float8_e4m3fn": capi.ACL_FLOAT8_E4M3FN,
            "float8_e5m2": capi.ACL_FLOAT8_E5M2, "int64": capi.ACL_INT64,
            "double": capi.ACL_DOUBLE, "uint8": capi.ACL_UINT8}[name]


# ------------------------------------------------------------------------------------------------
# Inputs of numeric cases (same arrays in the parent and the child)
# ------------------------------------------------------------------------------------------------

def make_inputs(case: dict) -> dict:
    """x1, x2, gamma and the present smooth scales / beta of a numeric case, as numpy arrays.

    case: m (rows, or "lead" = leading shape), n, x (dtype name), smooth [bool, bool], beta (bool),
    seed, data: "random" | "special" (row 0 all zero, row 1 overflows fp16 when added, a NaN in
    row 2, subnormal values in row 3) | "example" (the vendor sample: 0.5 and 1.5 everywhere)."""
    rng = np.random.default_rng(case["seed"])
    lead = tuple(case.get("lead", (case["m"],)))
    shape = lead + (case["n"],)
    dt = NP_TYPES[case["x"]]
    if case.get("data") == "example":
        x = np.full(shape, 0.5, dt)
        g = np.full(case["n"], 1.5, dt)
        out = {"x1": x, "x2": x.copy(), "gamma": g}
        for k in ("smooth1", "smooth2", "beta"):
            out[k] = g.copy()
    else:
        out = {"x1": (rng.standard_normal(shape) * 2).astype(dt),
               "x2": (rng.standard_normal(shape) * 2).astype(dt),
               "gamma": rng.uniform(0.5, 1.5, case["n"]).astype(dt),
               "smooth1": rng.uniform(0.25, 2.0, case["n"]).astype(dt),
               "smooth2": rng.uniform(0.25, 2.0, case["n"]).astype(dt),
               "beta": (rng.standard_normal(case["n"]) * 0.5).astype(dt)}
        if case.get("data") == "special":
            flat1, flat2 = out["x1"].reshape(-1, case["n"]), out["x2"].reshape(-1, case["n"])
            flat1[0] = 0
            flat2[0] = 0
            if flat1.shape[0] > 1:
                flat1[1, : case["n"] // 2] = 40000
                flat2[1, : case["n"] // 2] = 40000
            if flat1.shape[0] > 2:
                flat1[2, 0] = np.nan
            if flat1.shape[0] > 3:
                flat1[3] = (rng.standard_normal(case["n"]) * 3e-6).astype(dt)
                flat2[3] = 0
    smooth = case.get("smooth", (False, False))
    for k, on in (("smooth1", smooth[0]), ("smooth2", smooth[1]), ("beta", case.get("beta"))):
        if not on:
            out.pop(k, None)
    return out


def y_shape(lead: tuple, n: int, y: str) -> tuple:
    return lead + ((n // 8,) if y == "int32" else (n,))


def numeric_call(case: dict) -> dict:
    """The call description of a numeric case: inputs from make_inputs, outputs of the right shape
    (inactive y2/scale2 shaped [1]), filled with a marker so untouched outputs can be seen."""
    from reference.add_rms_norm_dynamic_quant import active_outputs

    arrays = make_inputs(case)
    lead = tuple(case.get("lead", (case["m"],)))
    n, y = case["n"], case["y"]
    smooth = case.get("smooth", (False, False))
    out1, out2 = active_outputs(case["version"], smooth[0], smooth[1], case.get("mask"))
    tensors = {}
    for name, arr in arrays.items():
        tensors[name] = {"shape": list(arr.shape), "dtype": case["x"],
                         "fill": np.ascontiguousarray(arr).tobytes()}
    for k, on in ((1, out1), (2, out2)):
        tensors[f"y{k}"] = {"shape": list(y_shape(lead, n, y)) if on else [1], "dtype": y, "marker": 0x5A}
        tensors[f"scale{k}"] = {"shape": list(case.get("scale_shape", lead)) if on else [1],
                                "dtype": "float32", "marker": 0x5A}
    tensors["x_out"] = {"shape": list(lead + (n,)), "dtype": case["x"], "marker": 0x5A}
    for name, layout in case.get("layouts", {}).items():
        tensors[name].update(layout)
    return {"version": case["version"], "tensors": tensors, "epsilon": case.get("eps", 1e-6),
            "mask": case.get("mask"), "env": case.get("env", {}), "repeat": case.get("repeat", 1)}


def reference(case: dict) -> dict:
    """The NumPy reference's outputs for a numeric case (options from case["env"])."""
    from reference.add_rms_norm_dynamic_quant import add_rms_norm_dynamic_quant

    env = case.get("env", {})
    opts = {}
    for var, key in (("PYACLNN_STUB_ARNQ_TREE64", "tree64_order"),
                     ("PYACLNN_STUB_ARNQ_SCALAR_RSTD", "scalar_rstd_mode"),
                     ("PYACLNN_STUB_ARNQ_MULA", "mula"), ("PYACLNN_STUB_ARNQ_MAX_NAN", "max_nan"),
                     ("PYACLNN_STUB_ARNQ_FP8_NAN", "fp8_nan_sign"),
                     ("PYACLNN_STUB_ARNQ_HIF8_NAN", "hif8_nan"),
                     ("PYACLNN_STUB_ARNQ_OVERFLOW", "overflow_mode")):
        if var in env:
            opts[key] = env[var]
    if "PYACLNN_STUB_ARNQ_UB_950" in env:
        opts["ub_950"] = int(env["PYACLNN_STUB_ARNQ_UB_950"])
    a = make_inputs(case)
    return add_rms_norm_dynamic_quant(
        a["x1"], a["x2"], a["gamma"], a.get("smooth1"), a.get("smooth2"), a.get("beta"),
        epsilon=case.get("eps", 1e-6), output_mask=case.get("mask"), y_dtype=case["y"],
        soc=case["soc"], version=case["version"], **opts)


# ------------------------------------------------------------------------------------------------
# Parent side
# ------------------------------------------------------------------------------------------------

def run_batch(soc: str, calls: list, extra_env: dict | None = None, timeout: float = 300) -> list:
    """Runs the calls in one child process with PYACLNN_STUB_SOC for `soc` ("a2", "950" or a SoC
    name); returns one result dict per call (see run_call)."""
    if str(TESTS_DIR) not in sys.path:
        sys.path.insert(0, str(TESTS_DIR))
    from helpers import subprocess_env

    env = {"PYACLNN_STUB_SOC": SOC_NAMES.get(soc, soc), "PYACLNN_BACKEND": "stub"}
    env.update(extra_env or {})
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "calls.pkl", Path(tmp) / "results.pkl"
        src.write_bytes(pickle.dumps(calls))
        code = (f"import sys; sys.path.insert(0, {str(TESTS_DIR)!r}); "
                "import test_add_rms_norm_dynamic_quant_harness as h; h.child_main(sys.argv[1], sys.argv[2])")
        proc = subprocess.run([sys.executable, "-c", code, str(src), str(dst)], capture_output=True,
                              text=True, timeout=timeout, env=subprocess_env(env))
        if proc.returncode != 0 or not dst.exists():
            raise RuntimeError(f"child failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        results = pickle.loads(dst.read_bytes())
    if len(results) != len(calls):     # a child that stops early must not pass as a shorter batch
        raise RuntimeError(f"child returned {len(results)} results for {len(calls)} calls")
    return results


# ------------------------------------------------------------------------------------------------
# Child side
# ------------------------------------------------------------------------------------------------

def _nbytes(shape, dtype: str) -> int:
    numel = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    return (numel * BITS[dtype] + 7) // 8


def _contiguous_strides(shape) -> list:
    strides, step = [], 1
    for dim in reversed(list(shape)):
        strides.append(step)
        step *= max(int(dim), 1)
    return strides[::-1]


class _Tensor:
    """A device buffer and an aclTensor for one description."""

    def __init__(self, desc: dict):
        from helpers import create_tensor, to_device

        shape = list(desc["shape"])
        self.dtype = desc["dtype"]
        self.strides = list(desc.get("strides") or _contiguous_strides(shape))
        self.offset = int(desc.get("offset", 0))
        storage = desc.get("storage")
        if storage is None:
            span = sum((d - 1) * s for d, s in zip(shape, self.strides)) + 1 if all(shape) else 0
            storage = self.offset + span
        self.nbytes = max(_nbytes([storage], self.dtype), 1)
        fill = desc.get("fill")
        if fill is not None and (desc.get("strides") or self.offset):
            fill = self._scatter(fill, shape)
        marker = bytes([desc.get("marker", 0x5A)])
        fill = (fill or b"")[: self.nbytes]
        self.ptr = to_device(np.frombuffer(fill + marker * (self.nbytes - len(fill)), np.uint8))
        self.handle = create_tensor(shape, acl_type(self.dtype), self.ptr, strides=self.strides,
                                    offset=self.offset, storage_shape=[storage])

    def _scatter(self, dense: bytes, shape) -> bytes:
        """Places contiguous element bytes at the view's strided positions (byte-sized or wider
        element types), marker 0x5A elsewhere."""
        size = BITS[self.dtype] // 8
        src = np.frombuffer(dense, np.uint8).reshape(-1, size)
        out = np.full((self.nbytes // size, size), 0x5A, np.uint8)
        index = np.zeros(shape, np.int64) + self.offset
        for axis, stride in enumerate(self.strides):
            ax = np.arange(shape[axis]).reshape([-1 if a == axis else 1 for a in range(len(shape))])
            index = index + ax * stride
        out[index.ravel()] = src
        return out.tobytes()

    def read(self) -> bytes:
        from helpers import from_device
        return from_device(self.ptr, (self.nbytes,), np.uint8).tobytes()

    def close(self, destroy=True):
        from pyaclnn import capi
        if destroy:
            capi.aclDestroyTensor(self.handle)
        capi.aclrtFree(self.ptr)


def run_call(call: dict, stream) -> dict:
    """Phase 1, then (if it succeeded) workspace, phase 2 and a stream sync. Returns statuses,
    aclGetRecentErrMsg after each failing step, the workspace size and each output's buffer."""
    from pyaclnn import capi
    from pyaclnn._switches import switches
    from pyaclnn.errors import recent_error_message

    switch_block = switches(call.get("env", {}))   # the stub reads its switches once: re-read them
    switch_block.__enter__()
    tensors = {name: _Tensor(d) for name, d in call["tensors"].items() if d is not None}
    handles = {name: (tensors[name].handle if name in tensors else None) for name in NAMES}
    for name in call.get("stale", ()):
        capi.aclDestroyTensor(tensors[name].handle)  # the buffer stays until the end
    mask = None
    if call.get("mask") is not None:
        values = (ctypes.c_bool * max(len(call["mask"]), 1))(*[bool(v) for v in call["mask"]])
        mask = capi.aclCreateBoolArray(values, len(call["mask"]))
    result = {"phase1": None, "msg1": None, "ws": None, "phase2": None, "msg2": None, "sync": None,
              "msg_sync": None, "outputs": {}}
    try:
        recent_error_message()
        ws, executor = ctypes.c_uint64(0), ctypes.c_void_p()
        ws_arg = None if call.get("null") == "workspaceSize" else ctypes.byref(ws)
        ex_arg = None if call.get("null") == "executor" else ctypes.byref(executor)
        h = handles
        if call["version"] == 1:
            status = capi.aclnnAddRmsNormDynamicQuantGetWorkspaceSize(
                h["x1"], h["x2"], h["gamma"], h["smooth1"], h["smooth2"], call["epsilon"], h["y1"],
                h["y2"], h["x_out"], h["scale1"], h["scale2"], ws_arg, ex_arg)
            run = capi.aclnnAddRmsNormDynamicQuant
        else:
            status = capi.aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize(
                h["x1"], h["x2"], h["gamma"], h["smooth1"], h["smooth2"], h["beta"], call["epsilon"],
                mask, h["y1"], h["y2"], h["x_out"], h["scale1"], h["scale2"], ws_arg, ex_arg)
            run = capi.aclnnAddRmsNormDynamicQuantV2
        result["phase1"], result["msg1"] = status, recent_error_message()
        if status != 0:
            return result
        result["ws"] = ws.value
        workspace = ctypes.c_void_p()
        if ws.value:
            assert capi.aclrtMalloc(ctypes.byref(workspace), ws.value, capi.ACL_MEM_MALLOC_HUGE_FIRST) == 0
        repeat = call.get("repeat", 1)
        if repeat > 1:
            assert capi.aclSetAclOpExecutorRepeatable(executor) == 0
        for _ in range(repeat):
            result["phase2"] = run(workspace, ws.value, executor, stream)
            result["msg2"] = recent_error_message()
            if result["phase2"] != 0:
                break
        result["sync"] = capi.aclrtSynchronizeStream(stream)
        result["msg_sync"] = recent_error_message()
        if repeat > 1:
            capi.aclDestroyAclOpExecutor(executor)
        if ws.value:
            capi.aclrtFree(workspace)
        result["outputs"] = {name: tensors[name].read() for name in ("y1", "y2", "x_out", "scale1", "scale2")
                             if name in tensors}
        return result
    finally:
        for name, t in tensors.items():
            t.close(destroy=name not in call.get("stale", ()))
        if mask:
            capi.aclDestroyBoolArray(mask)
        switch_block.__exit__(None, None, None)


def child_main(src: str, dst: str) -> None:
    from pyaclnn import capi

    calls = pickle.loads(Path(src).read_bytes())
    assert capi.aclInit(None) in (0, capi.ACL_ERROR_REPEAT_INITIALIZE)
    assert capi.aclrtSetDevice(0) == 0
    stream = ctypes.c_void_p()
    assert capi.aclrtCreateStream(ctypes.byref(stream)) == 0
    results = []
    for call in calls:
        try:
            results.append(run_call(call, stream))
        except Exception as exc:  # noqa: BLE001 (reported to the parent per call)
            results.append({"error": repr(exc)})
    capi.aclrtDestroyStream(stream)
    Path(dst).write_bytes(pickle.dumps(results))


# ------------------------------------------------------------------------------------------------
# Parent side: reading results
# ------------------------------------------------------------------------------------------------

def dense_bytes(buffer: bytes, desc: dict) -> bytes:
    """The view's elements, in row-major order, from the whole buffer a child read back."""
    shape, dtype = list(desc["shape"]), desc["dtype"]
    strides, offset = desc.get("strides"), int(desc.get("offset", 0))
    if not strides and not offset:
        return buffer[: _nbytes(shape, dtype)]
    size = BITS[dtype] // 8
    data = np.frombuffer(buffer, np.uint8).reshape(-1, size)
    index = np.zeros(shape, np.int64) + offset
    for axis, stride in enumerate(strides or _contiguous_strides(shape)):
        ax = np.arange(shape[axis]).reshape([-1 if a == axis else 1 for a in range(len(shape))])
        index = index + ax * stride
    return data[index.ravel()].tobytes()


def compare(case: dict, call: dict, result: dict) -> list:
    """Differences between a child's outputs and the reference (empty list = bit-identical)."""
    if "error" in result:
        return [result["error"]]
    problems = []
    if (result["phase1"], result["phase2"], result["sync"]) != (0, 0, 0):
        return [f"statuses {result['phase1']} / {result['phase2']} / {result['sync']}: "
                f"{result['msg1'] or result['msg2'] or result['msg_sync']}"]
    ref = reference(case)
    for name in ("y1", "y2", "x_out", "scale1", "scale2"):
        desc = call["tensors"][name]
        got = dense_bytes(result["outputs"][name], desc)
        want = ref[name]
        if want is None:           # inactive output: the emulator leaves it untouched
            if got != bytes([desc.get("marker", 0x5A)]) * len(got):
                problems.append(f"{name}: inactive output was written")
            continue
        want = np.ascontiguousarray(want).tobytes()
        if got != want:
            g, w = np.frombuffer(got, np.uint8), np.frombuffer(want, np.uint8)
            if len(g) != len(w):
                problems.append(f"{name}: {len(g)} bytes, reference {len(w)}")
                continue
            bad = np.flatnonzero(g != w)
            problems.append(f"{name}: {bad.size} bytes differ (template {ref['template']}), first at "
                            f"byte {bad[0]}: got {g[bad[0]]:#04x}, reference {w[bad[0]]:#04x}")
    return problems
