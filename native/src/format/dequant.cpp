#include "format/dequant.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "format/blocks.h"
#include "format/fp16.h"

namespace leapfrog::format {

namespace {

void dq_q8_0(const BlockQ8_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = f16_to_f32(b[i].d);
    for (int j = 0; j < kQK; ++j) y[j] = b[i].qs[j] * d;
  }
}

void dq_q4_0(const BlockQ4_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = f16_to_f32(b[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = ((b[i].qs[j] & 0xF) - 8) * d;
      y[j + kQK / 2] = ((b[i].qs[j] >> 4) - 8) * d;
    }
  }
}

void dq_q5_0(const BlockQ5_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = f16_to_f32(b[i].d);
    uint32_t qh;
    std::memcpy(&qh, b[i].qh, sizeof(qh));
    for (int j = 0; j < kQK / 2; ++j) {
      // Signed before the offset: qh is unsigned, and 5-bit values below 16 go negative.
      const int lo = static_cast<int>((b[i].qs[j] & 0xF) | (((qh >> j) & 1) << 4)) - 16;
      const int hi = static_cast<int>((b[i].qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4)) - 16;
      y[j] = static_cast<float>(lo) * d;
      y[j + kQK / 2] = static_cast<float>(hi) * d;
    }
  }
}

void dq_q4_k(const BlockQ4_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = f16_to_f32(b[i].d);
    const float dmin = f16_to_f32(b[i].dmin);
    const uint8_t* q = b[i].qs;
    for (int c = 0; c < 4; ++c, q += 32) {  // 64 weights: two sub-blocks share 32 bytes
      uint8_t sc0, m0, sc1, m1;
      scale_min_k4(2 * c, b[i].scales, sc0, m0);
      scale_min_k4(2 * c + 1, b[i].scales, sc1, m1);
      const float d0 = d * sc0, min0 = dmin * m0, d1 = d * sc1, min1 = dmin * m1;
      for (int l = 0; l < 32; ++l) *y++ = d0 * (q[l] & 0xF) - min0;
      for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] >> 4) - min1;
    }
  }
}

void dq_q5_k(const BlockQ5_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = f16_to_f32(b[i].d);
    const float dmin = f16_to_f32(b[i].dmin);
    const uint8_t* q = b[i].qs;
    const uint8_t* qh = b[i].qh;
    for (int c = 0; c < 4; ++c, q += 32) {
      uint8_t sc0, m0, sc1, m1;
      scale_min_k4(2 * c, b[i].scales, sc0, m0);
      scale_min_k4(2 * c + 1, b[i].scales, sc1, m1);
      const float d0 = d * sc0, min0 = dmin * m0, d1 = d * sc1, min1 = dmin * m1;
      const uint8_t u0 = 1u << (2 * c), u1 = 2u << (2 * c);
      for (int l = 0; l < 32; ++l) *y++ = d0 * ((q[l] & 0xF) + (qh[l] & u0 ? 16 : 0)) - min0;
      for (int l = 0; l < 32; ++l) *y++ = d1 * ((q[l] >> 4) + (qh[l] & u1 ? 16 : 0)) - min1;
    }
  }
}

void dq_q6_k(const BlockQ6_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = f16_to_f32(b[i].d);
    const uint8_t* ql = b[i].ql;
    const uint8_t* qh = b[i].qh;
    const int8_t* sc = b[i].scales;
    // Each half (128 weights) uses 64 bytes of ql, 32 of qh and 8 scales; within it, four
    // 32-weight runs take ql low/high nibbles and successive 2-bit fields of qh.
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, y += 128) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * sc[is + 0] * q1;
        y[l + 32] = d * sc[is + 2] * q2;
        y[l + 64] = d * sc[is + 4] * q3;
        y[l + 96] = d * sc[is + 6] * q4;
      }
    }
  }
}

}  // namespace

void dequantize_row(GgmlType type, const void* src, float* dst, int64_t n) {
  switch (type) {
    case GgmlType::F32: {
      const float* s = static_cast<const float*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = s[i];
      return;
    }
    case GgmlType::F16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(s[i]);
      return;
    }
    case GgmlType::BF16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
      return;
    }
    case GgmlType::Q8_0:
      return dq_q8_0(static_cast<const BlockQ8_0*>(src), dst, n / kQK);
    case GgmlType::Q4_0:
      return dq_q4_0(static_cast<const BlockQ4_0*>(src), dst, n / kQK);
    case GgmlType::Q5_0:
      return dq_q5_0(static_cast<const BlockQ5_0*>(src), dst, n / kQK);
    case GgmlType::Q4_K:
      return dq_q4_k(static_cast<const BlockQ4_K*>(src), dst, n / kQK_K);
    case GgmlType::Q5_K:
      return dq_q5_k(static_cast<const BlockQ5_K*>(src), dst, n / kQK_K);
    case GgmlType::Q6_K:
      return dq_q6_k(static_cast<const BlockQ6_K*>(src), dst, n / kQK_K);
    default:
      throw std::invalid_argument("dequantize_row: unsupported tensor type " +
                                  std::to_string(static_cast<uint32_t>(type)));
  }
}

}  // namespace leapfrog::format
