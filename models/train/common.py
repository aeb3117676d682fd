"""Shared constants: special tokens, FIM/ChatML formats, presets, the token stream format."""
import json
import os

SPECIAL_TOKENS = ["<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
                  "<|repo_name|>", "<|file_sep|>", "<|im_start|>", "<|im_end|>"]

# Qwen2's pre-tokenizer split regex (llama.cpp LLAMA_VOCAB_PRE_TYPE_QWEN2); single digits.
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")

SYSTEM_PROMPT = "You are Leapfrog, a helpful coding assistant."

# ChatML, as Qwen2.5's template but simpler: default system message, no tools.
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{%- if loop.first and message['role'] != 'system' %}"
    "{{- '<|im_start|>system\\n" + SYSTEM_PROMPT + "<|im_end|>\\n' }}"
    "{%- endif %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

# Presets: model shapes and stage budgets. `tiny` is the CPU dry run used by the tests.
PRESETS = {
    "full": {
        "vocab_size": 24576,
        "tokenizer_sample_mb": 40,
        "target": dict(hidden=512, layers=10, heads=8, kv_heads=2, ffn=1536, context=2048,
                       rope_theta=10000.0, rms_eps=1e-6, tie_embeddings=True),
        "draft": dict(hidden=256, layers=4, heads=4, kv_heads=2, ffn=768, context=2048,
                      rope_theta=10000.0, rms_eps=1e-6, tie_embeddings=True),
        "target_train": dict(batch=64, seq=2048, lr=1.5e-3, min_lr_frac=0.1, warmup_frac=0.04, wd=0.1),
        "draft_train": dict(batch=32, seq=2048, lr=3e-3, min_lr_frac=0.1, warmup_frac=0.05, wd=0.05),
        "eval": dict(loss_windows=256, fim_samples=400, fim_pre_tok=1024, fim_suf_tok=384, fim_max_new=48,
                     accept_prompts=64, accept_prompt_len=384, accept_gen=128),
    },
    "tiny": {
        "vocab_size": 512,
        "tokenizer_sample_mb": 2,
        "target": dict(hidden=64, layers=2, heads=4, kv_heads=2, ffn=128, context=2048,
                       rope_theta=10000.0, rms_eps=1e-6, tie_embeddings=True),
        "draft": dict(hidden=32, layers=1, heads=2, kv_heads=1, ffn=64, context=2048,
                      rope_theta=10000.0, rms_eps=1e-6, tie_embeddings=True),
        "target_train": dict(batch=4, seq=128, lr=3e-3, min_lr_frac=0.1, warmup_frac=0.1, wd=0.1),
        "draft_train": dict(batch=4, seq=128, lr=3e-3, min_lr_frac=0.1, warmup_frac=0.1, wd=0.05),
        "eval": dict(loss_windows=8, fim_samples=8, fim_pre_tok=96, fim_suf_tok=32, fim_max_new=8,
                     accept_prompts=4, accept_prompt_len=64, accept_gen=16),
    },
}


def special_ids(tok):
    return {s: tok.token_to_id(s) for s in SPECIAL_TOKENS}


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)


def save_json(obj, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
