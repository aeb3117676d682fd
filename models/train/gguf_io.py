"""A small GGUF v3 writer and reader (no `gguf` package needed), with Q8_0 quantisation.

Layout: magic "GGUF", u32 version 3, u64 tensor count, u64 kv count, kv pairs, tensor infos
(name, u32 n_dims, u64 dims with ne[0] innermost, u32 type, u64 offset from data start), padding to
`general.alignment` (32), tensor data (each tensor aligned).
"""
import struct

import numpy as np

ALIGN = 32
# kv value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
# tensor types
GGML_F32, GGML_F16, GGML_Q8_0, GGML_BF16 = 0, 1, 8, 30

Q8_0_DTYPE = np.dtype([("d", "<f2"), ("q", "i1", (32,))])


def quantize_q8_0(x):
    """As ggml's quantize_row_q8_0_ref: d = amax/127 (stored as f16), q = round(x / d) (fp32 math)."""
    x = np.asarray(x, dtype=np.float32).reshape(-1, 32)
    amax = np.abs(x).max(axis=1)
    d = amax / 127.0
    inv = np.where(d > 0, 1.0 / np.where(d > 0, d, 1), 0.0).astype(np.float32)
    q = np.rint(x * inv[:, None]).astype(np.int8)  # rint: half to even; roundf is half away from zero
    half = np.abs(x * inv[:, None] - np.trunc(x * inv[:, None])) == 0.5
    if half.any():  # match C roundf exactly on ties
        q[half] = (np.trunc(x * inv[:, None]) + np.sign(x))[half].astype(np.int8)
    out = np.empty(x.shape[0], dtype=Q8_0_DTYPE)
    out["d"] = d.astype(np.float16)
    out["q"] = q
    return out


def dequantize_q8_0(blocks):
    return (blocks["d"].astype(np.float32)[:, None] * blocks["q"].astype(np.float32)).reshape(-1)


def _str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


class GGUFWriter:
    def __init__(self):
        self.kv = []  # (key, type, value, [array elem type])
        self.tensors = []  # (name, dims(ne order), type, bytes)

    def add(self, key, vtype, value, elem_type=None):
        self.kv.append((key, vtype, value, elem_type))

    def add_tensor(self, name, arr, ttype):
        """arr: numpy array in PyTorch order (outermost first); GGUF dims are reversed."""
        arr = np.ascontiguousarray(arr)
        dims = list(reversed(arr.shape))
        if ttype == GGML_F32:
            data = arr.astype("<f4").tobytes()
        elif ttype == GGML_F16:
            data = arr.astype("<f2").tobytes()
        elif ttype == GGML_Q8_0:
            assert dims[0] % 32 == 0, f"{name}: row length {dims[0]} not a multiple of 32"
            data = quantize_q8_0(arr).tobytes()
        else:
            raise ValueError(ttype)
        self.tensors.append((name, dims, ttype, data))

    @staticmethod
    def _val(vtype, v, elem_type=None):
        if vtype == STR:
            return _str(v)
        if vtype == ARR:
            head = struct.pack("<IQ", elem_type, len(v))
            if elem_type == STR:
                return head + b"".join(_str(s) for s in v)
            fmt = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f", U64: "Q", I64: "q",
                   F64: "d", BOOL: "?"}[elem_type]
            return head + struct.pack("<%d%s" % (len(v), fmt), *v)
        fmt = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f", BOOL: "?", U64: "Q", I64: "q",
               F64: "d"}[vtype]
        return struct.pack("<" + fmt, v)

    def write(self, path):
        if not any(k == "general.alignment" for k, *_ in self.kv):
            self.kv.insert(1, ("general.alignment", U32, ALIGN, None))
        out = bytearray()
        out += b"GGUF" + struct.pack("<IQQ", 3, len(self.tensors), len(self.kv))
        for key, vtype, v, et in self.kv:
            out += _str(key) + struct.pack("<I", vtype) + self._val(vtype, v, et)
        offset = 0
        offsets = []
        for name, dims, ttype, data in self.tensors:
            offsets.append(offset)
            out += _str(name) + struct.pack("<I", len(dims)) + struct.pack("<%dQ" % len(dims), *dims)
            out += struct.pack("<IQ", ttype, offset)
            offset += (len(data) + ALIGN - 1) // ALIGN * ALIGN
        out += b"\0" * ((-len(out)) % ALIGN)
        with open(path, "wb") as f:
            f.write(out)
            for (name, dims, ttype, data), off in zip(self.tensors, offsets):
                f.write(data)
                f.write(b"\0" * ((-len(data)) % ALIGN))


def read_gguf(path, tensors=True):
    """Returns (kv dict, tensors dict name -> float32 numpy array in PyTorch order, types dict)."""
    buf = open(path, "rb").read()
    pos = 0

    def take(fmt):
        nonlocal pos
        vals = struct.unpack_from("<" + fmt, buf, pos)
        pos += struct.calcsize("<" + fmt)
        return vals if len(vals) > 1 else vals[0]

    def s():
        nonlocal pos
        n = take("Q")
        v = buf[pos:pos + n].decode("utf-8")
        pos += n
        return v

    scal = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f", BOOL: "?", U64: "Q", I64: "q", F64: "d"}

    def val(t):
        if t == STR:
            return s()
        if t == ARR:
            et, n = take("I"), take("Q")
            return [val(et) for _ in range(n)]
        return take(scal[t])

    assert buf[:4] == b"GGUF", "not a GGUF file"
    pos = 4
    version, nt, nkv = take("I"), take("Q"), take("Q")
    assert version == 3
    kv = {}
    for _ in range(nkv):
        k = s()
        kv[k] = val(take("I"))
    infos = []
    for _ in range(nt):
        name = s()
        nd = take("I")
        dims = [take("Q") for _ in range(nd)]
        infos.append((name, dims, take("I"), take("Q")))
    if not tensors:
        return kv, {}, {}
    align = kv.get("general.alignment", 32)
    data0 = (pos + align - 1) // align * align
    tensors, types = {}, {}
    for name, dims, t, off in infos:
        n = int(np.prod(dims))
        shape = tuple(reversed(dims))
        if t == GGML_F32:
            a = np.frombuffer(buf, "<f4", n, data0 + off)
        elif t == GGML_F16:
            a = np.frombuffer(buf, "<f2", n, data0 + off).astype(np.float32)
        elif t == GGML_Q8_0:
            a = dequantize_q8_0(np.frombuffer(buf, Q8_0_DTYPE, n // 32, data0 + off))
        else:
            raise ValueError(f"type {t}")
        tensors[name] = a.reshape(shape)
        types[name] = t
    return kv, tensors, types
