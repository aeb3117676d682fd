#!/usr/bin/env python3
"""Stage 2: train the byte-level BPE tokenizer (qwen2 pre-tokenizer regex, Qwen2.5-Coder specials).

    python3 models/train/train_tokenizer.py --data WORK/data --out WORK/tokenizer.json --vocab 24576
"""
import argparse
import random
import time

import tok_backend
from tok_backend import Tokenizer, Regex, decoders, models, pre_tokenizers, trainers

from common import QWEN2_SPLIT, SPECIAL_TOKENS, read_jsonl


def build_empty():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    return tok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--vocab", type=int, default=24576)
    ap.add_argument("--sample-mb", type=float, default=40)
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    t0 = time.time()
    recs = list(read_jsonl(f"{args.data}/train.jsonl"))
    random.Random(args.seed).shuffle(recs)
    texts, tot = [], 0
    for r in recs:
        if tot > args.sample_mb * 1e6:
            break
        texts.append(r["text"])
        tot += len(r["text"])
    tok = build_empty()
    trainer = trainers.BpeTrainer(vocab_size=args.vocab, min_frequency=2, show_progress=False,
                                  special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer=trainer, length=len(texts))
    tok.save(args.out)
    sample = "def add(a, b):\n    return a + b  # 12345\n"
    enc = tok.encode(sample)
    assert tok.decode(enc.ids) == sample, "round trip failed"
    print(f"train_tokenizer: [{tok_backend.BACKEND}] vocab {tok.get_vocab_size()} from {tot / 1e6:.1f} MB, {time.time() - t0:.1f}s; "
          f"sample -> {len(enc.ids)} tokens {enc.tokens}")


if __name__ == "__main__":
    main()
