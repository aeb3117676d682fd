#!/usr/bin/env python3
"""Check a GGUF written by export_gguf.py: read it back with an independent reader, rebuild the
PyTorch model from the GGUF tensors (dequantised), and compare with the checkpoint: greedy tokens
on a prompt and the max logit difference.  Also checks the tokenizer metadata against tokenizer.json.

    python3 models/train/export_check.py --gguf models/leapfrog-coder.gguf --ckpt WORK/target.pt --tokenizer WORK/tokenizer.json
"""
import argparse
import json
import sys

import numpy as np
import torch
from tok_backend import Tokenizer

import gguf_io as G
from export_gguf import LAYER_MAP, NAME_MAP
from model import ModelConfig, Qwen2, greedy_generate

INV = {v: k for k, v in NAME_MAP.items()}
INV_L = {v: k for k, v in LAYER_MAP.items()}


def model_from_gguf(path):
    kv, tensors, types = G.read_gguf(path)
    a = kv["general.architecture"]
    assert a == "qwen2", a
    cfg = ModelConfig(vocab_size=len(kv["tokenizer.ggml.tokens"]), hidden=kv[f"{a}.embedding_length"],
                      layers=kv[f"{a}.block_count"], heads=kv[f"{a}.attention.head_count"],
                      kv_heads=kv[f"{a}.attention.head_count_kv"], ffn=kv[f"{a}.feed_forward_length"],
                      context=kv[f"{a}.context_length"], rope_theta=kv[f"{a}.rope.freq_base"],
                      rms_eps=kv[f"{a}.attention.layer_norm_rms_epsilon"],
                      tie_embeddings="output.weight" not in tensors)
    m = Qwen2(cfg)
    sd = {}
    for name, arr in tensors.items():
        if name in INV:
            sd[INV[name]] = torch.from_numpy(arr.copy())
        else:
            _, i, rest = name.split(".", 2)
            sd[f"layers.{i}.{INV_L[rest]}"] = torch.from_numpy(arr.copy())
    m.load_state_dict(sd)
    return m.eval(), kv, types


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--prompt", default="import os\n\n\ndef read_lines(path):\n")
    ap.add_argument("--n", type=int, default=24)
    args = ap.parse_args()
    from trainlib import load_ckpt
    ref, _ = load_ckpt(args.ckpt, "cpu")
    ref.eval()
    m, kv, types = model_from_gguf(args.gguf)
    tok = Tokenizer.from_file(args.tokenizer)
    tj = json.load(open(args.tokenizer))
    vocab = tok.get_vocab(with_added_tokens=True)
    toks = kv["tokenizer.ggml.tokens"]
    assert all(vocab[t] == i for i, t in enumerate(toks)), "token table mismatch"
    assert len(kv["tokenizer.ggml.merges"]) == len(tj["model"]["merges"])
    for key in ["eos_token_id", "fim_pre_token_id", "fim_suf_token_id", "fim_mid_token_id"]:
        assert f"tokenizer.ggml.{key}" in kv, key
    ids = tok.encode(args.prompt).ids
    with torch.no_grad():
        x = torch.tensor([ids])
        diff = (ref(x) - m(x)).abs().max().item()
        scale = ref(x).abs().max().item()
    g_ref = greedy_generate(ref, [ids], args.n, 0)[0]
    g_gguf = greedy_generate(m, [ids], args.n, 0)[0]
    same = sum(1 for a, b in zip(g_ref, g_gguf) if a == b)
    agree = next((i for i, (a, b) in enumerate(zip(g_ref, g_gguf)) if a != b), len(g_ref))
    print(f"export_check: {args.gguf}: {len(types)} tensors, types {sorted(set(types.values()))}, "
          f"max |logit diff| {diff:.4f} (max |logit| {scale:.2f}), greedy agreement {agree}/{len(g_ref)} "
          f"(checkpoint: {tok.decode(g_ref)!r}; gguf: {tok.decode(g_gguf)!r})")
    if diff > 0.05 * max(1.0, scale) + 0.5:
        print("export_check: FAIL: logits differ too much", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
