// One unit of attention work for an instruction set's kernel: a few query rows and the
// query heads that share one KV head (grouped-query attention), over f16 keys and values.
// Doing all the heads of a group together lets a kernel convert each key and value once for
// all of them.
#pragma once
#include <cstddef>
#include <cstdint>

namespace leapfrog::cpu {

// Keys are cached in blocks of kKeyBlock positions, dimension-major inside a block (position
// j's dimension d at block j / kKeyBlock, d * kKeyBlock + j % kKeyBlock): the scores' vectors
// hold positions, so a block's keys are read as they lie, where a position-major cache had
// every kernel transpose (or horizontally sum) each block — with a query head or two per KV
// head, as decoding has, that was most of attention's time (lf_attnbench, session 20).
constexpr int kKeyBlock = 16;

struct AttentionTask {
  const uint16_t* k;      // this KV head's dimension 0 of the first key block
  size_t k_block_stride;  // elements from one key block to the next
  const uint16_t* v;      // position 0's value for this KV head; position j at v + j * kv_stride
  size_t kv_stride;       // elements from one value to the next
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
  // Working memory of attention_scratch_floats() floats, 64-byte aligned, owned by the
  // caller (kernel files stay free of allocating containers: their template code would be
  // compiled for their instruction set and could be shared with other files at link time).
  float* scratch;
};

// Internal linkage: included by files built for different instruction sets.
namespace {

// Dimension 0 of the keys of positions [j0, j0 + kKeyBlock - j0 % kKeyBlock); dimension d of
// position j0 + i at key_block(t, j0) + d * kKeyBlock + i.
inline const uint16_t* key_block(const AttentionTask& t, int j0) {
  return t.k + size_t(j0 / kKeyBlock) * t.k_block_stride + j0 % kKeyBlock;
}

// Positions any row of the task may see, rounded up to whole blocks of 16 (the kernels'
// score blocks are 4, 8 or 16 positions).
inline int attention_padded_span(const AttentionTask& t) {
  int span = 0;
  for (int r = 0; r < t.rows; ++r) span = span > t.limit[r] ? span : t.limit[r];
  return (span + 15) / 16 * 16;
}

// Queries as f32 (then the weighted values' sums, attention_walk.h), one score/weight row and
// the inverse of its softmax's sum per (row, head).
inline size_t attention_scratch_floats(const AttentionTask& t) {
  return size_t(t.rows) * t.heads * (t.head_dim + attention_padded_span(t) + 1);
}

}  // namespace

}  // namespace leapfrog::cpu
