"""Fuzzed operator calls: a valid call of each operator, then one to three arguments perturbed.

Parameter kinds come from the shipped signature registry, so an operator added to the registry is
fuzzed with NULL / foreign / perturbed tensors and adversarial attributes even before it has a
baseline here. A baseline (``BASELINES``) makes the unperturbed call valid, so the perturbations
reach the deep checks and the kernel instead of stopping at the first NULL.

Phase 2 is then fuzzed too: repeatable or not, workspace NULL / too small / foreign, stream NULL /
foreign, tensors destroyed and memory freed before the launch runs, the executor re-pointed at
foreign addresses, run again after it was consumed, destroyed twice.
"""
from __future__ import annotations

import ctypes

import numpy as np

from pyaclnn import _catalog, capi

import adversarial as adv
from calls_meta import create_tensor
from world import World

_C = ctypes
REGISTRY = _catalog.signature_doc()["ops"]   # the built stub's operator signatures

F16_HALF, F16_ONE_AND_HALF = 0x3800, 0x3E00


def _device_tensor(w: World, shape, dtype: int, data: bytes) -> int | None:
    """Device memory holding ``data`` and a contiguous ND tensor over it (both left in the model)."""
    p = _C.c_void_p()
    if w.call("aclrtMalloc", _C.byref(p), max(len(data), 1), 0) != 0:
        return None
    w.device[p.value] = (max(len(data), 1) + 31) // 32 * 32 + 32
    buf = np.frombuffer(data, dtype=np.uint8) if data else np.zeros(1, np.uint8)
    w.call("aclrtMemcpy", p.value, len(buf), buf.ctypes.data, len(data), capi.ACL_MEMCPY_HOST_TO_DEVICE)
    return create_tensor(w, dims=shape, dtype=dtype, strides=None, offset=0, fmt=capi.ACL_FORMAT_ND,
                         storage=shape, data=p.value, exact=True)


def _f16(shape, bits: int) -> bytes:
    return np.full(shape, bits, dtype=np.uint16).tobytes()


def _zeros(shape, itemsize: int) -> bytes:
    return bytes(int(np.prod(shape, dtype=np.int64)) * itemsize)


# ---- baselines: valid arguments, by parameter name ------------------------------------------------

def _amp(w: World, v2: bool) -> dict:
    t = lambda dtype, data: _device_tensor(w, [1], dtype, data)   # noqa: E731
    return {"currentScale": t(capi.ACL_FLOAT, np.float32(65536).tobytes()),
            "growthTracker": t(capi.ACL_INT32, np.int32(900).tobytes()),
            "foundInf": t(capi.ACL_FLOAT, np.float32(w.rng.choice((0, 1))).tobytes()),
            "growthFactor": 2.0, "backoffFactor": 0.5, "growthInterval": 1000,
            "updatedScaleOut": t(capi.ACL_FLOAT, bytes(4)), "updatedGrowthTrackerOut": t(capi.ACL_INT32, bytes(4))}


def _add_rms_norm(w: World, v2: bool) -> dict:
    rng = w.rng
    x, n = [2, 8], [8]
    args = {"x1": _device_tensor(w, x, capi.ACL_FLOAT16, _f16(x, F16_HALF)),
            "x2": _device_tensor(w, x, capi.ACL_FLOAT16, _f16(x, F16_HALF)),
            "gamma": _device_tensor(w, n, capi.ACL_FLOAT16, _f16(n, F16_ONE_AND_HALF)),
            "smoothScale1Optional": _device_tensor(w, n, capi.ACL_FLOAT16, _f16(n, F16_ONE_AND_HALF)),
            "smoothScale2Optional": _device_tensor(w, n, capi.ACL_FLOAT16, _f16(n, F16_ONE_AND_HALF)),
            "epsilon": 1e-6,
            "y1Out": _device_tensor(w, x, capi.ACL_INT8, _zeros(x, 1)),
            "y2Out": _device_tensor(w, x, capi.ACL_INT8, _zeros(x, 1)),
            "xOut": _device_tensor(w, x, capi.ACL_FLOAT16, _zeros(x, 2)),
            "scale1Out": _device_tensor(w, [2], capi.ACL_FLOAT, _zeros([2], 4)),
            "scale2Out": _device_tensor(w, [2], capi.ACL_FLOAT, _zeros([2], 4))}
    if v2:
        args["betaOptional"] = _device_tensor(w, n, capi.ACL_FLOAT16, _f16(n, F16_ONE_AND_HALF))
        args["outputMask"] = None
        if rng.random() < 0.5:
            mask = (_C.c_bool * 2)(True, True)
            args["outputMask"] = w.call("aclCreateBoolArray", mask, 2) or None
            if args["outputMask"]:
                w.add("bool_array", args["outputMask"])
    return args


def _grouped_mx(w: World, v2: bool) -> dict:
    x = [64, 4]
    args = {"x": _device_tensor(w, x, capi.ACL_FLOAT16, _f16(x, F16_ONE_AND_HALF)),
            "groupIndex": _device_tensor(w, [2], capi.ACL_INT32, np.array([32, 64], np.int32).tobytes()),
            "roundMode": b"rint", "dstType": capi.ACL_FLOAT8_E5M2, "blocksize": 32,
            "y": _device_tensor(w, x, capi.ACL_FLOAT8_E5M2, _zeros(x, 1)),
            "mxscale": _device_tensor(w, [3, 4, 2], capi.ACL_FLOAT8_E8M0, _zeros([3, 4, 2], 1))}
    if v2:
        args.update(scaleAlg=0, dstTypeMax=0.0)
    return args


BASELINES = {"aclnnAmpUpdateScale": (_amp, False),
             "aclnnAddRmsNormDynamicQuant": (_add_rms_norm, False),
             "aclnnAddRmsNormDynamicQuantV2": (_add_rms_norm, True),
             "aclnnGroupedDynamicMxQuant": (_grouped_mx, False),
             "aclnnGroupedDynamicMxQuantV2": (_grouped_mx, True)}


# ---- perturbations ----------------------------------------------------------------------------

def _perturb_tensor(w: World, handle):
    """Another value for a tensor argument: NULL, foreign, or a twisted copy of the description."""
    rng = w.rng
    r = rng.random()
    if r < 0.15:
        return None, None
    if r < 0.35:
        return w.handle("tensor", live_weight=0.3)
    dims, dtype, data = _describe(w, handle) if handle else (None, None, None)
    if dims is None:
        return create_tensor(w), None
    field = rng.randrange(7)
    if field == 0:
        dtype = adv.enum(rng, range(0, 43))
    elif field == 1:
        dims = adv.dims(rng)
    elif field == 2 and dims:
        k = rng.randrange(len(dims))
        dims[k] = rng.choice((0, dims[k] + 1, dims[k] - 1, dims[k] * 2, adv.int64(rng)))
    elif field == 3:
        return create_tensor(w, dims=dims, dtype=dtype, offset=0, fmt=capi.ACL_FORMAT_ND, data=data), None
    elif field == 4:
        return create_tensor(w, dims=dims, dtype=dtype, strides=None, offset=adv.int64(rng), fmt=capi.ACL_FORMAT_ND,
                             data=data), None
    elif field == 5:
        return create_tensor(w, dims=dims, dtype=dtype, strides=None, offset=0, fmt=adv.enum(rng, range(0, 50)),
                             data=data), None
    else:
        data = w.device_address()[0]
    return create_tensor(w, dims=dims, dtype=dtype, strides=None, offset=0, fmt=capi.ACL_FORMAT_ND, data=data), None


def _describe(w: World, handle: int):
    """(dims, dtype, data address) of a live tensor, read through the public getters."""
    arr, n = _C.POINTER(_C.c_int64)(), _C.c_uint64()
    if w.call("aclGetViewShape", handle, _C.byref(arr), _C.byref(n)) != 0:
        return None, None, None
    dims = [arr[i] for i in range(n.value)]
    w.free_c(_C.cast(arr, _C.c_void_p))
    dtype, addr = _C.c_int(), _C.c_void_p()
    w.call("aclGetDataType", handle, _C.byref(dtype))
    w.call("aclGetRawTensorAddr", handle, _C.byref(addr))
    return dims, dtype.value, addr.value


def _perturb(w: World, param: dict, value):
    """(new value, foreign description or None) for one parameter."""
    rng = w.rng
    kind = param["kind"]
    if kind == "tensor":
        return _perturb_tensor(w, value)
    if kind in ("double", "float"):
        return adv.double(rng, (-2.0, 2.0)), None
    if kind == "int":
        return rng.choice((adv.int64(rng), (value or 0) + rng.choice((-1, 1)), 0, 35, 36, 40, 41, 64)), None
    if kind == "string":
        return rng.choice((None, b"", b"round", b"floor", b"RINT", b"rint\x00x", b"x" * 300)), None
    if kind == "dtype":
        return adv.enum(rng, range(0, 43)), None
    if kind == "scalar":
        if rng.random() < 0.3:
            return None, None
        raw = (_C.c_ubyte * 16)(*[rng.randrange(256) for _ in range(16)])
        h = w.call("aclCreateScalar", _C.cast(raw, _C.c_void_p), adv.enum(rng, range(0, 43)))
        if h:
            w.add("scalar", h)
        return h, None
    if kind == "bool_array":
        r = rng.random()
        if r < 0.3:
            return None, None
        if r < 0.6:
            return w.handle("bool_array", live_weight=0.5)
        values = [rng.random() < 0.6 for _ in range(rng.randrange(0, 4))]
        h = w.call("aclCreateBoolArray", (_C.c_bool * max(len(values), 1))(*values), len(values))
        if h:
            w.add("bool_array", h)
        return h, None
    return value, None


_available: list[str] | None = None
SKIPPED: set[str] = set()      # operators left out (fuzz_capi.py --skip-op), e.g. while triaging


def available_operators() -> list[str]:
    """Operators of the registry whose two functions the loaded libraries export."""
    global _available
    if _available is None:
        _available = [n for n in sorted(REGISTRY)
                      if n not in SKIPPED and capi.available(n + "GetWorkspaceSize") and capi.available(n)]
    return _available


def call_operator(w: World) -> None:
    rng = w.rng
    names = available_operators()
    if not names:
        return
    name = rng.choice(names)
    params = [p for p in REGISTRY[name]["params"] if p["kind"] not in ("workspace_size", "executor")]
    builder, v2 = BASELINES.get(name, (None, False))
    if rng.random() < 0.9:                # the baseline needs a current context for its memory
        w.call("aclrtSetDevice", rng.randrange(w.device_count))
    values = builder(w, v2) if builder else {}
    # Operators without a baseline: NULL pointers, zero numbers (ctypes refuses None for numbers).
    args = {p["name"]: values.get(p["name"], 0 if p["kind"] in ("int", "double", "float", "dtype") else None)
            for p in params}
    foreign = None
    if rng.random() < 0.7:
        for p in rng.sample(params, k=min(len(params), rng.choice((1, 1, 2, 3)))):
            args[p["name"]], why = _perturb(w, p, args[p["name"]])
            foreign = foreign or (why and f"{why} for {p['name']}")
    ws_size, executor = _C.c_uint64(), _C.c_void_p()
    ws_arg = None if rng.random() < 0.03 else _C.byref(ws_size)
    ex_arg = None if rng.random() < 0.03 else _C.byref(executor)
    rc = w.call(name + "GetWorkspaceSize", *(args[p["name"]] for p in params), ws_arg, ex_arg, must_fail=foreign)
    if rc != 0 or ex_arg is None or not executor.value:
        return
    w.add("executor", executor.value)
    _launch(w, name, executor.value, ws_size.value, args)


def _launch(w: World, name: str, executor: int, ws_size: int, args: dict) -> None:
    """Phase 2 and what follows it, with the executor, workspace, stream and lifetimes fuzzed."""
    rng = w.rng
    repeatable = rng.random() < 0.3 and w.call("aclSetAclOpExecutorRepeatable", executor) == 0
    if rng.random() < 0.2:                       # tensors may go right after phase 1 (snapshots)
        # Plain ints only: a DeadHandle argument may have been given the address of a tensor created
        # later in this step, in some runs and not in others (see world.DeadHandle).
        for t in [v for v in args.values() if type(v) is int and v in w.live["tensor"]][:3]:
            if t not in w.owned_tensors and w.call("aclDestroyTensor", t) == 0:
                w.kill("tensor", t)
    for run in range(rng.choice((1, 1, 2, 3)) if repeatable else rng.choice((1, 1, 1, 2))):
        workspace, size = None, ws_size
        if ws_size:
            p = _C.c_void_p()
            if w.call("aclrtMalloc", _C.byref(p), ws_size, 0) == 0:
                w.device[p.value] = (ws_size + 31) // 32 * 32 + 32
                workspace = p.value
        r = rng.random()
        if r < 0.1:
            workspace = w.device_address()[0]
        elif r < 0.15:
            size = rng.choice((0, max(ws_size - 1, 0), adv.uint64(rng)))
        elif r < 0.2:
            workspace = None
        r = rng.random()
        stream = None if r < 0.5 else w.any_live("stream") if r < 0.8 else w.handle("stream")[0]
        if repeatable and run and rng.random() < 0.5:
            t, _ = w.handle("tensor", live_weight=0.8)
            w.call(rng.choice(("aclSetInputTensorAddr", "aclSetOutputTensorAddr", "aclSetTensorAddr")), executor,
                   rng.randrange(0, 6), t, w.device_address()[0])
        consumed = executor not in w.live["executor"]
        rc = w.call(name, workspace, size, executor, stream,
                    must_fail="consumed executor" if consumed else None)
        if not repeatable:
            w.kill("executor", executor)      # consumed whether or not the launch worked
        # Drawn and acted on whatever rc is: rc depends on where the tensors' data lies, and a tensor may
        # point at memory freed since, which a later aclrtMalloc (of another device) reuses in some runs.
        free_some, sync = rng.random() < 0.3, rng.random() < 0.6
        if free_some and w.device:            # free memory the queued kernel may still use
            victim = rng.choice(list(w.device))
            if w.call("aclrtFree", victim) == 0:
                del w.device[victim]
                w.freed_device.append(victim)
        if sync:
            w.call("aclrtSynchronizeStream", stream)
    if repeatable and rng.random() < 0.7:
        w.call("aclDestroyAclOpExecutor", executor)
        w.kill("executor", executor)
        if rng.random() < 0.3:
            w.call("aclDestroyAclOpExecutor", executor, must_fail="destroyed executor")


GENERATORS = [(6, call_operator)]
