"""One decoder block of an Ascend-style inference step through torch_npu's fused operators on the emulator,
against a float64 NumPy model of the same step.

The block (one decode step of two sequences, fp16, Atlas A2): embedding -> npu_rms_norm -> QKV matmul ->
npu_rotary_mul on q and k -> npu_scatter_pa_kv_cache writes the new k, v into a paged cache ->
npu_fused_infer_attention_score over that cache (block table, actual sequence lengths, grouped KV heads) ->
output projection and residual -> npu_rms_norm -> a SwiGLU MLP (npu_swiglu) and residual -> npu_rms_norm ->
MoE: npu_moe_gating_top_k_softmax -> npu_moe_init_routing -> npu_moe_compute_expert_tokens ->
npu_grouped_matmul (up) -> npu_swiglu -> npu_grouped_matmul (down) -> npu_moe_finalize_routing (residual as
skip1).

Two checks: each stage against the float64 model applied to the emulator's own inputs to that stage (so each
operator is held to its own class: routing and data movement exact, the arithmetic to a bound of a few fp16
ulps of the magnitudes involved), and the whole block against the float64 model run from the block's inputs
alone. The draw gives the router a wide margin between the k-th and the next expert's logit, so the float64
model picks the same experts.
"""
from __future__ import annotations

import numpy as np
import pytest

import _fused_ops as F

B, H, N, KVN, D = 2, 64, 4, 2, 16          # sequences, hidden, query heads, KV heads, head dim
CTX = [5, 20]                              # tokens already in each sequence's cache
BLOCK, NBLOCKS = 16, 6                     # paged KV cache: block size, blocks in the pool
FF, E, TOPK = 32, 4, 2                     # MLP width, experts, experts per token
EPS = 1e-6

BODY = f"""
torch.manual_seed(7)
B, H, N, KVN, D, BLOCK, NBLOCKS, FF, E, TOPK = {B}, {H}, {N}, {KVN}, {D}, {BLOCK}, {NBLOCKS}, {FF}, {E}, {TOPK}
CTX, EPS = {CTX}, {EPS}
h16 = torch.float16
vocab = 50
emb = (torch.randn(vocab, H) * 0.5).to(h16)
ids = torch.tensor([3, 41])
g1, g2, g3 = [(1 + 0.1 * torch.randn(H)).to(h16) for _ in range(3)]
wqkv = (torch.randn(H, (N + 2 * KVN) * D) / H ** 0.5).to(h16)
wo = (torch.randn(N * D, H) / (N * D) ** 0.5).to(h16)
w_up = (torch.randn(H, 2 * FF) / H ** 0.5).to(h16)
w_down = (torch.randn(FF, H) / FF ** 0.5).to(h16)
w_gate = (torch.randn(H, E) * 1.5 / H ** 0.5).to(h16)
e_up = (torch.randn(E, H, 2 * FF) / H ** 0.5).to(h16)
e_down = (torch.randn(E, FF, H) / FF ** 0.5).to(h16)
pos = torch.tensor(CTX, dtype=torch.float32)                 # the new token's position
inv = 1.0 / (10000 ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
ang = pos[:, None] * inv[None, :]                            # [B, D/2]
cos = torch.cat([ang.cos(), ang.cos()], -1).to(h16).reshape(B, 1, 1, D)
sin = torch.cat([ang.sin(), ang.sin()], -1).to(h16).reshape(B, 1, 1, D)
# the paged cache: sequence b owns blocks table[b]; earlier tokens already written
table = torch.tensor([[4, -1], [1, 3]], dtype=torch.int32)
kc = torch.zeros(NBLOCKS, BLOCK, KVN, D, dtype=h16); vc = torch.zeros_like(kc)
for b, n in enumerate(CTX):
    for t in range(n):
        blk, off = int(table[b, t // BLOCK]), t % BLOCK
        kc[blk, off] = (torch.randn(KVN, D) * 0.5).to(h16); vc[blk, off] = (torch.randn(KVN, D) * 0.5).to(h16)
slots = torch.tensor([int(table[b, n // BLOCK]) * BLOCK + n % BLOCK for b, n in enumerate(CTX)], dtype=torch.int32)

npu = lambda t: t.npu()
h0 = torch.nn.functional.embedding(npu(ids), npu(emb))                         # [B, H]
x1 = torch_npu.npu_rms_norm(h0, npu(g1), epsilon=EPS)[0]
qkv = x1 @ npu(wqkv)
q = qkv[:, :N * D].reshape(B, 1, N, D)
k = qkv[:, N * D:(N + KVN) * D].reshape(B, 1, KVN, D)
v = qkv[:, (N + KVN) * D:].reshape(B, KVN, D).contiguous()
qr = torch_npu.npu_rotary_mul(q.contiguous(), npu(cos), npu(sin))
kr = torch_npu.npu_rotary_mul(k.contiguous(), npu(cos), npu(sin))
kcn, vcn = npu(kc), npu(vc)
torch_npu.npu_scatter_pa_kv_cache(kr.reshape(B, KVN, D), v, kcn, vcn, npu(slots), cache_mode="Norm")
attn, _ = torch_npu.npu_fused_infer_attention_score(
    qr.reshape(B, 1, N * D), kcn.reshape(NBLOCKS, BLOCK, KVN * D), vcn.reshape(NBLOCKS, BLOCK, KVN * D),
    block_table=npu(table), actual_seq_lengths_kv=[n + 1 for n in CTX], num_heads=N, num_key_value_heads=KVN,
    input_layout="BSH", scale=D ** -0.5, block_size=BLOCK)
h1 = h0 + attn.reshape(B, N * D) @ npu(wo)
x2 = torch_npu.npu_rms_norm(h1, npu(g2), epsilon=EPS)[0]
up = x2 @ npu(w_up)
act = torch_npu.npu_swiglu(up, dim=-1)
h2 = h1 + act @ npu(w_down)
x3 = torch_npu.npu_rms_norm(h2, npu(g3), epsilon=EPS)[0]
logits = x3 @ npu(w_gate)
gate, expert, row = torch_npu.npu_moe_gating_top_k_softmax(logits, None, k=TOPK)
ex, erow, eexp = torch_npu.npu_moe_init_routing(x3, row, expert, B)
tokens = torch_npu.npu_moe_compute_expert_tokens(eexp, E)
eup = torch_npu.npu_grouped_matmul([ex], [npu(e_up)], group_list=tokens.to(torch.int64), split_item=2,
                                   group_type=0)[0]
eact = torch_npu.npu_swiglu(eup, dim=-1)
edown = torch_npu.npu_grouped_matmul([eact], [npu(e_down)], group_list=tokens.to(torch.int64), split_item=2,
                                     group_type=0)[0]
out = torch_npu.npu_moe_finalize_routing(edown, h2, None, None, gate, erow, expert)
names = ("emb ids g1 g2 g3 wqkv wo w_up w_down w_gate e_up e_down cos sin table kc vc slots "
         "h0 x1 qkv qr kr kcn vcn attn h1 x2 up act h2 x3 logits gate expert row ex erow eexp tokens eup eact "
         "edown out").split()
env = dict(globals())
for name in names:
    OUT[name] = [enc(to_np(env[name]))]
"""


@pytest.fixture(scope="module")
def run():
    return {k: v[0] for k, v in F.torch_npu_arrays(BODY, soc="Ascend910B4").items()}


def f64(a):
    return np.asarray(a, np.float64)


# ---- the float64 model, written from the operators' documented formulas ------------------------------------------

def rms_norm(x, g):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * g


def rotary_half(x, cos, sin):       # npu_rotary_mul, rotary_mode "half": r1 * x + r2 * cat(-x2, x1)
    x1, x2 = np.split(x, 2, axis=-1)
    return x * cos + np.concatenate([-x2, x1], axis=-1) * sin


def swiglu(x):                      # A * sigmoid(A) * B, A and B the halves of the last axis
    a, b = np.split(x, 2, axis=-1)
    return a / (1 + np.exp(-a)) * b


def scatter_cache(kc, vc, k, v, slots):
    kc, vc = kc.copy(), vc.copy()
    for b, s in enumerate(slots):
        kc[s // BLOCK, s % BLOCK], vc[s // BLOCK, s % BLOCK] = k[b], v[b]
    return kc, vc


def paged_attention(q, kc, vc, table, lengths):
    """q [B, N, D]; caches [blocks, BLOCK, KVN, D]; query head n reads KV head n // (N / KVN)."""
    out = np.zeros_like(q)
    for b, n in enumerate(lengths):
        rows = [table[b, t // BLOCK] * BLOCK + t % BLOCK for t in range(n)]
        keys = kc.reshape(-1, KVN, D)[rows]                  # [n, KVN, D]
        vals = vc.reshape(-1, KVN, D)[rows]
        for h in range(N):
            g = h // (N // KVN)
            s = keys[:, g] @ q[b, h] * D ** -0.5
            p = np.exp(s - s.max())
            out[b, h] = (p / p.sum()) @ vals[:, g]
    return out


def route(logits):
    """Softmax, then the top TOPK experts per token (ties to the lower index) and their probabilities."""
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    order = np.argsort(-p, axis=-1, kind="stable")[:, :TOPK]
    return np.take_along_axis(p, order, -1), order


def moe(x, gate, expert, e_up, e_down):
    """Each token's output: the gate-weighted sum of its experts' SwiGLU MLPs."""
    out = np.zeros_like(x)
    for t in range(x.shape[0]):
        for j in range(TOPK):
            e = expert[t, j]
            out[t] += gate[t, j] * (swiglu(x[t] @ e_up[e]) @ e_down[e])
    return out


def block(r):
    """The whole step in float64 from the block's inputs alone; returns its stages by name."""
    m = {}
    m["h0"] = f64(r["emb"])[r["ids"]]
    m["x1"] = rms_norm(m["h0"], f64(r["g1"]))
    qkv = m["x1"] @ f64(r["wqkv"])
    cos, sin = f64(r["cos"]).reshape(B, 1, D), f64(r["sin"]).reshape(B, 1, D)
    q = rotary_half(qkv[:, :N * D].reshape(B, N, D), cos, sin)
    k = rotary_half(qkv[:, N * D:(N + KVN) * D].reshape(B, KVN, D), cos, sin)
    v = qkv[:, (N + KVN) * D:].reshape(B, KVN, D)
    kc, vc = scatter_cache(f64(r["kc"]), f64(r["vc"]), k, v, r["slots"])
    attn = paged_attention(q, kc, vc, r["table"], [n + 1 for n in CTX])
    m["h1"] = m["h0"] + attn.reshape(B, N * D) @ f64(r["wo"])
    x2 = rms_norm(m["h1"], f64(r["g2"]))
    m["h2"] = m["h1"] + swiglu(x2 @ f64(r["w_up"])) @ f64(r["w_down"])
    x3 = rms_norm(m["h2"], f64(r["g3"]))
    gate, expert = route(x3 @ f64(r["w_gate"]))
    m["expert"] = expert
    m["out"] = m["h2"] + moe(x3, gate, expert, f64(r["e_up"]), f64(r["e_down"]))
    return m


# ---- checks ---------------------------------------------------------------------------------------------------------

FP16_ULP = 2.0 ** -10


def close(got, want, scale, ulps=4):
    """|got - want| within `ulps` fp16 ulps of `scale` (the magnitude the result is made of) elementwise."""
    err = np.abs(f64(got) - want)
    bound = ulps * FP16_ULP * np.maximum(scale, 2.0 ** -14)
    assert (err <= bound).all(), f"max err {err.max():.3g}, at {np.unravel_index(np.argmax(err - bound), err.shape)}"


def rotary_scale(x, cos, sin):      # each output mixes the element and its partner of the other half
    x1, x2 = np.split(np.abs(x), 2, axis=-1)
    return np.abs(x) * np.abs(cos) + np.concatenate([x2, x1], axis=-1) * np.abs(sin)


def mm_scale(a, b):
    return np.abs(f64(a)) @ np.abs(f64(b))


def test_each_stage_against_the_float64_model_of_its_own_inputs(run):
    r = run
    assert (r["h0"] == r["emb"][r["ids"]]).all()                                   # a gather: exact
    close(r["x1"], rms_norm(f64(r["h0"]), f64(r["g1"])), np.abs(rms_norm(f64(r["h0"]), f64(r["g1"]))))
    close(r["qkv"], f64(r["x1"]) @ f64(r["wqkv"]), mm_scale(r["x1"], r["wqkv"]))
    qkv = f64(r["qkv"])
    cos, sin = f64(r["cos"]), f64(r["sin"])
    q = qkv[:, :N * D].reshape(B, 1, N, D)
    close(r["qr"], rotary_half(q, cos, sin), rotary_scale(q, cos, sin))
    k = qkv[:, N * D:(N + KVN) * D].reshape(B, 1, KVN, D)
    close(r["kr"], rotary_half(k, cos, sin), rotary_scale(k, cos, sin))
    # the cache writer moves bytes: exactly the old caches with the new rows at the slots
    kc, vc = scatter_cache(r["kc"], r["vc"], r["kr"].reshape(B, KVN, D), qkv[:, (N + KVN) * D:].reshape(B, KVN, D)
                           .astype(np.float16), r["slots"])
    assert np.array_equal(r["kcn"], kc) and np.array_equal(r["vcn"], vc)
    lengths = [n + 1 for n in CTX]
    want = paged_attention(f64(r["qr"]).reshape(B, N, D), f64(r["kcn"]), f64(r["vcn"]), r["table"], lengths)
    close(r["attn"].reshape(B, N, D), want, np.abs(f64(r["vcn"])).max())           # a convex mix of the values
    h1 = f64(r["h0"]) + f64(r["attn"]).reshape(B, N * D) @ f64(r["wo"])
    close(r["h1"], h1, np.abs(f64(r["h0"])) + mm_scale(r["attn"].reshape(B, N * D), r["wo"]))
    close(r["x2"], rms_norm(f64(r["h1"]), f64(r["g2"])), np.abs(rms_norm(f64(r["h1"]), f64(r["g2"]))))
    close(r["up"], f64(r["x2"]) @ f64(r["w_up"]), mm_scale(r["x2"], r["w_up"]))
    close(r["act"], swiglu(f64(r["up"])), np.abs(swiglu(f64(r["up"]))))
    close(r["h2"], f64(r["h1"]) + f64(r["act"]) @ f64(r["w_down"]),
          np.abs(f64(r["h1"])) + mm_scale(r["act"], r["w_down"]))
    close(r["x3"], rms_norm(f64(r["h2"]), f64(r["g3"])), np.abs(rms_norm(f64(r["h2"]), f64(r["g3"]))))
    close(r["logits"], f64(r["x3"]) @ f64(r["w_gate"]), mm_scale(r["x3"], r["w_gate"]))
    gate, expert = route(f64(r["logits"]))
    assert (r["expert"] == expert).all()                                            # routing: exact
    close(r["gate"], gate, gate)
    # init routing: a stable key-value sort of the flattened expert_idx (token-major), carrying row_idx
    # (row_idx[t, j] = j * B + t, as the gating gives it)
    assert (r["row"] == np.arange(TOPK)[None, :] * B + np.arange(B)[:, None]).all()
    keys = r["row"].reshape(-1)[np.argsort(r["expert"].reshape(-1), kind="stable")]
    assert (r["eexp"] == [r["expert"][i % B, i // B] for i in keys]).all()
    assert (r["ex"] == r["x3"][[i % B for i in keys]]).all()
    assert (r["erow"][keys] == np.arange(B * TOPK)).all()
    assert (r["tokens"] == np.cumsum(np.bincount(r["eexp"], minlength=E))).all()
    owner = np.repeat(np.arange(E), np.bincount(r["eexp"], minlength=E))             # the expert of each sorted row
    e_up, e_down = f64(r["e_up"]), f64(r["e_down"])
    close(r["eup"], np.einsum("mk,mkn->mn", f64(r["ex"]), e_up[owner]),
          np.einsum("mk,mkn->mn", np.abs(f64(r["ex"])), np.abs(e_up[owner])))
    close(r["eact"], swiglu(f64(r["eup"])), np.abs(swiglu(f64(r["eup"]))))
    close(r["edown"], np.einsum("mk,mkn->mn", f64(r["eact"]), e_down[owner]),
          np.einsum("mk,mkn->mn", np.abs(f64(r["eact"])), np.abs(e_down[owner])))
    # finalize: skip1 + sum over k of gate * expert row (row i + k * B of the expanded order)
    fin = f64(r["h2"]).copy()
    for t in range(B):
        for j in range(TOPK):
            fin[t] += f64(r["gate"])[t, j] * f64(r["edown"])[r["erow"][j * B + t]]
    close(r["out"], fin, np.abs(f64(r["h2"])) + np.abs(f64(r["edown"])).max())


def test_the_whole_block_against_the_float64_model_of_its_inputs(run):
    r = run
    m = block(r)
    logits = rms_norm(m["h2"], f64(r["g3"])) @ f64(r["w_gate"])
    ranked = np.sort(logits, axis=-1)[:, ::-1]
    assert (ranked[:, TOPK - 1] - ranked[:, TOPK] > 0.05).all()     # the draw's router margin is wide
    assert (r["expert"] == m["expert"]).all()
    for name in ("h0", "h1", "h2", "out"):   # the residual stream: errors of fp16 storage across 12 steps
        scale = np.abs(m[name]).max()
        err = np.abs(f64(r[name]) - m[name]).max()
        assert err <= 16 * FP16_ULP * scale, (name, err, scale)
