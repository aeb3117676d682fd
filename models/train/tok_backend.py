"""The single import point for the tokenizer library: HuggingFace `tokenizers` when importable (the
real GPU run), else the pure-Python fallback `bpe_lite` (CPU dry run with Debian's packages only).

    from tok_backend import Tokenizer, ...   ;   tok_backend.BACKEND is "tokenizers" or "bpe_lite"
"""
import os

if os.environ.get("LEAPFROG_TOKENIZER_BACKEND") == "bpe_lite":  # force the fallback (tests)
    from bpe_lite import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: F401
    BACKEND = "bpe_lite"
else:
    try:
        from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: F401
        BACKEND = "tokenizers"
    except ImportError:
        from bpe_lite import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: F401
        BACKEND = "bpe_lite"
