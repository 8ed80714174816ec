"""Child of tests/test_torch_npu_decoder.py: a small Llama-style decoder layer written in plain torch
(embedding by indexing, RMSNorm, q/k/v/o projections, rotary embedding on strided slices, stack and
flatten, causal-masked softmax attention, SwiGLU MLP, logits tied to the embedding), run on "npu" (the
emulator, through the real torch_npu) and on the CPU; prints one JSON line with the relative errors.
Every operation of the layer runs on npu: nothing is moved to the CPU and back.

`train` as argv[1]: one training step instead -- next-token cross_entropy on the logits, backward, and
one torch.optim.AdamW step (argv[2]: "default", "foreach" or "single" for its implementation; the default
on npu is foreach, i.e. the aclnnForeach* operators) on npu and on the
CPU; prints the loss and every parameter's relative difference after the step.
"""
import json
import sys

import torch
import torch.nn.functional as F
import torch_npu  # noqa: F401

V, D, H, FF, B, T = 32, 16, 2, 24, 2, 6


def params(seed=0):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g) * 0.2   # noqa: E731
    return {"emb": r(V, D), "ln1": 1 + r(D) * 0.1, "ln2": 1 + r(D) * 0.1, "lnf": 1 + r(D) * 0.1,
            "wq": r(D, D), "wk": r(D, D), "wv": r(D, D), "wo": r(D, D),
            "wg": r(FF, D), "wu": r(FF, D), "wd": r(D, FF)}


def rmsnorm(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotary(x, pos):
    d = x.shape[-1]
    ang = pos[:, None].float() * (1.0 / 10000.0 ** (torch.arange(0, d, 2, device=x.device).float() / d))[None, :]
    c, s = torch.cos(ang).to(x.dtype), torch.sin(ang).to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]                       # strided slices
    return torch.stack((x1 * c + torch.neg(x2) * s, x1 * s + x2 * c), dim=-1).flatten(-2)


def layer(p, ids):
    b, t = ids.shape
    x = p["emb"][ids]
    hd = D // H
    h = rmsnorm(x, p["ln1"])
    q, k, v = ((h @ p[w].t()).view(b, t, H, hd).transpose(1, 2) for w in ("wq", "wk", "wv"))
    pos = torch.arange(t, device=ids.device)
    q, k = rotary(q, pos), rotary(k, pos)
    s = (q @ k.transpose(-2, -1)) / hd ** 0.5
    s = s.masked_fill(torch.triu(torch.ones(t, t, dtype=torch.bool, device=ids.device), 1), float("-inf"))
    a = torch.softmax(s.float(), dim=-1).to(q.dtype)
    x = x + (a @ v).transpose(1, 2).reshape(b, t, D) @ p["wo"].t()
    h = rmsnorm(x, p["ln2"])
    x = x + (F.silu(h @ p["wg"].t()) * (h @ p["wu"].t())) @ p["wd"].t()
    return rmsnorm(x, p["lnf"]) @ p["emb"].t()


def rel(got, want):
    return float((got.float() - want.float()).abs().max() / want.float().abs().max())


def main():
    ids = torch.tensor([[1, 5, 7, 3, 9, 2], [4, 4, 0, 31, 8, 6]])
    base = params()
    res = {}
    runs = {}
    for dev in ("cpu", "npu"):   # fp32 forward and backward
        p = {k: v.clone().to(dev).requires_grad_(True) for k, v in base.items()}
        out = layer(p, ids.to(dev))
        (out * out).mean().backward()
        runs[dev] = (out.detach().cpu(), {k: v.grad.cpu() for k, v in p.items()})
    res["fp32_out"] = rel(runs["npu"][0], runs["cpu"][0])
    res["fp32_grads"] = {k: rel(runs["npu"][1][k], runs["cpu"][1][k]) for k in base}
    with torch.no_grad():        # bf16 forward against the fp32 CPU result
        p16 = {k: v.to(torch.bfloat16).to("npu") for k, v in base.items()}
        out16 = layer(p16, ids.to("npu"))
        res["bf16_dtype"] = str(out16.dtype)
        res["bf16_out"] = rel(out16.cpu(), runs["cpu"][0])
        cpu16 = layer({k: v.to(torch.bfloat16) for k, v in base.items()}, ids)
        res["bf16_torch_cpu_out"] = rel(cpu16, runs["cpu"][0])      # torch CPU's own bf16 error, for scale
        res["bf16_vs_torch_cpu_bf16"] = rel(out16.cpu(), cpu16)
    print("RESULT " + json.dumps(res))


def train(foreach):
    ids = torch.tensor([[1, 5, 7, 3, 9, 2], [4, 4, 0, 31, 8, 6]])
    targets = torch.tensor([[5, 7, 3, 9, 2, 1], [4, 0, 31, 8, 6, 6]])
    base = params()
    runs = {}
    for dev in ("cpu", "npu"):
        p = {k: v.clone().to(dev).requires_grad_(True) for k, v in base.items()}
        opt = torch.optim.AdamW(list(p.values()), lr=1e-2, weight_decay=0.1, foreach=foreach)
        logits = layer(p, ids.to(dev))
        loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1).to(dev))
        loss.backward()
        opt.step()
        runs[dev] = (loss.item(), {k: v.detach().cpu() for k, v in p.items()})
    cpu_loss, npu_loss = runs["cpu"][0], runs["npu"][0]
    res = {"loss_cpu": cpu_loss, "loss_rel": abs(npu_loss - cpu_loss) / abs(cpu_loss),
           "params": {k: rel(runs["npu"][1][k], runs["cpu"][1][k]) for k in base},
           "moved": {k: rel(runs["cpu"][1][k], base[k]) for k in base}}
    print("RESULT " + json.dumps(res))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "train":
        train(foreach={"default": None, "foreach": True, "single": False}[sys.argv[2]])
    else:
        main()
