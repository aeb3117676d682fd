// AVX-512 VNNI products over Q4_K, Q6_K and IQ4_XS weights packed 16 rows per super-block
// group (IQ4_XS: see its section below for its integer steps), in
// the style of packed_avx512.cpp: one 64-byte vector holds slice s (inputs 4s..4s+3) of 16
// rows, row r in bytes 4r..4r+3, and one vpdpbusd with the activation's 4 bytes broadcast from
// memory adds 16 rows' 4-input dot products. The quants are the unsigned side (Q4_K's nibble,
// Q6_K's 6-bit code 0..63), the Q8_K activations the signed side.
//
// Work is split in "quads": 4 slices (16 inputs) of one sub-block. A quad's integer sum is at
// most 16 * 15 * 128 = 30720 for Q4_K, so it fits the low 16 bits of its lane and one vpdpwssd
// against the sub-block scale (high 16 bits zero) adds sum * scale exactly. Q6_K's quad (one
// whole sub-block, up to 16 * 63 * 128) does not fit; it is scaled in floats instead.
//
// Per (row, activation) the float work per super-block is fixed, whatever the number of
// activation rows or the tile:
//   Q4_K: acc += (d_a d) tot - (d_a dmin) msum   (tot, msum exact integers; llama.cpp's order)
//   Q6_K: f = -32 msum (exact); f = fma(quad_j, sc_j, f) for j = 0..15; acc = fma(f, d d_a, acc)
// so batched rows equal one-row products bit for bit (this level's own results; other levels
// and the file-layout kernels sum the same integers in another float order).
//
// Batches walk each group's inputs in chunks of a few super-blocks, the activation rows 8, 4,
// 2, 1 at a time per chunk (rearranged once per product into tiles: kquant_tiles), so the
// weights come from memory once whatever n is; the float accumulators live in a contiguous
// scratch (see gemm16 in packed_avx512.cpp for why).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backend/cpu/avx512_parts.h"
#include "backend/cpu/packed_avx512_common.h"
#include "backend/cpu/quant_blocks.h"

namespace leapfrog::cpu {

namespace {

inline __m512i bytes_to_lanes(const uint8_t* p) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// ---- the activations ------------------------------------------------------------------
//
// The tiles read activation rows through one of two views. RowActs: the Q8_K rows as
// quantize[] wrote them (row c at a + c * as): one-row products. TileActs<W>: W rows rearranged
// once per product by kquant_tiles() (below), which products of n > 1 rows read: there one
// pointer reaches every row of a super-block at fixed offsets, so a tile keeps its
// addresses in registers (with 16 row pointers GCC spills them and reloads them for every
// quad: measured in perf on a 16-token pass of a 1.5B Q4_K_M, as packed_avx512.cpp found for
// Q8_0). Both give each (row, super-block) the same numbers, so the tiles' results do not
// depend on the view.
struct RowActs {
  const uint8_t* a;
  size_t as;
  const ActQ8_K& row(int c, int64_t b) const {
    return reinterpret_cast<const ActQ8_K*>(a + c * as)[b];
  }
  // The 4 quants of row c at inputs i..i+3 (i a multiple of 4) of super-block b.
  const int8_t* quad(int c, int64_t b, int i) const { return row(c, b).qs + i; }
  const int16_t* bsums(int c, int64_t b) const { return row(c, b).bsums; }
  float d(int c, int64_t b) const { return row(c, b).d; }
};

// Per group of W rows and super-block b, at W * kTileRowBytes * b from the group's start: the
// W rows' 16 bsums (32 bytes a row), their W scales, then slice s (inputs 4s..4s+3) of row c at
// 4 (s W + c). The groups of a product are 8 rows each, then one each of 4, 2 and 1 as the
// remainder needs (kquant_groups), laid out one after another: the group holding row r starts
// at r * nb * kTileRowBytes.
constexpr size_t kTileRowBytes = 32 + 4 + kQK_K;
template <int W>
struct TileActs {
  const uint8_t* t;
  const uint8_t* at(int64_t b) const { return t + size_t(b) * W * kTileRowBytes; }
  // (i W + 4 c, not 4 (i / 4 W + c): a signed division keeps the compiler from folding the
  // offsets of a quad's four slices and 16 rows into displacements from one base, and the
  // integer work per product took vector ports: a 16-token pass of a 1.5B Q4_K_M measured 3.11x
  // a one-token pass with it, 2.47x without, on the device host's Xeon, 2 cores.)
  const int8_t* quad(int c, int64_t b, int i) const {
    return reinterpret_cast<const int8_t*>(at(b) + 36 * W + ptrdiff_t(i) * W + 4 * c);
  }
  const int16_t* bsums(int c, int64_t b) const {
    return reinterpret_cast<const int16_t*>(at(b) + 32 * c);
  }
  float d(int c, int64_t b) const { return reinterpret_cast<const float*>(at(b) + 32 * W)[c]; }
};

// The width of the group that starts at row i of m rows: 8 while 8 remain, then 4, 2, 1. Not
// 16: a 16-row tile was the slower way through 16 rows. Two 8-row tiles (and the preparation
// of 16 rows split between threads, tile_rows) took 4.5 % off a 1.5B Q4_K_M's 16-token passes
// at 1024 positions (medians 70.0 -> 66.8 ms; 32-token 132.6 -> 129.1; six alternated rounds of
// lf_bench, 2 threads, Zen 5, session 29), and 8 % off Q4_K products alone at n = 16.
constexpr int kTileWidth = 8;
inline int kquant_group_width(int left) {
  return left >= kTileWidth ? kTileWidth : left >= 4 ? 4 : left >= 2 ? 2 : 1;
}

size_t kquant_tiles_bytes(int n, int64_t cols) {
  return size_t(n) * size_t(cols / kQK_K) * kTileRowBytes;
}

void kquant_tiles(const uint8_t* a, size_t as, int n, int64_t cols, uint8_t* dst) {
  const int64_t nb = cols / kQK_K;
  for (int g0 = 0; g0 < n;) {
    const int w = kquant_group_width(n - g0);
    uint8_t* grp = dst + size_t(g0) * nb * kTileRowBytes;
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* blk = grp + size_t(b) * w * kTileRowBytes;
      for (int c = 0; c < w; ++c) {
        const ActQ8_K& x = reinterpret_cast<const ActQ8_K*>(a + (g0 + c) * as)[b];
        std::memcpy(blk + 32 * c, x.bsums, 32);
        std::memcpy(blk + 32 * w + 4 * c, &x.d, 4);
        for (int sl = 0; sl < kQK_K / 4; ++sl)
          std::memcpy(blk + 36 * w + 4 * (sl * w + c), x.qs + 4 * sl, 4);
      }
    }
    g0 += w;
  }
}

// Fetch part k (of 16) of the super-block group `ahead` groups past b into L1: the weights
// stream from memory once, at the tile's pace (groups lie one after another, so past a group's
// end this is the next group's start). A few lines per quad or sub-block rather than the whole
// group at once: a burst of 40-50 prefetches fills the line-fill buffers and stalls the tile
// (measured, streaming from memory: Q6_K at n = 16 took 20-30 % longer with the burst).
template <class Block>
inline void prefetch_part(const Block* x, int64_t b, int64_t ahead, int k) {
  constexpr size_t kLines = (sizeof(Block) + 63) / 64, kPer = (kLines + 15) / 16;
  const char* p = reinterpret_cast<const char*>(x + b + ahead) + 64 * kPer * k;
#pragma GCC unroll 4
  for (size_t i = 0; i < kPer; ++i) _mm_prefetch(p + 64 * i, _MM_HINT_T0);
}

// ---- Q4_K --------------------------------------------------------------------------------
//
// Per super-block of 16 rows: their f16 scales, the eight 6-bit sub-block scales and mins
// unpacked to bytes (sc[j][r], m[j][r]), and the quants as the file keeps them — chunk c holds
// sub-block 2c in its low nibbles and 2c + 1 in its high ones — with slice s of the 16 rows in
// one vector.
struct BlockQ4_Kx16 {
  uint16_t d[kRows], dmin[kRows];
  uint8_t sc[8][kRows], m[8][kRows];
  uint8_t qs[4][kSlices][64];
};
static_assert(sizeof(BlockQ4_Kx16) == 2368);

size_t q4k16_group_bytes(int64_t cols) { return size_t(cols / kQK_K) * sizeof(BlockQ4_Kx16); }

void pack_q4_k16(const uint8_t* w, size_t ws, int64_t cols, uint8_t* dst) {
  pack_q4_k_rows<BlockQ4_Kx16, kRows>(w, ws, cols, dst);
}

// 16 packed rows x C activation rows over super-blocks [b0, b1), the float sums in acc (16
// floats per activation row; zeroed by the walk before the first chunk).
template <int C, class Acts>
void tile_q4_k(const BlockQ4_Kx16* x, const Acts& A, float* acc, int64_t b0, int64_t b1,
               int64_t ahead) {
  const __m512i m4 = _mm512_set1_epi8(0xF);
  for (int64_t b = b0; b < b1; ++b) {
    const BlockQ4_Kx16& xb = x[b];
    __m512i tot[C];
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) tot[c] = _mm512_setzero_si512();
#pragma GCC unroll 1
    for (int cc = 0; cc < 4; ++cc) {
#pragma GCC unroll 2
      for (int nib = 0; nib < 2; ++nib) {
        const int j = 2 * cc + nib;
        const __m512i sc = bytes_to_lanes(xb.sc[j]);
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
          __m512i wq[4];
#pragma GCC unroll 4
          for (int s = 0; s < 4; ++s) {
            const __m512i v = _mm512_loadu_si512(xb.qs[cc][4 * h + s]);
            wq[s] = _mm512_and_si512(nib ? _mm512_srli_epi16(v, 4) : v, m4);
          }
          prefetch_part(x, b, ahead, 4 * cc + 2 * nib + h);
          const int off = 64 * cc + 32 * nib + 16 * h;
#pragma GCC unroll 16
          for (int c = 0; c < C; ++c) {
            __m512i p = dpbusd_bcast(_mm512_setzero_si512(), wq[0], A.quad(c, b, off));
            p = dpbusd_bcast(p, wq[1], A.quad(c, b, off + 4));
            p = dpbusd_bcast(p, wq[2], A.quad(c, b, off + 8));
            p = dpbusd_bcast(p, wq[3], A.quad(c, b, off + 12));
            tot[c] = _mm512_dpwssd_epi32(tot[c], p, sc);
          }
        }
      }
    }
    // msum = sum_j m_j * (bsums[2j] + bsums[2j + 1]): lanes (m_j, m_j) against the pair.
    __m512i mp[8];
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      const __m512i m = bytes_to_lanes(xb.m[j]);
      mp[j] = _mm512_or_si512(m, _mm512_slli_epi32(m, 16));
    }
    const __m512 dw = f16x16(xb.d), dmin = f16x16(xb.dmin);
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) {
      __m512i msum = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) msum = dpwssd_bcast(msum, mp[j], A.bsums(c, b) + 2 * j);
      // As llama.cpp orders it: d = d_a * d_w, m = d_a * dmin_w, acc += d * sum - m * msum.
      const __m512 da = _mm512_set1_ps(A.d(c, b));
      const __m512 t =
          _mm512_fnmadd_ps(_mm512_mul_ps(da, dmin), _mm512_cvtepi32_ps(msum),
                           _mm512_mul_ps(_mm512_mul_ps(da, dw), _mm512_cvtepi32_ps(tot[c])));
      _mm512_store_ps(acc + 16 * c, _mm512_add_ps(_mm512_load_ps(acc + 16 * c), t));
    }
  }
}

struct Q4K {
  using Block = BlockQ4_Kx16;
  template <int C, class Acts>
  static void tile(const Block* x, const Acts& A, float* acc, int64_t b0, int64_t b1,
                   int64_t ahead) {
    tile_q4_k<C>(x, A, acc, b0, b1, ahead);
  }
};

// ---- Q6_K --------------------------------------------------------------------------------
//
// Per super-block of 16 rows: their f16 scales; the sixteen int8 sub-block scales in pairs
// (sc[k][r] = scales 2k and 2k + 1 of row r, so one sign extension gives vpdpwssd's int16
// pairs); and per sub-block j (inputs 16j..16j+15, four slices) the 6-bit codes in three
// vectors: qs[j][t] holds slice t (t < 3) in the low 6 bits of each byte and bits 2t, 2t + 1 of
// slice 3 in the top two, so three slices cost one AND each. As compact as the file (210 bytes
// a row).
struct BlockQ6_Kx16 {
  uint16_t d[kRows];
  int8_t sc[8][kRows][2];
  uint8_t qs[16][3][64];
};
static_assert(sizeof(BlockQ6_Kx16) == kRows * sizeof(BlockQ6_K));

size_t q6k16_group_bytes(int64_t cols) { return size_t(cols / kQK_K) * sizeof(BlockQ6_Kx16); }

void pack_q6_k16(const uint8_t* w, size_t ws, int64_t cols, uint8_t* dst) {
  pack_q6_k_rows<BlockQ6_Kx16, kRows>(w, ws, cols, dst);
}

// The four slices of sub-block j as unsigned 6-bit codes.
inline void q6_k_slices(const BlockQ6_Kx16& xb, int j, __m512i w[4]) {
  const __m512i m6 = _mm512_set1_epi8(0x3F);
  const __m512i v0 = _mm512_loadu_si512(xb.qs[j][0]), v1 = _mm512_loadu_si512(xb.qs[j][1]),
                v2 = _mm512_loadu_si512(xb.qs[j][2]);
  w[0] = _mm512_and_si512(v0, m6);
  w[1] = _mm512_and_si512(v1, m6);
  w[2] = _mm512_and_si512(v2, m6);
  // Slice 3: the top bits of v0, v1, v2 moved to bits 0-1, 2-3, 4-5 (word shifts; what comes
  // in from the neighbouring byte is masked off), joined by bit selects: k ? a : b.
  constexpr int kSelect = 0xE4;
  const __m512i u = _mm512_ternarylogic_epi32(_mm512_srli_epi16(v0, 6), _mm512_srli_epi16(v1, 4),
                                              _mm512_set1_epi8(0x03), kSelect);
  const __m512i t =
      _mm512_ternarylogic_epi32(u, _mm512_srli_epi16(v2, 2), _mm512_set1_epi8(0x0F), kSelect);
  w[3] = _mm512_and_si512(t, m6);
}

template <int C, class Acts>
void tile_q6_k(const BlockQ6_Kx16* x, const Acts& A, float* acc, int64_t b0, int64_t b1,
               int64_t ahead) {
  for (int64_t b = b0; b < b1; ++b) {
    const BlockQ6_Kx16& xb = x[b];
    const auto pairs = [&](int k) {
      return _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb.sc[k])));
    };
    // f = -32 * sum_j sc_j * bsums[j] (exact: at most 16 * 128 * 2048 < 2^24), the codes' offset.
    __m512 f[C];
    {
      __m512i sp[8];
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) sp[k] = pairs(k);
#pragma GCC unroll 16
      for (int c = 0; c < C; ++c) {
        __m512i msum = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) msum = dpwssd_bcast(msum, sp[k], A.bsums(c, b) + 2 * k);
        f[c] = _mm512_mul_ps(_mm512_cvtepi32_ps(msum), _mm512_set1_ps(-32.0f));
      }
    }
#pragma GCC unroll 1
    for (int j = 0; j < 16; ++j) {
      // Scale j of each row: the low or high int16 of pair lane j / 2, as a float.
      const __m512i sp = pairs(j / 2);
      const __m512i s32 = _mm512_srai_epi32(j % 2 ? sp : _mm512_slli_epi32(sp, 16), 16);
      const __m512 scf = _mm512_cvtepi32_ps(s32);
      __m512i w[4];
      prefetch_part(x, b, ahead, j);
      q6_k_slices(xb, j, w);
#pragma GCC unroll 16
      for (int c = 0; c < C; ++c) {
        __m512i p = dpbusd_bcast(_mm512_setzero_si512(), w[0], A.quad(c, b, 16 * j));
        p = dpbusd_bcast(p, w[1], A.quad(c, b, 16 * j + 4));
        p = dpbusd_bcast(p, w[2], A.quad(c, b, 16 * j + 8));
        p = dpbusd_bcast(p, w[3], A.quad(c, b, 16 * j + 12));
        f[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), scf, f[c]);
      }
    }
    const __m512 dw = f16x16(xb.d);
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) {
      const __m512 da = _mm512_set1_ps(A.d(c, b));
      _mm512_store_ps(acc + 16 * c,
                      _mm512_fmadd_ps(f[c], _mm512_mul_ps(dw, da), _mm512_load_ps(acc + 16 * c)));
    }
  }
}

struct Q6K {
  using Block = BlockQ6_Kx16;
  template <int C, class Acts>
  static void tile(const Block* x, const Acts& A, float* acc, int64_t b0, int64_t b1,
                   int64_t ahead) {
    tile_q6_k<C>(x, A, acc, b0, b1, ahead);
  }
};

// ---- IQ4_XS ------------------------------------------------------------------------------
//
// Per super-block of 16 rows: their f16 scales, the eight signed sub-block scales (scale - 32,
// sc[j][r]) unpacked to bytes, and each 32-input sub-block's nibbles as packed_avx512.cpp lays
// out IQ4_NL's (vector k: slice k low, slice k + 4 high): 2208 bytes, the file's 2176 plus the
// unpacked scales (1.5 %). The levels are looked up as level + 128 (unsigned); a sub-block's
// sum starts at -128 times the activations' sum over it, so it is exactly sum(level * a)
// (|sum| < 2^19), and times the scale (an exact int32 multiply: |sum * scale| < 2^24) it adds
// to the super-block's integer total, as in the definition. Per super-block the float work is
// acc = fma(float(total), d_w * d_a, acc).
struct BlockIQ4_XSx16 {
  uint16_t d[kRows];
  int8_t sc[8][kRows];
  uint8_t qs[8][4][64];
};
static_assert(sizeof(BlockIQ4_XSx16) == 2208);

size_t iq4xs16_group_bytes(int64_t cols) { return size_t(cols / kQK_K) * sizeof(BlockIQ4_XSx16); }

void pack_iq4_xs16(const uint8_t* w, size_t ws, int64_t cols, uint8_t* dst) {
  BlockIQ4_XSx16* out = reinterpret_cast<BlockIQ4_XSx16*>(dst);
  uint8_t codes[kRows][kQK];
  for (int64_t b = 0; b < cols / kQK_K; ++b) {
    BlockIQ4_XSx16& o = out[b];
    for (int r = 0; r < kRows; ++r) {
      const BlockIQ4_XS& x = reinterpret_cast<const BlockIQ4_XS*>(w + r * ws)[b];
      o.d[r] = x.d;
      for (int j = 0; j < 8; ++j) o.sc[j][r] = static_cast<int8_t>(iq4xs_scale(x, j));
    }
    for (int j = 0; j < 8; ++j) {
      for (int r = 0; r < kRows; ++r) {
        const BlockIQ4_XS& x = reinterpret_cast<const BlockIQ4_XS*>(w + r * ws)[b];
        nibble_codes(x.qs + 16 * j, codes[r]);
      }
      pack_nibbles16(codes, o.qs[j][0]);
    }
  }
}

template <int C, class Acts>
void tile_iq4_xs(const BlockIQ4_XSx16* x, const Acts& A, float* acc, int64_t b0, int64_t b1,
                 int64_t ahead) {
  for (int64_t b = b0; b < b1; ++b) {
    const BlockIQ4_XSx16& xb = x[b];
    // -128 * (the activations' sum over sub-block j) for each row: bsums pairs, one madd.
    alignas(32) int32_t off[C][8];
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) {
      const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(A.bsums(c, b)));
      _mm256_store_si256(reinterpret_cast<__m256i*>(off[c]),
                         _mm256_madd_epi16(bs, _mm256_set1_epi16(-128)));
    }
    __m512i tot[C];
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) tot[c] = _mm512_setzero_si512();
#pragma GCC unroll 1
    for (int j = 0; j < 8; ++j) {
      const __m512i sc =
          _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xb.sc[j])));
      __m512i wq[kSlices];
#pragma GCC unroll 8
      for (int s = 0; s < kSlices; ++s) wq[s] = iq4_levels_unsigned(nibbles(xb.qs[j][0], s));
      prefetch_part(x, b, ahead, 2 * j);
      prefetch_part(x, b, ahead, 2 * j + 1);
#pragma GCC unroll 16
      for (int c = 0; c < C; ++c) {
        __m512i p = _mm512_set1_epi32(off[c][j]);
#pragma GCC unroll 8
        for (int s = 0; s < kSlices; ++s) p = dpbusd_bcast(p, wq[s], A.quad(c, b, 32 * j + 4 * s));
        tot[c] = _mm512_add_epi32(tot[c], _mm512_mullo_epi32(p, sc));
      }
    }
    const __m512 dw = f16x16(xb.d);
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) {
      const __m512 da = _mm512_set1_ps(A.d(c, b));
      _mm512_store_ps(acc + 16 * c,
                      _mm512_fmadd_ps(_mm512_cvtepi32_ps(tot[c]), _mm512_mul_ps(dw, da),
                                      _mm512_load_ps(acc + 16 * c)));
    }
  }
}

struct IQ4XS {
  using Block = BlockIQ4_XSx16;
  template <int C, class Acts>
  static void tile(const Block* x, const Acts& A, float* acc, int64_t b0, int64_t b1,
                   int64_t ahead) {
    tile_iq4_xs<C>(x, A, acc, b0, b1, ahead);
  }
};

// ---- the walk ----------------------------------------------------------------------------

// Super-blocks per chunk of the walk over the inputs (Q4_K: 4.6 KiB of weights, Q6_K: 6.6 KiB),
// and how far ahead the weights are fetched: one chunk in batches, so the chunk, the one being
// fetched and an activation tile's blocks (16 rows: 10 KiB) leave room in L1 (4 super-blocks
// measured no different); in decoding, where a super-block takes little time, further.
constexpr int64_t kChunk = 2;
constexpr int64_t kAheadBatch = kChunk;
constexpr int64_t kAheadDecode = 4;
// Activation rows per pass over a group (the scratch holds their sums).
constexpr int kScratchRows = 64;

// Kernels::Packed::gemm: rows a multiple of 16 (w = the packed groups, ws = bytes per group).
template <class K>
void gemm_k16(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, int n,
              float* y, size_t ldy, int64_t cols) {
  using Block = typename K::Block;
  const int64_t nb = cols / kQK_K;
  alignas(64) thread_local float acc[kScratchRows * kRows];
  for (int64_t r = 0; r < rows; r += kRows) {
    const Block* x = reinterpret_cast<const Block*>(w + (r / kRows) * ws);
    if (n == 1) {
      std::fill_n(acc, kRows, 0.0f);
      K::template tile<1>(x, RowActs{a, as}, acc, 0, nb, kAheadDecode);
      _mm512_storeu_ps(y + r, _mm512_load_ps(acc));
      continue;
    }
    // n > 1 rows come as kquant_tiles() laid them out (Kernels::Packed::tiles).
    for (int i0 = 0; i0 < n; i0 += kScratchRows) {
      const int m = std::min(kScratchRows, n - i0);
      std::fill_n(acc, m * kRows, 0.0f);
      for (int64_t b0 = 0; b0 < nb; b0 += kChunk) {
        const int64_t b1 = std::min(nb, b0 + kChunk);
        for (int i = 0; i < m;) {
          const int w = kquant_group_width(m - i);
          const uint8_t* t = a + size_t(i0 + i) * nb * kTileRowBytes;
          float* yg = acc + i * kRows;
          switch (w) {
            case 8:
              K::template tile<8>(x, TileActs<8>{t}, yg, b0, b1, kAheadBatch);
              break;
            case 4:
              K::template tile<4>(x, TileActs<4>{t}, yg, b0, b1, kAheadBatch);
              break;
            case 2:
              K::template tile<2>(x, TileActs<2>{t}, yg, b0, b1, kAheadBatch);
              break;
            default:
              K::template tile<1>(x, TileActs<1>{t}, yg, b0, b1, kAheadBatch);
              break;
          }
          i += w;
        }
      }
      for (int i = 0; i < m; ++i)
        _mm512_storeu_ps(y + (i0 + i) * ldy + r, _mm512_load_ps(acc + i * kRows));
    }
  }
}

}  // namespace

void install_packed_kquant_vnni(Kernels& t) {
  // One rearrangement of the activations for all three, so a pass's products over Q4_K and
  // Q6_K matrices of one input (a Q4_K_M file's) still share it (matmul_multi).
  t.packed[kernel_slot(GgmlType::Q4_K)] = {
      kRows,        pack_q4_k16,        gemm_k16<Q4K>, q4k16_group_bytes,
      kquant_tiles, kquant_tiles_bytes, kTileWidth};
  t.packed[kernel_slot(GgmlType::Q6_K)] = {
      kRows,        pack_q6_k16,        gemm_k16<Q6K>, q6k16_group_bytes,
      kquant_tiles, kquant_tiles_bytes, kTileWidth};
  t.packed[kernel_slot(GgmlType::IQ4_XS)] = {
      kRows,        pack_iq4_xs16,      gemm_k16<IQ4XS>, iq4xs16_group_bytes,
      kquant_tiles, kquant_tiles_bytes, kTileWidth};
}

}  // namespace leapfrog::cpu
