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

// The low nibbles of qs are elements 0..15 of a 32-block, the high ones 16..31 (Q4_0,
// Q4_1, IQ4_NL); code(j) gives element j's value before the block's scale and offset.
template <class Code>
void dq_nibble_block(const uint8_t* qs, float d, float m, float* y, Code code) {
  for (int j = 0; j < kQK / 2; ++j) {
    y[j] = code(qs[j] & 0xF, j) * d + m;
    y[j + kQK / 2] = code(qs[j] >> 4, j + kQK / 2) * d + m;
  }
}

void dq_q4_1(const BlockQ4_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    dq_nibble_block(b[i].qs, f16_to_f32(b[i].d), f16_to_f32(b[i].m), y,
                    [](int q, int) { return static_cast<float>(q); });
  }
}

void dq_q5_1(const BlockQ5_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    uint32_t qh;
    std::memcpy(&qh, b[i].qh, sizeof(qh));
    dq_nibble_block(b[i].qs, f16_to_f32(b[i].d), f16_to_f32(b[i].m), y,
                    [&](int q, int j) { return static_cast<float>(q | (((qh >> j) & 1) << 4)); });
  }
}

void dq_iq4_nl(const BlockIQ4_NL* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = f16_to_f32(b[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = d * kIq4NlValues[b[i].qs[j] & 0xF];
      y[j + kQK / 2] = d * kIq4NlValues[b[i].qs[j] >> 4];
    }
  }
}

void dq_iq4_xs(const BlockIQ4_XS* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = f16_to_f32(b[i].d);
    const uint8_t* qs = b[i].qs;
    for (int s = 0; s < 8; ++s, qs += 16, y += 32) {
      const float dl = d * static_cast<float>(iq4xs_scale(b[i], s));
      for (int j = 0; j < 16; ++j) {
        y[j] = dl * kIq4NlValues[qs[j] & 0xF];
        y[j + 16] = dl * kIq4NlValues[qs[j] >> 4];
      }
    }
  }
}

// Q2_K and Q3_K share the 2-bit layout: in each 128-weight half, 32-weight run k (0..3) takes
// bits 2k..2k+1 of the half's 32 bytes, and its two 16-weight sub-blocks their own scale.
void dq_q2_k(const BlockQ2_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = f16_to_f32(b[i].d);
    const float dmin = f16_to_f32(b[i].dmin);
    const uint8_t* q = b[i].qs;
    const uint8_t* sc = b[i].scales;
    for (int half = 0; half < 2; ++half, q += 32) {
      for (int k = 0; k < 4; ++k) {
        for (int part = 0; part < 2; ++part, ++sc, y += 16) {
          const float dl = d * (*sc & 0xF), ml = dmin * (*sc >> 4);
          for (int l = 0; l < 16; ++l) y[l] = dl * ((q[16 * part + l] >> (2 * k)) & 3) - ml;
        }
      }
    }
  }
}

void dq_q3_k(const BlockQ3_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = f16_to_f32(b[i].d);
    int8_t scales[16];
    q3k_scales(b[i].scales, scales);
    const uint8_t* q = b[i].qs;
    const int8_t* sc = scales;
    for (int half = 0; half < 2; ++half, q += 32) {
      for (int k = 0; k < 4; ++k) {
        const uint8_t high = static_cast<uint8_t>(1u << (4 * half + k));
        for (int part = 0; part < 2; ++part, ++sc, y += 16) {
          const float dl = d * static_cast<float>(*sc);
          for (int l = 0; l < 16; ++l) {
            const int at = 16 * part + l;
            const int v = ((q[at] >> (2 * k)) & 3) - (b[i].hmask[at] & high ? 0 : 4);
            y[l] = dl * static_cast<float>(v);
          }
        }
      }
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
    case GgmlType::Q4_1:
      return dq_q4_1(static_cast<const BlockQ4_1*>(src), dst, n / kQK);
    case GgmlType::Q5_1:
      return dq_q5_1(static_cast<const BlockQ5_1*>(src), dst, n / kQK);
    case GgmlType::IQ4_NL:
      return dq_iq4_nl(static_cast<const BlockIQ4_NL*>(src), dst, n / kQK);
    case GgmlType::Q2_K:
      return dq_q2_k(static_cast<const BlockQ2_K*>(src), dst, n / kQK_K);
    case GgmlType::Q3_K:
      return dq_q3_k(static_cast<const BlockQ3_K*>(src), dst, n / kQK_K);
    case GgmlType::IQ4_XS:
      return dq_iq4_xs(static_cast<const BlockIQ4_XS*>(src), dst, n / kQK_K);
    default:
      throw std::invalid_argument("dequantize_row: unsupported tensor type " +
                                  std::to_string(static_cast<uint32_t>(type)));
  }
}

}  // namespace leapfrog::format
