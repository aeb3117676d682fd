// The CUDA backend's layout of quantized weights ("repacking"), shared by the host code that
// writes it at load time, the kernels that read it, and a host-only test
// (tests/cuda_layout_test.cpp) that checks every weight survives the round trip.
//
// The products run on int8 tensor cores (mma.sync m16n8k32 / m16n8k16, s8 x s8 -> s32).
// A warp computes a tile of 16 weight rows x 8 tokens; one "step" is 32 inputs (k), one
// "group" is 8 steps (256 inputs, a K-quant super-block). Every weight is stored per chunk
// (16-row tile, group), chunk c = tile * groups + group, in planes:
//   q8   (Q8_0)              32 lanes x 128 B: the lane's A fragments, 4 words per step
//   q4   (all other types)   32 lanes x 64 B: the low 4 bits of the lane's 16 values per step
//   hi1  (Q5_0, Q5_K)        32 lanes x 16 B: the fifth bit
//   hi2  (Q6_K)              32 lanes x 32 B: bits 4..5
//   sc   per row of the tile (16 B): Q8_0/Q4_0/Q5_0/Q4_1/Q5_1/IQ4_NL: 8 f16 block scales;
//        Q4_K/Q5_K: the super-block's d, dmin and 12 scale bytes as in the file; Q6_K: its
//        16 int8 scales; Q3_K: its 16 scales unpacked to int8 (scale - 32); Q2_K: its 16
//        scale bytes as in the file (scale | min << 4); IQ4_XS: the f16 d, then the 8
//        scales unpacked to int8 (scale - 32)
//   d    per row: Q6_K/Q3_K: the f16 super-block scale (2 B); Q2_K: d and dmin (4 B);
//        Q4_1/Q5_1: the 8 f16 block offsets m (16 B)
// so a lane reads each plane with 16-byte loads, the warp's loads are contiguous, and every
// weight byte is read once per product. Rows are padded to 16 and inputs to 256 with zero
// codes and zero scales (which contribute exact zeros).
//
// Lane L (gid = L / 4, tq = L % 4) holds, for step s, the mma A fragment registers
//   reg 0: row gid,     inputs 32s + 4tq + b  (b = byte 0..3)
//   reg 1: row gid + 8, inputs 32s + 4tq + b
//   reg 2: row gid,     inputs 32s + 16 + 4tq + b
//   reg 3: row gid + 8, inputs 32s + 16 + 4tq + b
// Codes are the file's unsigned codes (Q8_0: the int8 byte; Q3_K: the 2 low bits and the
// high bit as bit 2); the kernels turn them into s8 (code - 8, - 16, - 32, - 4 for Q4_0,
// Q5_0, Q6_K, Q3_K; IQ4_NL/IQ4_XS nibbles through the 16 non-linear levels; Q4_K/Q5_K,
// Q4_1/Q5_1 and Q2_K codes are used as they are, their mins or offsets applied through the
// activations' sums).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "format/blocks.h"
#include "format/fp16.h"
#include "gguf/ggml_types.h"

#ifdef __CUDACC__
#include <cuda_fp16.h>
#endif

#ifdef __CUDACC__
#define LF_HD __host__ __device__ __forceinline__
#else
#define LF_HD inline
#endif

namespace leapfrog::cuda {

enum class QKind : int {
  Q8_0 = 0,
  Q4_0,
  Q5_0,
  Q4_K,
  Q5_K,
  Q6_K,
  Q4_1,
  Q5_1,
  Q2_K,
  Q3_K,
  IQ4_NL,
  IQ4_XS,
  None
};

constexpr int kTileRows = 16;
constexpr int kGroupK = 256;
constexpr int kSteps = 8;

inline QKind qkind_of(GgmlType t) {
  switch (t) {
    case GgmlType::Q8_0:
      return QKind::Q8_0;
    case GgmlType::Q4_0:
      return QKind::Q4_0;
    case GgmlType::Q5_0:
      return QKind::Q5_0;
    case GgmlType::Q4_K:
      return QKind::Q4_K;
    case GgmlType::Q5_K:
      return QKind::Q5_K;
    case GgmlType::Q6_K:
      return QKind::Q6_K;
    case GgmlType::Q4_1:
      return QKind::Q4_1;
    case GgmlType::Q5_1:
      return QKind::Q5_1;
    case GgmlType::Q2_K:
      return QKind::Q2_K;
    case GgmlType::Q3_K:
      return QKind::Q3_K;
    case GgmlType::IQ4_NL:
      return QKind::IQ4_NL;
    case GgmlType::IQ4_XS:
      return QKind::IQ4_XS;
    default:
      return QKind::None;
  }
}

// Per-chunk plane sizes in bytes (0: the plane is absent).
struct PlaneSizes {
  size_t q8, q4, hi1, hi2, sc, d;
};
LF_HD PlaneSizes plane_sizes(QKind k) {
  PlaneSizes p{0, 0, 0, 0, 256, 0};
  switch (k) {
    case QKind::Q8_0:
      p.q8 = 4096;
      break;
    case QKind::Q4_0:
      p.q4 = 2048;
      break;
    case QKind::Q5_0:
      p.q4 = 2048;
      p.hi1 = 512;
      break;
    case QKind::Q4_K:
      p.q4 = 2048;
      break;
    case QKind::Q5_K:
      p.q4 = 2048;
      p.hi1 = 512;
      break;
    case QKind::Q6_K:
      p.q4 = 2048;
      p.hi2 = 1024;
      p.d = 32;
      break;
    case QKind::Q4_1:
      p.q4 = 2048;
      p.d = 256;
      break;
    case QKind::Q5_1:
      p.q4 = 2048;
      p.hi1 = 512;
      p.d = 256;
      break;
    case QKind::Q2_K:
      p.q4 = 2048;
      p.d = 64;
      break;
    case QKind::Q3_K:
      p.q4 = 2048;
      p.d = 32;
      break;
    case QKind::IQ4_NL:
    case QKind::IQ4_XS:
      p.q4 = 2048;
      break;
    default:
      break;
  }
  return p;
}

// Where each plane of a repacked weight starts (bytes from the buffer's start).
struct QLayout {
  QKind kind = QKind::None;
  int64_t rows = 0, cols = 0;
  int64_t tiles = 0, groups = 0;
  size_t off_q8 = 0, off_q4 = 0, off_hi1 = 0, off_hi2 = 0, off_sc = 0, off_d = 0;
  size_t total = 0;
};

inline size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

inline QLayout make_layout(QKind k, int64_t rows, int64_t cols) {
  QLayout L;
  L.kind = k;
  L.rows = rows;
  L.cols = cols;
  L.tiles = (rows + kTileRows - 1) / kTileRows;
  L.groups = (cols + kGroupK - 1) / kGroupK;
  const size_t chunks = static_cast<size_t>(L.tiles * L.groups);
  const PlaneSizes p = plane_sizes(k);
  size_t at = 0;
  auto place = [&](size_t& off, size_t per_chunk) {
    off = at;
    at = round_up(at + per_chunk * chunks, 256);
  };
  place(L.off_q8, p.q8);
  place(L.off_q4, p.q4);
  place(L.off_hi1, p.hi1);
  place(L.off_hi2, p.hi2);
  place(L.off_sc, p.sc);
  place(L.off_d, p.d);
  L.total = std::max<size_t>(at, 256);
  return L;
}

// ---- host and device: codes and scales read from the file's blocks

// Little-endian bytes, no alignment assumed.
LF_HD uint32_t load_le16(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8; }
LF_HD uint32_t load_le32(const uint8_t* p) { return load_le16(p) | load_le16(p + 2) << 16; }

// The unsigned code of input k of a file row (Q8_0: the int8 byte).
LF_HD uint8_t code_at(QKind kind, const uint8_t* row, int64_t k) {
  const int j = static_cast<int>(k % 32);
  switch (kind) {
    case QKind::Q8_0:
      return row[(k / 32) * 34 + 2 + j];
    case QKind::Q4_0:
      return (row[(k / 32) * 18 + 2 + (j & 15)] >> (4 * (j >> 4))) & 0xF;
    case QKind::Q5_0: {
      const uint8_t* b = row + (k / 32) * 22;
      const uint32_t qh = load_le32(b + 2);
      return ((b[6 + (j & 15)] >> (4 * (j >> 4))) & 0xF) | (((qh >> j) & 1) << 4);
    }
    case QKind::Q4_K:
    case QKind::Q5_K: {
      const bool q5 = kind == QKind::Q5_K;
      const uint8_t* b = row + (k / 256) * (q5 ? 176 : 144);
      const int s = static_cast<int>(k % 256) / 32;
      const uint8_t* qs = b + (q5 ? 48 : 16);
      uint8_t v = (qs[(s / 2) * 32 + j] >> (4 * (s & 1))) & 0xF;
      if (q5) v |= ((b[16 + j] >> s) & 1) << 4;
      return v;
    }
    case QKind::Q6_K: {
      const uint8_t* b = row + (k / 256) * 210;
      const int e = static_cast<int>(k % 256), half = e / 128, quarter = (e % 128) / 32;
      const uint8_t lq = b[64 * half + j + 32 * (quarter & 1)];
      const uint8_t lo = quarter >= 2 ? lq >> 4 : lq & 0xF;
      return lo | (((b[128 + 32 * half + j] >> (2 * quarter)) & 3) << 4);
    }
    case QKind::Q4_1:
      return (row[(k / 32) * 20 + 4 + (j & 15)] >> (4 * (j >> 4))) & 0xF;
    case QKind::Q5_1: {
      const uint8_t* b = row + (k / 32) * 24;
      const uint32_t qh = load_le32(b + 4);
      return ((b[8 + (j & 15)] >> (4 * (j >> 4))) & 0xF) | (((qh >> j) & 1) << 4);
    }
    case QKind::IQ4_NL:
      return (row[(k / 32) * 18 + 2 + (j & 15)] >> (4 * (j >> 4))) & 0xF;
    case QKind::IQ4_XS: {
      const uint8_t* qs = row + (k / 256) * 136 + 8 + 16 * ((k % 256) / 32);
      return (qs[j & 15] >> (4 * (j >> 4))) & 0xF;
    }
    case QKind::Q2_K:
    case QKind::Q3_K: {
      // Both take the 2-bit layout: in each 128-weight half, 32-weight run r (0..3) holds
      // bits 2r..2r+1 of the half's 32 bytes; Q3_K's high bit (run 4 half + r) in hmask[j].
      const bool q3 = kind == QKind::Q3_K;
      const uint8_t* b = row + (k / 256) * (q3 ? 110 : 84);
      const int e = static_cast<int>(k % 256), half = e / 128, run = (e % 128) / 32;
      const uint8_t lo = (b[(q3 ? 32 : 16) + 32 * half + j] >> (2 * run)) & 3;
      if (!q3) return lo;
      return lo | (((b[j] >> (4 * half + run)) & 1) << 2);
    }
    default:
      return 0;
  }
}

// The 16 non-linear levels of IQ4_NL/IQ4_XS (format::kIq4NlValues) as four little-endian
// words, for byte-wise lookups (spelled out: device code reads them as immediates).
#define LF_IQ4_WORD0 0xBFAD9881u
#define LF_IQ4_WORD1 0xF6EADDCFu
#define LF_IQ4_WORD2 0x26190D01u
#define LF_IQ4_WORD3 0x71594535u
constexpr uint32_t iq4_word(int w) {
  uint32_t x = 0;
  for (int b = 0; b < 4; ++b) x |= uint32_t(uint8_t(format::kIq4NlValues[4 * w + b])) << (8 * b);
  return x;
}
static_assert(iq4_word(0) == LF_IQ4_WORD0 && iq4_word(1) == LF_IQ4_WORD1 &&
              iq4_word(2) == LF_IQ4_WORD2 && iq4_word(3) == LF_IQ4_WORD3);

// The 16 scale bytes of group g (inputs [256g, 256g + 256)) of a file row in the layout's
// sc form, and the row's bytes of the d plane (plane_sizes(kind).d / 16 of them: Q6_K/Q3_K
// d, Q2_K d and dmin, Q4_1/Q5_1 the 8 offsets); zeros past the row's end.
LF_HD void scale_bytes(QKind kind, const uint8_t* row, int64_t cols, int64_t g, uint8_t sc[16],
                       uint8_t d[16]) {
  for (int i = 0; i < 16; ++i) sc[i] = d[i] = 0;
  switch (kind) {
    case QKind::Q8_0:
    case QKind::Q4_0:
    case QKind::Q5_0:
    case QKind::Q4_1:
    case QKind::Q5_1:
    case QKind::IQ4_NL: {
      const int bs = kind == QKind::Q8_0   ? 34
                     : kind == QKind::Q5_0 ? 22
                     : kind == QKind::Q4_1 ? 20
                     : kind == QKind::Q5_1 ? 24
                                           : 18;
      const bool offsets = kind == QKind::Q4_1 || kind == QKind::Q5_1;
      for (int i = 0; i < 8; ++i) {
        const int64_t blk = g * 8 + i;
        if (blk * 32 >= cols) break;
        sc[2 * i] = row[blk * bs];
        sc[2 * i + 1] = row[blk * bs + 1];
        if (offsets) {
          d[2 * i] = row[blk * bs + 2];
          d[2 * i + 1] = row[blk * bs + 3];
        }
      }
      break;
    }
    case QKind::Q4_K:
    case QKind::Q5_K: {
      const uint8_t* b = row + g * (kind == QKind::Q5_K ? 176 : 144);
      for (int i = 0; i < 16; ++i) sc[i] = b[i];
      break;
    }
    case QKind::Q6_K: {
      const uint8_t* b = row + g * 210;
      for (int i = 0; i < 16; ++i) sc[i] = b[192 + i];
      d[0] = b[208];
      d[1] = b[209];
      break;
    }
    case QKind::Q2_K: {
      const uint8_t* b = row + g * 84;
      for (int i = 0; i < 16; ++i) sc[i] = b[i];
      for (int i = 0; i < 4; ++i) d[i] = b[80 + i];
      break;
    }
    case QKind::Q3_K: {
      format::q3k_scales(row + g * 110 + 96, reinterpret_cast<int8_t*>(sc));
      d[0] = row[g * 110 + 108];
      d[1] = row[g * 110 + 109];
      break;
    }
    case QKind::IQ4_XS: {
      const uint8_t* b = row + g * 136;
      const auto& blk = *reinterpret_cast<const format::BlockIQ4_XS*>(b);
      sc[0] = b[0];
      sc[1] = b[1];
      for (int j = 0; j < 8; ++j) sc[2 + j] = static_cast<uint8_t>(format::iq4xs_scale(blk, j));
      break;
    }
    default:
      break;
  }
}

// Writes lane `lane`'s part of chunk (tile, g) of every plane into `out` (the layout's
// buffer, zeroed where nothing is written is not needed: every byte of the chunk is written
// by one lane). Lanes 0..15 also write row `lane`'s scale bytes.
LF_HD void repack_lane(const QLayout& L, const uint8_t* data, size_t row_bytes, int64_t tile,
                       int64_t g, int lane, uint8_t* out) {
  const PlaneSizes ps = plane_sizes(L.kind);
  const size_t c = static_cast<size_t>(tile * L.groups + g);
  const int gid = lane / 4, tq = lane % 4;
  uint8_t q4[64] = {}, h1[16] = {}, h2[32] = {};
  uint8_t* q8 = ps.q8 ? out + L.off_q8 + c * ps.q8 + lane * 128 : nullptr;
  for (int s = 0; s < kSteps; ++s) {
    for (int i = 0; i < 4; ++i) {
      const int64_t row = tile * kTileRows + gid + 8 * (i & 1);
      for (int b = 0; b < 4; ++b) {
        const int64_t k = g * kGroupK + 32 * s + 16 * (i >> 1) + 4 * tq + b;
        const uint8_t code =
            row < L.rows && k < L.cols ? code_at(L.kind, data + row * row_bytes, k) : 0;
        if (q8) {
          q8[s * 16 + i * 4 + b] = code;
          continue;
        }
        q4[(2 * s + (i >> 1)) * 4 + b] |= (code & 0xF) << (4 * (i & 1));
        if (ps.hi1) h1[(s >> 1) * 4 + b] |= ((code >> 4) & 1) << (i + 4 * (s & 1));
        if (ps.hi2) h2[s * 4 + b] |= ((code >> 4) & 3) << (2 * i);
      }
    }
  }
  if (ps.q4) {
    uint8_t* p = out + L.off_q4 + c * ps.q4 + lane * 64;
    for (int i = 0; i < 64; ++i) p[i] = q4[i];
  }
  if (ps.hi1) {
    uint8_t* p = out + L.off_hi1 + c * ps.hi1 + lane * 16;
    for (int i = 0; i < 16; ++i) p[i] = h1[i];
  }
  if (ps.hi2) {
    uint8_t* p = out + L.off_hi2 + c * ps.hi2 + lane * 32;
    for (int i = 0; i < 32; ++i) p[i] = h2[i];
  }
  if (lane < kTileRows) {
    const int64_t row = tile * kTileRows + lane;
    uint8_t sc[16], d[16];
    if (row < L.rows) {
      scale_bytes(L.kind, data + row * row_bytes, L.cols, g, sc, d);
    } else {
      for (int i = 0; i < 16; ++i) sc[i] = d[i] = 0;
    }
    uint8_t* p = out + L.off_sc + c * ps.sc + lane * 16;
    for (int i = 0; i < 16; ++i) p[i] = sc[i];
    const size_t per_row = ps.d / kTileRows;
    for (size_t i = 0; i < per_row; ++i) out[L.off_d + c * ps.d + lane * per_row + i] = d[i];
  }
}

// Host: the whole weight in the layout (the device does the same per lane at load time).
inline std::vector<uint8_t> repack_host(QKind k, const uint8_t* data, int64_t rows, int64_t cols,
                                        size_t row_bytes, QLayout* out_layout = nullptr) {
  const QLayout L = make_layout(k, rows, cols);
  if (out_layout) *out_layout = L;
  std::vector<uint8_t> out(L.total, 0);
  for (int64_t t = 0; t < L.tiles; ++t) {
    for (int64_t g = 0; g < L.groups; ++g) {
      for (int lane = 0; lane < 32; ++lane) repack_lane(L, data, row_bytes, t, g, lane, out.data());
    }
  }
  return out;
}

// ---- host and device: the lane's A-fragment words from its plane words

// q4 words: 16 per lane (4 x uint4); hi1: 4; hi2: 8; q8: 32.
LF_HD uint32_t frag_lo4(const uint32_t* q4, int s, int i) {
  const uint32_t w = q4[2 * s + (i >> 1)];
  return (i & 1) ? (w >> 4) & 0x0F0F0F0Fu : w & 0x0F0F0F0Fu;
}
LF_HD uint32_t frag_hi1(const uint32_t* h1, int s, int i) {
  return ((h1[s >> 1] >> (i + 4 * (s & 1))) & 0x01010101u) << 4;
}
LF_HD uint32_t frag_hi2(const uint32_t* h2, int s, int i) {
  return ((h2[s] >> (2 * i)) & 0x03030303u) << 4;
}
// Bytewise v - o (v, o < 128 in every byte), each byte wrapping to its two's complement.
LF_HD uint32_t bytes_minus(uint32_t v, uint32_t o4) {
  return ((v | 0x80808080u) - o4) ^ 0x80808080u;
}

// Each byte (0..15) of x replaced by the IQ4 level it indexes.
LF_HD uint32_t iq4_levels(uint32_t x) {
#ifdef __CUDA_ARCH__
  // Two 8-entry lookups (prmt selects by the low 3 bits of each selector nibble, masked
  // here), then per byte the half that bit 3 names.
  const uint32_t y = x & 0x07070707u, t = y | (y >> 4);
  const uint32_t sel = (t & 0xFFu) | ((t >> 8) & 0xFF00u);
  const uint32_t lo = __byte_perm(LF_IQ4_WORD0, LF_IQ4_WORD1, sel);
  const uint32_t hi = __byte_perm(LF_IQ4_WORD2, LF_IQ4_WORD3, sel);
  const uint32_t upper = ((x >> 3) & 0x01010101u) * 0xFFu;
  return (lo & ~upper) | (hi & upper);
#else
  uint32_t r = 0;
  for (int b = 0; b < 4; ++b) {
    r |= uint32_t(uint8_t(format::kIq4NlValues[(x >> (8 * b)) & 0xF])) << (8 * b);
  }
  return r;
#endif
}

// The signed A-fragment word (4 s8 values) of step s, register i for kind K.
template <QKind K>
LF_HD uint32_t frag_word(const uint32_t* q8, const uint32_t* q4, const uint32_t* h1,
                         const uint32_t* h2, int s, int i) {
  if constexpr (K == QKind::Q8_0) {
    return q8[4 * s + i];
  } else if constexpr (K == QKind::Q4_0) {
    return bytes_minus(frag_lo4(q4, s, i), 0x08080808u);
  } else if constexpr (K == QKind::Q5_0) {
    return bytes_minus(frag_lo4(q4, s, i) | frag_hi1(h1, s, i), 0x10101010u);
  } else if constexpr (K == QKind::Q4_K || K == QKind::Q4_1 || K == QKind::Q2_K) {
    return frag_lo4(q4, s, i);
  } else if constexpr (K == QKind::Q5_K || K == QKind::Q5_1) {
    return frag_lo4(q4, s, i) | frag_hi1(h1, s, i);
  } else if constexpr (K == QKind::Q3_K) {
    return bytes_minus(frag_lo4(q4, s, i), 0x04040404u);
  } else if constexpr (K == QKind::IQ4_NL || K == QKind::IQ4_XS) {
    return iq4_levels(frag_lo4(q4, s, i));
  } else {
    return bytes_minus(frag_lo4(q4, s, i) | frag_hi2(h2, s, i), 0x20202020u);
  }
}

// Q4_K/Q5_K: the 8 six-bit scales and mins of a super-block from its 12 scale bytes (as
// words u0..u2), as bytes of sc[0..1] and mn[0..1] (scale_min_k4 in word operations).
LF_HD void k4_unpack(uint32_t u0, uint32_t u1, uint32_t u2, uint32_t sc[2], uint32_t mn[2]) {
  sc[0] = u0 & 0x3f3f3f3fu;
  sc[1] = (u2 & 0x0f0f0f0fu) | ((u0 >> 2) & 0x30303030u);
  mn[0] = u1 & 0x3f3f3f3fu;
  mn[1] = ((u2 >> 4) & 0x0f0f0f0fu) | ((u1 >> 2) & 0x30303030u);
}
LF_HD int byte_of(const uint32_t* w, int j) { return (w[j >> 2] >> (8 * (j & 3))) & 0xFF; }

LF_HD float f16f(uint32_t h) {
#ifdef __CUDA_ARCH__
  return __half2float(__ushort_as_half(static_cast<unsigned short>(h)));
#else
  return format::f16_to_f32(static_cast<uint16_t>(h));
#endif
}

// Step scales from a row's 16 sc bytes and its d-plane bytes (each as little-endian words):
//   Q8_0/Q4_0/Q5_0/IQ4_NL: dsc[s] = the block's d (8 values; dm unused)
//   Q4_1/Q5_1:             dsc[s] = the block's d, dm[s] = its offset m
//   Q4_K/Q5_K:             dsc[s] = d * scale_s, dm[s] = dmin * min_s (8 values each)
//   IQ4_XS:                dsc[s] = d * scale_s (8 values)
//   Q6_K/Q3_K:             dsc[j] = d * scale_j for the 16 sixteen-value halves
//   Q2_K:                  dsc[j] = d * scale_j, dm[j] = dmin * min_j (16 values each)
// A weight value is dsc * code (the signed code), dsc * code - dm (Q4_K/Q5_K/Q2_K) or
// dsc * code + dm (Q4_1/Q5_1). The kernels keep the integer scales instead where the
// CPU's products do (K-quants, IQ4_XS): this is the dequantized view the layout test checks.
template <QKind K>
LF_HD void step_scales(const uint32_t sc[4], const uint32_t dp[4], float* dsc, float* dm) {
  if constexpr (K == QKind::Q8_0 || K == QKind::Q4_0 || K == QKind::Q5_0 || K == QKind::IQ4_NL ||
                K == QKind::Q4_1 || K == QKind::Q5_1) {
    for (int s = 0; s < 8; ++s) {
      dsc[s] = f16f((sc[s >> 1] >> (16 * (s & 1))) & 0xFFFF);
      if constexpr (K == QKind::Q4_1 || K == QKind::Q5_1) {
        dm[s] = f16f((dp[s >> 1] >> (16 * (s & 1))) & 0xFFFF);
      }
    }
  } else if constexpr (K == QKind::Q4_K || K == QKind::Q5_K) {
    const float d = f16f(sc[0] & 0xFFFF), dmin = f16f(sc[0] >> 16);
    uint32_t s6[2], m6[2];
    k4_unpack(sc[1], sc[2], sc[3], s6, m6);
    for (int s = 0; s < 8; ++s) {
      dsc[s] = d * static_cast<float>(byte_of(s6, s));
      dm[s] = dmin * static_cast<float>(byte_of(m6, s));
    }
  } else if constexpr (K == QKind::IQ4_XS) {
    const float d = f16f(sc[0] & 0xFFFF);
    for (int s = 0; s < 8; ++s) dsc[s] = d * static_cast<float>(int8_t(byte_of(sc, 2 + s)));
  } else if constexpr (K == QKind::Q2_K) {
    const float d = f16f(dp[0] & 0xFFFF), dmin = f16f(dp[0] >> 16);
    for (int j = 0; j < 16; ++j) {
      dsc[j] = d * static_cast<float>(byte_of(sc, j) & 0xF);
      dm[j] = dmin * static_cast<float>(byte_of(sc, j) >> 4);
    }
  } else {
    const float d = f16f(dp[0] & 0xFFFF);
    for (int j = 0; j < 16; ++j) {
      dsc[j] = d * static_cast<float>(static_cast<int8_t>(byte_of(sc, j)));
    }
  }
}

}  // namespace leapfrog::cuda
