"""Child of tests/test_torch_npu_models.py: the tiny models of tests/_tiny_models.py on "npu" (the
emulator, through the real torch_npu, default settings: SDPA as torch picks it, no CPU fallback) and on
the CPU; prints one JSON line ("RESULT {...}") with, per model and part, the measured differences, or
the aclnn operator that is missing ({"missing": "aclnnXxx"}), or another error ({"error": "..."}).

Parts per model: "forward" (fp32 logits, eval mode), "bf16" (the model in bf16 against the fp32 CPU
logits), "generate" (greedy, 8 new tokens, transformers' loop; BERT: the masked positions' argmax;
ResNet: the predicted classes), "train" (loss, backward, clip_grad_norm_, then one torch.optim.AdamW
step in each implementation: default (foreach on npu), foreach=False, fused=True).
"""
import copy
import json
import re
import sys
import traceback

import torch
import torch_npu  # noqa: F401

import _tiny_models as tm

LR = 1e-2
MISSING = re.compile(r"(aclnn\w+?) or aclnn\w+GetWorkspaceSize not (?:found|in libopapi)")


def rel(got, want):
    got, want = got.detach().float().cpu(), want.detach().float().cpu()
    scale = float(want.abs().max()) if want.numel() else 0.0
    return float((got - want).abs().max() / scale) if scale else float((got - want).abs().max())


def part(fn):
    try:
        return fn()
    except Exception as exc:                                     # reported, judged by the test
        text = f"{type(exc).__name__}: {exc}"
        m = MISSING.search(text)
        if m:
            return {"missing": m.group(1)}
        return {"error": text[:2000], "trace": traceback.format_exc()[-3000:]}


def to(batch, dev):
    return {k: v.to(dev) for k, v in batch.items()}


# ---- what each model is given, and how its logits / loss / generation are computed ----

def ids(seed, shape, low=1):
    return torch.randint(low, tm.VOCAB, shape, generator=torch.Generator().manual_seed(seed))


def causal_batch():
    x = ids(1, (2, 6))
    return {"input_ids": x, "labels": x.clone()}


def bert_batch():
    x = ids(2, (2, 7), low=5)
    x[1, 5:] = 0                                            # padding
    mask = (x != 0).long()
    labels = torch.full_like(x, -100)
    for b, t in ((0, 1), (0, 4), (1, 2)):                   # three masked positions ([MASK] = 4)
        labels[b, t] = x[b, t]
        x[b, t] = 4
    types = torch.tensor([[0, 0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 1, 0, 0]])
    return {"input_ids": x, "attention_mask": mask, "token_type_ids": types, "labels": labels}


def t5_batch():
    x = ids(3, (2, 6))
    x[1, 4:] = 0
    mask = (x != 0).long()
    labels = ids(4, (2, 5))
    dec = torch.cat([torch.zeros(2, 1, dtype=torch.long), labels[:, :-1]], dim=1)   # shift right
    return {"input_ids": x, "attention_mask": mask, "decoder_input_ids": dec, "labels": labels}


def resnet_batch():
    g = torch.Generator().manual_seed(5)
    return {"x": torch.randn(4, 3, 16, 16, generator=g), "labels": torch.tensor([1, 7, 3, 0])}


def _causal(cls):
    return (cls, causal_batch, lambda m, b: m(b["input_ids"]), lambda lg, b: tm.causal_lm_loss(lg, b["labels"]))


# the decoder-only models with rotary embeddings and a KV cache in generation
LLAMA_LIKE = ("llama", "qwen2", "mistral", "gemma")
MODELS = {
    "llama": _causal(tm.TinyLlama),
    "qwen2": _causal(tm.TinyQwen2),
    "mistral": _causal(tm.TinyMistral),
    "gemma": _causal(tm.TinyGemma),
    "gpt2": _causal(tm.TinyGPT2),
    "bert": (tm.TinyBert, bert_batch,
             lambda m, b: m(b["input_ids"], b["attention_mask"], b["token_type_ids"]),
             lambda lg, b: tm.masked_lm_loss(lg, b["labels"])),
    "t5": (tm.TinyT5, t5_batch,
           lambda m, b: m(b["input_ids"], b["attention_mask"], b["decoder_input_ids"]),
           lambda lg, b: tm.masked_lm_loss(lg, b["labels"])),
    "resnet": (tm.TinyResNet, resnet_batch,
               lambda m, b: m(b["x"]), lambda lg, b: torch.nn.functional.cross_entropy(lg, b["labels"])),
}
SEEDS = {"llama": 11, "qwen2": 16, "mistral": 17, "gemma": 18, "gpt2": 12, "bert": 13, "t5": 22, "resnet": 15}


def build(name, dev, dtype=torch.float32):
    cls = MODELS[name][0]
    torch.manual_seed(0)
    return tm.init_weights(cls(), SEEDS[name]).to(device=dev, dtype=dtype)


# ---- forward ----

def forward(name):
    _, batch, fwd, _ = MODELS[name]
    b = batch()
    with torch.no_grad():
        cpu = fwd(build(name, "cpu").eval(), b)
        npu = fwd(build(name, "npu").eval(), to(b, "npu"))
    return {"rel": rel(npu, cpu), "shape": list(npu.shape), "device": npu.device.type, "finite": bool(cpu.isfinite().all())}


def bf16(name):
    _, batch, fwd, _ = MODELS[name]
    b = batch()
    if "x" in b:
        b = {**b, "x": b["x"].bfloat16()}
    with torch.no_grad():
        ref = fwd(build(name, "cpu").eval(), {**b, "x": b["x"].float()} if "x" in b else b)
        npu = fwd(build(name, "npu", torch.bfloat16).eval(), to(b, "npu"))
        cpu16 = fwd(build(name, "cpu", torch.bfloat16).eval(), b)
    return {"dtype": str(npu.dtype), "rel": rel(npu, ref), "torch_cpu_bf16_rel": rel(cpu16, ref)}


# ---- generation ----

def _generate(name, model, b, eos, new_tokens=8):
    dev = next(model.parameters()).device
    if name in LLAMA_LIKE:                      # with a KV cache: the prompt once, then one token a step
        caches = [[] for _ in model.layers]

        def step(seq):
            past = caches[0][0].shape[-2] if caches[0] else 0
            return model(seq[:, past:], caches, past)
        prompt = b["input_ids"][:, :5]
    elif name == "gpt2":
        step, prompt = model, b["input_ids"][:, :5]
    else:                                       # t5: the encoder once, the decoder from decoder_start
        enc = model.encode(b["input_ids"], b["attention_mask"])

        def step(seq):
            return model.decode(seq, enc, b["attention_mask"])
        prompt = torch.full((2, 1), model.decoder_start, dtype=torch.long, device=dev)
    return tm.greedy_generate(step, prompt, new_tokens, eos, pad_token_id=0)


def pick_eos(new):
    """An eos that ends row 0 after its 3rd..6th new token (a token it has not produced before, absent from
    row 1, which then runs all 8 steps while row 0 is padded); -1 (none) if no token qualifies."""
    for i in range(3, 7):
        tok = new[0][i]
        if tok not in new[0][:i] and tok not in new[1]:
            return tok
    return -1


def generate(name):
    _, batch, fwd, _ = MODELS[name]
    b = batch()
    with torch.no_grad():
        if name in ("bert", "resnet"):          # encoder-only: the argmax tokens / classes
            outs = {}
            for dev in ("cpu", "npu"):
                lg = fwd(build(name, dev).eval(), to(b, dev))
                pick = lg.argmax(-1)
                outs[dev] = (pick[b["labels"].to(dev) != -100] if name == "bert" else pick).cpu().tolist()
            return {"cpu": outs["cpu"], "npu": outs["npu"], "eos": None}
        cpu_model = build(name, "cpu").eval()
        free = _generate(name, cpu_model, b, eos=-1)               # no eos: 8 new tokens
        eos = pick_eos(free[:, -8:].tolist())
        cpu = _generate(name, cpu_model, b, eos)
        npu = _generate(name, build(name, "npu").eval(), to(b, "npu"), eos)
    return {"cpu": cpu.tolist(), "npu": npu.cpu().tolist(), "eos": eos, "free": free.tolist()}


# ---- one training step ----

OPTIMIZERS = {"default": {}, "single": {"foreach": False}, "fused": {"fused": True}}


def _step(model, opt_kw):
    """clip_grad_norm_ (max_norm 1) on a copy of the trained model, then one AdamW step; the parameters."""
    m = copy.deepcopy(model)
    for p, q in zip(m.parameters(), model.parameters()):
        p.grad = q.grad.clone()
    total = torch.nn.utils.clip_grad_norm_(m.parameters(), max_norm=1.0)
    torch.optim.AdamW(m.parameters(), lr=LR, **opt_kw).step()
    return float(total), {n: p.detach().cpu().clone() for n, p in m.named_parameters()}


def train(name):
    """Loss and backward on both devices, then per optimizer (a part of its own, so that one missing
    operator does not hide the others) clip_grad_norm_ and one AdamW step."""
    _, batch, fwd, loss_fn = MODELS[name]
    b = batch()
    models, runs = {}, {}
    for dev in ("cpu", "npu"):
        model = build(name, dev).train()
        bd = to(b, dev)
        loss = loss_fn(fwd(model, bd), bd)
        loss.backward()
        models[dev] = model
        runs[dev] = (loss.item(), {n: p.grad.detach().cpu().clone() for n, p in model.named_parameters()},
                     {n: t.detach().cpu().clone() for n, t in model.named_buffers() if t.is_floating_point()})
    cpu, npu = runs["cpu"], runs["npu"]
    gmax = max(float(g.abs().max()) for g in cpu[1].values())
    res = {"loss_cpu": cpu[0], "loss_npu": npu[0], "loss_rel": abs(npu[0] - cpu[0]) / abs(cpu[0]),
           "grad_max": gmax, "lr": LR, "grads": {}, "zero_grad": [], "steps": {},
           "buffers": {n: rel(npu[2][n], t) for n, t in cpu[2].items()}}
    for n, g in cpu[1].items():
        # a gradient that is zero in exact arithmetic (e.g. an attention key bias: softmax ignores a
        # constant added to a row) is rounding noise on either device: compared in absolute terms
        if float(g.abs().max()) <= 1e-6 * gmax:
            res["zero_grad"].append(n)
            res["grads"][n] = float((npu[1][n] - g).abs().max()) / gmax
        else:
            res["grads"][n] = rel(npu[1][n], g)
    start = {n: p.detach().clone() for n, p in build(name, "cpu").named_parameters()}
    for opt_name, kw in OPTIMIZERS.items():
        res["steps"][opt_name] = part(lambda: _compare_step(models, kw, cpu[1], gmax, start))
    return res


def _compare_step(models, kw, grads, gmax, start):
    (cpu_total, cpu_p), (npu_total, npu_p) = (_step(models[dev], kw) for dev in ("cpu", "npu"))
    out = {"norm_rel": abs(npu_total - cpu_total) / cpu_total, "params": {}}
    for n, p in cpu_p.items():
        q, g = npu_p[n], grads[n].abs()
        # Adam's first step moves an element by about lr * sign(gradient): where the gradient is zero
        # within the gradient bound (1e-4 of the parameter's largest) or within fp32 noise (1e-6 of the
        # model's largest), either device may move it either way; those elements are compared by |d| <= 2 lr
        loose = g <= max(1e-4 * float(g.max()), 1e-6 * gmax)
        d = (q - p).abs()
        out["params"][n] = {"rel": float(d[~loose].max()) / float(p.abs().max()) if bool((~loose).any()) else 0.0,
                            "loose": int(loose.sum()), "loose_abs": float(d[loose].max()) if bool(loose.any()) else 0.0,
                            "moved": float((p - start[n]).abs().max())}
    return out


PARTS = {"forward": forward, "bf16": bf16, "generate": generate, "train": train}


def main():
    names = sys.argv[1:] or list(MODELS)
    out = {}
    for name in names:
        out[name] = {}
        for pname, fn in PARTS.items():
            out[name][pname] = part(lambda: fn(name))
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()
