"""Child process of tests/test_torch_npu.py: runs many torch_npu checks in one interpreter (torch_npu
takes seconds to import) and prints one JSON object. Inputs come in as JSON on argv[1]; NPU tensors
are filled and read with aclrtMemcpy on their data pointers, so nothing here needs an aclnn copy
operator. Run as `python -m pyaclnn exec -- python _torch_npu_child.py SPEC` or with --preload."""
import json
import sys

import numpy as np

MODE = sys.argv[2] if len(sys.argv) > 2 else "exec"
if MODE == "preload":
    import pyaclnn
    pyaclnn.preload_stub()

import torch  # noqa: E402
import torch_npu  # noqa: E402

from pyaclnn import capi  # noqa: E402

spec = json.loads(sys.argv[1])
out = {"soc": torch.npu.get_device_name(0), "available": torch.npu.is_available(),
       "device_count": torch.npu.device_count()}


def to_npu(arr: np.ndarray, dtype) -> "torch.Tensor":
    t = torch.empty(arr.shape, dtype=dtype, device="npu")
    if arr.nbytes:
        assert capi.aclrtMemcpy(t.data_ptr(), arr.nbytes, arr.ctypes.data, arr.nbytes,
                                capi.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    return t


def to_host_bytes(t: "torch.Tensor") -> str:
    torch.npu.synchronize()
    n = t.numel() * t.element_size()
    buf = np.empty(n, np.uint8)
    if n:
        assert capi.aclrtMemcpy(buf.ctypes.data, n, t.data_ptr(), n, capi.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    return buf.tobytes().hex()


def bytes_of(hexdata: str) -> np.ndarray:
    return np.frombuffer(bytes.fromhex(hexdata), np.uint8)


def check(name, fn):
    try:
        out[name] = fn()
    except Exception as exc:                                     # reported, asserted by the test
        out[name] = {"error": f"{type(exc).__name__}: {exc}"}


# Every dtype torch_npu maps: an NPU tensor of it round-trips through device memory unchanged.
def dtypes():
    res = {}
    for name, raw in spec["dtypes"].items():
        dt = getattr(torch, name)
        data = bytes_of(raw)
        t = torch.empty(len(data) // torch.empty(0, dtype=dt).element_size(), dtype=dt, device="npu")
        assert t.device.type == "npu"
        capi.aclrtMemcpy(t.data_ptr(), len(data), data.ctypes.data, len(data), capi.ACL_MEMCPY_HOST_TO_DEVICE)
        res[name] = to_host_bytes(t)
    return res


def arnq():
    a = spec["arnq"]
    dt = getattr(torch, a["dtype"])
    x1, x2, gamma, s1, s2 = (to_npu(bytes_of(a[k]).view(np.uint16).reshape(a["shape"][k]), dt)
                             for k in ("x1", "x2", "gamma", "smooth1", "smooth2"))
    y1, y2, x_out, sc1, sc2 = torch_npu.npu_add_rms_norm_dynamic_quant(
        x1, x2, gamma, smooth_scale1=s1, smooth_scale2=s2, epsilon=a["epsilon"])
    return {"y1": to_host_bytes(y1), "y2": to_host_bytes(y2), "x_out": to_host_bytes(x_out),
            "scale1": to_host_bytes(sc1), "scale2": to_host_bytes(sc2),
            "dtypes": [str(t.dtype) for t in (y1, y2, x_out, sc1, sc2)]}


def gmq():
    g = spec["gmq"]
    x = to_npu(bytes_of(g["x"]).view(np.uint16).reshape(g["shape"]), torch.bfloat16)
    gi = to_npu(np.array(g["group_index"], np.int32), torch.int32)
    res = {}
    for dst in ("float8_e4m3fn", "float8_e5m2"):
        y, scale = torch_npu.npu_grouped_dynamic_mx_quant(x, gi, dst_type=getattr(torch, dst))
        res[dst] = {"y": to_host_bytes(y), "scale": to_host_bytes(scale), "y_dtype": str(y.dtype),
                    "scale_shape": list(scale.shape)}
    return res


def interop():
    from pyaclnn import ops
    from pyaclnn.torch import current_stream, from_torch, to_torch
    scale = to_npu(np.float32([1024.0]), torch.float32)
    tracker = to_npu(np.int32([0]), torch.int32)
    found = to_npu(np.float32([0.0]), torch.float32)
    wrapped = from_torch(scale)
    res = {"same_pointer": wrapped.data_ptr == scale.data_ptr(),
           "same_stream": current_stream().handle == torch.npu.current_stream().npu_stream}
    ops.amp_update_scale(scale, tracker, found, growth_interval=1, inplace=True)
    res["scale_after"] = np.frombuffer(bytes.fromhex(to_host_bytes(scale)), np.float32).tolist()
    res["tracker_after"] = np.frombuffer(bytes.fromhex(to_host_bytes(tracker)), np.int32).tolist()
    import pyaclnn
    back = to_torch(pyaclnn.from_numpy(np.float32([1.5, -2.0, 3.25])))
    res["back_device"] = str(back.device)
    res["back_values"] = np.frombuffer(bytes.fromhex(to_host_bytes(back)), np.float32).tolist()
    return res


def streams():
    # Work on stream s1, an event recorded after it, stream s2 waiting on the event and then copying
    # the result: the copy must see the finished result, whatever the worker threads' timing.
    from pyaclnn import ops
    from pyaclnn.torch import to_torch, from_torch
    s1, s2 = torch.npu.Stream(), torch.npu.Stream()
    results = []
    for i in range(int(spec["stream_rounds"])):
        scale = to_npu(np.float32([2.0 ** (i % 20)]), torch.float32)
        tracker = to_npu(np.int32([0]), torch.int32)
        found = to_npu(np.float32([0.0]), torch.float32)
        done = torch.npu.Event()
        with torch.npu.stream(s1):
            ops.amp_update_scale(scale, tracker, found, growth_interval=1, inplace=True)
            done.record(s1)
        s2.wait_event(done)
        with torch.npu.stream(s2):
            copy = to_torch(from_torch(scale))
        s2.synchronize()
        results.append(np.frombuffer(bytes.fromhex(to_host_bytes(copy)), np.float32)[0].item())
    ev = torch.npu.Event(enable_timing=True)
    ev.record()
    ev.synchronize()
    return {"values": results, "event_query": ev.query()}


def npu_copies():
    # .npu() / .cpu() / .to("npu") need aclnnInplaceCopy: checked only when the stub exports it.
    res = {}
    for name in spec["copy_dtypes"]:
        src = torch.arange(12, dtype=torch.float32).reshape(3, 4).to(getattr(torch, name))
        dev = src.npu()
        res[name] = bool(torch.equal(dev.cpu(), src)) and bool(torch.equal(src.to("npu").t().contiguous().cpu(), src.t()))
    return res


for name in spec["checks"]:
    check(name, globals()[name])
print("RESULT " + json.dumps(out))
