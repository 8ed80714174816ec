"""Tiny models in plain torch, written the way HuggingFace transformers writes them (no transformers
dependency, no network, random weights from a seed): Llama-, Qwen2-, Mistral-, Gemma- and GPT-2-style
causal LMs, a BERT-style masked LM, a T5-style encoder-decoder and a small ResNet. Hidden sizes are tiny so that the
emulator runs them in well under a second. Used by tests/_torch_npu_models_child.py.

Each model follows its HF counterpart's operations (the ones torch_npu then turns into aclnn calls):
- Llama: RMSNorm in fp32 (pow, mean, rsqrt), rotary embeddings (inv_freq, cos/sin of the outer
  product, rotate_half with cat and neg), grouped-query attention (repeat_kv by expand + reshape),
  F.scaled_dot_product_attention with is_causal (no explicit mask), SwiGLU MLP, a KV cache (cat) in
  generation; the loss pads the labels (F.pad, value -100) and shifts them, as ForCausalLMLoss does.
- Qwen2: Llama with biases on the q/k/v projections and rope theta 1e6.
- Mistral: Llama with a sliding window shorter than the sequence, so that transformers' SDPA path passes
  an explicit boolean mask (causal and within the window) instead of is_causal, in prefill and in
  cached generation.
- Gemma: multi-query attention (one key/value head) with a head size that is not hidden / heads,
  GemmaRMSNorm (x * (1 + weight), in fp32), the embeddings scaled by sqrt(hidden) in the model's dtype,
  the GeGLU MLP (gelu with the tanh approximation), lm_head tied to the embeddings.
- GPT-2: learned position embeddings, LayerNorm, Conv1D projections (addmm), gelu_new (the tanh
  formula written out, as NewGELUActivation), causal SDPA, lm_head tied to wte.
- BERT: word + position + token-type embeddings (the token types default to a gather of a buffer, as
  BertEmbeddings), LayerNorm, SDPA with a padding mask (the 4-d additive mask from the 2-d attention
  mask), GELU (erf), an MLM head (dense, gelu, LayerNorm, decoder tied to the embedding, bias).
- T5: RMS LayerNorm without mean, relative position buckets (abs, log, minimum, where), attention
  without scaling (scale=1.0) with the position bias as an additive mask, fully masked rows found with
  isneginf, ReLU feed-forward, cross-attention, lm_head tied and scaled by d_model ** -0.5.
- ResNet: conv 7x7/2 stem, BatchNorm, ReLU, max-pool, two BasicBlocks (one with a strided 1x1
  downsample), adaptive average pool, fc.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 64


def init_weights(model: nn.Module, seed: int) -> nn.Module:
    """Deterministic random weights: std 0.1 for matrices, convolutions and embeddings, 1 + 0.1 N(0, 1) for
    the norms' weights (the 1-d `weight`s), 0.05 N(0, 1) for biases; BatchNorm's running statistics
    random too, so that an eval-mode forward means something."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.copy_(torch.randn(p.shape, generator=g) * 0.1)
            elif name.endswith("weight"):
                p.copy_(1 + torch.randn(p.shape, generator=g) * 0.1)
            else:
                p.copy_(torch.randn(p.shape, generator=g) * 0.05)
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
                m.running_var.copy_(1 + torch.rand(m.running_var.shape, generator=g) * 0.5)
    return model


# ------------------------------------------------------------------------------------------------
# Llama
# ------------------------------------------------------------------------------------------------

class LlamaRMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        var = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(var + self.eps)
        return self.weight * x.to(dtype)


class GemmaRMSNorm(LlamaRMSNorm):
    """Gemma scales by (1 + weight) and casts after the multiplication, all in fp32."""

    def forward(self, x):
        xf = x.float()
        out = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (out * (1.0 + self.weight.float())).type_as(x)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(x, n_rep):
    b, h, t, d = x.shape
    if n_rep == 1:
        return x
    return x[:, :, None, :, :].expand(b, h, n_rep, t, d).reshape(b, h * n_rep, t, d)


def sliding_window_mask(tq, tk, window, device):
    """transformers' sliding-window causal mask as SDPA takes it (True = attend): query i (at position
    tk - tq + i) sees the keys j with i - window < j <= i."""
    qpos = torch.arange(tk - tq, tk, device=device)[:, None]
    kpos = torch.arange(tk, device=device)[None, :]
    return ((kpos <= qpos) & (kpos > qpos - window))[None, None]


class LlamaAttention(nn.Module):
    def __init__(self, d, heads, kv_heads, head_dim=None, qkv_bias=False, window=None):
        super().__init__()
        self.h, self.kv, self.hd = heads, kv_heads, head_dim or d // heads
        self.window = window
        self.q_proj = nn.Linear(d, heads * self.hd, bias=qkv_bias)
        self.k_proj = nn.Linear(d, kv_heads * self.hd, bias=qkv_bias)
        self.v_proj = nn.Linear(d, kv_heads * self.hd, bias=qkv_bias)
        self.o_proj = nn.Linear(heads * self.hd, d, bias=False)

    def forward(self, x, cos, sin, cache=None):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.h, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv, self.hd).transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if cache is not None:                       # DynamicCache.update: cat along the sequence
            if cache:
                k, v = torch.cat([cache[0], k], dim=-2), torch.cat([cache[1], v], dim=-2)
            cache[:] = [k, v]
        k, v = repeat_kv(k, self.h // self.kv), repeat_kv(v, self.h // self.kv)
        tk = k.shape[-2]
        if self.window is not None and tk > self.window:       # the window cuts: an explicit mask
            mask = sliding_window_mask(t, tk, self.window, x.device)
            o = F.scaled_dot_product_attention(q.contiguous(), k.contiguous(), v.contiguous(), attn_mask=mask)
        else:
            # transformers' sdpa_attention_forward: is_causal for a prefill without a mask, not for one new token
            o = F.scaled_dot_product_attention(q.contiguous(), k.contiguous(), v.contiguous(), is_causal=t > 1)
        return self.o_proj(o.transpose(1, 2).reshape(b, t, -1))


class LlamaMLP(nn.Module):
    def __init__(self, d, ff, act=F.silu):
        super().__init__()
        self.gate_proj = nn.Linear(d, ff, bias=False)
        self.up_proj = nn.Linear(d, ff, bias=False)
        self.down_proj = nn.Linear(ff, d, bias=False)
        self.act = act

    def forward(self, x):
        return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))


def gelu_pytorch_tanh(x):
    return F.gelu(x, approximate="tanh")


class LlamaLayer(nn.Module):
    def __init__(self, d, heads, kv_heads, ff, norm=LlamaRMSNorm, act=F.silu, **attn):
        super().__init__()
        self.input_layernorm = norm(d)
        self.self_attn = LlamaAttention(d, heads, kv_heads, **attn)
        self.post_attention_layernorm = norm(d)
        self.mlp = LlamaMLP(d, ff, act)

    def forward(self, x, cos, sin, cache=None):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, cache)
        return x + self.mlp(self.post_attention_layernorm(x))


class TinyLlama(nn.Module):
    """2 layers, hidden 32, 4 query heads sharing 2 key/value heads (GQA), SwiGLU 48."""
    causal = True

    def __init__(self, d=32, heads=4, kv_heads=2, ff=48, layers=2, theta=10000.0, norm=LlamaRMSNorm, **layer):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, d)
        self.layers = nn.ModuleList(LlamaLayer(d, heads, kv_heads, ff, norm, **layer) for _ in range(layers))
        self.norm = norm(d)
        self.lm_head = nn.Linear(d, VOCAB, bias=False)
        hd = layer.get("head_dim") or d // heads
        self.register_buffer("inv_freq", 1.0 / theta ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd),
                             persistent=False)

    def rotary(self, x, position_ids):
        inv = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        freqs = (inv @ position_ids[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)

    def embed(self, input_ids):
        return self.embed_tokens(input_ids)

    def forward(self, input_ids, caches=None, past=0):
        x = self.embed(input_ids)
        pos = torch.arange(past, past + input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        cos, sin = self.rotary(x, pos.expand(input_ids.shape[0], -1))
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, None if caches is None else caches[i])
        return self.lm_head(self.norm(x))


class TinyQwen2(TinyLlama):
    """Llama with q/k/v biases and rope theta 1e6."""

    def __init__(self):
        super().__init__(theta=1e6, qkv_bias=True)


class TinyMistral(TinyLlama):
    """Llama (GQA 4:2) with a sliding window of 4 tokens: prompts and caches longer than that take the
    explicit-mask SDPA path."""

    def __init__(self):
        super().__init__(window=4)


class TinyGemma(TinyLlama):
    """Multi-query attention (4 query heads, 1 key/value head) of head size 16 (hidden 32), GemmaRMSNorm,
    GeGLU, embeddings scaled by sqrt(hidden), lm_head tied to the embeddings."""

    def __init__(self):
        super().__init__(kv_heads=1, head_dim=16, norm=GemmaRMSNorm, act=gelu_pytorch_tanh)
        self.lm_head.weight = self.embed_tokens.weight

    def embed(self, input_ids):
        x = self.embed_tokens(input_ids)
        return x * torch.tensor(self.embed_tokens.embedding_dim ** 0.5, dtype=x.dtype, device=x.device)


# ------------------------------------------------------------------------------------------------
# GPT-2
# ------------------------------------------------------------------------------------------------

class Conv1D(nn.Module):
    """GPT-2's transposed linear: addmm(bias, x, weight)."""

    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.weight.shape[1],)
        return torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight).view(size_out)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.ln_1 = nn.LayerNorm(d, eps=1e-5)
        self.c_attn = Conv1D(3 * d, d)
        self.c_proj = Conv1D(d, d)
        self.ln_2 = nn.LayerNorm(d, eps=1e-5)
        self.c_fc = Conv1D(4 * d, d)
        self.mlp_proj = Conv1D(d, 4 * d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.h, d // self.h).transpose(1, 2) for z in (q, k, v))
        o = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0, is_causal=True)
        x = x + self.c_proj(o.transpose(1, 2).contiguous().view(b, t, d))
        return x + self.mlp_proj(gelu_new(self.c_fc(self.ln_2(x))))


class TinyGPT2(nn.Module):
    """2 blocks, hidden 32, 4 heads, 16 positions."""
    causal = True

    def __init__(self, d=32, heads=4, layers=2, positions=16):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, d)
        self.wpe = nn.Embedding(positions, d)
        self.h = nn.ModuleList(GPT2Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d, eps=1e-5)

    def forward(self, input_ids, caches=None, past=0):
        pos = torch.arange(0, input_ids.shape[-1], dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)          # lm_head tied to wte


# ------------------------------------------------------------------------------------------------
# BERT
# ------------------------------------------------------------------------------------------------

class BertLayer(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.h = heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.attn_out = nn.Linear(d, d)
        self.attn_norm = nn.LayerNorm(d, eps=1e-12)
        self.intermediate = nn.Linear(d, ff)
        self.output = nn.Linear(ff, d)
        self.out_norm = nn.LayerNorm(d, eps=1e-12)

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = (lin(x).view(b, t, self.h, d // self.h).transpose(1, 2) for lin in (self.query, self.key, self.value))
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.0)
        x = self.attn_norm(self.attn_out(o.transpose(1, 2).reshape(b, t, d)) + x)
        return self.out_norm(self.output(F.gelu(self.intermediate(x))) + x)


class TinyBert(nn.Module):
    """2 layers, hidden 32, 4 heads, 2 token types; the MLM head's decoder tied to the word embeddings."""
    causal = False

    def __init__(self, d=32, heads=4, ff=64, layers=2, positions=16, types=2):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, d, padding_idx=0)
        self.position_embeddings = nn.Embedding(positions, d)
        self.token_type_embeddings = nn.Embedding(types, d)
        self.emb_norm = nn.LayerNorm(d, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(d, heads, ff) for _ in range(layers))
        self.head_dense = nn.Linear(d, d)
        self.head_norm = nn.LayerNorm(d, eps=1e-12)
        self.head_bias = nn.Parameter(torch.zeros(VOCAB))
        self.register_buffer("position_ids", torch.arange(positions).expand((1, -1)), persistent=False)
        self.register_buffer("token_type_ids", torch.zeros(self.position_ids.size(), dtype=torch.long),
                             persistent=False)

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        b, t = input_ids.shape
        position_ids = self.position_ids[:, :t]
        if token_type_ids is None:                  # BertEmbeddings: the buffered zeros, gathered
            buffered = self.token_type_ids.expand(position_ids.shape[0], -1)
            token_type_ids = torch.gather(buffered, dim=1, index=position_ids).expand(b, t)
        x = (self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
             + self.position_embeddings(position_ids))
        x = self.emb_norm(x)
        # _prepare_4d_attention_mask_for_sdpa: [b, 1, t, t] additive, the dtype's minimum where padded
        ext = attention_mask[:, None, None, :].expand(b, 1, t, t).to(x.dtype)
        mask = (1.0 - ext).masked_fill((1.0 - ext).bool(), torch.finfo(x.dtype).min)
        for layer in self.layers:
            x = layer(x, mask)
        h = self.head_norm(F.gelu(self.head_dense(x)))
        return F.linear(h, self.word_embeddings.weight, self.head_bias)


# ------------------------------------------------------------------------------------------------
# T5
# ------------------------------------------------------------------------------------------------

class T5LayerNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        var = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(var + self.eps)
        if self.weight.dtype in (torch.float16, torch.bfloat16):
            x = x.to(self.weight.dtype)
        return self.weight * x


def relative_position_bucket(rel, bidirectional, num_buckets=8, max_distance=16):
    buckets = 0
    if bidirectional:
        num_buckets //= 2
        buckets += (rel > 0).to(torch.long) * num_buckets
        rel = torch.abs(rel)
    else:
        rel = -torch.min(rel, torch.zeros_like(rel))
    max_exact = num_buckets // 2
    is_small = rel < max_exact
    large = max_exact + (torch.log(rel.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return buckets + torch.where(is_small, rel, large)


class T5Attention(nn.Module):
    def __init__(self, d, heads, has_bias, bidirectional):
        super().__init__()
        self.h, self.bidirectional = heads, bidirectional
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.relative_attention_bias = nn.Embedding(8, heads) if has_bias else None

    def bias(self, tq, tk, device):
        ctx = torch.arange(tq, dtype=torch.long, device=device)[:, None]
        mem = torch.arange(tk, dtype=torch.long, device=device)[None, :]
        buckets = relative_position_bucket(mem - ctx, self.bidirectional)
        return self.relative_attention_bias(buckets).permute([2, 0, 1]).unsqueeze(0)

    def forward(self, x, kv, position_bias):
        b, tq, d = x.shape
        tk = kv.shape[1]
        q = self.q(x).view(b, tq, self.h, d // self.h).transpose(1, 2)
        k = self.k(kv).view(b, tk, self.h, d // self.h).transpose(1, 2)
        v = self.v(kv).view(b, tk, self.h, d // self.h).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=position_bias, scale=1.0)
        return self.o(o.transpose(1, 2).reshape(b, tq, d))


class T5Block(nn.Module):
    def __init__(self, d, heads, ff, has_bias, decoder):
        super().__init__()
        self.ln_sa = T5LayerNorm(d)
        self.sa = T5Attention(d, heads, has_bias, bidirectional=not decoder)
        self.ln_ca = T5LayerNorm(d) if decoder else None
        self.ca = T5Attention(d, heads, False, True) if decoder else None
        self.ln_ff = T5LayerNorm(d)
        self.wi = nn.Linear(d, ff, bias=False)
        self.wo = nn.Linear(ff, d, bias=False)

    def forward(self, x, self_bias, enc=None, cross_bias=None):
        h = self.ln_sa(x)
        x = x + self.sa(h, h, self_bias)
        if self.ca is not None:
            x = x + self.ca(self.ln_ca(x), enc, cross_bias)
        return x + self.wo(F.relu(self.wi(self.ln_ff(x))))


class TinyT5(nn.Module):
    """Encoder and decoder of 2 blocks each, hidden 32, 4 heads, 8 relative position buckets."""
    causal = True
    decoder_start = 0

    def __init__(self, d=32, heads=4, ff=64, layers=2):
        super().__init__()
        self.d = d
        self.shared = nn.Embedding(VOCAB, d)
        self.encoder = nn.ModuleList(T5Block(d, heads, ff, i == 0, False) for i in range(layers))
        self.enc_norm = T5LayerNorm(d)
        self.decoder = nn.ModuleList(T5Block(d, heads, ff, i == 0, True) for i in range(layers))
        self.dec_norm = T5LayerNorm(d)

    @staticmethod
    def _mask(attention_mask, dtype, causal_len=None):
        """[b, 1, tq, tk] additive: 0 where attended, the dtype's minimum elsewhere."""
        m = attention_mask[:, None, None, :].bool()
        if causal_len is not None:
            m = m & torch.tril(torch.ones(causal_len, causal_len, dtype=torch.bool, device=m.device))
        add = torch.zeros(m.shape, dtype=dtype, device=m.device).masked_fill(~m, float("-inf"))
        # rows with nothing to attend to (all -inf) would give NaN: transformers unmasks them
        dead = torch.isneginf(add).all(dim=-1, keepdim=True)
        add = add.masked_fill(dead, 0.0)
        return add.clamp(min=torch.finfo(dtype).min)

    def encode(self, input_ids, attention_mask):
        x = self.shared(input_ids)
        t = input_ids.shape[1]
        bias = self.encoder[0].sa.bias(t, t, x.device).to(x.dtype) + self._mask(attention_mask, x.dtype)
        for block in self.encoder:
            x = block(x, bias)
        return self.enc_norm(x)

    def decode(self, dec_ids, enc, attention_mask):
        x = self.shared(dec_ids)
        t = dec_ids.shape[1]
        ones = torch.ones_like(dec_ids)
        self_bias = self.decoder[0].sa.bias(t, t, x.device).to(x.dtype) + self._mask(ones, x.dtype, t)
        cross = self._mask(attention_mask, x.dtype)
        for block in self.decoder:
            x = block(x, self_bias, enc, cross)
        x = self.dec_norm(x) * (self.d ** -0.5)
        return F.linear(x, self.shared.weight)

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        return self.decode(decoder_input_ids, self.encode(input_ids, attention_mask), attention_mask)


# ------------------------------------------------------------------------------------------------
# ResNet
# ------------------------------------------------------------------------------------------------

class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)), inplace=True)
        return F.relu(self.bn2(self.conv2(out)) + idt)


class TinyResNet(nn.Module):
    """Stem 7x7/2 (8 channels), max-pool 3/2, blocks 8 -> 8 and 8 -> 16 (stride 2), avg-pool, fc to 10."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = BasicBlock(8, 8, 1)
        self.layer2 = BasicBlock(8, 16, 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


# ------------------------------------------------------------------------------------------------
# Losses and generation, as transformers computes them
# ------------------------------------------------------------------------------------------------

def causal_lm_loss(logits, labels):
    """ForCausalLMLoss: the labels padded with -100 and shifted, cross_entropy in fp32 ignoring -100."""
    labels = F.pad(labels, (0, 1), value=-100)
    shift = labels[..., 1:].contiguous()
    return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), shift.view(-1), ignore_index=-100)


def masked_lm_loss(logits, labels):
    return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), labels.view(-1), ignore_index=-100)


def stopping_criteria(input_ids, eos, cur_len, max_length):
    """StoppingCriteriaList: MaxLengthCriteria | EosTokenCriteria (isin of the last token)."""
    is_done = torch.full((input_ids.shape[0],), False, device=input_ids.device, dtype=torch.bool)
    is_done = is_done | torch.full((input_ids.shape[0],), cur_len >= max_length, device=input_ids.device,
                                   dtype=torch.bool)
    return is_done | torch.isin(input_ids[:, -1], eos)


def greedy_generate(step, input_ids, new_tokens, eos_token_id, pad_token_id):
    """GenerationMixin._sample with do_sample=False: argmax of the last position's fp32 logits, finished
    rows padded, cat, the stopping criteria (|, ~, &), and the loop ends when no row is unfinished.
    `step(input_ids, cur_len)` gives the logits of the new positions."""
    b = input_ids.shape[0]
    max_length = input_ids.shape[1] + new_tokens
    eos = torch.tensor([eos_token_id], device=input_ids.device)
    unfinished = torch.ones(b, dtype=torch.long, device=input_ids.device)
    this_peer_finished = False
    while not this_peer_finished:
        logits = step(input_ids)
        next_logits = logits[:, -1, :].to(copy=True, dtype=torch.float32)
        next_tokens = torch.argmax(next_logits, dim=-1)
        next_tokens = next_tokens * unfinished + pad_token_id * (1 - unfinished)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        unfinished = unfinished & ~stopping_criteria(input_ids, eos, input_ids.shape[1], max_length)
        this_peer_finished = bool(unfinished.max() == 0)
        if bool((input_ids[:, -1] == eos_token_id).all()):     # every row ended on eos
            this_peer_finished = True
        if not bool(torch.any(unfinished)):
            this_peer_finished = True
    return input_ids
