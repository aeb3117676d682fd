"""Training helpers shared by the target and draft stages: data windows, LR schedule, checkpoints."""
import math
import os
import time

import numpy as np
import torch

from model import ModelConfig, Qwen2


def device_setup(seed):
    torch.manual_seed(seed)
    np.random.seed(seed)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    if dev == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    amp = torch.bfloat16 if dev == "cuda" else None
    return dev, amp


class Windows:
    """Random contiguous windows of seq+1 tokens from a uint16 token stream."""

    def __init__(self, path, seq, seed):
        self.data = np.memmap(path, dtype=np.uint16, mode="r")
        self.seq = seq
        self.rng = np.random.default_rng(seed)
        assert len(self.data) > seq + 1, f"{path}: only {len(self.data)} tokens"

    def batch(self, b, device):
        starts = self.rng.integers(0, len(self.data) - self.seq - 1, size=b)
        x = np.stack([self.data[s:s + self.seq + 1] for s in starts]).astype(np.int64)
        t = torch.from_numpy(x)
        if device == "cuda":
            t = t.pin_memory().to(device, non_blocking=True)
        return t[:, :-1], t[:, 1:]


def lr_at(frac, base, warmup_frac, min_frac):
    """Schedule as a function of the elapsed fraction of the time budget."""
    if frac < warmup_frac:
        return base * max(frac / warmup_frac, 0.02)
    p = min(1.0, (frac - warmup_frac) / max(1e-9, 1 - warmup_frac))
    return base * (min_frac + (1 - min_frac) * 0.5 * (1 + math.cos(math.pi * p)))


def make_optimizer(model, lr, wd, device):
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    kw = {"fused": True} if device == "cuda" else {}
    return torch.optim.AdamW([{"params": decay, "weight_decay": wd}, {"params": no_decay, "weight_decay": 0.0}],
                             lr=lr, betas=(0.9, 0.95), eps=1e-8, **kw)


def save_ckpt(model, path, extra=None):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    sd = {k: v.detach().float().cpu() for k, v in model.state_dict().items()}
    torch.save({"config": model.cfg.to_dict(), "state_dict": sd, "extra": extra or {}}, path)


def load_ckpt(path, device):
    ck = torch.load(path, map_location="cpu")
    model = Qwen2(ModelConfig(**ck["config"]))
    model.load_state_dict(ck["state_dict"])
    return model.to(device), ck.get("extra", {})


class Clock:
    def __init__(self, budget_s):
        self.t0 = time.time()
        self.budget = budget_s

    def frac(self):
        return (time.time() - self.t0) / self.budget

    def elapsed(self):
        return time.time() - self.t0
