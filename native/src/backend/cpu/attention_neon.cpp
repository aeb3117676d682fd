// arm64 NEON attention for one task (a few query rows x the query heads of one KV head): the
// walk every kernel shares (attend_blocks, attention_walk.h) over 128-bit pieces. Without it, arm64
// took the backend's generic loop, one (row, head) at a time, which converts every cached key and
// value from f16 once per pair: a 16-token pass of a model with 7 query heads per KV head converted
// the cache 112 times per layer, here once.
//   - keys as the cache lays them out (dimension-major), four positions per block, and each
//     pair's 4 scores from one multiply-add per dimension (transposed_scores);
//   - the softmax's exponentials four at a time (exp4: exp_avx2.h's method);
//   - the weighted values over blocks of 32 positions, two pairs sharing each value load
//     (add_weighted).
// Every (row, head) pair sees the same float operations whatever the task holds, so a batched
// pass gives the one-row results bit for bit. Compiled with -ffp-contract=off (CMakeLists.txt,
// as every *_neon.cpp): the multiply-adds are the vfmaq written here and no others.
#include <arm_neon.h>

#include <algorithm>
#include <cmath>

#include "backend/cpu/attention_walk.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/neon_f16.h"

namespace leapfrog::cpu {

namespace {

constexpr int kScoreBlock = 4;  // positions per block of scores (one vector)
constexpr int kBlock = 32;      // positions per block of weighted values
constexpr int kMaxHeadDim = 256;
constexpr int kPairs = 4;       // (row, head) pairs whose scores share each key load
constexpr int kValuePairs = 2;  // (row, head) pairs whose weighted values share each value load

// Rows [j0, j0 + n) of a head's f16 values (row j at p + j * stride) as f32 rows of hd.
void rows_f32(const uint16_t* p, size_t stride, int j0, int n, int hd, float* dst) {
  for (int i = 0; i < n; ++i) {
    for (int d = 0; d < hd; d += 8) {
      const float32x4x2_t v = load_f16x8(p + (j0 + i) * stride + d);
      vst1q_f32(dst + i * hd + d, v.val[0]);
      vst1q_f32(dst + i * hd + d + 4, v.val[1]);
    }
  }
}

// 128-bit vectors for transposed_scores and add_weighted (attention_walk.h).
struct Vec4 {
  using Reg = float32x4_t;
  static constexpr int kWidth = 4;
  static Reg zero() { return vdupq_n_f32(0.0f); }
  static Reg load(const float* p) { return vld1q_f32(p); }
  static Reg load(const uint16_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
  static void store(float* p, Reg v) { vst1q_f32(p, v); }
  static Reg broadcast(const float* p) { return vld1q_dup_f32(p); }
  static Reg fmadd(Reg a, Reg b, Reg c) { return vfmaq_f32(c, a, b); }
  static Reg add(Reg a, Reg b) { return vaddq_f32(a, b); }
  static Reg mul(Reg a, Reg b) { return vmulq_f32(a, b); }
};

// Keys of positions [j0, j0 + 4) (j0 a multiple of 4) as f32, kt[d * 4 + i]: one conversion per
// dimension, a quarter of the cache's block as it lies.
void keys4(const AttentionTask& t, int j0, float* kt) {
  const uint16_t* kb = key_block(t, j0);
  for (int d = 0; d < t.head_dim; ++d)
    vst1q_f32(kt + d * kScoreBlock, Vec4::load(kb + d * kKeyBlock));
}

// e^x for 4 floats, exp8's method (exp_avx2.h): 2^n * e^r with n = round(x / ln 2) and r = x -
// n ln 2 in two parts, e^r by a degree-6 polynomial, 2^n as 2^h * 2^(n - h) in the exponent
// bits (both factors normal): x = -inf gives 0, x above 88.72 infinity, as expf.
inline float32x4_t exp4(float32x4_t x) {
  x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-104.0f)), vdupq_n_f32(88.8f));
  const float32x4_t n = vrndnq_f32(vmulq_n_f32(x, 1.44269504088896341f));
  float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693359375f));
  r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4f));
  float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
  p = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), p, r);
  p = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), p, r);
  p = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0f)), p, vmulq_f32(r, r));
  const int32x4_t ni = vcvtnq_s32_f32(n);  // -150..129
  const int32x4_t h = vshrq_n_s32(ni, 1);
  const auto pow2 = [](int32x4_t k) {
    return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(k, vdupq_n_s32(127)), 23));
  };
  return vmulq_f32(vmulq_f32(p, pow2(h)), pow2(vsubq_s32(ni, h)));
}

// Softmax numerators over s[0, lim) in place, exp(s - max) (masked positions become 0), and
// the inverse of their sum, by which the walk scales the weighted values' sums (0 when nothing
// is visible: then s holds zeros). Whole vectors up to lim rounded up to 4 (the score row is
// padded to 16: attention_padded_span), the lanes past lim set to -inf and so to 0.
float softmax_row(float* s, int lim, const uint8_t* mask) {
  const float32x4_t ninf = vdupq_n_f32(-INFINITY);
  const int32x4_t lane = {0, 1, 2, 3};
  float32x4_t vmax = ninf;
  for (int j = 0; j < lim; j += 4) {
    const int32x4_t at = vaddq_s32(lane, vdupq_n_s32(j));
    uint32x4_t visible = vcltq_s32(at, vdupq_n_s32(lim));
    if (mask) {
      uint32_t m[4];
      for (int k = 0; k < 4; ++k) m[k] = j + k < lim && mask[j + k] ? ~0u : 0u;
      visible = vandq_u32(visible, vld1q_u32(m));
    }
    const float32x4_t v = vbslq_f32(visible, vld1q_f32(s + j), ninf);
    vst1q_f32(s + j, v);
    vmax = vmaxq_f32(vmax, v);
  }
  const float mx = vmaxvq_f32(vmax);
  if (mx == -INFINITY) {
    std::fill(s, s + lim, 0.0f);
    return 0.0f;
  }
  const float32x4_t vmx = vdupq_n_f32(mx);
  float32x4_t sum = vdupq_n_f32(0.0f);
  for (int j = 0; j < lim; j += 4) {
    const float32x4_t e = exp4(vsubq_f32(vld1q_f32(s + j), vmx));
    vst1q_f32(s + j, e);
    sum = vaddq_f32(sum, e);
  }
  return 1.0f / vaddvq_f32(sum);
}

// 128-bit vectors for add_weighted (attention_walk.h).
// The vector width's pieces of attend_blocks (attention_walk.h).
struct NeonPieces {
  static constexpr int kScoreBlock = leapfrog::cpu::kScoreBlock, kPairs = leapfrog::cpu::kPairs,
                       kBlock = leapfrog::cpu::kBlock, kValuePairs = leapfrog::cpu::kValuePairs,
                       kMaxHeadDim = leapfrog::cpu::kMaxHeadDim;
  static void keys(const AttentionTask& t, int j0, float* kt) { keys4(t, j0, kt); }
  template <int P, class T>
  static void scores(const float* const* q, const T* kt, int ld, int hd, float scale,
                     float* const* out) {
    transposed_scores<Vec4, P>(q, kt, ld, hd, scale, out);
  }
  static float softmax(float* s, int lim, const uint8_t* mask) { return softmax_row(s, lim, mask); }
  // Rounded to f16 and back by fcvtn (nearest even, FPCR's default mode), as F16C does.
  static void round_query(const float* q, float* qf, int hd) {
    for (int d = 0; d < hd; d += 4) vst1q_f32(qf + d, vcvt_f32_f16(vcvt_f16_f32(vld1q_f32(q + d))));
  }
  static void values(const AttentionTask& t, int j0, int n, float* vf) {
    rows_f32(t.v, t.kv_stride, j0, n, t.head_dim, vf);
  }
  template <class T>
  static void add_values(int np, const float* const* w, const int* m, const T* v, int stride,
                         int hd, float* const* out) {
    add_values_in_chunks<Vec4, kValuePairs, 32, 8>(np, w, m, v, stride, hd, out);
  }
};

void attend(const AttentionTask& t) { attend_blocks<NeonPieces>(t); }

}  // namespace

void install_attention_neon(Kernels& t) { t.attend = attend; }

}  // namespace leapfrog::cpu
