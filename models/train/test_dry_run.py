#!/usr/bin/env python3
"""Dry run of the whole training recipe on the CPU with the `tiny` preset (< 2 minutes):
data -> tokenizer -> samples -> target -> draft -> GGUF export -> export check -> evaluation,
then checks the GGUF metadata the engine relies on.

Needs only Debian's packages: python3-torch (1.13 is enough), python3-numpy, and python3-regex when
HuggingFace `tokenizers` is not importable (then the pure-Python fallback `bpe_lite.py` is used; see
tok_backend.py). Prints `SKIP: ...` and exits 0 only when torch, numpy or (without tokenizers) regex
is missing; exits non-zero on any failure.

    python3 models/train/test_dry_run.py            (or /usr/bin/python3 on Debian with python3-torch)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    try:
        import torch  # noqa: F401
        import numpy  # noqa: F401
    except Exception as e:  # noqa: BLE001
        print(f"SKIP: models/train dry run needs torch and numpy ({type(e).__name__}: {e})")
        return 0
    sys.path.insert(0, HERE)
    try:
        import tok_backend
    except Exception as e:  # noqa: BLE001
        print(f"SKIP: models/train dry run needs tokenizers or the regex module ({type(e).__name__}: {e})")
        return 0
    backend = tok_backend.BACKEND
    print(f"models/train dry run: torch {torch.__version__}, tokenizer implementation: {backend}"
          + (" (pure-Python fallback bpe_lite.py)" if backend == "bpe_lite" else " (HuggingFace)"), flush=True)
    t0 = time.time()
    work = tempfile.mkdtemp(prefix="leapfrog-dryrun-")
    try:
        site_dir = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))
        cmd = [sys.executable, os.path.join(HERE, "pipeline.py"), "--preset", "tiny", "--work", work,
               "--models-out", os.path.join(work, "models"), "--python-site", site_dir,
               "--data-args", "--heldout-python click,six,idna --max-mb-python 1.5"]
        js = os.path.join(HERE, "..", "..", ".traindata", "js.jsonl.xz")
        if os.path.isfile(js):
            cmd += ["--js", js]
        r = subprocess.run(cmd, cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            print(r.stdout[-6000:])
            print(f"FAIL: pipeline exited with {r.returncode}")
            return 1
        import json
        import gguf_io as G
        problems = []
        for name in ("leapfrog-coder.gguf", "leapfrog-coder-draft.gguf"):
            path = os.path.join(work, "models", name)
            kv, tensors, types = G.read_gguf(path)
            want = {"general.architecture": "qwen2", "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "qwen2",
                    "tokenizer.ggml.add_bos_token": False, "qwen2.context_length": 2048}
            for k, v in want.items():
                if kv.get(k) != v:
                    problems.append(f"{name}: {k} = {kv.get(k)!r}, want {v!r}")
            toks = kv["tokenizer.ggml.tokens"]
            for key, s in [("eos_token_id", "<|endoftext|>"), ("fim_pre_token_id", "<|fim_prefix|>"),
                           ("fim_suf_token_id", "<|fim_suffix|>"), ("fim_mid_token_id", "<|fim_middle|>"),
                           ("fim_pad_token_id", "<|fim_pad|>"), ("fim_rep_token_id", "<|repo_name|>"),
                           ("fim_sep_token_id", "<|file_sep|>")]:
                i = kv.get(f"tokenizer.ggml.{key}")
                if i is None or toks[i] != s or kv["tokenizer.ggml.token_type"][i] != 3:
                    problems.append(f"{name}: {key} does not name {s} as a control token")
            if "output.weight" in tensors or "token_embd.weight" not in tensors:
                problems.append(f"{name}: expected tied embeddings (token_embd.weight, no output.weight)")
            if "tokenizer.chat_template" not in kv:
                problems.append(f"{name}: no chat template")
        m = json.load(open(os.path.join(work, "metrics.json")))
        for k in ("heldout_loss_target", "heldout_loss_draft", "fim_exact_match_line", "acceptance"):
            if k not in m:
                problems.append(f"metrics.json lacks {k}")
        if set(m.get("acceptance", {})) != {"4", "8", "16", "32"}:
            problems.append("acceptance figures missing")
        if problems:
            print("\n".join(problems))
            print("FAIL: models/train dry run")
            return 1
        print(f"PASS: models/train dry run [{backend}, torch {torch.__version__}] in {time.time() - t0:.0f}s (held-out loss {m['heldout_loss_target']:.2f}, "
              f"GGUFs load back, metadata complete)")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
