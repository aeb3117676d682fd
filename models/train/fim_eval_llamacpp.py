#!/usr/bin/env python3
"""Exact match of single-line FIM completions, run by llama.cpp (node-llama-cpp) on the shipped
GGUF, for both FIM templates the model was trained on (PSM and SPM):

  PSM: <|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>            -> middle
  SPM: <|fim_prefix|><|fim_suffix|>{suffix}<|fim_middle|>{prefix}            -> middle

    python3 models/train/fim_eval_llamacpp.py --data WORK/data --gguf models/leapfrog-coder.gguf --n 100 --out fim.json
"""
import argparse
import json
import os
import random
import subprocess
import tempfile
import time

from common import read_jsonl, save_json
from evaluate import fim_cases
from gguf_tokenizer import tokenizer_from_gguf

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="folder with heldout.jsonl")
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--n", type=int, default=100, help="cases per cursor mode")
    ap.add_argument("--pre-tok", type=int, default=1024)
    ap.add_argument("--suf-tok", type=int, default=384)
    ap.add_argument("--max-new", type=int, default=40)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=99)
    args = ap.parse_args()
    tok = tokenizer_from_gguf(args.gguf)
    sid = {s: tok.token_to_id(s) for s in ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|endoftext|>")}
    files = list(read_jsonl(os.path.join(args.data, "heldout.jsonl")))
    rng = random.Random(args.seed)
    res = {"gguf": os.path.basename(args.gguf), "runner": "llama.cpp via node-llama-cpp, greedy, CPU"}
    for mode in ("line", "cursor"):
        cases = fim_cases(files, args.n, rng, mode)
        prompts = {"psm": [], "spm": []}
        for prefix, middle, suffix, _ in cases:
            p = tok.encode(prefix[-6000:], add_special_tokens=False).ids[-args.pre_tok:]
            s = tok.encode(suffix[:3000], add_special_tokens=False).ids[:args.suf_tok]
            prompts["psm"].append([sid["<|fim_prefix|>"]] + p + [sid["<|fim_suffix|>"]] + s + [sid["<|fim_middle|>"]])
            prompts["spm"].append([sid["<|fim_prefix|>"], sid["<|fim_suffix|>"]] + s + [sid["<|fim_middle|>"]] + p)
        for fmt, ps in prompts.items():
            with tempfile.TemporaryDirectory() as td:
                inp, outp = os.path.join(td, "in.json"), os.path.join(td, "out.json")
                json.dump({"prompts": ps, "max_new": args.max_new, "stop_at_newline": True}, open(inp, "w"))
                t = time.time()
                subprocess.run(["node", os.path.join(HERE, "llamacpp_greedy.mjs"), args.gguf, inp, outp], check=True)
                outs = json.load(open(outp))["outputs"]
            hits, by_lang, ex = 0, {}, []
            for (prefix, middle, suffix, lang), o in zip(cases, outs):
                got = tok.decode([t for t in o if t != sid["<|endoftext|>"]]).split("\n")[0]
                ok = got.rstrip() == middle.rstrip()
                hits += ok
                b = by_lang.setdefault(lang, [0, 0])
                b[0] += ok
                b[1] += 1
                if len(ex) < 6:
                    ex.append({"lang": lang, "prefix_tail": prefix[-60:], "expected": middle, "got": got, "ok": ok})
            res[f"{fmt}_{mode}"] = {"exact_match": hits / max(1, len(cases)), "n": len(cases),
                                    "by_lang": {k: {"exact_match": v[0] / v[1], "n": v[1]} for k, v in by_lang.items()},
                                    "seconds": round(time.time() - t, 1), "examples": ex}
            print(f"{fmt} {mode}: exact match {hits}/{len(cases)} = {hits / max(1, len(cases)):.3f} "
                  f"{ {k: round(v[0] / v[1], 3) for k, v in by_lang.items()} } ({time.time() - t:.0f}s)", flush=True)
    save_json(res, args.out)


if __name__ == "__main__":
    main()
