// One unit of attention work for an instruction set's kernel: a few query rows and the
// query heads that share one KV head (grouped-query attention), over f16 keys and values.
// Doing all the heads of a group together lets a kernel convert each key and value once for
// all of them.
#pragma once
#include <cstddef>
#include <cstdint>

namespace leapfrog::cpu {

struct AttentionTask {
  const uint16_t* k;  // position 0's key for this KV head; position j at k + j * kv_stride
  const uint16_t* v;  // likewise for values
  size_t kv_stride;   // elements from one position to the next
  int head_dim;
  int heads;  // query heads sharing this KV head
  int rows;   // query rows
  // Row r, head h at q + r * q_stride + h * head_dim (RoPE applied); out has the same layout.
  const float* q;
  float* out;
  size_t q_stride;
  const int* limit;     // per row: only positions [0, limit[r]) may be visible
  const uint8_t* mask;  // per row r at mask + r * mask_stride (nonzero = visible), or null
  size_t mask_stride;
  float scale;  // applied to q.k
};

}  // namespace leapfrog::cpu
