"""A Qwen2-architecture decoder in plain PyTorch, with exactly llama.cpp's `qwen2` semantics:

RMSNorm (weight only), NeoX-style RoPE ("rotate_half": pairs (i, i + d/2)), grouped-query
attention with biases on q/k/v only, SwiGLU MLP down(silu(gate(x)) * up(x)), tied or untied
output head.  head_dim = hidden / heads.  Works with torch 1.13 (CPU dry run) and 2.x.
"""
import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ModelConfig:
    vocab_size: int = 24576
    hidden: int = 512
    layers: int = 10
    heads: int = 8
    kv_heads: int = 2
    ffn: int = 1536
    context: int = 2048
    rope_theta: float = 10000.0
    rms_eps: float = 1e-6
    tie_embeddings: bool = True

    @property
    def head_dim(self):
        return self.hidden // self.heads

    def to_dict(self):
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (xf * self.weight.float()).to(x.dtype)


def rope_cache(cfg, positions, device):
    hd = cfg.head_dim
    inv = 1.0 / (cfg.rope_theta ** (torch.arange(0, hd, 2, device=device, dtype=torch.float32) / hd))
    ang = positions.float()[..., None] * inv  # [..., T, hd/2]
    ang = torch.cat([ang, ang], dim=-1)
    return ang.cos(), ang.sin()


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


_HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        hd = cfg.head_dim
        self.q_proj = nn.Linear(cfg.hidden, cfg.heads * hd, bias=True)
        self.k_proj = nn.Linear(cfg.hidden, cfg.kv_heads * hd, bias=True)
        self.v_proj = nn.Linear(cfg.hidden, cfg.kv_heads * hd, bias=True)
        self.o_proj = nn.Linear(cfg.heads * hd, cfg.hidden, bias=False)

    def forward(self, x, cos, sin, mask):
        B, T, _ = x.shape
        c = self.cfg
        hd = c.head_dim
        q = self.q_proj(x).view(B, T, c.heads, hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, c.kv_heads, hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, c.kv_heads, hd).transpose(1, 2)
        cos = cos.to(q.dtype)
        sin = sin.to(q.dtype)
        if cos.dim() == 3:  # per-batch positions [B, T, hd]
            cos, sin = cos[:, None], sin[:, None]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = c.heads // c.kv_heads
        if rep > 1:
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        if _HAS_SDPA:
            if mask is None:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        else:
            att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
            if mask is None:
                mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
            att = att.masked_fill(~mask, float("-inf")).softmax(-1)
            y = att @ v
        return self.o_proj(y.transpose(1, 2).reshape(B, T, c.heads * hd))


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden, cfg.ffn, bias=False)
        self.up_proj = nn.Linear(cfg.hidden, cfg.ffn, bias=False)
        self.down_proj = nn.Linear(cfg.ffn, cfg.hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden, cfg.rms_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden, cfg.rms_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin, mask):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class Qwen2(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden)
        self.layers = nn.ModuleList([Block(cfg) for _ in range(cfg.layers)])
        self.norm = RMSNorm(cfg.hidden, cfg.rms_eps)
        self.lm_head = None if cfg.tie_embeddings else nn.Linear(cfg.hidden, cfg.vocab_size, bias=False)
        self.apply(self._init)
        for n, p in self.named_parameters():  # scaled init of residual projections
            if n.endswith("o_proj.weight") or n.endswith("down_proj.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * cfg.layers))

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def n_params(self):
        return sum(p.numel() for p in self.parameters())

    def hidden_states(self, idx, positions=None, mask=None):
        """idx [B, T]; positions [T] or [B, T]; mask: bool [B, 1, T, T] (True = attend) or None (causal)."""
        B, T = idx.shape
        if positions is None:
            positions = torch.arange(T, device=idx.device)
        cos, sin = rope_cache(self.cfg, positions, idx.device)
        x = self.embed_tokens(idx)
        for blk in self.layers:
            x = blk(x, cos, sin, mask)
        return self.norm(x)

    def head(self, h):
        w = self.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
        return h @ w.to(h.dtype).t()

    def forward(self, idx, positions=None, mask=None):
        return self.head(self.hidden_states(idx, positions, mask))


def left_padded_inputs(seqs, pad_id, device):
    """Batch variable-length sequences with left padding: returns idx, positions, mask."""
    T = max(len(s) for s in seqs)
    B = len(seqs)
    idx = torch.full((B, T), pad_id, dtype=torch.long)
    lens = torch.tensor([len(s) for s in seqs])
    for i, s in enumerate(seqs):
        idx[i, T - len(s):] = torch.tensor(s, dtype=torch.long)
    idx, lens = idx.to(device), lens.to(device)
    ar = torch.arange(T, device=device)
    valid = ar[None, :] >= (T - lens)[:, None]
    pos = (ar[None, :] - (T - lens)[:, None]).clamp(min=0)
    mask = (ar[None, :, None] >= ar[None, None, :]) & valid[:, None, :]
    mask = mask | (ar[:, None] == ar[None, :])[None]  # padded rows attend to themselves (avoid NaN)
    return idx, pos, mask[:, None]


@torch.no_grad()
def greedy_generate(model, seqs, max_new, pad_id, stop_fn=None, device="cpu", amp_dtype=None):
    """Greedy decoding by full recomputation (no KV cache; fine for evaluation sizes)."""
    out = [[] for _ in seqs]
    done = [False] * len(seqs)
    cur = [list(s) for s in seqs]
    for _ in range(max_new):
        idx, pos, mask = left_padded_inputs(cur, pad_id, device)
        with torch.autocast(device_type=device.split(":")[0], dtype=amp_dtype, enabled=amp_dtype is not None):
            h = model.hidden_states(idx, pos, mask)[:, -1]
            logits = model.head(h).float()
        nxt = logits.argmax(-1).tolist()
        for i, t in enumerate(nxt):
            if done[i]:
                continue
            out[i].append(t)
            cur[i].append(t)
            if stop_fn is not None and stop_fn(out[i]):
                done[i] = True
        if all(done):
            break
    return out
