"""Child process of tests/test_torch_npu.py: runs many torch_npu checks in one interpreter (torch_npu
takes seconds to import) and prints one JSON object. The spec (which checks, their inputs) comes as
JSON on stdin. Some checks fill and read NPU tensors with aclrtMemcpy on their data pointers (ground
truth for the copy paths); the others run ordinary torch code. Run as
`python -m pyaclnn exec -- python _torch_npu_child.py < SPEC` or `python _torch_npu_child.py preload < SPEC`."""
import json
import sys

import numpy as np

MODE = sys.argv[1] if len(sys.argv) > 1 else "exec"
if MODE == "preload":
    import pyaclnn
    pyaclnn.preload_stub()

import torch  # noqa: E402
import torch_npu  # noqa: E402

from pyaclnn import capi  # noqa: E402

spec = json.loads(sys.stdin.read())
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


def gmq(key: str = "gmq"):
    g = spec[key]
    x = to_npu(bytes_of(g["x"]).view(np.uint16).reshape(g["shape"]), torch.bfloat16)
    gi = to_npu(np.array(g["group_index"], np.int32), torch.int32)
    res = {}
    for dst in ("float8_e4m3fn", "float8_e5m2"):
        y, scale = torch_npu.npu_grouped_dynamic_mx_quant(x, gi, dst_type=getattr(torch, dst))
        res[dst] = {"y": to_host_bytes(y), "scale": to_host_bytes(scale), "y_dtype": str(y.dtype),
                    "scale_shape": list(scale.shape)}
    return res


def gmq_wide():
    return gmq("gmq_wide")


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


def _host_tensor(enc: dict) -> "torch.Tensor":
    dt = getattr(torch, enc["dtype"])
    raw = bytearray(bytes.fromhex(enc["hex"]))
    flat = torch.frombuffer(raw, dtype=torch.uint8) if raw else torch.empty(0, dtype=torch.uint8)
    return flat.view(dt).reshape(enc["shape"])


def _encode(t: "torch.Tensor") -> dict:
    host = t.cpu().contiguous()
    return {"dtype": str(host.dtype).removeprefix("torch."), "shape": list(host.shape),
            "hex": host.reshape(-1).view(torch.uint8).numpy().tobytes().hex()}


def _error(exc: BaseException) -> dict:
    return {"error": f"{type(exc).__name__}: {exc}"}


def creation():
    # torch.ones / zeros / full / empty().fill_() on device="npu", for every dtype torch_npu maps.
    c = spec["creation"]
    res = {}
    for name in c["dtypes"]:
        dt = getattr(torch, name)
        value = c["values"].get(name, 0.1)
        makers = {"ones": lambda: torch.ones(c["shape"], dtype=dt, device="npu"),
                  "zeros": lambda: torch.zeros(c["shape"], dtype=dt, device="npu"),
                  "full": lambda: torch.full(c["shape"], value, dtype=dt, device="npu"),
                  "fill_": lambda: torch.empty(c["shape"], dtype=dt, device="npu").fill_(value)}
        res[name] = {}
        for op, make in makers.items():
            try:
                t = make()
                assert t.device.type == "npu" and t.dtype == dt
                res[name][op] = {"hex": to_host_bytes(t)}
            except Exception as exc:                             # asserted by the test
                res[name][op] = _error(exc)
    return res


def roundtrip():
    # .npu() / .cpu() / a device-to-device clone, for every dtype torch_npu maps; the NPU copy is read
    # back with aclrtMemcpy, so the H2D half is checked on its own.
    res = {}
    for name, enc in spec["roundtrip"].items():
        host = _host_tensor(enc)
        row = {}
        try:
            dev = host.npu()
            row["h2d"] = to_host_bytes(dev)
            row["d2h"] = host_bytes(dev.cpu())
            row["device"] = str(dev.device)
        except Exception as exc:
            row["error"] = _error(exc)["error"]
            res[name] = row
            continue
        try:
            row["d2d"] = to_host_bytes(dev.clone())
        except Exception as exc:
            row["d2d_error"] = _error(exc)["error"]
        res[name] = row
    return res


def host_bytes(t: "torch.Tensor") -> str:
    assert t.device.type == "cpu"
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes().hex()


def _run_case(case: dict, device: str) -> dict:
    hosts = {k: _host_tensor(v) for k, v in case["inputs"].items()}
    ns = {"torch": torch, "dev": device, "npu": (lambda t: t.npu()) if device == "npu" else (lambda t: t)}
    for k, h in hosts.items():
        ns[k + "_host"] = h.clone()
        ns[k] = h.clone().to(device)
    try:
        exec(case["code"], ns)
        r = ns["r"]
        out = _encode(r)
        out["device"] = r.device.type
        return out
    except Exception as exc:
        return _error(exc)


def cases():
    # Each case on npu and on cpu (the test picks the golden value per case).
    return {c["name"]: {"npu": _run_case(c, "npu"), "cpu": _run_case(c, "cpu")} for c in spec["cases"]}


def printing():
    # What `print(t)` of an npu tensor gives next to the same tensor's CPU repr. Float tensors run
    # isfinite, ne, abs, min, max, masked_select ... on the device first (more than 1000 elements:
    # also the summarising slices and cat).
    res = {}
    for name, make in [("int64", lambda: torch.tensor([[1, -2, 3], [40, 5, 6]])),
                       ("bool", lambda: torch.tensor([True, False])),
                       ("int32_0dim", lambda: torch.tensor(7, dtype=torch.int32)),
                       ("float32", lambda: torch.tensor([1.5, -2.0, 3.25])),
                       ("float32_2d", lambda: torch.arange(12.0).reshape(3, 4) / 7),
                       ("float32_sci", lambda: torch.tensor([1e-8, 1e8, float("nan"), float("inf"), -0.0, -3.5])),
                       ("float32_ints", lambda: torch.tensor([1.0, -2.0, 300.0])),
                       ("float32_0dim", lambda: torch.tensor(-0.125)),
                       ("float32_empty", lambda: torch.zeros(0, 3)),
                       ("float32_summarised", lambda: torch.arange(2400.0).reshape(40, 60) / 3),
                       ("float16", lambda: (torch.arange(-6, 6) * 0.3).to(torch.float16).reshape(3, 4)),
                       ("bfloat16", lambda: (torch.arange(-6, 6) * 0.3).to(torch.bfloat16)),
                       ("int32", lambda: torch.tensor([-(2 ** 31), 0, 2 ** 31 - 1], dtype=torch.int32)),
                       ("uint8", lambda: torch.tensor([0, 7, 255], dtype=torch.uint8)),
                       ("bool_2d", lambda: torch.tensor([[True, False, True], [False, False, True]]))]:
        host = make()
        try:
            res[name] = {"npu": repr(host.npu()), "cpu": repr(host), "item": host.npu().reshape(-1)[0].item()
                         if host.numel() else None}
        except Exception as exc:
            res[name] = {"error": f"{type(exc).__name__}: {exc}", "cpu": repr(host)}
    return res


def bool_indexing():
    # t[mask], t[t > 0] and masked_select on npu (aclnnNonzeroV2 + aclnnIndex, aclnnMaskedSelect) next
    # to the same code on the CPU.
    res = {}
    base = torch.tensor([[0.5, -1.0, 2.0, 0.0], [-3.0, 4.0, -0.25, 7.0], [1.0, 1.0, -1.0, 0.0]])
    mask = torch.tensor([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
    for dt in ("float32", "float16", "bfloat16", "int32", "int64"):
        for how in ("gt0", "mask2d", "mask_row", "masked_select", "masked_select_bcast"):
            def run(dev):
                t = base.to(getattr(torch, dt)).to(dev)
                m = mask.to(dev)
                if how == "gt0":
                    r = t[t > 0]
                elif how == "mask2d":
                    r = t[m]
                elif how == "mask_row":
                    r = t[torch.tensor([True, False, True], device=dev)]
                elif how == "masked_select":
                    r = torch.masked_select(t, m)
                else:
                    r = t.masked_select(m[0])
                return r.cpu().float().tolist(), str(r.dtype), list(r.shape)
            try:
                res[f"{dt}/{how}"] = {"npu": run("npu"), "cpu": run("cpu")}
            except Exception as exc:
                res[f"{dt}/{how}"] = {"error": f"{type(exc).__name__}: {exc}"}
    return res


def random():
    # torch's random-number code on npu (aclnnInplaceUniform / InplaceNormal, dropout through
    # DropoutV3 on Ascend 950 or DropoutGenMaskV2 + DoMask on A2): distribution statistics, the
    # generator's determinism, and dropout's forward/backward consistency; the test judges them.
    def stats(t):
        x = t.float().cpu().double()
        return {"n": x.numel(), "mean": x.mean().item(), "std": x.std().item(), "min": x.min().item(),
                "max": x.max().item(), "dtype": str(t.dtype), "device": t.device.type}
    res = {}
    n = 100_000
    for dt in ("float32", "float16", "bfloat16"):
        d = getattr(torch, dt)
        res[f"randn/{dt}"] = stats(torch.randn(n, device="npu", dtype=d))
        res[f"rand/{dt}"] = stats(torch.rand(n, device="npu", dtype=d))
        res[f"uniform_/{dt}"] = stats(torch.empty(n, device="npu", dtype=d).uniform_(-2, 3))
        res[f"normal_/{dt}"] = stats(torch.empty(n, device="npu", dtype=d).normal_(1, 2))
    res["kaiming_uniform_"] = stats(torch.nn.init.kaiming_uniform_(torch.empty(300, 300, device="npu"), a=5 ** 0.5))
    res["xavier_normal_"] = stats(torch.nn.init.xavier_normal_(torch.empty(300, 300, device="npu")))
    res["linear_weight"] = stats(torch.nn.Linear(400, 250).npu().weight.detach())
    torch.npu.manual_seed(1234)
    a = torch.randn(64, device="npu").cpu()
    b = torch.randn(64, device="npu").cpu()
    torch.npu.manual_seed(1234)
    res["determinism"] = {"same_seed_same_values": bool(torch.equal(a, torch.randn(64, device="npu").cpu())),
                          "next_call_differs": not bool(torch.equal(a, b))}
    x = torch.randn(20_000, device="npu").requires_grad_()
    y = torch.nn.functional.dropout(x, 0.3, training=True)
    y.backward(torch.ones_like(y))
    xc, yc, gc = x.detach().cpu(), y.detach().cpu(), x.grad.cpu()
    kept = yc != 0
    res["dropout"] = {"kept_fraction": kept.float().mean().item(),
                      "kept_scaled": bool(torch.allclose(yc[kept], xc[kept] / 0.7, rtol=1e-6, atol=0)),
                      "grad_matches_mask": bool(torch.equal(gc != 0, kept)) and bool(
                          torch.allclose(gc[kept], torch.full_like(gc[kept], 1 / 0.7), rtol=1e-6, atol=0)),
                      "eval_is_identity": bool(torch.equal(
                          torch.nn.functional.dropout(x.detach(), 0.3, training=False).cpu(), xc))}
    return res


def layer_norm():
    # nn.LayerNorm forward and backward on npu (aclnnLayerNorm, aclnnLayerNormBackward) next to the CPU.
    torch.manual_seed(0)
    ln = torch.nn.LayerNorm(48)
    with torch.no_grad():
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-1, 1)
    lnn = torch.nn.LayerNorm(48).npu()
    lnn.load_state_dict(ln.state_dict())
    x = torch.randn(3, 5, 48) * 2 + 0.5
    xc, xn = x.clone().requires_grad_(), x.npu().requires_grad_()
    yc, yn = ln(xc), lnn(xn)
    g = torch.randn_like(yc)
    yc.backward(g)
    yn.backward(g.npu())
    rel = lambda a, b: ((a - b.cpu()).abs().max() / a.abs().max()).item()   # noqa: E731
    half = torch.nn.functional.layer_norm(x.half().npu(), (48,), ln.weight.half().npu(), ln.bias.half().npu())
    return {"out": rel(yc.detach(), yn.detach()), "dx": rel(xc.grad, xn.grad), "dw": rel(ln.weight.grad, lnn.weight.grad),
            "db": rel(ln.bias.grad, lnn.bias.grad), "half_dtype": str(half.dtype),
            "half": rel(yc.detach(), half.float().detach())}


def gelu():
    # F.gelu ("none", "tanh") forward and backward on npu (aclnnGeluV2, aclnnGeluBackwardV2) next to the CPU.
    res = {}
    x = torch.linspace(-6, 6, 1001)
    for mode in ("none", "tanh"):
        xc, xn = x.clone().requires_grad_(), x.npu().requires_grad_()
        yc = torch.nn.functional.gelu(xc, approximate=mode)
        yn = torch.nn.functional.gelu(xn, approximate=mode)
        yc.sum().backward()
        yn.sum().backward()
        res[mode] = {"out": (yc - yn.cpu()).abs().max().item(), "grad": (xc.grad - xn.grad.cpu()).abs().max().item(),
                     "bf16": (yc.detach() - torch.nn.functional.gelu(x.bfloat16().npu(), approximate=mode).float().cpu())
                     .abs().max().item()}
    return res


def topk_cumsum():
    # torch.topk and cumsum on npu (aclnnTopk, aclnnCumsum) next to the CPU: a top-k / top-p sampling step.
    torch.manual_seed(0)
    logits = torch.randn(4, 64)
    res = {}
    v, i = torch.topk(logits.npu(), 8, dim=-1)
    vc, ic = torch.topk(logits, 8, dim=-1)
    res["topk"] = bool(torch.equal(v.cpu(), vc)) and bool(torch.equal(i.cpu(), ic))
    p = torch.softmax(vc, -1)
    res["cumsum_fp32"] = (torch.cumsum(p.npu(), -1).cpu() - torch.cumsum(p, -1)).abs().max().item()
    ids = torch.randint(0, 100, (3, 9))
    res["cumsum_int64"] = bool(torch.equal(torch.cumsum(ids.npu(), 1).cpu(), torch.cumsum(ids, 1)))
    res["cumsum_bool_to_int"] = bool(torch.equal((ids.npu() > 50).cumsum(1).cpu(), (ids > 50).cumsum(1)))
    return res


def relu_mlp():
    # A small MLP (Linear, ReLU, Linear) forward and backward on npu (aclnnRelu, aclnnThresholdBackward
    # with the matmuls and reductions) next to the CPU, plus in-place relu_.
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    netn = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).npu()
    netn.load_state_dict(net.state_dict())
    x = torch.randn(16, 12)
    lc, ln = (net(x) * net(x)).mean(), (netn(x.npu()) * netn(x.npu())).mean()
    lc.backward()
    ln.backward()
    grads = {name: ((p.grad - q.grad.cpu()).abs().max() / p.grad.abs().max()).item()
             for (name, p), q in zip(net.named_parameters(), netn.parameters())}
    y = torch.randn(50)
    yn = y.npu()
    yn.relu_()
    return {"loss": abs(lc.item() - ln.item()) / abs(lc.item()), "grads": grads,
            "inplace": bool(torch.equal(yn.cpu(), torch.relu(y)))}


def npu_copies():
    # .npu() / .cpu() / .to("npu") need aclnnInplaceCopy: checked only when the stub exports it.
    res = {}
    for name in spec["copy_dtypes"]:
        src = torch.arange(12, dtype=torch.float32).reshape(3, 4).to(getattr(torch, name))
        dev = src.npu()
        res[name] = bool(torch.equal(dev.cpu(), src)) and bool(torch.equal(src.to("npu").t().contiguous().cpu(), src.t()))
    return res


def graph():
    # torch.npu.graph: the captured kernels run only on replay, each replay on the inputs' data as it then is.
    g_spec = spec["graph"]
    x = torch.zeros(g_spec["shape_x"], dtype=torch.float32, device="npu")
    w = torch.tensor(np.float32(g_spec["w"]), device="npu")
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        y = torch.relu(x @ w + 1.0) * 2
    torch.npu.synchronize()
    res = {"before_replay": y.cpu().tolist(), "replays": []}
    for xs in g_spec["xs"]:
        x.copy_(torch.tensor(np.float32(xs)))
        g.replay()
        res["replays"].append(y.cpu().tolist())
    g.reset()
    # RNG under capture (InplaceNormalTensor / InplaceUniformTensor): a replay draws from the seed and offset
    # its prologue writes, so replays after set_rng_state repeat the eager draws made from that state.
    torch.npu.manual_seed(7)
    state = torch.npu.get_rng_state()
    eager = [torch.randn(64, device="npu").cpu(), torch.rand(64, device="npu").cpu()]
    eager2 = [torch.randn(64, device="npu").cpu(), torch.rand(64, device="npu").cpu()]
    g2 = torch.npu.NPUGraph()
    with torch.npu.graph(g2):
        a, b = torch.randn(64, device="npu"), torch.rand(64, device="npu")
    torch.npu.set_rng_state(state)
    g2.replay()
    first = [a.cpu(), b.cpu()]
    g2.replay()
    second = [a.cpu(), b.cpu()]
    res["rng_replays_repeat_eager"] = [bool(torch.equal(x, y)) for x, y in zip(first + second, eager + eager2)]
    return res


for name in spec["checks"]:
    check(name, globals()[name])
print("RESULT " + json.dumps(out))
