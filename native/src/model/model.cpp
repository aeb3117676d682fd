#include "model/model.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "backend/cpu/dequant.h"

namespace leapfrog {

namespace {

std::string shape_str(const GgufTensorInfo& t) {
  std::string s = "[";
  for (uint32_t d = 0; d < t.n_dims; ++d) s += (d ? ", " : "") + std::to_string(t.ne[d]);
  return s + "]";
}

std::string shape_str(std::initializer_list<int64_t> dims) {
  std::string s = "[";
  bool first = true;
  for (int64_t d : dims) {
    s += (first ? "" : ", ") + std::to_string(d);
    first = false;
  }
  return s + "]";
}

// Weight types the engine computes with (one list, in gguf/ggml_types.cpp).
bool matmul_type(GgmlType t) {
  const GgmlTypeTraits* traits = ggml_type_traits(static_cast<uint32_t>(t));
  return traits && traits->supported;
}

std::string type_name(GgmlType t) {
  const GgmlTypeTraits* tr = ggml_type_traits(static_cast<uint32_t>(t));
  return tr ? std::string(tr->name) : "type " + std::to_string(static_cast<uint32_t>(t));
}

}  // namespace

ForwardScratch::ForwardScratch(const ModelHParams& hp, int max_batch) : max_batch_(max_batch) {
  const size_t b = static_cast<size_t>(max_batch);
  x.resize(b * hp.n_embd);
  xb.resize(b * std::max(hp.n_embd, hp.q_dim()));
  q.resize(b * hp.q_dim());
  k.resize(b * hp.k_dim());
  v.resize(b * hp.v_dim());
  att.resize(b * hp.n_head * hp.head_dim_v);
  gate.resize(b * hp.n_ff);
  up.resize(b * hp.n_ff);
  positions.resize(b);
}

std::unique_ptr<Model> Model::load(const std::string& path, std::shared_ptr<Backend> backend) {
  std::unique_ptr<Model> m(new Model());
  m->file_ = GgufFile::open(path);
  m->backend_ = std::move(backend);
  m->hp_ = read_hparams(*m->file_);
  m->load_tensors();
  return m;
}

KvLayout Model::kv_layout(int n_ctx) const {
  if (hp_.head_dim != hp_.head_dim_v) {
    // The cache keeps one head size for K and V; no supported model differs.
    throw std::runtime_error(path() + ": key and value head sizes differ (unsupported)");
  }
  return KvLayout{hp_.n_layer, n_ctx, hp_.n_head_kv, hp_.head_dim};
}

// A 2-D weight of `rows` x `cols` (GGUF shape [cols, rows]) usable by matmul.
WeightView Model::matrix(const std::string& name, int64_t cols, int64_t rows) {
  const GgufTensorInfo& t = file_->require_tensor(name);
  if (!matmul_type(t.type)) {
    file_->fail("unsupported tensor type " + type_name(t.type) + " in '" + name + "'");
  }
  if (t.n_dims != 2 || static_cast<int64_t>(t.ne[0]) != cols ||
      static_cast<int64_t>(t.ne[1]) != rows) {
    file_->fail("tensor '" + name + "' has shape " + shape_str(t) + ", expected " +
                shape_str({cols, rows}));
  }
  WeightView w;
  w.type = t.type;
  w.data = t.data;
  w.rows = rows;
  w.cols = cols;
  w.row_bytes = ggml_row_bytes(t.type, cols);
  weight_bytes_ += w.row_bytes * rows;
  return w;
}

// A 1-D tensor (norm weight, bias) copied to f32; empty when optional and absent.
std::vector<float> Model::vector(const std::string& name, int64_t len, bool required) {
  const GgufTensorInfo* t = required ? &file_->require_tensor(name) : file_->tensor(name);
  if (!t) return {};
  if (t->type != GgmlType::F32 && t->type != GgmlType::F16 && t->type != GgmlType::BF16) {
    file_->fail("unsupported tensor type " + type_name(t->type) + " in '" + name + "'");
  }
  if (t->n_elements() != static_cast<uint64_t>(len) || t->ne[0] != static_cast<uint64_t>(len)) {
    file_->fail("tensor '" + name + "' has shape " + shape_str(*t) + ", expected " +
                shape_str({len}));
  }
  std::vector<float> out(len);
  cpu::dequantize_row(t->type, t->data, out.data(), len);
  return out;
}

void Model::load_tensors() {
  const GgufTensorInfo& emb = file_->require_tensor("token_embd.weight");
  if (emb.n_dims != 2 || emb.ne[0] != static_cast<uint64_t>(hp_.n_embd) || emb.ne[1] == 0) {
    file_->fail("tensor 'token_embd.weight' has shape " + shape_str(emb) + ", expected [" +
                std::to_string(hp_.n_embd) + ", n_vocab]");
  }
  hp_.n_vocab = static_cast<int>(emb.ne[1]);
  tok_embd_ = matrix("token_embd.weight", hp_.n_embd, hp_.n_vocab);
  weight_bytes_ = 0;  // the embedding is read one row per token, not whole
  output_norm_ = vector("output_norm.weight", hp_.n_embd, true);
  // No output.weight: the output projection is tied to the embedding.
  output_ = file_->tensor("output.weight") ? matrix("output.weight", hp_.n_embd, hp_.n_vocab)
                                           : matrix("token_embd.weight", hp_.n_embd, hp_.n_vocab);

  const bool qk_norm_required = hp_.arch == "qwen3";
  layers_.resize(hp_.n_layer);
  for (int l = 0; l < hp_.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    Layer& L = layers_[l];
    L.attn_norm = vector(p + "attn_norm.weight", hp_.n_embd, true);
    L.wq = matrix(p + "attn_q.weight", hp_.n_embd, hp_.q_dim());
    L.wk = matrix(p + "attn_k.weight", hp_.n_embd, hp_.k_dim());
    L.wv = matrix(p + "attn_v.weight", hp_.n_embd, hp_.v_dim());
    L.bq = vector(p + "attn_q.bias", hp_.q_dim(), false);
    L.bk = vector(p + "attn_k.bias", hp_.k_dim(), false);
    L.bv = vector(p + "attn_v.bias", hp_.v_dim(), false);
    L.q_norm = vector(p + "attn_q_norm.weight", hp_.head_dim, qk_norm_required);
    L.k_norm = vector(p + "attn_k_norm.weight", hp_.head_dim, qk_norm_required);
    L.wo = matrix(p + "attn_output.weight", hp_.n_head * hp_.head_dim_v, hp_.n_embd);
    L.ffn_norm = vector(p + "ffn_norm.weight", hp_.n_embd, true);
    L.gate = matrix(p + "ffn_gate.weight", hp_.n_embd, hp_.n_ff);
    L.up = matrix(p + "ffn_up.weight", hp_.n_embd, hp_.n_ff);
    L.down = matrix(p + "ffn_down.weight", hp_.n_ff, hp_.n_embd);
  }
  pack_weights();
}

// Lets the backend lay out every matrix for its kernels (the embedding table keeps the
// file's rows for lookups; a tied output projection gets its own packed copy).
void Model::pack_weights() {
  auto pack = [&](WeightView& w) {
    if (auto p = backend_->pack_weight(w)) {
      w.packed = p->data();
      packed_.push_back(std::move(p));
    }
  };
  for (Layer& L : layers_) {
    for (WeightView* w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.gate, &L.up, &L.down}) pack(*w);
  }
  pack(output_);
}

void Model::forward(const ForwardBatch& b, KvStorage& kv, ForwardScratch& s, float* logits) const {
  const int n = b.n;
  if (n < 1 || n > s.max_batch()) throw std::invalid_argument("forward: bad batch size");
  if (b.pos < 0 || b.pos + n > kv.layout().n_ctx) {
    throw std::length_error("forward: context is full (" + std::to_string(kv.layout().n_ctx) +
                            " positions)");
  }
  Backend& be = *backend_;
  const ModelHParams& hp = hp_;
  const int E = hp.n_embd;
  const size_t nE = static_cast<size_t>(n) * E;
  float* x = s.x.data();
  float* xb = s.xb.data();
  for (int i = 0; i < n; ++i) s.positions[i] = b.positions ? b.positions[i] : b.pos + i;

  be.get_rows(tok_embd_, b.tokens, n, x);

  AttentionArgs att;
  att.q = s.q.data();
  att.n = n;
  att.n_heads = hp.n_head;
  att.kv_len = b.pos + n;
  att.q_pos = s.positions.data();
  att.mask = b.mask;
  att.scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  att.out = s.att.data();

  for (int l = 0; l < hp.n_layer; ++l) {
    const Layer& L = layers_[l];
    // Attention block.
    be.rms_norm(x, L.attn_norm.data(), n, E, hp.rms_eps, xb);
    {
      // One activation preparation and one parallel job for Q, K and V.
      const WeightView* w[3] = {&L.wq, &L.wk, &L.wv};
      float* y[3] = {s.q.data(), s.k.data(), s.v.data()};
      be.matmul_multi(w, y, 3, xb, n);
    }
    if (!L.bq.empty()) be.add_bias(s.q.data(), L.bq.data(), n, hp.q_dim());
    if (!L.bk.empty()) be.add_bias(s.k.data(), L.bk.data(), n, hp.k_dim());
    if (!L.bv.empty()) be.add_bias(s.v.data(), L.bv.data(), n, hp.v_dim());
    if (!L.q_norm.empty()) {
      be.rms_norm(s.q.data(), L.q_norm.data(), n * hp.n_head, hp.head_dim, hp.rms_eps, s.q.data());
    }
    if (!L.k_norm.empty()) {
      be.rms_norm(s.k.data(), L.k_norm.data(), n * hp.n_head_kv, hp.head_dim, hp.rms_eps,
                  s.k.data());
    }
    be.rope(s.q.data(), n, hp.n_head, hp.head_dim, s.positions.data(), hp.rope);
    be.rope(s.k.data(), n, hp.n_head_kv, hp.head_dim, s.positions.data(), hp.rope);
    kv.store(l, b.pos, n, s.k.data(), s.v.data());
    att.layer = l;
    be.attention(kv, att);
    be.matmul(L.wo, s.att.data(), n, xb);
    be.add(x, xb, nE);

    // Feed-forward block (SwiGLU).
    be.rms_norm(x, L.ffn_norm.data(), n, E, hp.rms_eps, xb);
    {
      const WeightView* w[2] = {&L.gate, &L.up};
      float* y[2] = {s.gate.data(), s.up.data()};
      be.matmul_multi(w, y, 2, xb, n);
    }
    be.swiglu(s.gate.data(), s.up.data(), n, hp.n_ff);
    be.matmul(L.down, s.gate.data(), n, xb);
    be.add(x, xb, nE);
  }

  if (b.all_logits) {
    be.rms_norm(x, output_norm_.data(), n, E, hp.rms_eps, xb);
    be.matmul(output_, xb, n, logits);
  } else {
    const size_t last = static_cast<size_t>(n - 1) * E;
    be.rms_norm(x + last, output_norm_.data(), 1, E, hp.rms_eps, xb);
    be.matmul(output_, xb, 1, logits);
  }
}

}  // namespace leapfrog
