#!/usr/bin/env python3
"""Measure training-step throughput of a preset's target (and distillation step of its draft) on
random tokens: a tool for sizing the time budgets, not a stage.

    python3 models/train/bench_step.py --preset full [--compile]
"""
import argparse
import time

import torch
import torch.nn.functional as F

from common import PRESETS
from model import ModelConfig, Qwen2
from trainlib import device_setup, make_optimizer


def bench(model, hp, vocab, dev, amp, steps, teacher=None):
    opt = make_optimizer(model, 1e-4, 0.1, dev)
    x = torch.randint(0, vocab, (hp["batch"], hp["seq"] + 1), device=dev)
    ts = []
    for i in range(steps):
        if dev == "cuda":
            torch.cuda.synchronize()
        t = time.time()
        with torch.autocast(device_type=dev, dtype=amp, enabled=amp is not None):
            logits = model(x[:, :-1]).float().view(-1, vocab)
            if teacher is None:
                loss = F.cross_entropy(logits, x[:, 1:].reshape(-1))
            else:
                with torch.no_grad():
                    tl = F.log_softmax(teacher(x[:, :-1]).float(), -1).view(-1, vocab)
                loss = F.kl_div(F.log_softmax(logits, -1), tl, log_target=True, reduction="batchmean")
        opt.zero_grad()
        loss.backward()
        opt.step()
        if dev == "cuda":
            torch.cuda.synchronize()
        ts.append(time.time() - t)
    steady = sorted(ts[2:])[len(ts[2:]) // 2] if len(ts) > 3 else ts[-1]
    ntok = hp["batch"] * hp["seq"]
    return ts[0], steady, ntok / steady


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="full")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--compile", action="store_true")
    args = ap.parse_args()
    pre = PRESETS[args.preset]
    dev, amp = device_setup(0)
    V = pre["vocab_size"]
    tgt = Qwen2(ModelConfig(vocab_size=V, **pre["target"])).to(dev)
    drf = Qwen2(ModelConfig(vocab_size=V, **pre["draft"])).to(dev)
    print(f"target {tgt.n_params() / 1e6:.2f}M, draft {drf.n_params() / 1e6:.2f}M params")
    m = torch.compile(tgt) if args.compile else tgt
    first, step, tps = bench(m, pre["target_train"], V, dev, amp, args.steps)
    print(f"target: first step {first:.2f}s, steady {step * 1e3:.0f} ms/step, {tps / 1e3:.0f}k tok/s (compile={args.compile})")
    if dev == "cuda":
        print(f"  peak memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")
    tgt.eval()
    first, step, tps = bench(drf, pre["draft_train"], V, dev, amp, args.steps, teacher=tgt)
    print(f"draft distill: first step {first:.2f}s, steady {step * 1e3:.0f} ms/step, {tps / 1e3:.0f}k tok/s")


if __name__ == "__main__":
    main()
