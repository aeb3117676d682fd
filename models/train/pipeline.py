#!/usr/bin/env python3
"""Run every stage in order under one wall-clock deadline, so that the run always ends with
exported GGUFs and metrics (training stages get whatever time is left).

    python3 models/train/pipeline.py --preset full --work /tmp/lf --js .traindata/js.jsonl.xz \
        --models-out /tmp/lf/models --deadline-s 540
    python3 models/train/pipeline.py --preset tiny --work /tmp/lf-tiny --models-out /tmp/lf-tiny/models

Stages (each also runs alone; see README.md): prepare_data -> train_tokenizer -> build_samples ->
train_target -> distill_draft -> evaluate -> export_gguf (+ export_check).
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import PRESETS  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="full", choices=sorted(PRESETS))
    ap.add_argument("--work", required=True)
    ap.add_argument("--models-out", required=True)
    ap.add_argument("--js", default=None)
    ap.add_argument("--python-site", action="append", default=None)
    ap.add_argument("--deadline-s", type=float, default=None, help="whole pipeline (default: preset's)")
    ap.add_argument("--draft-s", type=float, default=None)
    ap.add_argument("--target-s", type=float, default=None, help="fixed target budget (default: what is left)")
    ap.add_argument("--reserve-s", type=float, default=None, help="time kept for eval + export")
    ap.add_argument("--data-args", default="", help="extra arguments for prepare_data.py")
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    t0 = time.time()
    tiny = args.preset == "tiny"
    deadline = args.deadline_s or (100 if tiny else 500)
    draft_s = args.draft_s or (3 if tiny else 85)
    reserve = args.reserve_s or (35 if tiny else 110)
    pre = PRESETS[args.preset]
    args.work, args.models_out = os.path.abspath(args.work), os.path.abspath(args.models_out)
    args.js = os.path.abspath(args.js) if args.js else None
    args.python_site = [os.path.abspath(s) for s in args.python_site] if args.python_site else None
    W = args.work
    os.makedirs(W, exist_ok=True)
    os.makedirs(args.models_out, exist_ok=True)
    py = sys.executable
    timings = {}

    def stage(name, *cmd):
        t = time.time()
        print(f"=== {name} (t={t - t0:.0f}s)", flush=True)
        r = subprocess.run([py, os.path.join(HERE, cmd[0])] + [str(c) for c in cmd[1:]], cwd=HERE)
        timings[name] = round(time.time() - t, 1)
        if r.returncode != 0:
            raise SystemExit(f"pipeline: stage {name} failed with exit code {r.returncode}")

    data_cmd = ["prepare_data.py", "--out", f"{W}/data", "--seed", args.seed]
    if args.js:
        data_cmd += ["--js", args.js]
    for s in args.python_site or []:
        data_cmd += ["--python-site", s]
    if tiny:
        data_cmd += ["--max-mb-python", 3, "--max-mb-js", 0.5, "--max-mb-per-pkg", 0.5, "--max-heldout-files", 40]
    data_cmd += args.data_args.split()
    stage("prepare_data", *data_cmd)
    stage("train_tokenizer", "train_tokenizer.py", "--data", f"{W}/data", "--out", f"{W}/tokenizer.json",
          "--vocab", pre["vocab_size"], "--sample-mb", pre["tokenizer_sample_mb"], "--seed", args.seed)
    stage("build_samples", "build_samples.py", "--data", f"{W}/data", "--tokenizer", f"{W}/tokenizer.json",
          "--out", f"{W}/samples", "--seed", args.seed)
    left = deadline - (time.time() - t0)
    target_s = args.target_s or (5.0 if tiny else max(5.0, left - draft_s - reserve - 10))
    print(f"pipeline: {left:.0f}s left -> target {target_s:.0f}s, draft {draft_s:.0f}s", flush=True)
    stage("train_target", "train_target.py", "--samples", f"{W}/samples", "--tokenizer", f"{W}/tokenizer.json",
          "--preset", args.preset, "--budget-s", target_s, "--out", f"{W}/target.pt", "--seed", args.seed)
    left = deadline - (time.time() - t0)
    draft_s = min(draft_s, max(3.0, left - reserve))
    stage("distill_draft", "distill_draft.py", "--samples", f"{W}/samples", "--target", f"{W}/target.pt",
          "--preset", args.preset, "--budget-s", draft_s, "--out", f"{W}/draft.pt")
    # export first (so a late failure still leaves files), then check and evaluate
    tgt = os.path.join(args.models_out, "leapfrog-coder.gguf")
    drf = os.path.join(args.models_out, "leapfrog-coder-draft.gguf")
    stage("export_target", "export_gguf.py", "--ckpt", f"{W}/target.pt", "--tokenizer", f"{W}/tokenizer.json",
          "--out", tgt, "--type", "q8_0", "--name", "Leapfrog Coder",
          "--description", "Leapfrog's bundled code model (qwen2 architecture); see models/MODEL_CARD.md")
    stage("export_draft", "export_gguf.py", "--ckpt", f"{W}/draft.pt", "--tokenizer", f"{W}/tokenizer.json",
          "--out", drf, "--type", "q8_0", "--name", "Leapfrog Coder Draft",
          "--description", "Draft model distilled from Leapfrog Coder for speculative decoding")
    stage("export_check_target", "export_check.py", "--gguf", tgt, "--ckpt", f"{W}/target.pt",
          "--tokenizer", f"{W}/tokenizer.json")
    stage("export_check_draft", "export_check.py", "--gguf", drf, "--ckpt", f"{W}/draft.pt",
          "--tokenizer", f"{W}/tokenizer.json")
    stage("evaluate", "evaluate.py", "--data", f"{W}/data", "--samples", f"{W}/samples", "--tokenizer",
          f"{W}/tokenizer.json", "--target", f"{W}/target.pt", "--draft", f"{W}/draft.pt", "--preset", args.preset,
          "--out", f"{W}/metrics.json")
    for f in ("data/data-manifest.json", "samples/samples-stats.json", "metrics.json", "tokenizer.json",
              "samples/instruct_examples.jsonl"):
        if os.path.exists(os.path.join(W, f)):
            shutil.copy(os.path.join(W, f), os.path.join(args.models_out, os.path.basename(f)))
    import json
    with open(os.path.join(args.models_out, "timings.json"), "w") as fh:
        json.dump({"stages_s": timings, "total_s": round(time.time() - t0, 1)}, fh, indent=1)
    print(f"pipeline: done in {time.time() - t0:.0f}s: {timings}", flush=True)


if __name__ == "__main__":
    main()
