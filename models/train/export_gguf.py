#!/usr/bin/env python3
"""Stage 7: write a checkpoint as a llama.cpp `qwen2` GGUF (Q8_0 or F16 weights, F32 norms and
biases, tied embeddings -> no output.weight), with the full byte-level BPE tokenizer metadata.

    python3 models/train/export_gguf.py --ckpt WORK/target.pt --tokenizer WORK/tokenizer.json \
        --out models/leapfrog-coder.gguf --type q8_0 --name "Leapfrog Coder" [--fim-untrained]

--fim-untrained writes `leapfrog.prompt.fim = false`: the vocabulary has FIM tokens but the model
did not learn to use them (its FIM evaluation failed), so Leapfrog prompts it prefix-only. Absent,
the key means true. For a file already written, `set_metadata.py FILE leapfrog.prompt.fim false`
sets it without touching the tensors.
"""
import argparse
import json

import numpy as np
import torch

import gguf_io as G
from common import CHAT_TEMPLATE, SPECIAL_TOKENS

# Leapfrog's own metadata: does the model use its FIM tokens (engine/native/addon.ts fimTrained).
FIM_PROMPT_KEY = "leapfrog.prompt.fim"

NAME_MAP = {
    "embed_tokens.weight": "token_embd.weight",
    "norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
}
LAYER_MAP = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight", "self_attn.q_proj.bias": "attn_q.bias",
    "self_attn.k_proj.weight": "attn_k.weight", "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.weight": "attn_v.weight", "self_attn.v_proj.bias": "attn_v.bias",
    "self_attn.o_proj.weight": "attn_output.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}


def gguf_name(k):
    if k in NAME_MAP:
        return NAME_MAP[k]
    _, i, rest = k.split(".", 2)
    return f"blk.{i}.{LAYER_MAP[rest]}"


def tokenizer_kv(w, tok_json_path):
    tj = json.load(open(tok_json_path, encoding="utf-8"))
    vocab = dict(tj["model"]["vocab"])
    for at in tj.get("added_tokens", []):
        vocab[at["content"]] = at["id"]
    n = max(vocab.values()) + 1
    tokens = [None] * n
    for t, i in vocab.items():
        tokens[i] = t
    assert all(t is not None for t in tokens), "vocabulary ids are not contiguous"
    merges = [m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]]
    ids = {s: vocab[s] for s in SPECIAL_TOKENS}
    ttype = [3 if t in ids else 1 for t in tokens]
    w.add("tokenizer.ggml.model", G.STR, "gpt2")
    w.add("tokenizer.ggml.pre", G.STR, "qwen2")
    w.add("tokenizer.ggml.tokens", G.ARR, tokens, G.STR)
    w.add("tokenizer.ggml.token_type", G.ARR, ttype, G.I32)
    w.add("tokenizer.ggml.merges", G.ARR, merges, G.STR)
    w.add("tokenizer.ggml.eos_token_id", G.U32, ids["<|endoftext|>"])
    w.add("tokenizer.ggml.bos_token_id", G.U32, ids["<|endoftext|>"])
    w.add("tokenizer.ggml.padding_token_id", G.U32, ids["<|endoftext|>"])
    w.add("tokenizer.ggml.add_bos_token", G.BOOL, False)
    w.add("tokenizer.ggml.add_eos_token", G.BOOL, False)
    w.add("tokenizer.ggml.fim_pre_token_id", G.U32, ids["<|fim_prefix|>"])
    w.add("tokenizer.ggml.fim_suf_token_id", G.U32, ids["<|fim_suffix|>"])
    w.add("tokenizer.ggml.fim_mid_token_id", G.U32, ids["<|fim_middle|>"])
    w.add("tokenizer.ggml.fim_pad_token_id", G.U32, ids["<|fim_pad|>"])
    w.add("tokenizer.ggml.fim_rep_token_id", G.U32, ids["<|repo_name|>"])
    w.add("tokenizer.ggml.fim_sep_token_id", G.U32, ids["<|file_sep|>"])
    w.add("tokenizer.chat_template", G.STR, CHAT_TEMPLATE)
    return n


def export(ckpt_path, tok_path, out, wtype, name, description="", fim_trained=True):
    ck = torch.load(ckpt_path, map_location="cpu")
    cfg = ck["config"]
    w = G.GGUFWriter()
    w.add("general.architecture", G.STR, "qwen2")
    w.add("general.alignment", G.U32, G.ALIGN)
    w.add("general.name", G.STR, name)
    if description:
        w.add("general.description", G.STR, description)
    w.add("general.file_type", G.U32, 7 if wtype == "q8_0" else 1)
    w.add("general.quantization_version", G.U32, 2)
    w.add("qwen2.context_length", G.U32, cfg["context"])
    w.add("qwen2.embedding_length", G.U32, cfg["hidden"])
    w.add("qwen2.block_count", G.U32, cfg["layers"])
    w.add("qwen2.feed_forward_length", G.U32, cfg["ffn"])
    w.add("qwen2.attention.head_count", G.U32, cfg["heads"])
    w.add("qwen2.attention.head_count_kv", G.U32, cfg["kv_heads"])
    w.add("qwen2.rope.freq_base", G.F32, float(cfg["rope_theta"]))
    w.add("qwen2.attention.layer_norm_rms_epsilon", G.F32, float(cfg["rms_eps"]))
    n_vocab = tokenizer_kv(w, tok_path)
    if not fim_trained:
        w.add(FIM_PROMPT_KEY, G.BOOL, False)
    assert n_vocab == cfg["vocab_size"], (n_vocab, cfg["vocab_size"])
    sd = ck["state_dict"]
    order = ["embed_tokens.weight"] + [k for k in sd if k.startswith("layers.")] + ["norm.weight"] + \
            (["lm_head.weight"] if "lm_head.weight" in sd else [])
    qtype = G.GGML_Q8_0 if wtype == "q8_0" else G.GGML_F16
    for k in order:
        a = sd[k].float().numpy()
        t = qtype if a.ndim == 2 else G.GGML_F32
        w.add_tensor(gguf_name(k), a, t)
    w.write(out)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--type", choices=["q8_0", "f16"], default="q8_0")
    ap.add_argument("--name", default="Leapfrog Coder")
    ap.add_argument("--description", default="")
    ap.add_argument("--fim-untrained", action="store_true",
                    help=f"write {FIM_PROMPT_KEY} = false (the FIM evaluation failed)")
    args = ap.parse_args()
    export(args.ckpt, args.tokenizer, args.out, args.type, args.name, args.description,
           fim_trained=not args.fim_untrained)
    import os
    print(f"export_gguf: {args.out} {os.path.getsize(args.out) / 1e6:.2f} MB ({args.type})")


if __name__ == "__main__":
    main()
