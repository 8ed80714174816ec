"""Child of tests/test_torch_npu_probe.py: runs each probe call (a Python expression, from the JSON spec
on stdin) on the CPU and on "npu" (the emulator, through the real torch_npu) with the same inputs, and
prints one JSON line: per call "ok" (ran on npu and matched), "missing aclnnXxx", "mismatch ..." or
"error ...".

Comparison by kind: "close" floats within 1e-5 of the largest CPU value (max |npu - cpu| / max |cpu|),
integers and bools exactly; "exact" everything exactly; "random" only dtype, shape and that the values
are finite (random streams differ by design, docs/torch_npu.md "Random numbers"). Every tensor result
must be on npu (a call torch_npu answers on the CPU does not count).
"""
import json
import re
import sys

import torch
import torch.nn.functional as F
import torch_npu  # noqa: F401

MISSING = re.compile(r"(aclnn\w+?) or aclnn\w+GetWorkspaceSize not (?:found|in libopapi)")


def inputs(dev):
    g = torch.Generator().manual_seed(2028)
    n = lambda *s: torch.randn(*s, generator=g)            # noqa: E731
    r = lambda *s: torch.rand(*s, generator=g)             # noqa: E731
    t = {
        "x": n(4, 6), "y": n(4, 6), "p": r(4, 6) + 0.1, "u": r(4, 6) * 0.8 + 0.1, "v": n(6), "m": n(6, 5),
        "bm": n(2, 4, 6), "bm2": n(2, 6, 3), "img": n(2, 3, 8, 8), "seq": n(2, 5, 8), "sig": n(2, 3, 10),
        "w2d": n(4, 3, 3, 3) * 0.3, "w1d": n(4, 3, 3) * 0.3, "emb": n(10, 8), "q": n(2, 2, 5, 8),
        "k": n(2, 2, 5, 8), "vv": n(2, 2, 5, 8), "lw": r(8) + 0.5, "lb": n(8) * 0.1,
        "i": torch.randint(0, 10, (4, 6), generator=g), "tok": torch.randint(0, 10, (2, 5), generator=g),
        "tgt": torch.randint(0, 6, (4,), generator=g), "col": torch.randint(0, 6, (4, 3), generator=g),
        "idx": torch.tensor([2, 0, 3]), "cnt": torch.tensor([1, 0, 2, 1]),
    }
    t["b"] = t["x"] > 0
    return {k: v.to(dev) for k, v in t.items()}


def grad(fn, *ts):
    """Gradients of fn(*ts) against a fixed cotangent (not ones: softmax's gradient of a sum is zero)."""
    ts = [t.detach().clone().requires_grad_(True) for t in ts]
    out = fn(*ts)
    cot = torch.randn(out.shape, generator=torch.Generator().manual_seed(7)).to(out.device, out.dtype)
    return torch.autograd.grad(out, ts, cot)


def adamw(w, g, **kw):
    p = torch.nn.Parameter(w.detach().clone())
    p.grad = g.detach().clone()
    torch.optim.AdamW([p], lr=1e-2, **kw).step()
    return p.detach()


def clip(x, y):
    ps = [torch.nn.Parameter(x.detach().clone()), torch.nn.Parameter(y.detach().clone())]
    for p in ps:
        p.grad = p.detach() * 3
    total = torch.nn.utils.clip_grad_norm_(ps, max_norm=1.0)
    return total, ps[0].grad


def flat(v, wrap=True):
    """The tensors of a result (tuples and named tuples flattened); Python numbers as tensors if wrap."""
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (tuple, list)):
        return [t for e in v for t in flat(e, wrap)]
    return [torch.tensor(v)] if wrap else []


def compare(kind, cpu, npu):
    a, b = flat(cpu), flat(npu)
    if len(a) != len(b):
        return f"mismatch: {len(b)} results, torch CPU {len(a)}"
    for ta, tb in zip(a, b):
        if tb.dtype != ta.dtype or tb.shape != ta.shape:
            return f"mismatch: {tb.dtype} {tuple(tb.shape)}, torch CPU {ta.dtype} {tuple(ta.shape)}"
        tb = tb.cpu()
        if kind == "random":
            if tb.is_floating_point() and not bool(tb.isfinite().all()):
                return "mismatch: non-finite random values"
            continue
        if kind == "close" and ta.is_floating_point():
            scale = float(ta.abs().max()) if ta.numel() else 0.0
            err = float((tb.float() - ta.float()).abs().max()) if ta.numel() else 0.0
            if (ta.isnan() != tb.isnan()).any() or err > 1e-5 * max(scale, 1e-30):
                return f"mismatch: max |npu - cpu| = {err:.3g} (max |cpu| {scale:.3g})"
        elif not torch.equal(ta, tb):
            return "mismatch: values differ"
    return None


def main():
    spec = json.loads(sys.stdin.read())
    env = {"torch": torch, "F": F, "grad": grad, "adamw": adamw, "clip": clip}
    data = {dev: inputs(dev) for dev in ("cpu", "npu")}
    out = {}
    for name, expr, kind in spec["calls"]:
        try:
            cpu = eval(expr, {**env, **data["cpu"], "dev": "cpu"})
        except Exception as exc:                           # the probe itself is wrong: a failure
            out[name] = f"bad probe: {type(exc).__name__}: {exc}"[:300]
            continue
        try:
            torch.manual_seed(0)
            npu = eval(expr, {**env, **data["npu"], "dev": "npu"})
            bad = compare(kind, cpu, npu)
            devices = {t.device.type for t in flat(npu, wrap=False)}
            if bad is None and devices - {"npu"}:           # answered on the CPU: does not count
                bad = f"mismatch: results on {sorted(devices)}"
            out[name] = bad or "ok"
        except Exception as exc:
            text = f"{type(exc).__name__}: {exc}"
            m = MISSING.search(text)
            out[name] = f"missing {m.group(1)}" if m else f"error {text.splitlines()[0][:300]}"
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()
