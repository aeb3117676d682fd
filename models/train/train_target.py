#!/usr/bin/env python3
"""Stage 4: train the target model (next-token loss over the NTP/FIM/ChatML token stream)
for a wall-clock budget; the LR schedule follows the elapsed fraction of that budget.

    python3 models/train/train_target.py --samples WORK/samples --preset full --budget-s 300 --out WORK/target.pt
"""
import argparse
import json
import time

import torch
import torch.nn.functional as F
from tok_backend import Tokenizer

from common import PRESETS
from model import ModelConfig, Qwen2
from trainlib import Clock, Windows, device_setup, lr_at, make_optimizer, save_ckpt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--preset", default="full")
    ap.add_argument("--budget-s", type=float, required=True)
    ap.add_argument("--max-steps", type=int, default=10**9)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile (used on CUDA only)")
    args = ap.parse_args()
    pre = PRESETS[args.preset]
    dev, amp = device_setup(args.seed)
    vocab = Tokenizer.from_file(args.tokenizer).get_vocab_size()
    cfg = ModelConfig(vocab_size=vocab, **pre["target"])
    hp = pre["target_train"]
    model = Qwen2(cfg).to(dev)
    print(f"train_target: {model.n_params() / 1e6:.2f}M params, config {cfg.to_dict()}, device {dev}", flush=True)
    opt = make_optimizer(model, hp["lr"], hp["wd"], dev)
    fwd = model
    if dev == "cuda" and not args.no_compile and hasattr(torch, "compile"):
        fwd = torch.compile(model)  # ~1.6x faster steps on an H200 after ~25 s of compilation
    data = Windows(f"{args.samples}/train.bin", hp["seq"], args.seed)
    clock = Clock(args.budget_s)
    step, toks, ema = 0, 0, None
    log = []
    while clock.frac() < 1.0 and step < args.max_steps:
        lr = lr_at(clock.frac(), hp["lr"], hp["warmup_frac"], hp["min_lr_frac"])
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = data.batch(hp["batch"], dev)
        try:
            with torch.autocast(device_type=dev, dtype=amp, enabled=amp is not None):
                logits = fwd(x)
                loss = F.cross_entropy(logits.float().view(-1, vocab), y.reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
        except Exception as e:  # compilation trouble: fall back to eager once
            if fwd is model:
                raise
            print(f"train_target: torch.compile failed ({type(e).__name__}: {e}); continuing eagerly", flush=True)
            fwd = model
            continue
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        toks += x.numel()
        if step % 25 == 0 or step <= 3:
            l = loss.item()
            ema = l if ema is None else 0.9 * ema + 0.1 * l
            el = clock.elapsed()
            log.append({"step": step, "loss": l, "lr": lr, "s": round(el, 1), "tokens": toks})
            print(f"  step {step} loss {l:.3f} lr {lr:.2e} {el:.0f}s {toks / max(el, 1e-9) / 1e3:.0f}k tok/s", flush=True)
    el = clock.elapsed()
    extra = {"steps": step, "tokens": toks, "seconds": el, "final_loss_ema": ema, "log": log,
             "params": model.n_params(), "device": torch.cuda.get_device_name() if dev == "cuda" else "cpu"}
    save_ckpt(model, args.out, extra)
    print(f"train_target: done {step} steps, {toks / 1e6:.1f}M tokens, {el:.0f}s -> {args.out}", flush=True)


if __name__ == "__main__":
    main()
