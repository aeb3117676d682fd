// Matrix products on the GPU.
//
// Quantized weights (wlayout.h) multiply int8 activations on the tensor cores: a warp owns
// a tile of 16 weight rows and walks its share of the input groups (256 inputs each); for
// every group it decodes the weights' A fragments and scales once into registers and then
// runs them against every 8-token tile of the batch (mma.sync m16n8k32 s8, m16n8k16 for
// Q6_K's 16-value scales), scaling each 32-input step's exact int32 sum into f32
// accumulators. Warps that split one tile's inputs (`ks`, chosen from the weight's shape
// alone) add their partial sums in a fixed order. So every (row, token) result is the same
// sequence of float operations whatever the batch size: batched rows are bit-identical to
// one-token products. The activations are quantized per 32 inputs exactly as the CPU's
// Q8_0 activations (f16-rounded scale, round-to-nearest-even quants).
//
// F32/F16/BF16 weights take a plain f32 warp-per-row kernel (activations rounded to the
// weight's type first, as on the CPU).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/kernels.h"

namespace leapfrog::cuda {

namespace {

__global__ void repack_kernel(QLayout L, const uint8_t* __restrict__ raw, size_t row_bytes,
                              uint8_t* __restrict__ out) {
  const size_t idx = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  const size_t total = size_t(L.tiles) * L.groups * 32;
  if (idx >= total) return;
  const int lane = static_cast<int>(idx % 32);
  const size_t c = idx / 32;
  repack_lane(L, raw, row_bytes, static_cast<int64_t>(c / L.groups),
              static_cast<int64_t>(c % L.groups), lane, out);
}

// 32-value weights: the CPU's Q8_0 activations, one warp per (token, 32-input block).
__global__ void quantize_q8_0_kernel(const float* __restrict__ x, int n, int64_t cols,
                                     int64_t groups, uint8_t* __restrict__ q,
                                     uint32_t* __restrict__ s) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int j = blockIdx.y * 8 + warp;
  const int64_t blk = blockIdx.x;
  const int64_t k = blk * 32 + lane;
  const float v = (j < n && k < cols) ? x[size_t(j) * cols + k] : 0.0f;
  const float amax = warp_max(fabsf(v));
  const float d = __fdiv_rn(amax, 127.0f);
  const float id = d != 0.0f ? __fdiv_rn(1.0f, d) : 0.0f;
  const int qi = __float2int_rn(__fmul_rn(v, id));
  const int T = j >> 3, gid = j & 7;
  const int64_t G = blk >> 3;
  const int st = static_cast<int>(blk & 7);
  const int reg = lane >> 4, tq = (lane & 15) >> 2, b = lane & 3;
  q[((size_t(T) * groups + G) * 32 + gid * 4 + tq) * 64 + st * 8 + reg * 4 + b] =
      static_cast<uint8_t>(static_cast<int8_t>(qi));
  if (lane == 0) {
    s[((size_t(T) * groups + G) * 8 + gid) * 8 + st] =
        __float_as_uint(__half2float(__float2half_rn(d)));
  }
}

// K-quant weights: the CPU's Q8_K activations (quant_q8_k), one warp per (token, group),
// 8 consecutive inputs per lane.
__global__ void quantize_q8_k_kernel(const float* __restrict__ x, int n, int64_t cols,
                                     int64_t groups, uint8_t* __restrict__ q,
                                     uint32_t* __restrict__ s) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int j = blockIdx.y * 8 + warp;
  const int64_t G = blockIdx.x;
  const int64_t k0 = G * 256 + lane * 8;
  float v[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = (j < n && k0 + i < cols) ? x[size_t(j) * cols + k0 + i] : 0.0f;
  float amax = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) amax = fmaxf(amax, fabsf(v[i]));
  amax = warp_max(amax);
  int qv[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  float d = 0.0f;
  if (amax != 0.0f) {
    // The first value of largest magnitude maps to -127 exactly.
    int first = 256;
#pragma unroll
    for (int i = 7; i >= 0; --i) {
      if (v[i] == amax || v[i] == -amax) first = lane * 8 + i;
    }
    first = __reduce_min_sync(0xffffffffu, first);
    float c = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      if (i == (first & 7)) c = v[i];
    }
    const float xf = __shfl_sync(0xffffffffu, c, first >> 3);
    const float iscale = __fdiv_rn(-127.0f, xf);
#pragma unroll
    for (int i = 0; i < 8; ++i) qv[i] = min(__float2int_rn(__fmul_rn(iscale, v[i])), 127);
    d = __fdiv_rn(1.0f, iscale);
  }
  int ps = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) ps += qv[i];
  ps += __shfl_xor_sync(0xffffffffu, ps, 1);
  ps += __shfl_xor_sync(0xffffffffu, ps, 2);
  const int T = j >> 3, gid = j & 7;
  uint8_t* qt = q + (size_t(T) * groups + G) * 2048;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int e = lane * 8 + i, st = e >> 5, jj = e & 31;
    const int reg = jj >> 4, tq = (jj & 15) >> 2, b = jj & 3;
    qt[(gid * 4 + tq) * 64 + st * 8 + reg * 4 + b] =
        static_cast<uint8_t>(static_cast<int8_t>(qv[i]));
  }
  uint32_t* rec = s + ((size_t(T) * groups + G) * 8 + gid) * 8;
  if (lane == 0) {
    rec[0] = __float_as_uint(d);
    rec[5] = rec[6] = rec[7] = 0;
  }
  if ((lane & 3) == 0) reinterpret_cast<int16_t*>(rec + 1)[lane >> 2] = static_cast<int16_t>(ps);
}

__device__ __forceinline__ void mma_k32(int (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                        uint32_t b1) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%10,%10,%10,%10};"
      : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(0));
}
__device__ __forceinline__ void mma_k16(int (&c)[4], uint32_t a0, uint32_t a1, uint32_t b0) {
  asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
      "{%7,%7,%7,%7};"
      : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
      : "r"(a0), "r"(a1), "r"(b0), "r"(0));
}

// 16-byte loads: weights are streamed (read once), activations cached (read by every tile).
template <int N16>
__device__ __forceinline__ void ld_stream(uint32_t* dst, const uint8_t* p) {
#pragma unroll
  for (int i = 0; i < N16; ++i) {
    const uint4 v = __ldcs(reinterpret_cast<const uint4*>(p) + i);
    dst[4 * i] = v.x, dst[4 * i + 1] = v.y, dst[4 * i + 2] = v.z, dst[4 * i + 3] = v.w;
  }
}
template <int N16>
__device__ __forceinline__ void ld_cached(uint32_t* dst, const void* p) {
#pragma unroll
  for (int i = 0; i < N16; ++i) {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(p) + i);
    dst[4 * i] = v.x, dst[4 * i + 1] = v.y, dst[4 * i + 2] = v.z, dst[4 * i + 3] = v.w;
  }
}

struct MmqArgs {
  const uint8_t *q8, *q4, *h1, *h2, *sc, *d6;
  const uint8_t* xq;
  const uint32_t* xs;
  float* y;
  size_t ldy;
  int64_t rows;
  int tiles, groups, n;
  int t0;  // tokens [t0, n) of the tiles are stored, token t at row t - t0 of y
  int ks;  // input slices (fixed by the weight's shape)
  int kw;  // warps per row tile (ks / KP)
  int rt;  // row tiles per block
};

// Up to three weights of one kind and shape family over the same activations in one launch
// (Q/K/V, gate/up): blocks [first[i], first[i+1]) belong to weight i.
struct MmqMulti {
  MmqArgs w[3];
  int first[4];
  int count;
};

// The kinds' families, by how their scales enter the sums:
//   per 32 inputs in float (Q8_0, Q4_0, Q5_0, IQ4_NL), with an offset (Q4_1, Q5_1);
//   per super-block of 256 in integers: per-32 scale and min (Q4_K, Q5_K), per-32 scale
//   (IQ4_XS), per-16 scale (Q6_K, Q3_K), per-16 scale and min (Q2_K).
template <QKind K>
constexpr bool kOffsetKind = K == QKind::Q4_1 || K == QKind::Q5_1;
template <QKind K>
constexpr bool kK4Kind = K == QKind::Q4_K || K == QKind::Q5_K;
template <QKind K>
constexpr bool kScale16Kind = K == QKind::Q6_K || K == QKind::Q3_K;
template <QKind K>
constexpr bool kSuperKind = kK4Kind<K> || kScale16Kind<K> || K == QKind::Q2_K || K == QKind::IQ4_XS;
template <QKind K>
constexpr bool kHi1Kind = K == QKind::Q5_0 || K == QKind::Q5_K || K == QKind::Q5_1;

// One chunk (16-row tile, 256-input group) of a weight in registers.
template <QKind K>
struct WRegs {
  uint32_t q[K == QKind::Q8_0 ? 32 : 16];
  uint32_t h[K == QKind::Q6_K ? 8 : 4];
  uint32_t sc0[4], sc1[4];
  uint32_t d0, d1;      // Q6_K/Q3_K: the f16 d; Q2_K: d | dmin << 16
  uint32_t m0[4], m1[4];  // Q4_1/Q5_1: the 8 f16 offsets
};

template <QKind K>
__device__ __forceinline__ void load_chunk(WRegs<K>& w, const MmqArgs& a, size_t c, int lane) {
  const int gid = lane >> 2;
  if constexpr (K == QKind::Q8_0) {
    ld_stream<8>(w.q, a.q8 + c * 4096 + lane * 128);
  } else {
    ld_stream<4>(w.q, a.q4 + c * 2048 + lane * 64);
  }
  if constexpr (kHi1Kind<K>) ld_stream<1>(w.h, a.h1 + c * 512 + lane * 16);
  if constexpr (K == QKind::Q6_K) ld_stream<2>(w.h, a.h2 + c * 1024 + lane * 32);
  ld_stream<1>(w.sc0, a.sc + c * 256 + gid * 16);
  ld_stream<1>(w.sc1, a.sc + c * 256 + (gid + 8) * 16);
  if constexpr (kScale16Kind<K>) {
    w.d0 = __ldcs(reinterpret_cast<const unsigned short*>(a.d6 + c * 32) + gid);
    w.d1 = __ldcs(reinterpret_cast<const unsigned short*>(a.d6 + c * 32) + gid + 8);
  } else if constexpr (K == QKind::Q2_K) {
    w.d0 = __ldcs(reinterpret_cast<const unsigned int*>(a.d6 + c * 64) + gid);
    w.d1 = __ldcs(reinterpret_cast<const unsigned int*>(a.d6 + c * 64) + gid + 8);
  } else if constexpr (kOffsetKind<K>) {
    ld_stream<1>(w.m0, a.d6 + c * 256 + gid * 16);
    ld_stream<1>(w.m1, a.d6 + c * 256 + (gid + 8) * 16);
  }
}

__device__ __forceinline__ int asum_of(const uint32_t* rec, int s) {
  return static_cast<int16_t>((rec[1 + (s >> 1)] >> (16 * (s & 1))) & 0xFFFF);
}

__device__ __forceinline__ float round_f16(float x) { return __half2float(__float2half_rn(x)); }

// One chunk against every token tile: acc[T][0..3] = (row gid, token 2tq), (gid, 2tq+1),
// (gid+8, 2tq), (gid+8, 2tq+1) of tile T.
template <QKind K, int NT>
__device__ __forceinline__ void mmq_chunk(const WRegs<K>& w, const MmqArgs& a, int g, int lane,
                                          float (&acc)[NT][4]) {
  constexpr bool kK4 = kK4Kind<K>;
  constexpr bool k16 = kScale16Kind<K>;
  constexpr bool kQ2 = K == QKind::Q2_K;
  constexpr bool kXS = K == QKind::IQ4_XS;
  const int tq = lane & 3;
  uint32_t A[8][4];
#pragma unroll
  for (int s = 0; s < 8; ++s) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (K == QKind::Q8_0)
        A[s][i] = frag_word<K>(w.q, nullptr, nullptr, nullptr, s, i);
      else if constexpr (K == QKind::Q6_K)
        A[s][i] = frag_word<K>(nullptr, w.q, nullptr, w.h, s, i);
      else
        A[s][i] = frag_word<K>(nullptr, w.q, w.h, nullptr, s, i);
    }
  }
  // Weight scales of the lane's two rows.
  float dw0[8], dw1[8], dm0[8], dm1[8];
  int sc0[16], sc1[16], mn0[16], mn1[16];
  float fd0 = 0, fd1 = 0, fm0 = 0, fm1 = 0;
  if constexpr (!kSuperKind<K>) {
    step_scales<K>(w.sc0, w.m0, dw0, dm0);
    step_scales<K>(w.sc1, w.m1, dw1, dm1);
  } else if constexpr (kK4) {
    uint32_t s6[2], m6[2];
    k4_unpack(w.sc0[1], w.sc0[2], w.sc0[3], s6, m6);
#pragma unroll
    for (int s = 0; s < 8; ++s) sc0[s] = byte_of(s6, s), mn0[s] = byte_of(m6, s);
    k4_unpack(w.sc1[1], w.sc1[2], w.sc1[3], s6, m6);
#pragma unroll
    for (int s = 0; s < 8; ++s) sc1[s] = byte_of(s6, s), mn1[s] = byte_of(m6, s);
    fd0 = f16f(w.sc0[0] & 0xFFFF), fm0 = f16f(w.sc0[0] >> 16);
    fd1 = f16f(w.sc1[0] & 0xFFFF), fm1 = f16f(w.sc1[0] >> 16);
  } else if constexpr (kXS) {
#pragma unroll
    for (int s = 0; s < 8; ++s) {
      sc0[s] = static_cast<int8_t>(byte_of(w.sc0, 2 + s));
      sc1[s] = static_cast<int8_t>(byte_of(w.sc1, 2 + s));
    }
    fd0 = f16f(w.sc0[0] & 0xFFFF), fd1 = f16f(w.sc1[0] & 0xFFFF);
  } else if constexpr (kQ2) {
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      sc0[j] = byte_of(w.sc0, j) & 0xF, mn0[j] = byte_of(w.sc0, j) >> 4;
      sc1[j] = byte_of(w.sc1, j) & 0xF, mn1[j] = byte_of(w.sc1, j) >> 4;
    }
    fd0 = f16f(w.d0 & 0xFFFF), fm0 = f16f(w.d0 >> 16);
    fd1 = f16f(w.d1 & 0xFFFF), fm1 = f16f(w.d1 >> 16);
  } else {
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      sc0[j] = static_cast<int8_t>(byte_of(w.sc0, j));
      sc1[j] = static_cast<int8_t>(byte_of(w.sc1, j));
    }
    fd0 = f16f(w.d0), fd1 = f16f(w.d1);
  }
#pragma unroll
  for (int T = 0; T < NT; ++T) {
    const size_t xc = size_t(T) * a.groups + g;
    uint32_t B[16], r0[8], r1[8];
    ld_cached<4>(B, a.xq + (xc * 32 + lane) * 64);
    ld_cached<2>(r0, a.xs + (xc * 8 + 2 * tq) * 8);
    ld_cached<2>(r1, a.xs + (xc * 8 + 2 * tq + 1) * 8);
    if constexpr (kSuperKind<K>) {
      int sq[4] = {0, 0, 0, 0}, sm[4] = {0, 0, 0, 0};
#pragma unroll
      for (int s = 0; s < 8; ++s) {
        if constexpr (k16 || kQ2) {
          int lo[4], hi[4];
          mma_k16(lo, A[s][0], A[s][1], B[2 * s]);
          mma_k16(hi, A[s][2], A[s][3], B[2 * s + 1]);
          sq[0] += sc0[2 * s] * lo[0] + sc0[2 * s + 1] * hi[0];
          sq[1] += sc0[2 * s] * lo[1] + sc0[2 * s + 1] * hi[1];
          sq[2] += sc1[2 * s] * lo[2] + sc1[2 * s + 1] * hi[2];
          sq[3] += sc1[2 * s] * lo[3] + sc1[2 * s + 1] * hi[3];
          if constexpr (kQ2) {
            // Each 16-input half's min times its activation sum, exactly, as one more
            // product: A holds the row's min in every byte.
            int mlo[4], mhi[4];
            mma_k16(mlo, mn0[2 * s] * 0x01010101u, mn1[2 * s] * 0x01010101u, B[2 * s]);
            mma_k16(mhi, mn0[2 * s + 1] * 0x01010101u, mn1[2 * s + 1] * 0x01010101u,
                    B[2 * s + 1]);
#pragma unroll
            for (int j = 0; j < 4; ++j) sm[j] += mlo[j] + mhi[j];
          }
        } else {
          int r[4];
          mma_k32(r, A[s], B[2 * s], B[2 * s + 1]);
          sq[0] += sc0[s] * r[0];
          sq[1] += sc0[s] * r[1];
          sq[2] += sc1[s] * r[2];
          sq[3] += sc1[s] * r[3];
          if constexpr (kK4) {
            const int a0 = asum_of(r0, s), a1 = asum_of(r1, s);
            sm[0] += mn0[s] * a0;
            sm[1] += mn0[s] * a1;
            sm[2] += mn1[s] * a0;
            sm[3] += mn1[s] * a1;
          }
        }
      }
      // Per super-block exactly as the CPU's dot_q4_k / dot_q5_k / dot_q6_k / dot_q2_k /
      // dot_q3_k / dot_iq4_xs.
      const float da0 = __uint_as_float(r0[0]), da1 = __uint_as_float(r1[0]);
      const float dws[4] = {fd0, fd0, fd1, fd1}, dms[4] = {fm0, fm0, fm1, fm1};
      const float das[4] = {da0, da1, da0, da1};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float d = __fmul_rn(dws[j], das[j]);
        float term;
        if constexpr (k16 || kXS) {
          term = __fmul_rn(d, __int2float_rn(sq[j]));
        } else {
          const float dmin = __fmul_rn(dms[j], das[j]);
          term = __fsub_rn(__fmul_rn(d, __int2float_rn(sq[j])),
                           __fmul_rn(dmin, __int2float_rn(sm[j])));
        }
        acc[T][j] = __fadd_rn(acc[T][j], term);
      }
    } else if constexpr (kOffsetKind<K>) {
      // Q4_1/Q5_1 as the CPU's dot_qx_1: d * da * <q, a> + m * f16(da * sum(a)); the
      // activations' block sums come from one more product with every weight byte 1.
      const uint32_t ones[4] = {0x01010101u, 0x01010101u, 0x01010101u, 0x01010101u};
#pragma unroll
      for (int s = 0; s < 8; ++s) {
        int r[4], o[4];
        mma_k32(r, A[s], B[2 * s], B[2 * s + 1]);
        mma_k32(o, ones, B[2 * s], B[2 * s + 1]);
        const float da0 = __uint_as_float(r0[s]), da1 = __uint_as_float(r1[s]);
        const float t0 = round_f16(__fmul_rn(da0, __int2float_rn(o[0])));
        const float t1 = round_f16(__fmul_rn(da1, __int2float_rn(o[1])));
        const float das[4] = {da0, da1, da0, da1}, ts[4] = {t0, t1, t0, t1};
        const float dws[4] = {dw0[s], dw0[s], dw1[s], dw1[s]};
        const float dms[4] = {dm0[s], dm0[s], dm1[s], dm1[s]};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const float term = __fadd_rn(__fmul_rn(__fmul_rn(dws[j], das[j]), __int2float_rn(r[j])),
                                       __fmul_rn(dms[j], ts[j]));
          acc[T][j] = __fadd_rn(acc[T][j], term);
        }
      }
    } else {
#pragma unroll
      for (int s = 0; s < 8; ++s) {
        int r[4];
        mma_k32(r, A[s], B[2 * s], B[2 * s + 1]);
        const float da0 = __uint_as_float(r0[s]), da1 = __uint_as_float(r1[s]);
        acc[T][0] = __fmaf_rn(__int2float_rn(r[0]), __fmul_rn(dw0[s], da0), acc[T][0]);
        acc[T][1] = __fmaf_rn(__int2float_rn(r[1]), __fmul_rn(dw0[s], da1), acc[T][1]);
        acc[T][2] = __fmaf_rn(__int2float_rn(r[2]), __fmul_rn(dw1[s], da0), acc[T][2]);
        acc[T][3] = __fmaf_rn(__int2float_rn(r[3]), __fmul_rn(dw1[s], da1), acc[T][3]);
      }
    }
  }
}

// A block: rt row tiles x kw warps per tile. Warp kw of a tile owns input slices
// kw*KP .. kw*KP+KP-1, slice sl holding groups sl, sl+ks, sl+2ks, ... (ascending); each
// slice's sum is kept apart, and the ks slice sums are added in order 0..ks-1 at the end.
// So the arithmetic of every (row, token) depends on ks alone, not on KP, kw, rt or n.
// MULTI: the launch may hold several weights (selecting one costs registers, so the
// one-token kernels, where occupancy is everything, take one weight per launch).
template <QKind K, int NT, int KP, bool MULTI>
__global__ void __launch_bounds__(256, (NT >= 2 && NT <= 4) ? 2 : 1) mmq_kernel(const MmqMulti m) {
  constexpr bool kPrefetch = false;  // measured slower (more registers, fewer warps)
  const int bid = blockIdx.x;
  const int wi = !MULTI                               ? 0
                 : (m.count > 2 && bid >= m.first[2]) ? 2
                 : (m.count > 1 && bid >= m.first[1]) ? 1
                                                      : 0;
  const MmqArgs& a = m.w[wi];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int rt = warp % a.rt, kw = warp / a.rt;
  const int tile = (bid - m.first[wi]) * a.rt + rt;
  const bool active = tile < a.tiles;
  const int gid = lane >> 2, tq = lane & 3;

  float acc[KP][NT][4];
#pragma unroll
  for (int p = 0; p < KP; ++p) {
#pragma unroll
    for (int T = 0; T < NT; ++T) acc[p][T][0] = acc[p][T][1] = acc[p][T][2] = acc[p][T][3] = 0.0f;
  }

  if (active) {
    const size_t cbase = size_t(tile) * a.groups;
    WRegs<K> cur, nxt;
    if (kw * KP < a.groups) load_chunk(cur, a, cbase + kw * KP, lane);
    for (int base = 0; base < a.groups; base += a.ks) {
#pragma unroll
      for (int p = 0; p < KP; ++p) {
        const int g = base + kw * KP + p;
        if (g < a.groups) {
          const int gn = p + 1 < KP ? g + 1 : base + a.ks + kw * KP;
          if constexpr (kPrefetch) {
            if (gn < a.groups) load_chunk(nxt, a, cbase + gn, lane);
            mmq_chunk<K, NT>(cur, a, g, lane, acc[p]);
            cur = nxt;
          } else {
            mmq_chunk<K, NT>(cur, a, g, lane, acc[p]);
            if (gn < a.groups) load_chunk(cur, a, cbase + gn, lane);
          }
        }
      }
    }
  }

  __shared__ float red[32 * 128];  // [rt][slice][lane][4], rt * ks <= 32
  const int64_t row0 = int64_t(tile) * 16 + gid, row1 = row0 + 8;
#pragma unroll
  for (int T = 0; T < NT; ++T) {
    float v[4] = {acc[0][T][0], acc[0][T][1], acc[0][T][2], acc[0][T][3]};
    if (a.ks > 1) {
      if (active) {
#pragma unroll
        for (int p = 0; p < KP; ++p) {
          const int sl = kw * KP + p;
          if (sl < a.ks) {
#pragma unroll
            for (int j = 0; j < 4; ++j) red[((rt * a.ks + sl) * 32 + lane) * 4 + j] = acc[p][T][j];
          }
        }
      }
      __syncthreads();
      if (kw == 0 && active) {
        for (int sl = 1; sl < a.ks; ++sl) {
#pragma unroll
          for (int j = 0; j < 4; ++j)
            v[j] = __fadd_rn(v[j], red[((rt * a.ks + sl) * 32 + lane) * 4 + j]);
        }
      }
      __syncthreads();
    }
    if (kw == 0 && active) {
      const int t0 = T * 8 + 2 * tq, t1 = t0 + 1;
      if (row0 < a.rows) {
        if (t0 >= a.t0 && t0 < a.n) a.y[size_t(t0 - a.t0) * a.ldy + row0] = v[0];
        if (t1 >= a.t0 && t1 < a.n) a.y[size_t(t1 - a.t0) * a.ldy + row0] = v[1];
      }
      if (row1 < a.rows) {
        if (t0 >= a.t0 && t0 < a.n) a.y[size_t(t0 - a.t0) * a.ldy + row1] = v[2];
        if (t1 >= a.t0 && t1 < a.n) a.y[size_t(t1 - a.t0) * a.ldy + row1] = v[3];
      }
    }
  }
}

// Launch shapes: one slice per warp (KP = 1), so a tile's ks warps run in parallel; the
// kernel also takes KP > 1 (fewer warps, each keeping several slices apart) with the same
// arithmetic, which measured slower on the H200 (fewer loads in flight).
template <QKind K, int NT>
void mmq_kp(int kp, dim3 grid, dim3 block, const MmqMulti& a, cudaStream_t st) {
  (void)kp;
  if constexpr (NT == 1) {
    mmq_kernel<K, 1, 1, false><<<grid, block, 0, st>>>(a);
  } else {
    mmq_kernel<K, NT, 1, true><<<grid, block, 0, st>>>(a);
  }
}

template <QKind K>
void mmq_dispatch(int nt, int kp, dim3 grid, dim3 block, const MmqMulti& a, cudaStream_t st) {
  switch (nt) {
    case 1:
      mmq_kp<K, 1>(kp, grid, block, a, st);
      break;
    case 2:
      mmq_kp<K, 2>(kp, grid, block, a, st);
      break;
    case 3:
      mmq_kp<K, 3>(kp, grid, block, a, st);
      break;
    case 4:
      mmq_kp<K, 4>(kp, grid, block, a, st);
      break;
    case 5:
      mmq_kp<K, 5>(kp, grid, block, a, st);
      break;
    case 6:
      mmq_kp<K, 6>(kp, grid, block, a, st);
      break;
    case 7:
      mmq_kp<K, 7>(kp, grid, block, a, st);
      break;
    default:
      mmq_kp<K, 8>(kp, grid, block, a, st);
      break;
  }
}

// ---- F32 / F16 / BF16: one warp per row, 8 inputs per lane per 256-input step.
template <int WT>
__device__ __forceinline__ void load8(const uint8_t* p, float (&w)[8]) {
  if constexpr (WT == 0) {
    const float4 a = *reinterpret_cast<const float4*>(p);
    const float4 b = *reinterpret_cast<const float4*>(p + 16);
    w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
  } else {
    const uint4 v = *reinterpret_cast<const uint4*>(p);
    const uint32_t u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (WT == 1) {
        w[2 * i] = __half2float(__ushort_as_half(static_cast<unsigned short>(u[i] & 0xFFFF)));
        w[2 * i + 1] = __half2float(__ushort_as_half(static_cast<unsigned short>(u[i] >> 16)));
      } else {
        w[2 * i] = __uint_as_float(u[i] << 16);
        w[2 * i + 1] = __uint_as_float(u[i] & 0xFFFF0000u);
      }
    }
  }
}

template <int WT>
__device__ __forceinline__ float load1(const uint8_t* row, int64_t k) {
  if constexpr (WT == 0) return reinterpret_cast<const float*>(row)[k];
  const unsigned short h = reinterpret_cast<const unsigned short*>(row)[k];
  if constexpr (WT == 1) return __half2float(__ushort_as_half(h));
  return __uint_as_float(uint32_t(h) << 16);
}

// Activations rounded to the weight's type once (as the CPU prepares them).
template <int WT>
__global__ void round_acts_kernel(const float* __restrict__ x, float* __restrict__ xr,
                                  size_t count) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  if constexpr (WT == 1)
    xr[i] = __half2float(__float2half_rn(x[i]));
  else
    xr[i] = __bfloat162float(__float2bfloat16_rn(x[i]));
}

// One warp per row; VEC: 8 inputs per lane per 256-input step (rows 16-byte aligned),
// else one input per lane per 32-input step. Products summed per lane, then across the warp.
template <int WT, int NT, bool VEC>
__global__ void __launch_bounds__(256)
    matmul_float_kernel(const uint8_t* __restrict__ w, int64_t rows, int64_t cols,
                        const float* __restrict__ x, int n, float* __restrict__ y, size_t ldy) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t row = blockIdx.x * 8LL + warp;
  if (row >= rows) return;
  constexpr int esz = WT == 0 ? 4 : 2;
  const uint8_t* wr = w + row * cols * esz;
#pragma unroll 1
  for (int T = 0; T < NT; ++T) {
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if constexpr (VEC) {
      for (int64_t k0 = lane * 8; k0 < cols; k0 += 256) {
        float wv[8];
        load8<WT>(wr + k0 * esz, wv);
#pragma unroll
        for (int t = 0; t < 8; ++t) {
          const int tok = T * 8 + t;
          if (tok < n) {
            const float* xr = x + size_t(tok) * cols + k0;
            const float4 x0 = __ldg(reinterpret_cast<const float4*>(xr));
            const float4 x1 = __ldg(reinterpret_cast<const float4*>(xr + 4));
            const float xv[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[t] = __fmaf_rn(wv[e], xv[e], acc[t]);
          }
        }
      }
    } else {
      for (int64_t k = lane; k < cols; k += 32) {
        const float wv = load1<WT>(wr, k);
#pragma unroll
        for (int t = 0; t < 8; ++t) {
          const int tok = T * 8 + t;
          if (tok < n) acc[t] = __fmaf_rn(wv, __ldg(x + size_t(tok) * cols + k), acc[t]);
        }
      }
    }
#pragma unroll
    for (int t = 0; t < 8; ++t) {
      const float v = warp_sum(acc[t]);
      const int tok = T * 8 + t;
      if (lane == t && tok < n) y[size_t(tok) * ldy + row] = v;
    }
  }
}

template <int WT, bool VEC>
void float_dispatch(int nt, dim3 grid, const uint8_t* w, int64_t rows, int64_t cols, const float* x,
                    int n, float* y, size_t ldy, cudaStream_t st) {
  switch (nt) {
    case 1:
      matmul_float_kernel<WT, 1, VEC><<<grid, 256, 0, st>>>(w, rows, cols, x, n, y, ldy);
      break;
    case 2:
      matmul_float_kernel<WT, 2, VEC><<<grid, 256, 0, st>>>(w, rows, cols, x, n, y, ldy);
      break;
    case 3:
    case 4:
      matmul_float_kernel<WT, 4, VEC><<<grid, 256, 0, st>>>(w, rows, cols, x, n, y, ldy);
      break;
    default:
      matmul_float_kernel<WT, 8, VEC><<<grid, 256, 0, st>>>(w, rows, cols, x, n, y, ldy);
      break;
  }
}

template <int WT>
void float_products(dim3 grid, const uint8_t* w, int64_t rows, int64_t cols, const float* x, int n,
                    float* y, size_t ldy, cudaStream_t st) {
  const bool vec = cols % 8 == 0 && reinterpret_cast<uintptr_t>(w) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(x) % 16 == 0;
  for (int i0 = 0; i0 < n; i0 += 64) {
    const int m = std::min(64, n - i0);
    const int nt = (m + 7) / 8;
    const float* xi = x + size_t(i0) * cols;
    float* yi = y + size_t(i0) * ldy;
    if (vec)
      float_dispatch<WT, true>(nt, grid, w, rows, cols, xi, m, yi, ldy, st);
    else
      float_dispatch<WT, false>(nt, grid, w, rows, cols, xi, m, yi, ldy, st);
  }
}

}  // namespace

void launch_repack(const QLayout& L, const uint8_t* raw, size_t row_bytes, uint8_t* out,
                   cudaStream_t stream) {
  const size_t threads = size_t(L.tiles) * L.groups * 32;
  repack_kernel<<<ceil_div(threads, 128), 128, 0, stream>>>(L, raw, row_bytes, out);
  LF_LAUNCHED("repack");
}

void launch_quantize_act(const float* x, int n, int64_t cols, int64_t groups, bool kquant,
                         ActQ8 act, cudaStream_t stream) {
  if (kquant) {
    const dim3 grid(static_cast<unsigned>(groups), ceil_div(n, 8));
    quantize_q8_k_kernel<<<grid, 256, 0, stream>>>(x, n, cols, groups, act.q, act.s);
  } else {
    const dim3 grid(static_cast<unsigned>(groups * 8), ceil_div(n, 8));
    quantize_q8_0_kernel<<<grid, 256, 0, stream>>>(x, n, cols, groups, act.q, act.s);
  }
  LF_LAUNCHED("quantize_act");
}

int mmq_k_split(const QLayout& L, int sms) {
  // Enough warps for the whole GPU at one token (16 per multiprocessor): a power of two, at
  // most 8 and at most the groups.
  const int64_t want = (int64_t(sms) * 16 + L.tiles - 1) / L.tiles;
  int ks = 1;
  while (ks < 8 && ks < want && ks * 2 <= L.groups) ks *= 2;
  return ks;
}

void launch_mmq_multi(const QLayout* L, const uint8_t* const* w, int count, ActQ8 act, int n,
                      float* const* y, const size_t* ldy, int ks, cudaStream_t stream,
                      int first_token) {
  if (n < 1 || n > 64) throw std::invalid_argument("mmq: 1..64 tokens per launch");
  if (first_token < 0 || first_token >= n) throw std::invalid_argument("mmq: first token past n");
  if (count < 1 || count > 3) throw std::invalid_argument("mmq: 1..3 weights per launch");
  const int nt = (n + 7) / 8;
  // One slice per warp; several row tiles per block as the tokens grow (they share the
  // activations in L1).
  const int kp = 1, kw = ks;
  int rt = nt == 1 ? 1 : std::max(1, std::min(8 / kw, nt >= 4 ? 4 : 2));
  for (int j = 0; j < count; ++j) rt = static_cast<int>(std::min<int64_t>(rt, L[j].tiles));
  MmqMulti m{};
  m.count = count;
  int blocks = 0;
  for (int j = 0; j < count; ++j) {
    if (L[j].kind != L[0].kind || L[j].groups != L[0].groups) {
      throw std::invalid_argument("mmq: weights of one launch must share kind and inputs");
    }
    MmqArgs& a = m.w[j];
    a.q8 = w[j] + L[j].off_q8;
    a.q4 = w[j] + L[j].off_q4;
    a.h1 = w[j] + L[j].off_hi1;
    a.h2 = w[j] + L[j].off_hi2;
    a.sc = w[j] + L[j].off_sc;
    a.d6 = w[j] + L[j].off_d;
    a.xq = act.q;
    a.xs = act.s;
    a.y = y[j];
    a.ldy = ldy[j];
    a.rows = L[j].rows;
    a.tiles = static_cast<int>(L[j].tiles);
    a.groups = static_cast<int>(L[j].groups);
    a.n = n;
    a.t0 = first_token;
    a.ks = ks;
    a.kw = kw;
    a.rt = rt;
    m.first[j] = blocks;
    blocks += static_cast<int>(ceil_div(L[j].tiles, rt));
  }
  for (int j = count; j < 4; ++j) m.first[j] = blocks;
  const dim3 grid(blocks), block(32 * rt * kw);
  switch (L[0].kind) {
    case QKind::Q8_0:
      mmq_dispatch<QKind::Q8_0>(nt, kp, grid, block, m, stream);
      break;
    case QKind::Q4_0:
      mmq_dispatch<QKind::Q4_0>(nt, kp, grid, block, m, stream);
      break;
    case QKind::Q5_0:
      mmq_dispatch<QKind::Q5_0>(nt, kp, grid, block, m, stream);
      break;
    case QKind::Q4_K:
      mmq_dispatch<QKind::Q4_K>(nt, kp, grid, block, m, stream);
      break;
    case QKind::Q5_K:
      mmq_dispatch<QKind::Q5_K>(nt, kp, grid, block, m, stream);
      break;
    case QKind::Q6_K:
      mmq_dispatch<QKind::Q6_K>(nt, kp, grid, block, m, stream);
      break;
    case QKind::Q4_1:
      mmq_dispatch<QKind::Q4_1>(nt, kp, grid, block, m, stream);
      break;
    case QKind::Q5_1:
      mmq_dispatch<QKind::Q5_1>(nt, kp, grid, block, m, stream);
      break;
    case QKind::Q2_K:
      mmq_dispatch<QKind::Q2_K>(nt, kp, grid, block, m, stream);
      break;
    case QKind::Q3_K:
      mmq_dispatch<QKind::Q3_K>(nt, kp, grid, block, m, stream);
      break;
    case QKind::IQ4_NL:
      mmq_dispatch<QKind::IQ4_NL>(nt, kp, grid, block, m, stream);
      break;
    case QKind::IQ4_XS:
      mmq_dispatch<QKind::IQ4_XS>(nt, kp, grid, block, m, stream);
      break;
    default:
      throw std::invalid_argument("mmq: not a quantized type");
  }
  LF_LAUNCHED("mmq");
}

void launch_mmq(const QLayout& L, const uint8_t* w, ActQ8 act, int n, float* y, size_t ldy, int ks,
                cudaStream_t stream) {
  launch_mmq_multi(&L, &w, 1, act, n, &y, &ldy, ks, stream);
}

void launch_matmul_float(GgmlType t, const uint8_t* w, int64_t rows, int64_t cols, const float* x,
                         int n, float* y, size_t ldy, float* x_scratch, cudaStream_t stream) {
  const dim3 grid(ceil_div(rows, 8));
  const size_t count = size_t(n) * cols;
  switch (t) {
    case GgmlType::F32:
      float_products<0>(grid, w, rows, cols, x, n, y, ldy, stream);
      break;
    case GgmlType::F16:
      round_acts_kernel<1><<<ceil_div(count, 256), 256, 0, stream>>>(x, x_scratch, count);
      float_products<1>(grid, w, rows, cols, x_scratch, n, y, ldy, stream);
      break;
    case GgmlType::BF16:
      round_acts_kernel<2><<<ceil_div(count, 256), 256, 0, stream>>>(x, x_scratch, count);
      float_products<2>(grid, w, rows, cols, x_scratch, n, y, ldy, stream);
      break;
    default:
      throw std::invalid_argument("matmul: not a float type");
  }
  LF_LAUNCHED("matmul_float");
}

}  // namespace leapfrog::cuda
