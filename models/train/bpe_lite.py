"""Pure-Python stand-in for the subset of HuggingFace `tokenizers` that the recipe uses, so the
CPU dry run (test_dry_run.py) works with Debian's packages only (python3-regex for \\p{L}/\\p{N}).

Supported configuration (the one train_tokenizer.build_empty() makes, nothing else):
  Tokenizer(models.BPE()) with pre_tokenizers.Sequence([Split(Regex(QWEN2_SPLIT), "isolated"),
  ByteLevel(add_prefix_space=False, use_regex=False)]), decoders.ByteLevel(), trained by
  trainers.BpeTrainer(vocab_size, min_frequency, special_tokens, initial_alphabet=ByteLevel.alphabet())
  or built from a vocabulary + merges (gguf_tokenizer.py) plus special AddedTokens.
API: train_from_iterator, save, from_file, encode/encode_batch (-> .ids, .tokens), decode (skips
special tokens by default, as tokenizers does), token_to_id, id_to_token, get_vocab, get_vocab_size.
tokenizer.json is written in the tokenizers layout (model.vocab, model.merges, added_tokens), which
export_gguf.py / export_check.py read directly.

Training is plain BPE over pre-token counts with incremental pair counts: fine for the tiny preset
(a few MB, a few hundred merges); far too slow for the full preset, which uses `tokenizers`.
"""
import json
from collections import Counter, defaultdict

import regex


def _bytes_to_unicode():
    """GPT-2's byte -> printable character table (the ByteLevel alphabet)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


BYTE_TO_CHAR = _bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


# ---- configuration objects (recorded, validated when used) ----------------------------------------

class Regex:
    def __init__(self, pattern):
        self.pattern = pattern


class AddedToken:
    def __init__(self, content, single_word=False, lstrip=False, rstrip=False, normalized=True, special=False):
        self.content = content
        self.special = special
        self.normalized = normalized


class _Split:
    def __init__(self, pattern, behavior="isolated", invert=False):
        assert isinstance(pattern, Regex) and behavior == "isolated" and not invert, "bpe_lite: unsupported Split"
        self.pattern = pattern.pattern


class _ByteLevelPre:
    def __init__(self, add_prefix_space=False, use_regex=False, trim_offsets=True):
        assert not add_prefix_space and not use_regex, "bpe_lite: unsupported ByteLevel options"

    @staticmethod
    def alphabet():
        return sorted(BYTE_TO_CHAR.values())


class _Sequence:
    def __init__(self, items):
        assert len(items) == 2 and isinstance(items[0], _Split) and isinstance(items[1], _ByteLevelPre), \
            "bpe_lite supports only Sequence([Split(regex, 'isolated'), ByteLevel(use_regex=False)])"
        self.pattern = items[0].pattern


class pre_tokenizers:  # noqa: N801 (module-like namespace, as in tokenizers)
    Split = _Split
    ByteLevel = _ByteLevelPre
    Sequence = _Sequence


class _ByteLevelDec:
    pass


class decoders:  # noqa: N801
    ByteLevel = _ByteLevelDec


class _BPE:
    def __init__(self, vocab=None, merges=None):
        self.vocab = dict(vocab or {})
        self.merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in (merges or [])]


class models:  # noqa: N801
    BPE = _BPE


class _BpeTrainer:
    def __init__(self, vocab_size=30000, min_frequency=0, show_progress=True, special_tokens=(),
                 initial_alphabet=(), **kw):
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.special_tokens = [t.content if isinstance(t, AddedToken) else t for t in special_tokens]
        self.initial_alphabet = list(initial_alphabet)


class trainers:  # noqa: N801
    BpeTrainer = _BpeTrainer


# ---- the tokenizer ---------------------------------------------------------------------------------

class Encoding:
    __slots__ = ("ids", "tokens")

    def __init__(self, ids, tokens):
        self.ids = ids
        self.tokens = tokens


class Tokenizer:
    def __init__(self, model):
        assert isinstance(model, _BPE)
        self._model = model
        self._pre = None
        self._split_re = None
        self.decoder = None
        self._added = []  # (content, id, special)
        self._cache = {}
        self._reindex()

    # properties mirroring tokenizers' attributes
    @property
    def pre_tokenizer(self):
        return self._pre

    @pre_tokenizer.setter
    def pre_tokenizer(self, p):
        assert isinstance(p, _Sequence)
        self._pre = p
        self._split_re = regex.compile(p.pattern)
        self._cache = {}

    @property
    def model(self):
        return self._model

    @model.setter
    def model(self, m):
        assert isinstance(m, _BPE)
        self._model = m
        self._reindex()

    def _reindex(self):
        m = self._model
        self._ranks = {pair: i for i, pair in enumerate(m.merges)}
        self._vocab = dict(m.vocab)
        for content, i, _ in self._added:
            self._vocab[content] = i
        self._inv = {i: t for t, i in self._vocab.items()}
        self._special_ids = {i for _, i, s in self._added if s}
        specials = sorted((c for c, _, _ in self._added), key=len, reverse=True)
        self._added_re = regex.compile("|".join(regex.escape(s) for s in specials)) if specials else None
        self._cache = {}

    def add_special_tokens(self, tokens):
        n = 0
        for t in tokens:
            c = t.content if isinstance(t, AddedToken) else t
            if any(c == a for a, _, _ in self._added):
                continue
            i = self._vocab.get(c)
            if i is None:
                i = max(self._vocab.values(), default=-1) + 1
            self._added.append((c, i, True))
            n += 1
        self._reindex()
        return n

    # ---- training ----
    def _words(self, text):
        return [self._to_chars(w) for w in self._split_re.findall(text)]

    @staticmethod
    def _to_chars(w):
        return "".join(BYTE_TO_CHAR[b] for b in w.encode("utf-8"))

    def train_from_iterator(self, iterator, trainer=None, length=None):
        assert isinstance(trainer, _BpeTrainer) and self._split_re is not None
        counts = Counter()
        for text in iterator:
            for seg in self._split_added(text, [s for s in trainer.special_tokens]):
                if seg[1] is None:
                    counts.update(self._split_re.findall(seg[0]))
        vocab = {}
        for s in trainer.special_tokens:
            vocab.setdefault(s, len(vocab))
        alphabet = set(trainer.initial_alphabet)
        wcounts = Counter()
        for w, c in counts.items():
            cw = self._to_chars(w)
            wcounts[cw] += c
            alphabet.update(cw)
        for ch in sorted(alphabet):
            vocab.setdefault(ch, len(vocab))
        inv = {i: t for t, i in vocab.items()}
        words = [[vocab[ch] for ch in w] for w in wcounts]
        freq = list(wcounts.values())
        pairs = defaultdict(int)
        where = defaultdict(set)
        for wi, w in enumerate(words):
            f = freq[wi]
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += f
                where[(a, b)].add(wi)
        merges = []
        while len(vocab) < trainer.vocab_size and pairs:
            best = max(pairs.items(), key=lambda kv: (kv[1], -kv[0][0], -kv[0][1]))
            (a, b), c = best
            if c < max(1, trainer.min_frequency):
                break
            new_tok = inv[a] + inv[b]
            if new_tok in vocab:  # same string reachable by another split: keep the first id
                nid = vocab[new_tok]
            else:
                nid = len(vocab)
                vocab[new_tok] = nid
                inv[nid] = new_tok
            merges.append((inv[a], inv[b]))
            for wi in list(where[(a, b)]):
                w, f = words[wi], freq[wi]
                for p in zip(w, w[1:]):
                    pairs[p] -= f
                    if pairs[p] <= 0:
                        del pairs[p]
                    where[p].discard(wi)
                out, i = [], 0
                while i < len(w):
                    if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                        out.append(nid)
                        i += 2
                    else:
                        out.append(w[i])
                        i += 1
                words[wi] = out
                for p in zip(out, out[1:]):
                    pairs[p] += f
                    where[p].add(wi)
            pairs.pop((a, b), None)
            where.pop((a, b), None)
        self._added = [(s, vocab[s], True) for s in trainer.special_tokens]
        self._model = _BPE(vocab, merges)
        self._reindex()

    # ---- encoding ----
    def _split_added(self, text, specials=None):
        """-> [(segment, special_id_or_None)]; added tokens are matched anywhere, as in tokenizers."""
        if specials is not None:
            rx = regex.compile("|".join(regex.escape(s) for s in sorted(specials, key=len, reverse=True))) \
                if specials else None
        else:
            rx = self._added_re
        if rx is None:
            return [(text, None)]
        out, pos = [], 0
        for m in rx.finditer(text):
            if m.start() > pos:
                out.append((text[pos:m.start()], None))
            out.append((m.group(), self._vocab.get(m.group(), -1)))
            pos = m.end()
        if pos < len(text):
            out.append((text[pos:], None))
        return out

    def _bpe(self, word):
        ids = self._cache.get(word)
        if ids is not None:
            return ids
        parts = list(word)
        ranks = self._ranks
        while len(parts) > 1:
            best, bi = None, -1
            for i in range(len(parts) - 1):
                r = ranks.get((parts[i], parts[i + 1]))
                if r is not None and (best is None or r < best):
                    best, bi = r, i
            if best is None:
                break
            parts[bi:bi + 2] = [parts[bi] + parts[bi + 1]]
        ids = [self._vocab[p] for p in parts]
        if len(self._cache) < 500000:
            self._cache[word] = ids
        return ids

    def encode(self, text, add_special_tokens=True):
        ids = []
        for seg, sid in self._split_added(text):
            if sid is not None:
                ids.append(sid)
                continue
            for w in self._split_re.findall(seg):
                ids.extend(self._bpe(self._to_chars(w)))
        return Encoding(ids, [self._inv[i] for i in ids])

    def encode_batch(self, texts, add_special_tokens=True):
        return [self.encode(t, add_special_tokens) for t in texts]

    def decode(self, ids, skip_special_tokens=True):
        pieces, buf = [], []
        for i in ids:
            i = int(i)
            if i in self._special_ids:
                if not skip_special_tokens:
                    pieces.append(bytes(buf).decode("utf-8", errors="replace"))
                    buf = []
                    pieces.append(self._inv[i])
                continue
            buf.extend(CHAR_TO_BYTE[c] for c in self._inv[i])
        pieces.append(bytes(buf).decode("utf-8", errors="replace"))
        return "".join(pieces)

    # ---- vocabulary ----
    def token_to_id(self, token):
        return self._vocab.get(token)

    def id_to_token(self, i):
        return self._inv.get(i)

    def get_vocab(self, with_added_tokens=True):
        if with_added_tokens:
            return dict(self._vocab)
        added = {c for c, _, _ in self._added}
        return {t: i for t, i in self._model.vocab.items() if t not in added}

    def get_vocab_size(self, with_added_tokens=True):
        return len(self.get_vocab(with_added_tokens))

    # ---- files (tokenizers' tokenizer.json layout) ----
    def to_str(self):
        vocab = {t: i for t, i in sorted(self._model.vocab.items(), key=lambda kv: kv[1])}
        for c, i, _ in self._added:
            vocab.setdefault(c, i)
        return json.dumps({
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                              "normalized": False, "special": s} for c, i, s in sorted(self._added, key=lambda x: x[1])],
            "normalizer": None,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": self._pre.pattern}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
            "post_processor": None,
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": vocab, "merges": [f"{a} {b}" for a, b in self._model.merges]},
        }, ensure_ascii=False, indent=1)

    def save(self, path, pretty=True):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_str())

    @classmethod
    def from_file(cls, path):
        tj = json.load(open(path, encoding="utf-8"))
        pre = tj["pre_tokenizer"]
        assert pre["type"] == "Sequence" and [p["type"] for p in pre["pretokenizers"]] == ["Split", "ByteLevel"], \
            "bpe_lite: unsupported pre-tokenizer in " + path
        assert tj["model"]["type"] == "BPE"
        tok = cls(_BPE(tj["model"]["vocab"], tj["model"]["merges"]))
        tok.pre_tokenizer = _Sequence([_Split(Regex(pre["pretokenizers"][0]["pattern"]["Regex"])), _ByteLevelPre()])
        tok.decoder = _ByteLevelDec()
        tok._added = [(a["content"], a["id"], a.get("special", True)) for a in tj.get("added_tokens", [])]
        tok._reindex()
        return tok
