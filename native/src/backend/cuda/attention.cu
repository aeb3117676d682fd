// Attention over the f16 cache, split over the cache positions (flash-decoding): a block
// per (chunk of `chunk` positions, KV head, block of query rows) computes, for the rows and
// the KV head's group of query heads (GQA), the chunk's scores (a thread per position), its
// softmax numerators (a warp per row and head) and their weighted sum of the values (threads
// across the head dimension); every key and value is loaded once for all rows and heads of
// the block. A second kernel combines each (row, head)'s chunks in order. Chunks start at
// fixed multiples of `chunk` (a function of the cache's size) and positions a row does not
// see contribute exact zeros, so a row's result depends only on its query, its visible
// positions and the cache: batched rows equal one-row calls bit for bit. The query is rounded
// to f16 to meet the f16 keys, as on the CPU.
#include <cuda_fp16.h>

#include <algorithm>
#include <stdexcept>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/kernels.h"

namespace leapfrog::cuda {

namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;

__device__ __forceinline__ int visible_limit(const AttnLaunch& a, int i) {
  return a.mask ? a.kv_len : min(a.kv_len, a.q_pos[i] + 1);
}

// A dot product as a score: scaled, then soft-capped where asked (gemma2), as on the CPU.
__device__ __forceinline__ float scaled_score(float dot, const AttnLaunch& a) {
  const float s = __fmul_rn(dot, a.scale);
  if (a.softcap <= 0) return s;
  return __fmul_rn(tanhf(__fmul_rn(s, __fdiv_rn(1.0f, a.softcap))), a.softcap);
}

// Block (chunk c, KV head, block of MAXR query rows): the rows share every key and value
// load. MAXG: query heads per KV head rounded up to a power of two; ND: dimensions per
// thread in the value sum (2 when head_dim > 128). Keys, then values, pass through shared
// memory 128 positions at a time, loaded by the whole block at once (coalesced, all in
// flight); a thread scores 2 positions for half of the (row, head) pairs, so each query
// value read from shared memory serves two positions.
template <int MAXG, int ND, int MAXR>
__global__ void __launch_bounds__(kThreads) attn_chunk_kernel(const AttnLaunch a, int n_chunks) {
  constexpr int MAXP = MAXR * MAXG;  // (row, head) pairs per block
  constexpr int kSub = 128;          // positions per shared-memory piece
  const int c = blockIdx.x, kvh = blockIdx.y, r0 = blockIdx.z * MAXR;
  const int t = threadIdx.x, warp = t >> 5, lane = t & 31;
  const int G = a.n_heads / a.n_kv_heads, hd = a.head_dim, C = a.chunk;
  const int kv_dim = a.n_kv_heads * hd, q_dim = a.n_heads * hd;
  const int R = min(MAXR, a.n - r0), NP = R * G;
  const int j0 = c * C;
  const int kst = hd + 8;  // padded row of the staged keys/values (halves): no bank conflicts
  extern __shared__ __align__(16) float smem[];
  float* q_s = smem;             // [pair][hd], pair = r * G + h
  float* s_s = q_s + MAXP * hd;  // [pair][C]
  const int nd = min(hd, kThreads), P = kThreads / nd;
  float* red = s_s + MAXP * C;  // [position lane][pair][hd] (value sums, head_dim < 128)
  uint16_t* kv_s = reinterpret_cast<uint16_t*>(red + (P > 1 ? size_t(P) * MAXP * hd : 0));
  __shared__ int lim_s[MAXR];
  __shared__ float2 ml_s[MAXP];
  __shared__ uint8_t vis_s[MAXR][kSub];

  if (t < R) lim_s[t] = visible_limit(a, r0 + t);
  __syncthreads();
  int maxlim = 0;
  for (int r = 0; r < R; ++r) maxlim = max(maxlim, lim_s[r]);
  // A chunk no row sees (a recorded pass launches chunks for the whole cache): nothing to do.
  if (j0 >= maxlim) {
    for (int p = t; p < NP; p += kThreads) {
      const int r = p / G, h = p % G;
      a.part_ml[(size_t(r0 + r) * a.n_heads + size_t(kvh) * G + h) * n_chunks + c] =
          make_float2(-INFINITY, 0.0f);
    }
    return;
  }
#pragma unroll 4
  for (int idx = t; idx < NP * hd; idx += kThreads) {
    const int r = idx / (G * hd), rest = idx % (G * hd);
    const float qv = a.q[size_t(r0 + r) * q_dim + size_t(kvh) * G * hd + rest];
    q_s[idx] = __half2float(__float2half_rn(qv));  // the f16 cache's query, as on the CPU
  }
  __syncthreads();
  const int len = min(j0 + C, maxlim) - j0;
  const int row16 = hd / 8;  // 16-byte pieces per key/value row

  // Scores.
  const int pg = t & 63, ph = t >> 6;
  for (int sub = 0; sub < len; sub += kSub) {
    const int sl = min(kSub, len - sub);
    __syncthreads();  // the previous piece is consumed
#pragma unroll 4
    for (int idx = t; idx < sl * row16; idx += kThreads) {
      const int jj = idx / row16, part = idx % row16;
      *reinterpret_cast<uint4*>(kv_s + jj * kst + part * 8) = *reinterpret_cast<const uint4*>(
          a.k + size_t(j0 + sub + jj) * kv_dim + size_t(kvh) * hd + part * 8);
    }
    for (int idx = t; idx < R * kSub; idx += kThreads) {
      const int r = idx / kSub, jj = idx % kSub, j = j0 + sub + jj;
      vis_s[r][jj] = jj < sl && j < lim_s[r] &&
                     (!a.mask || a.mask[size_t(r0 + r) * a.kv_len + j]) &&
                     (a.window <= 0 || a.q_pos[r0 + r] - j < a.window);
    }
    __syncthreads();
    float acc[2][(MAXP + 1) / 2];
#pragma unroll
    for (int u = 0; u < 2; ++u) {
#pragma unroll
      for (int i = 0; i < (MAXP + 1) / 2; ++i) acc[u][i] = 0.0f;
    }
    const int jA = pg, jB = pg + 64;
    const uint16_t* kA = kv_s + min(jA, sl - 1) * kst;
    const uint16_t* kB = kv_s + min(jB, sl - 1) * kst;
    for (int e0 = 0; e0 < hd; e0 += 8) {
      float ka[8], kb[8];
      const uint4 ua = *reinterpret_cast<const uint4*>(kA + e0);
      const uint4 ub = *reinterpret_cast<const uint4*>(kB + e0);
      const uint32_t wa[4] = {ua.x, ua.y, ua.z, ua.w}, wb[4] = {ub.x, ub.y, ub.z, ub.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        ka[2 * i] = __half2float(__ushort_as_half(static_cast<unsigned short>(wa[i] & 0xFFFF)));
        ka[2 * i + 1] = __half2float(__ushort_as_half(static_cast<unsigned short>(wa[i] >> 16)));
        kb[2 * i] = __half2float(__ushort_as_half(static_cast<unsigned short>(wb[i] & 0xFFFF)));
        kb[2 * i + 1] = __half2float(__ushort_as_half(static_cast<unsigned short>(wb[i] >> 16)));
      }
#pragma unroll
      for (int i = 0; i < (MAXP + 1) / 2; ++i) {
        const int p = 2 * i + ph;
        if (p < NP) {
          const float* qq = q_s + p * hd + e0;
          const float4 q0 = *reinterpret_cast<const float4*>(qq);
          const float4 q1 = *reinterpret_cast<const float4*>(qq + 4);
          const float qv[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};
          float va = acc[0][i], vb = acc[1][i];
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            va = __fmaf_rn(ka[e], qv[e], va);
            vb = __fmaf_rn(kb[e], qv[e], vb);
          }
          acc[0][i] = va, acc[1][i] = vb;
        }
      }
    }
#pragma unroll
    for (int i = 0; i < (MAXP + 1) / 2; ++i) {
      const int p = 2 * i + ph;
      if (p < NP) {
        const int r = p / G;
        if (jA < sl)
          s_s[p * C + sub + jA] = vis_s[r][jA] ? scaled_score(acc[0][i], a) : -INFINITY;
        if (jB < sl)
          s_s[p * C + sub + jB] = vis_s[r][jB] ? scaled_score(acc[1][i], a) : -INFINITY;
      }
    }
  }
  __syncthreads();

  // The chunk's maximum and softmax numerators per (row, head), a warp per pair; positions
  // past `len` up to a multiple of 4 get zero weight (the value sum reads them 4 at a time).
  const int len4 = (len + 3) & ~3;
  for (int p = warp; p < NP; p += kWarps) {
    float* ps = s_s + p * C;
    float m = -INFINITY;
    for (int jj = lane; jj < len; jj += 32) m = fmaxf(m, ps[jj]);
    m = warp_max(m);
    float l = 0.0f;
    for (int jj = lane; jj < len4; jj += 32) {
      const float sv = jj < len ? ps[jj] : -INFINITY;
      const float pv = sv == -INFINITY ? 0.0f : expf(__fsub_rn(sv, m));
      ps[jj] = pv;
      l = __fadd_rn(l, pv);
    }
    l = warp_sum(l);
    if (lane == 0) ml_s[p] = make_float2(m, l);
  }

  // Weighted sum of the values: nd threads across the dimensions, P = 128 / nd position
  // lanes (lane pl takes the groups of 4 positions pl, pl + P, ...), their sums added in
  // order.
  const int d0 = t % nd, pl = t / nd;
  float o[ND][MAXP];
#pragma unroll
  for (int q = 0; q < ND; ++q) {
#pragma unroll
    for (int p = 0; p < MAXP; ++p) o[q][p] = 0.0f;
  }
  for (int sub = 0; sub < len; sub += kSub) {
    const int sl = min(kSub, len - sub), sl4 = (sl + 3) & ~3;
    __syncthreads();  // scores done / the previous piece consumed
#pragma unroll 4
    for (int idx = t; idx < sl4 * row16; idx += kThreads) {
      const int jj = idx / row16, part = idx % row16;
      uint4 vv = make_uint4(0, 0, 0, 0);
      if (jj < sl) {
        vv = *reinterpret_cast<const uint4*>(a.v + size_t(j0 + sub + jj) * kv_dim +
                                             size_t(kvh) * hd + part * 8);
      }
      *reinterpret_cast<uint4*>(kv_s + jj * kst + part * 8) = vv;
    }
    __syncthreads();
    if (pl < P) {
      for (int g4 = pl * 4; g4 < sl4; g4 += 4 * P) {
        float vv[4][ND];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
#pragma unroll
          for (int q = 0; q < ND; ++q) {
            vv[u][q] = (q == 0 || d0 + 128 * q < hd)
                           ? __half2float(__ushort_as_half(kv_s[(g4 + u) * kst + d0 + 128 * q]))
                           : 0.0f;
          }
        }
#pragma unroll
        for (int p = 0; p < MAXP; ++p) {
          if (p < NP) {
            const float4 pv = *reinterpret_cast<const float4*>(s_s + p * C + sub + g4);
#pragma unroll
            for (int q = 0; q < ND; ++q) {
              float v = o[q][p];
              v = __fmaf_rn(pv.x, vv[0][q], v);
              v = __fmaf_rn(pv.y, vv[1][q], v);
              v = __fmaf_rn(pv.z, vv[2][q], v);
              v = __fmaf_rn(pv.w, vv[3][q], v);
              o[q][p] = v;
            }
          }
        }
      }
    }
  }
  if (P > 1) {
    if (pl < P) {
#pragma unroll
      for (int p = 0; p < MAXP; ++p) {
        if (p < NP) red[(pl * MAXP + p) * hd + d0] = o[0][p];
      }
    }
    __syncthreads();
    if (pl == 0) {
#pragma unroll
      for (int p = 0; p < MAXP; ++p) {
        if (p < NP) {
          float v = o[0][p];
          for (int k = 1; k < P; ++k) v = __fadd_rn(v, red[(k * MAXP + p) * hd + d0]);
          o[0][p] = v;
        }
      }
    }
  }
  if (pl == 0) {
#pragma unroll
    for (int p = 0; p < MAXP; ++p) {
      if (p < NP) {
        const int r = p / G, h = p % G;
        const size_t part = (size_t(r0 + r) * a.n_heads + size_t(kvh) * G + h) * n_chunks + c;
#pragma unroll
        for (int q = 0; q < ND; ++q) {
          const int d = d0 + 128 * q;
          if (d < hd) a.part_o[part * hd + d] = o[q][p];
        }
      }
    }
  }
  for (int p = t; p < NP; p += kThreads) {
    const int r = p / G, h = p % G;
    a.part_ml[(size_t(r0 + r) * a.n_heads + size_t(kvh) * G + h) * n_chunks + c] = ml_s[p];
  }
}

// One block per (head, row): the row's chunks combined in order.
__global__ void __launch_bounds__(kThreads) attn_combine_kernel(const AttnLaunch a, int n_chunks) {
  const int h = blockIdx.x, i = blockIdx.y, hd = a.head_dim, t = threadIdx.x;
  const int limit = visible_limit(a, i);
  const int nc = (limit + a.chunk - 1) / a.chunk;
  const size_t base = (size_t(i) * a.n_heads + h) * n_chunks;
  float* out = a.out + (size_t(i) * a.n_heads + h) * hd;
  extern __shared__ __align__(16) float cw[];  // [n_chunks] weights exp(m - max), then l
  float* cl = cw + n_chunks + 4;
  __shared__ float stat[2];
  for (int c = t; c < nc; c += kThreads) {
    const float2 ml = a.part_ml[base + c];
    cw[c] = ml.x;
    cl[c] = ml.y;
  }
  __syncthreads();
  if (t == 0) {
    float mx = -INFINITY;
    for (int c = 0; c < nc; ++c) mx = fmaxf(mx, cw[c]);
    stat[0] = mx;
  }
  __syncthreads();
  const float mx = stat[0];
  if (mx == -INFINITY) {  // nothing visible: zero output, as on the CPU
    for (int e = t; e < hd; e += kThreads) out[e] = 0.0f;
    return;
  }
  for (int c = t; c < nc; c += kThreads)
    cw[c] = cw[c] == -INFINITY ? 0.0f : expf(__fsub_rn(cw[c], mx));
  __syncthreads();
  if (t == 0) {
    float l = 0.0f;
    for (int c = 0; c < nc; ++c) l = __fmaf_rn(cl[c], cw[c], l);
    stat[1] = __fdiv_rn(1.0f, l);
  }
  __syncthreads();
  const float inv = stat[1];
  for (int e = t; e < hd; e += kThreads) {
    float o = 0.0f;
#pragma unroll 8
    for (int c = 0; c < nc; ++c) o = __fmaf_rn(__ldg(a.part_o + (base + c) * hd + e), cw[c], o);
    out[e] = __fmul_rn(o, inv);
  }
}

// ONE: blocks of a single query row (decoding: no (row, head) pairs computed for nothing).
template <int MAXG, int ND, bool ONE>
void launch_chunks(const AttnLaunch& a, int n_chunks, cudaStream_t stream) {
  constexpr int MAXR = ONE ? 1 : 32 / MAXG, MAXP = MAXR * MAXG;
  const int nd = std::min(a.head_dim, kThreads), P = kThreads / nd;
  const size_t smem = (size_t(MAXP) * a.head_dim + size_t(MAXP) * a.chunk +
                       (P > 1 ? size_t(P) * MAXP * a.head_dim : 0)) *
                          sizeof(float) +
                      size_t(128) * (a.head_dim + 8) * sizeof(uint16_t);
  static bool raised = false;
  if (!raised) {
    LF_CUDA(cudaFuncSetAttribute(attn_chunk_kernel<MAXG, ND, MAXR>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    raised = true;
  }
  if (smem > 200 * 1024) throw std::invalid_argument("attention: head size too large");
  const dim3 grid(n_chunks, a.n_kv_heads, (a.n + MAXR - 1) / MAXR);
  attn_chunk_kernel<MAXG, ND, MAXR><<<grid, kThreads, smem, stream>>>(a, n_chunks);
}

template <int MAXG, int ND>
void launch_rows(const AttnLaunch& a, int n_chunks, cudaStream_t stream) {
  if (a.n == 1)
    launch_chunks<MAXG, ND, true>(a, n_chunks, stream);
  else
    launch_chunks<MAXG, ND, false>(a, n_chunks, stream);
}

template <int ND>
void launch_groups(int G, const AttnLaunch& a, int n_chunks, cudaStream_t stream) {
  if (G <= 1)
    launch_rows<1, ND>(a, n_chunks, stream);
  else if (G <= 2)
    launch_rows<2, ND>(a, n_chunks, stream);
  else if (G <= 4)
    launch_rows<4, ND>(a, n_chunks, stream);
  else if (G <= 8)
    launch_rows<8, ND>(a, n_chunks, stream);
  else if (G <= 16)
    launch_rows<16, ND>(a, n_chunks, stream);
  else
    throw std::invalid_argument("attention: more than 16 query heads per KV head");
}

}  // namespace

void launch_attention(const AttnLaunch& a, cudaStream_t stream) {
  if (a.n <= 0) return;
  if (a.n_kv_heads <= 0 || a.n_heads % a.n_kv_heads != 0) {
    throw std::invalid_argument("attention: query heads must be a multiple of KV heads");
  }
  if (a.head_dim % 8 != 0 || a.head_dim > 256) {
    throw std::invalid_argument("attention: head size must be a multiple of 8, at most 256");
  }
  const int G = a.n_heads / a.n_kv_heads;
  const int n_chunks = (a.kv_len + a.chunk - 1) / a.chunk;
  if (n_chunks <= 0) throw std::invalid_argument("attention: empty cache");
  if (a.head_dim > 128)
    launch_groups<2>(G, a, n_chunks, stream);
  else
    launch_groups<1>(G, a, n_chunks, stream);
  LF_LAUNCHED("attention chunks");
  attn_combine_kernel<<<dim3(a.n_heads, a.n), kThreads, (2 * n_chunks + 16) * sizeof(float),
                        stream>>>(a, n_chunks);
  LF_LAUNCHED("attention combine");
}

}  // namespace leapfrog::cuda
