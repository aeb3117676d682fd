#!/usr/bin/env python3
"""Sets one bool metadata key in a GGUF file, keeping every tensor byte-identical.

    python3 models/train/set_metadata.py models/leapfrog-coder.gguf leapfrog.prompt.fim false

Only the header changes: the key is replaced where it is (or appended), the tensor infos are
copied as they are (their offsets count from the start of the data section), and the data
section starts again at the next multiple of `general.alignment` (32 when absent), as GGUF
requires. The tensor data is then copied unchanged. Writes to a temporary file beside the
input and renames it over the input (or writes --out), after checking that the data section
is byte for byte the original's.
"""
import argparse
import os
import struct
import sys

import gguf_io as G

# Byte sizes of the fixed-size value types (gguf_io's type codes).
_SIZE = {G.U8: 1, G.I8: 1, G.U16: 2, G.I16: 2, G.U32: 4, G.I32: 4, G.F32: 4, G.BOOL: 1,
         G.U64: 8, G.I64: 8, G.F64: 8}


class _Reader:
    def __init__(self, buf):
        self.buf, self.pos = buf, 0

    def take(self, fmt):
        vals = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return vals[0] if len(vals) == 1 else vals

    def string(self):
        n = self.take("Q")
        s = self.buf[self.pos:self.pos + n].decode("utf-8")
        self.pos += n
        return s

    def skip_value(self, vtype):
        if vtype == G.STR:
            self.string()
        elif vtype == G.ARR:
            etype, n = self.take("I"), self.take("Q")
            if etype in _SIZE:
                self.pos += _SIZE[etype] * n
            else:
                for _ in range(n):
                    self.skip_value(etype)
        else:
            self.pos += _SIZE[vtype]


def parse_layout(buf):
    """The header's pieces: version, raw kv entries [(key, type, bytes)], raw tensor infos,
    the alignment and the offset where the data section starts."""
    r = _Reader(buf)
    if buf[:4] != b"GGUF":
        raise ValueError("not a GGUF file")
    r.pos = 4
    version = r.take("I")
    if version not in (2, 3):
        raise ValueError(f"GGUF version {version} is not supported (2 or 3)")
    n_tensors, n_kv = r.take("Q"), r.take("Q")
    kvs = []
    alignment = G.ALIGN
    for _ in range(n_kv):
        start = r.pos
        key = r.string()
        vtype = r.take("I")
        value_at = r.pos
        r.skip_value(vtype)
        if key == "general.alignment" and vtype == G.U32:
            alignment = struct.unpack_from("<I", buf, value_at)[0]
        kvs.append((key, vtype, buf[start:r.pos]))
    infos_start = r.pos
    for _ in range(n_tensors):
        r.string()
        n_dims = r.take("I")
        r.pos += 8 * n_dims + 4 + 8  # dims, type, offset
    infos = buf[infos_start:r.pos]
    data_start = (r.pos + alignment - 1) // alignment * alignment
    return version, n_tensors, kvs, infos, alignment, data_start


def bool_kv(key, value):
    return G._str(key) + struct.pack("<I", G.BOOL) + struct.pack("<?", value)


def set_bool(src, key, value, out=None):
    buf = open(src, "rb").read()
    version, n_tensors, kvs, infos, alignment, data_start = parse_layout(buf)
    entry = bool_kv(key, value)
    found = False
    raw = []
    for k, _, b in kvs:
        if k == key:
            raw.append(entry)
            found = True
        else:
            raw.append(b)
    if not found:
        raw.append(entry)
    head = b"GGUF" + struct.pack("<IQQ", version, n_tensors, len(raw)) + b"".join(raw) + infos
    head += b"\0" * ((-len(head)) % alignment)
    dst = out or src
    tmp = dst + ".tmp"
    with open(tmp, "wb") as f:
        f.write(head)
        f.write(buf[data_start:])
    written = open(tmp, "rb").read()
    # The tensors must be untouched: the data section is the original's, byte for byte.
    assert written[len(head):] == buf[data_start:], "tensor data changed"
    _, _, kvs_back, _, _, data_back = parse_layout(written)
    assert data_back == len(head), "data section misplaced"
    assert (key, G.BOOL, entry) in kvs_back, f"{key} did not read back"
    os.replace(tmp, dst)
    return dst, found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gguf")
    ap.add_argument("key")
    ap.add_argument("value", choices=["true", "false"])
    ap.add_argument("--out", help="write here instead of rewriting the input")
    args = ap.parse_args()
    value = args.value == "true"
    try:
        dst, replaced = set_bool(args.gguf, args.key, value, args.out)
    except (OSError, ValueError) as e:
        sys.exit(f"set_metadata: {args.gguf}: {e}")
    print(f"set_metadata: {dst}: {args.key} = {args.value} ({'replaced' if replaced else 'added'})")


if __name__ == "__main__":
    main()
