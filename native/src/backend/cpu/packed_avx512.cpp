// AVX-512 VNNI products over Q8_0, Q4_0, Q5_0, Q4_1, Q5_1 and IQ4_NL weights packed 16 rows at
// a time: one 512-bit vector holds "slice" s (inputs 4s..4s+3) of 16 rows, row r in bytes
// 4r..4r+3, so one vpdpbusd with the activation's 4 bytes broadcast from memory ({1to16}) adds
// 16 rows' 4-input dot products — no sign fix-ups, no horizontal sums.
//
// vpdpbusd multiplies unsigned by signed bytes. The weights are the unsigned side, stored
// with an offset (Q8_0: w + 128; Q4_0: the nibble, w + 8; Q5_0: the 5-bit code, w + 16; IQ4_NL:
// the nibble, looked up by vpshufb as level + 128; Q4_1 and Q5_1: their codes, unsigned
// already), and the activations the signed side; the offset's share, offset * sum(a), is taken
// off by starting each block's accumulator at -offset * sum(a) (ActQ8_0::sum, exact integers).
// The integer sums are therefore exactly those of every other instruction set, and the
// float work per (row, activation) is the packed layouts' rule (packed_layouts.h):
// acc = fma(float(sum), d_w * d_a, acc) per block, then for Q4_1/Q5_1 acc = fma(m_w, s_a, acc)
// (s_a = q8_block_total) — batched rows equal one-row products, and AVX2's results, bit for
// bit.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "backend/cpu/avx2_common.h"
#include "backend/cpu/avx512_parts.h"
#include "backend/cpu/count_dispatch.h"
#include "backend/cpu/packed_avx512_common.h"
#include "backend/cpu/quant_blocks.h"

namespace leapfrog::cpu {

namespace {

struct BlockQ8_0x16 {
  uint16_t d[kRows];
  uint8_t qs[kSlices * 64];  // slice s at 64 s: byte 4 r + e = w[r][4 s + e] + 128
};
// Vector k (k < 4) holds slice k in its low nibbles and slice k + 4 in its high ones.
struct BlockQ4_0x16 {
  uint16_t d[kRows];
  uint8_t qs[4 * 64];
};
// The nibbles as Q4_0's; bit 4 r + e of qh[s] is the fifth bit of element 4 s + e of row r.
struct BlockQ5_0x16 {
  uint16_t d[kRows];
  uint64_t qh[kSlices];
  uint8_t qs[4 * 64];
};
// IQ4_NL: Q4_0's nibble layout; the levels come from a lookup.
struct BlockIQ4_NLx16 {
  uint16_t d[kRows];
  uint8_t qs[4 * 64];
};
// Q4_1 / Q5_1: Q4_0's / Q5_0's layout, and the 16 rows' f16 mins beside their scales.
struct BlockQ4_1x16 {
  uint16_t d[kRows], m[kRows];
  uint8_t qs[4 * 64];
};
struct BlockQ5_1x16 {
  uint16_t d[kRows], m[kRows];
  uint64_t qh[kSlices];
  uint8_t qs[4 * 64];
};
static_assert(sizeof(BlockQ8_0x16) == kRows * sizeof(BlockQ8_0));
static_assert(sizeof(BlockIQ4_NLx16) == kRows * sizeof(BlockIQ4_NL));
static_assert(sizeof(BlockQ4_1x16) == kRows * sizeof(BlockQ4_1));
static_assert(sizeof(BlockQ5_1x16) == kRows * sizeof(BlockQ5_1));
static_assert(sizeof(BlockQ4_0x16) == kRows * sizeof(BlockQ4_0));
static_assert(sizeof(BlockQ5_0x16) == kRows * sizeof(BlockQ5_0));

// ---- packing (once, at load) ------------------------------------------------------------

// Q8_0's unsigned codes (w + 128) of a file block's 32 elements, in order (the other types'
// codes are the file's own: quant_blocks.h).
inline void codes_q8_0(const BlockQ8_0& x, uint8_t* c) {
  for (int j = 0; j < kQK; ++j) c[j] = static_cast<uint8_t>(x.qs[j] + 128);
}

template <class In, class Out, void (*Codes)(const In&, uint8_t*)>
void pack16(const uint8_t* w, size_t ws, int64_t cols, uint8_t* dst) {
  Out* out = reinterpret_cast<Out*>(dst);
  uint8_t codes[kRows][kQK];
  for (int64_t b = 0; b < cols / kQK; ++b) {
    Out& o = out[b];
    for (int r = 0; r < kRows; ++r) {
      const In& x = reinterpret_cast<const In*>(w + r * ws)[b];
      o.d[r] = x.d;
      if constexpr (kHasMin<Out>) o.m[r] = x.m;
      Codes(x, codes[r]);
    }
    if constexpr (std::is_same_v<Out, BlockQ8_0x16>) {
      for (int r = 0; r < kRows; ++r) {
        for (int s = 0; s < kSlices; ++s) std::memcpy(o.qs + 64 * s + 4 * r, codes[r] + 4 * s, 4);
      }
    } else {
      pack_nibbles16(codes, o.qs);
    }
    if constexpr (requires { o.qh; }) {
      for (int s = 0; s < kSlices; ++s) {
        uint64_t bits = 0;
        for (int r = 0; r < kRows; ++r) {
          for (int e = 0; e < 4; ++e) bits |= uint64_t(codes[r][4 * s + e] >> 4) << (4 * r + e);
        }
        o.qh[s] = bits;
      }
    }
  }
}

// ---- products ---------------------------------------------------------------------------

// Offset of the stored unsigned codes, and slice s of a block as 64 unsigned bytes.
template <class Block>
constexpr int kOffset =
    std::is_same_v<Block, BlockQ8_0x16> || std::is_same_v<Block, BlockIQ4_NLx16> ? 128
    : std::is_same_v<Block, BlockQ4_0x16>                                        ? 8
    : std::is_same_v<Block, BlockQ5_0x16>                                        ? 16
                                                                                 : 0;

inline __m512i slice(const BlockQ8_0x16& x, int s) { return _mm512_loadu_si512(x.qs + 64 * s); }
inline __m512i slice(const BlockQ4_0x16& x, int s) { return nibbles(x.qs, s); }
inline __m512i five_bits(const uint8_t* qs, const uint64_t* qh, int s) {
  const __m512i z = nibbles(qs, s);
  return _mm512_mask_add_epi8(z, _cvtu64_mask64(qh[s]), z, _mm512_set1_epi8(16));
}
inline __m512i slice(const BlockQ5_0x16& x, int s) { return five_bits(x.qs, x.qh, s); }
inline __m512i slice(const BlockQ4_1x16& x, int s) { return nibbles(x.qs, s); }
inline __m512i slice(const BlockQ5_1x16& x, int s) { return five_bits(x.qs, x.qh, s); }
inline __m512i slice(const BlockIQ4_NLx16& x, int s) {
  return iq4_levels_unsigned(nibbles(x.qs, s));
}

// The weights stream from memory once, at the tiles' pace: each block asks for the one
// kPrefetchBlocks ahead (groups lie one after another, so past a group's end this is the
// next group's start; a prefetch past the buffer is harmless). Decoding (one activation row)
// fetches into L1; the tiles of several rows fetch into L2 only, because L1 already holds
// the chunk being read and its activation tiles, and the next chunk there evicted them:
// 151936 x 896 Q8_0 with 32 rows, one thread, 126 GMAC/s with T0, 167 with T1 (the
// one-row product the other way: 21.8 GMAC/s with T0, 16.5 with T1).
//
// Q8_0 first fetches one line of the block kFarBlocks ahead (~140 KB): the near fetches of a
// batched tile come at twice the stream's average rate (all in a chunk's first tile), and 18 %
// of gemm16's samples sat on them (0.5B Q8_0, 16-token passes, Zen 5); with the far lines,
// 5-23 % (profiles vary with where the binary's file lies: BENCHMARKS.md). Why they help is
// inferred, not proven: they would lead the hardware's L2 prefetcher, so that the near
// fetches meet L2. Measured (test/bench/ab-copies.sh: each build from 3-4 copies of its binary,
// BENCHMARKS.md, session 23): 0.5B Q8_0 one-token passes 5 % shorter, 16-token 2-5 %, 32-token
// 2 %; 1.5B Q8_0 7 / 9 / 6 %. Only Q8_0 was measured; the same far line in the K-quant tiles'
// prefetch_part made a 1.5B Q4_K_M's passes 25-35 % longer, and in AVX2's and AVX-VNNI's Q8_0
// tiles (packed_blocks.h) it measured no different.
constexpr int64_t kPrefetchBlocks = 16;
constexpr int64_t kFarBlocks = 256;
template <int Hint, class Block>
inline void prefetch_ahead(const Block* x) {
  if constexpr (std::is_same_v<Block, BlockQ8_0x16>)
    _mm_prefetch(reinterpret_cast<const char*>(x + kFarBlocks), _MM_HINT_T2);
  const char* ahead = reinterpret_cast<const char*>(x + kPrefetchBlocks);
  for (size_t off = 0; off < sizeof(Block); off += 64)
    _mm_prefetch(ahead + off, static_cast<_mm_hint>(Hint));
}

// 16 packed rows x C activation rows over nb blocks. With few activation rows the integer
// sum of a block runs in two chains (even and odd slices) to hide vpdpbusd's latency;
// integer addition is exact, so the split changes nothing in the result.
template <class Block, int C>
void tile(const Block* x, const uint8_t* a, size_t as, float* y, size_t ldy, int64_t nb) {
  constexpr int kChains = C <= 2 ? 2 : 1;
  __m512 facc[C];
#pragma GCC unroll 16
  for (int c = 0; c < C; ++c) facc[c] = _mm512_setzero_ps();
  const auto act = [&](int c) { return reinterpret_cast<const ActQ8_0*>(a + c * as); };
  for (int64_t b = 0; b < nb; ++b) {
    prefetch_ahead<_MM_HINT_T0>(x + b);
    __m512i acc[C][kChains];
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) {
      acc[c][0] = _mm512_set1_epi32(-kOffset<Block> * act(c)[b].sum);
      if constexpr (kChains == 2) acc[c][1] = _mm512_setzero_si512();
    }
#pragma GCC unroll 8
    for (int s = 0; s < kSlices; ++s) {
      const __m512i wv = slice(x[b], s);
#pragma GCC unroll 16
      for (int c = 0; c < C; ++c) {
        __m512i& t = acc[c][s % kChains];
        t = dpbusd_bcast(t, wv, act(c)[b].qs + 4 * s);
      }
    }
    const __m512 dw = f16x16(x[b].d);
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) {
      __m512i sum = acc[c][0];
      if constexpr (kChains == 2) sum = _mm512_add_epi32(sum, acc[c][1]);
      const __m512 da = _mm512_set1_ps(act(c)[b].d);
      facc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(dw, da), facc[c]);
      if constexpr (kHasMin<Block>) {
        facc[c] = _mm512_fmadd_ps(f16x16(x[b].m),
                                  _mm512_set1_ps(avx2::q8_block_total_f16c(act(c)[b])), facc[c]);
      }
    }
  }
#pragma GCC unroll 16
  for (int c = 0; c < C; ++c) _mm512_storeu_ps(y + c * ldy, facc[c]);
}

// ---- activation tiles (rearranged once per product of n > 1 rows) ----------------------
//
// Rows in groups of 8; the last group is 4 or 8 wide (padded with zero rows). Per group of
// width W and block b, at 40 W b bytes from the group's start: the W scales (f32), the W
// offset terms -offset * sum(a) (int32, the weights' stored offset already applied; for the
// types with a min term, whose codes have no offset, the block totals s_a as f32 instead),
// then slice s of row c at 8 W + 4 (s W + c). One pointer reaches every row of a tile, so a
// tile keeps its addresses in registers (with 16 row pointers GCC spilled them and reloaded
// them every block; in whole passes of a 1.5B Q8_0 this layout measured faster: 32-token
// passes 300-317 ms against 359-394, three alternating rounds, 2 threads, session 6).
constexpr int kActTile = 8;
constexpr int kActBlockBytes = 40;  // per row and block: scale, offset term, 32 quants

inline int tail_width(int rows) { return rows == 0 ? 0 : rows <= 4 ? 4 : 8; }
inline int padded_rows(int n) { return n / kActTile * kActTile + tail_width(n % kActTile); }

size_t act_tiles_bytes(int n, int64_t cols) {
  return size_t(padded_rows(n)) * size_t(cols / kQK) * kActBlockBytes;
}

// The quants of 8 rows' block (32 bytes each, r[c]) as the 8 slices of a full tile: slice s
// (row c's bytes 4s..4s+3 at 4 c) stored at qs + 32 s. An 8 x 8 transpose of 32-bit elements:
// the scalar copy of 4 bytes at a time was most of the preparation a product of 8 activation
// rows does on one thread (act_tiles 3.9 % of a bundled model's 8-token pass samples).
inline void transpose_slices8(const __m256i (&r)[8], int8_t* qs) {
  __m256i t[8], u[8];
  for (int k = 0; k < 4; ++k) {
    t[2 * k] = _mm256_unpacklo_epi32(r[2 * k], r[2 * k + 1]);      // slices 0, 1 | 4, 5
    t[2 * k + 1] = _mm256_unpackhi_epi32(r[2 * k], r[2 * k + 1]);  // slices 2, 3 | 6, 7
  }
  for (int h = 0; h < 2; ++h) {  // rows 0-3, then 4-7
    const __m256i* th = t + 4 * h;
    u[4 * h + 0] = _mm256_unpacklo_epi64(th[0], th[2]);  // slice 0 | 4
    u[4 * h + 1] = _mm256_unpackhi_epi64(th[0], th[2]);  // slice 1 | 5
    u[4 * h + 2] = _mm256_unpacklo_epi64(th[1], th[3]);  // slice 2 | 6
    u[4 * h + 3] = _mm256_unpackhi_epi64(th[1], th[3]);  // slice 3 | 7
  }
  for (int s = 0; s < 4; ++s) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs + 32 * s),
                        _mm256_permute2x128_si256(u[s], u[4 + s], 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs + 32 * (s + 4)),
                        _mm256_permute2x128_si256(u[s], u[4 + s], 0x31));
  }
}

// A row's block scale and its offset term (for the types with a min term, the block total
// s_a as f32 in the offset's place).
template <class Block>
inline void put_scale_and_offset(const ActQ8_0& x, float* d, int32_t* off) {
  *d = x.d;
  if constexpr (kHasMin<Block>) {
    const float s = q8_block_total(x);
    std::memcpy(off, &s, 4);
  } else {
    *off = -kOffset<Block> * x.sum;
  }
}

template <class Block>
void act_tiles(const uint8_t* a, size_t as, int n, int64_t cols, uint8_t* dst) {
  const int64_t nb = cols / kQK;
  for (int g0 = 0; g0 < n; g0 += kActTile) {
    const int rows = std::min(kActTile, n - g0);
    const int w = rows == kActTile ? kActTile : tail_width(rows);
    uint8_t* grp = dst + size_t(g0) * nb * kActBlockBytes;
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* blk = grp + size_t(b) * kActBlockBytes * w;
      float* d = reinterpret_cast<float*>(blk);
      int32_t* off = reinterpret_cast<int32_t*>(blk + 4 * w);
      int8_t* qs = reinterpret_cast<int8_t*>(blk + 8 * w);
      if (rows == kActTile) {
        __m256i r[kActTile];
        for (int c = 0; c < kActTile; ++c) {
          const ActQ8_0& x = reinterpret_cast<const ActQ8_0*>(a + (g0 + c) * as)[b];
          put_scale_and_offset<Block>(x, d + c, off + c);
          r[c] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs));
        }
        transpose_slices8(r, qs);
        continue;
      }
      for (int c = 0; c < w; ++c) {
        if (c >= rows) {
          d[c] = 0, off[c] = 0;
          for (int sl = 0; sl < kSlices; ++sl) std::memset(qs + 4 * (sl * w + c), 0, 4);
          continue;
        }
        const ActQ8_0& x = reinterpret_cast<const ActQ8_0*>(a + (g0 + c) * as)[b];
        put_scale_and_offset<Block>(x, d + c, off + c);
        for (int sl = 0; sl < kSlices; ++sl) std::memcpy(qs + 4 * (sl * w + c), x.qs + 4 * sl, 4);
      }
    }
  }
}

// 16 packed rows x one tile of W activation rows over blocks [b0, b1), the float sums in y
// (16 floats per activation row, contiguous), read at the chunk's start and written at its
// end. A tile of 8 keeps its 8 integer chains (enough for vpdpbusd's latency at one per
// cycle on Zen 4) and its 8 float sums in registers for the whole chunk. Tiles of 16 had to
// keep their float sums in memory, a load and a store per row and block: one thread, in
// cache, 172 -> 180 GMAC/s; whole products on 2 threads, 1.5B shape, Q8_0, 4 layers and the
// output, n = 16: 29-42 ms -> 22-24 (with the L2 prefetch above; lf_matbench, 3 rounds
// alternated, Zen 4). The operations per (row, activation) are tile()'s — the integer sum
// from the offset term, one fma per block from 0 — so the results are tile()'s, bit for bit.
//
// Only the first R rows of the tile are computed (R < W: the last tile of a product whose rows
// are not a multiple of its width, whose padding rows are zeros nobody reads). Two or fewer
// rows run two integer chains each (even and odd slices), as tile() does for decoding: one
// chain per row would leave vpdpbusd waiting on its own latency.
template <class Block, int W, int R = W>
void tile_t(const Block* x, const uint8_t* t, float* y, int64_t b0, int64_t b1, bool fetch) {
  static_assert(R >= 1 && R <= W);
  constexpr int kChains = R <= 2 ? 2 : 1;
  __m512 facc[R];
#pragma GCC unroll 16
  for (int c = 0; c < R; ++c)
    facc[c] = b0 == 0 ? _mm512_setzero_ps() : _mm512_load_ps(y + c * kRows);
  for (int64_t b = b0; b < b1; ++b) {
    if (fetch) prefetch_ahead<_MM_HINT_T1>(x + b);
    const uint8_t* p = t + size_t(b) * kActBlockBytes * W;
    const float* d = reinterpret_cast<const float*>(p);
    const int32_t* off = reinterpret_cast<const int32_t*>(p + 4 * W);
    const float* s_a = reinterpret_cast<const float*>(p + 4 * W);  // (the min types)
    const int8_t* qs = reinterpret_cast<const int8_t*>(p + 8 * W);
    __m512i acc[R][kChains];
#pragma GCC unroll 16
    for (int c = 0; c < R; ++c) {
      acc[c][0] = kHasMin<Block> ? _mm512_setzero_si512() : _mm512_set1_epi32(off[c]);
      if constexpr (kChains == 2) acc[c][1] = _mm512_setzero_si512();
    }
#pragma GCC unroll 8
    for (int s = 0; s < kSlices; ++s) {
      const __m512i wv = slice(x[b], s);
#pragma GCC unroll 16
      for (int c = 0; c < R; ++c) {
        __m512i& a = acc[c][s % kChains];
        a = dpbusd_bcast(a, wv, qs + 4 * (s * W + c));
      }
    }
    const __m512 dw = f16x16(x[b].d);
#pragma GCC unroll 16
    for (int c = 0; c < R; ++c) {
      __m512i sum = acc[c][0];
      if constexpr (kChains == 2) sum = _mm512_add_epi32(sum, acc[c][1]);
      facc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(dw, _mm512_set1_ps(d[c])),
                                facc[c]);
      if constexpr (kHasMin<Block>) {
        facc[c] = _mm512_fmadd_ps(f16x16(x[b].m), _mm512_set1_ps(s_a[c]), facc[c]);
      }
    }
  }
#pragma GCC unroll 16
  for (int c = 0; c < R; ++c) _mm512_store_ps(y + c * kRows, facc[c]);
}

// tile_t over the first `rows` rows of a tile of width W (whose rows are more than W / 2: a
// tail tile is 4 wide up to 4 rows, else 8).
template <class Block, int W>
void tile_rows(int rows, const Block* x, const uint8_t* t, float* y, int64_t b0, int64_t b1,
               bool fetch) {
  constexpr int kLo = W == kActTile ? W / 2 + 1 : 1;
  with_count<kLo, W>(rows,
                     [&](auto r) { tile_t<Block, W, decltype(r)::value>(x, t, y, b0, b1, fetch); });
}

// Blocks per chunk of the walk over the inputs: 16 blocks of 16 rows are 8.5 KiB of Q8_0
// weights, which stay in L1 beside the activation tiles that read them (5 KiB per tile).
constexpr int64_t kChunkBlocks = 16;
// Activation rows per pass over a group (the scratch below holds their sums).
constexpr int kScratchRows = 64;

// Kernels::Packed::gemm: rows a multiple of 16 (w = the packed groups, ws = bytes per group).
// One activation row (decoding) streams the weights through tile() with two integer chains;
// more rows come as act_tiles() laid them out, and each group's inputs are walked chunk by
// chunk, every tile of activation rows passing over a chunk while it is in L1, so the
// weights come from memory once whatever n is. Every (row, activation) pair runs the same
// operations in any tile.
template <class Block>
void gemm16(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, int n, float* y,
            size_t ldy, int64_t cols) {
  const int64_t nb = cols / kQK;
  // The tiles accumulate into a contiguous scratch, copied to y once per group: y's rows lie
  // a whole output apart, and 16 of them at such a stride share a couple of L1 sets and
  // alias the loads behind the stores (measured: a third slower).
  alignas(64) thread_local float acc[kScratchRows * kRows];
  for (int64_t r = 0; r < rows; r += kRows) {
    const Block* x = reinterpret_cast<const Block*>(w + (r / kRows) * ws);
    if (n == 1) {
      tile<Block, 1>(x, a, as, y + r, ldy, nb);
      continue;
    }
    for (int i0 = 0; i0 < n; i0 += kScratchRows) {
      const int m = std::min(kScratchRows, n - i0);
      for (int64_t b0 = 0; b0 < nb; b0 += kChunkBlocks) {
        const int64_t b1 = std::min(nb, b0 + kChunkBlocks);
        for (int g0 = 0; g0 < m; g0 += kActTile) {
          const uint8_t* t = a + size_t(i0 + g0) * nb * kActBlockBytes;
          float* yg = acc + g0 * kRows;
          const int rows_here = std::min(kActTile, m - g0);
          if (tail_width(rows_here) == 8)
            tile_rows<Block, 8>(rows_here, x, t, yg, b0, b1, g0 == 0);
          else
            tile_rows<Block, 4>(rows_here, x, t, yg, b0, b1, g0 == 0);
        }
      }
      for (int i = 0; i < m; ++i)
        _mm512_storeu_ps(y + (i0 + i) * ldy + r, _mm512_load_ps(acc + i * kRows));
    }
  }
}

template <class In, class Out, void (*Codes)(const In&, uint8_t*)>
Kernels::Packed packed16() {
  return {kRows,          pack16<In, Out, Codes>, gemm16<Out>, nullptr,
          act_tiles<Out>, act_tiles_bytes,        kActTile};
}

}  // namespace

void install_packed_vnni(Kernels& t) {
  t.packed[kernel_slot(GgmlType::Q8_0)] = packed16<BlockQ8_0, BlockQ8_0x16, codes_q8_0>();
  t.packed[kernel_slot(GgmlType::Q4_0)] = packed16<BlockQ4_0, BlockQ4_0x16, file_codes_4bit>();
  t.packed[kernel_slot(GgmlType::Q5_0)] = packed16<BlockQ5_0, BlockQ5_0x16, file_codes_5bit>();
  t.packed[kernel_slot(GgmlType::IQ4_NL)] =
      packed16<BlockIQ4_NL, BlockIQ4_NLx16, file_codes_4bit>();
  t.packed[kernel_slot(GgmlType::Q4_1)] = packed16<BlockQ4_1, BlockQ4_1x16, file_codes_4bit>();
  t.packed[kernel_slot(GgmlType::Q5_1)] = packed16<BlockQ5_1, BlockQ5_1x16, file_codes_5bit>();
}

}  // namespace leapfrog::cpu
