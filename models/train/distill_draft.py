#!/usr/bin/env python3
"""Stage 5: distil the draft model from the target: minimise KL(target || draft) over the
next-token distributions on the same token stream, for a wall-clock budget.

    python3 models/train/distill_draft.py --samples WORK/samples --target WORK/target.pt --budget-s 80 --out WORK/draft.pt
"""
import argparse

import torch
import torch.nn.functional as F

from common import PRESETS
from model import ModelConfig, Qwen2
from trainlib import Clock, Windows, device_setup, load_ckpt, lr_at, make_optimizer, save_ckpt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--preset", default="full")
    ap.add_argument("--budget-s", type=float, required=True)
    ap.add_argument("--max-steps", type=int, default=10**9)
    ap.add_argument("--ce-weight", type=float, default=0.1, help="weight of the plain next-token loss")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=4321)
    args = ap.parse_args()
    pre = PRESETS[args.preset]
    dev, amp = device_setup(args.seed)
    teacher, _ = load_ckpt(args.target, dev)
    teacher.eval().requires_grad_(False)
    vocab = teacher.cfg.vocab_size
    cfg = ModelConfig(vocab_size=vocab, **pre["draft"])
    hp = pre["draft_train"]
    model = Qwen2(cfg).to(dev)
    print(f"distill_draft: {model.n_params() / 1e6:.2f}M params, config {cfg.to_dict()}", flush=True)
    opt = make_optimizer(model, hp["lr"], hp["wd"], dev)
    data = Windows(f"{args.samples}/train.bin", hp["seq"], args.seed)
    clock = Clock(args.budget_s)
    step, toks, log = 0, 0, []
    while clock.frac() < 1.0 and step < args.max_steps:
        lr = lr_at(clock.frac(), hp["lr"], hp["warmup_frac"], hp["min_lr_frac"])
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = data.batch(hp["batch"], dev)
        with torch.autocast(device_type=dev, dtype=amp, enabled=amp is not None):
            with torch.no_grad():
                t_logp = F.log_softmax(teacher(x).float(), -1).view(-1, vocab)
            s_logits = model(x).float().view(-1, vocab)
            s_logp = F.log_softmax(s_logits, -1)
            kl = F.kl_div(s_logp, t_logp, log_target=True, reduction="batchmean")
            ce = F.nll_loss(s_logp, y.reshape(-1))
            loss = kl + args.ce_weight * ce
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        toks += x.numel()
        if step % 25 == 0 or step <= 3:
            with torch.no_grad():
                agree = (s_logp.argmax(-1) == t_logp.argmax(-1)).float().mean().item()
            el = clock.elapsed()
            log.append({"step": step, "kl": kl.item(), "ce": ce.item(), "top1_agree": agree, "s": round(el, 1)})
            print(f"  step {step} kl {kl.item():.3f} ce {ce.item():.3f} top1-agree {agree:.3f} lr {lr:.2e} {el:.0f}s", flush=True)
    extra = {"steps": step, "tokens": toks, "seconds": clock.elapsed(), "log": log, "params": model.n_params()}
    save_ckpt(model, args.out, extra)
    print(f"distill_draft: done {step} steps, {toks / 1e6:.1f}M tokens, {clock.elapsed():.0f}s -> {args.out}", flush=True)


if __name__ == "__main__":
    main()
