"""Rebuild the HuggingFace tokenizer from a GGUF's tokenizer metadata (gpt2 model, qwen2
pre-tokenizer): proves the GGUF holds everything needed, and lets evaluation run from the
shipped files alone.

    python3 models/train/gguf_tokenizer.py models/leapfrog-coder.gguf OUT/tokenizer.json
"""
import sys

from tok_backend import AddedToken, Tokenizer, models

import gguf_io as G
from train_tokenizer import build_empty


def tokenizer_from_kv(kv):
    assert kv["tokenizer.ggml.model"] == "gpt2" and kv["tokenizer.ggml.pre"] == "qwen2"
    toks = kv["tokenizer.ggml.tokens"]
    types = kv["tokenizer.ggml.token_type"]
    vocab = {t: i for i, t in enumerate(toks)}
    merges = [tuple(m.split(" ", 1)) for m in kv["tokenizer.ggml.merges"]]
    tok = build_empty()
    tok.model = models.BPE(vocab=vocab, merges=merges)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t, ty in zip(toks, types) if ty == 3])
    return tok


def tokenizer_from_gguf(path):
    kv = G.read_gguf(path, tensors=False)[0]
    return tokenizer_from_kv(kv)


if __name__ == "__main__":
    tokenizer_from_gguf(sys.argv[1]).save(sys.argv[2])
