#!/usr/bin/env python3
"""Stage 3: turn source files into training samples and token streams.

Each file is cut into chunks of <= --chunk-chars (at line boundaries).  A chunk becomes, with
probability --fim-rate, a fill-in-the-middle sample (half PSM, half SPM; the middle is half the
time the rest of one line, half the time a random span), else plain next-token text (20% of files
open with `<|repo_name|>pkg\n<|file_sep|>path\n`).  Documented functions/classes also give ChatML
instruction samples (explain: code -> its docstring/JSDoc; write: docstring -> code).

Formats (token ids for the specials, never their text):
  PSM: <|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>{middle}<|endoftext|>
  SPM: <|fim_prefix|><|fim_suffix|>{suffix}<|fim_middle|>{prefix}{middle}<|endoftext|>
  chat: <|im_start|>system\n...<|im_end|>\n<|im_start|>user\n{q}<|im_end|>\n<|im_start|>assistant\n{a}<|im_end|>\n<|endoftext|>

Writes OUT/train.bin and OUT/heldout.bin (uint16 token streams; heldout is plain text only),
OUT/instruct_examples.jsonl (a few examples) and OUT/samples-stats.json.
"""
import argparse
import ast
import inspect
import json
import multiprocessing as mp
import os
import random
import re
import time

import numpy as np
from tok_backend import Tokenizer

from common import SPECIAL_TOKENS, SYSTEM_PROMPT, read_jsonl, save_json

P, S, M, EOT = "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|endoftext|>"
IMS, IME, REPO, FSEP = "<|im_start|>", "<|im_end|>", "<|repo_name|>", "<|file_sep|>"


def chunks_of(text, limit, rng):
    lines = text.splitlines(keepends=True)
    out, cur, n = [], [], 0
    for ln in lines:
        if n + len(ln) > limit and cur:
            out.append("".join(cur))
            cur, n = [], 0
        cur.append(ln)
        n += len(ln)
    if cur:
        out.append("".join(cur))
    return out


def fim_split(chunk, rng):
    """Return (prefix, middle, suffix)."""
    if rng.random() < 0.5:  # rest of one line (what inline completion asks most)
        starts = [m.start() for m in re.finditer(r"(?m)^[ \t]*\S", chunk)]
        if starts:
            ls = rng.choice(starts)
            le = chunk.find("\n", ls)
            le = len(chunk) if le < 0 else le
            content = ls + (len(chunk[ls:le]) - len(chunk[ls:le].lstrip()))
            if le > content:
                cur = content if rng.random() < 0.3 else rng.randint(content, le - 1)
                end = le
                if rng.random() < 0.25:  # sometimes a few whole lines more
                    for _ in range(rng.randint(1, 4)):
                        nxt = chunk.find("\n", end + 1)
                        end = len(chunk) if nxt < 0 else nxt
                return chunk[:cur], chunk[cur:end], chunk[end:]
    a, b = sorted(rng.randint(0, len(chunk)) for _ in range(2))
    return chunk[:a], chunk[a:b], chunk[b:]


def chat(q, a):
    return [IMS, f"system\n{SYSTEM_PROMPT}", IME, "\n", IMS, f"user\n{q}", IME, "\n", IMS, f"assistant\n{a}", IME, "\n", EOT]


def python_instructions(text, rng, max_n):
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    lines = text.splitlines(keepends=True)
    nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    rng.shuffle(nodes)
    out = []
    for n in nodes:
        doc = ast.get_docstring(n)
        if not doc or len(doc) < 30 or not n.body or not hasattr(n, "end_lineno"):
            continue
        first = n.decorator_list[0].lineno if n.decorator_list else n.lineno
        seg_lines = lines[first - 1:n.end_lineno]
        code = "".join(seg_lines)
        if len(code) > 3000 or len(seg_lines) < 3:
            continue
        ind = len(seg_lines[0]) - len(seg_lines[0].lstrip())
        code = "".join(l[ind:] if l[:ind].strip() == "" else l for l in seg_lines).rstrip() + "\n"
        d0 = n.body[0]
        nodoc = "".join(lines[first - 1:d0.lineno - 1] + lines[d0.end_lineno:n.end_lineno])
        nodoc = "".join(l[ind:] if l[:ind].strip() == "" else l for l in nodoc.splitlines(keepends=True)).rstrip()
        if len(nodoc.splitlines()) < 2:
            continue
        doc = inspect.cleandoc(doc)
        summary = doc.split("\n\n")[0].strip()
        kind = "class" if isinstance(n, ast.ClassDef) else "function"
        if rng.random() < 0.5:
            q = rng.choice(["Explain this code:", "What does this code do?", "Explain the following Python " + kind + "."])
            a = f"`{n.name}` is a Python {kind}. {doc}"
            out.append(chat(f"{q}\n```python\n{nodoc}\n```", a))
        else:
            sig = lines[n.lineno - 1].strip().rstrip(":")
            q = f"Write a Python {kind} `{n.name}`.\n{summary}" if rng.random() < 0.5 else \
                f"Write a Python {kind} with the signature `{sig}`:\n{doc}"
            out.append(chat(q, f"```python\n{code}```"))
        if len(out) >= max_n:
            break
    return out


JSDOC = re.compile(r"/\*\*((?:(?!\*/)[\s\S]){20,1500})\*/[ \t]*\n([ \t]*)((?:export\s+)?(?:default\s+)?(?:async\s+)?"
                   r"(?:function\*?\s+(\w+)|class\s+(\w+)|(?:const|let)\s+(\w+)\s*=\s*(?:async\s*)?\(|"
                   r"(?:public\s+|private\s+|protected\s+|static\s+)*(\w+)\s*\([^)]*\)\s*(?::[^{;]+)?\{))")


def js_instructions(text, lang, rng, max_n):
    out = []
    fence = "ts" if lang == "typescript" else "js"
    for m in JSDOC.finditer(text):
        name = next((g for g in m.groups()[3:] if g), None)
        if not name or name in ("if", "for", "while", "switch", "catch", "return", "constructor"):
            continue
        body_start = m.start(3)
        depth, i, seen_brace = 0, body_start, False
        end = None
        while i < len(text) and i - body_start < 3000:
            c = text[i]
            if c == "{":
                depth += 1
                seen_brace = True
            elif c == "}":
                depth -= 1
                if seen_brace and depth == 0:
                    end = i + 1
                    break
            i += 1
        if end is None:
            continue
        ind = len(m.group(2))
        code_lines = (" " * ind + text[body_start:end]).splitlines()
        code = "\n".join(l[ind:] if l[:ind].strip() == "" else l for l in code_lines)
        if len(code_lines) < 3:
            continue
        doc_lines = [re.sub(r"^\s*\* ?", "", l) for l in m.group(1).splitlines()]
        doc = "\n".join(doc_lines).strip()
        desc = re.split(r"\n\s*@", "\n" + doc)[0].strip() if not doc.startswith("@") else ""
        if len(desc) < 20:
            continue
        if rng.random() < 0.5:
            q = rng.choice(["Explain this code:", "What does this code do?"])
            out.append(chat(f"{q}\n```{fence}\n{code}\n```", f"`{name}`: {doc}"))
        else:
            lname = "TypeScript" if lang == "typescript" else "JavaScript"
            out.append(chat(f"Write a {lname} function `{name}`.\n{desc}", f"```{fence}\n{code}\n```"))
        if len(out) >= max_n:
            break
    return out


def file_samples(args):
    rec, seed, fim_rate, chunk_chars, instr_rate = args
    rng = random.Random(seed)
    text = rec["text"]
    if any(s in text for s in SPECIAL_TOKENS):
        return [], {}
    samples = []
    stats = {"plain": 0, "psm": 0, "spm": 0, "chat": 0}
    plain = []
    if rng.random() < 0.2:
        plain += [REPO, f"{rec['pkg']}\n", FSEP, f"{rec['path']}\n"]
    for ch in chunks_of(text, chunk_chars, rng):
        if rng.random() < fim_rate and len(ch) > 50:
            pre, mid, suf = fim_split(ch, rng)
            if rng.random() < 0.5:
                samples.append([P, pre, S, suf, M, mid, EOT])
                stats["psm"] += 1
            else:
                samples.append([P, S, suf, M, pre, mid, EOT])
                stats["spm"] += 1
        else:
            plain.append(ch)
            stats["plain"] += 1
    if len(plain) > (4 if plain and plain[0] == REPO else 0):
        samples.append(plain + [EOT])
    if rng.random() < instr_rate:
        if rec["lang"] == "python":
            ins = python_instructions(text, rng, 2)
        else:
            ins = js_instructions(text, rec["lang"], rng, 2)
        samples += ins
        stats["chat"] += len(ins)
    return samples, stats


def encode_samples(tok, samples, sid):
    """samples: lists of pieces (special-token strings become their ids, other text is encoded)."""
    texts = [p for s in samples for p in s if p not in sid and p]
    encs = tok.encode_batch(texts, add_special_tokens=False)
    it = iter(encs)
    out = []
    for s in samples:
        ids = []
        for p in s:
            if p in sid:
                ids.append(sid[p])
            elif p:
                ids.extend(next(it).ids)
        out.append(ids)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--fim-rate", type=float, default=0.5)
    ap.add_argument("--instr-rate", type=float, default=0.35, help="share of files mined for instruction pairs")
    ap.add_argument("--chunk-chars", type=int, default=6000)
    ap.add_argument("--workers", type=int, default=min(16, os.cpu_count() or 1))
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    t0 = time.time()
    tok = Tokenizer.from_file(args.tokenizer)
    sid = {s: tok.token_to_id(s) for s in SPECIAL_TOKENS}
    assert max(sid.values()) < 65536 and tok.get_vocab_size() <= 65536
    os.makedirs(args.out, exist_ok=True)
    recs = list(read_jsonl(os.path.join(args.data, "train.jsonl")))
    work = [(r, args.seed * 1000003 + i, args.fim_rate, args.chunk_chars, args.instr_rate) for i, r in enumerate(recs)]
    totals = {"plain": 0, "psm": 0, "spm": 0, "chat": 0}
    stream = []
    n_tok = {"fim": 0, "plain": 0, "chat": 0}
    examples = []
    rng = random.Random(args.seed)
    with mp.Pool(args.workers) as pool:
        batch = []
        for samples, st in pool.imap(file_samples, work, chunksize=64):
            for k, v in st.items():
                totals[k] += v
            batch += samples
            if len(batch) >= 4000:
                stream += _flush(tok, batch, sid, n_tok, examples, rng)
                batch = []
        stream += _flush(tok, batch, sid, n_tok, examples, rng)
    order = list(range(len(stream)))
    rng.shuffle(order)  # interleave sample kinds and files
    arr = np.concatenate([stream[i] for i in order]) if stream else np.zeros(0, np.uint16)
    arr.tofile(os.path.join(args.out, "train.bin"))
    # held-out stream: plain files (for held-out loss)
    held = list(read_jsonl(os.path.join(args.data, "heldout.jsonl")))
    held_ids = encode_samples(tok, [[r["text"], EOT] for r in held if not any(s in r["text"] for s in SPECIAL_TOKENS)], sid)
    harr = np.fromiter((t for s in held_ids for t in s), dtype=np.uint16)
    harr.tofile(os.path.join(args.out, "heldout.bin"))
    with open(os.path.join(args.out, "instruct_examples.jsonl"), "w") as f:
        for e in examples[:20]:
            f.write(json.dumps({"text": e}) + "\n")
    chars = sum(len(r["text"]) for r in recs)
    stats = {"train_tokens": int(arr.size), "heldout_tokens": int(harr.size), "samples": totals,
             "tokens_by_kind": n_tok, "train_chars": chars, "chars_per_token": chars / max(1, arr.size),
             "seconds": time.time() - t0}
    save_json(stats, os.path.join(args.out, "samples-stats.json"))
    print("build_samples:", json.dumps(stats))


def _flush(tok, batch, sid, n_tok, examples, rng):
    ids = encode_samples(tok, batch, sid)
    for s, i in zip(batch, ids):
        kind = "chat" if s[0] == IMS else "fim" if s[0] == P else "plain"
        n_tok[kind] += len(i)
        if kind == "chat" and len(examples) < 20 and rng.random() < 0.05:
            examples.append("".join(s))
    return [np.asarray(i, dtype=np.uint16) for i in ids]


if __name__ == "__main__":
    main()
