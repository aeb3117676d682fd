#include "model/model.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "format/dequant.h"
#include "model/arch.h"

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

ForwardScratch::ForwardScratch(const Model& model, int max_batch, int n_ctx, int logit_rows)
    : max_batch_(max_batch),
      logit_rows_(logit_rows > 0 && logit_rows < max_batch ? logit_rows : max_batch) {
  const ModelHParams& hp = model.hparams();
  const size_t b = static_cast<size_t>(max_batch);
  // One allocation, carved into 64-byte aligned parts.
  size_t offset = 0;
  std::vector<std::pair<size_t*, size_t>> parts;
  size_t off_x, off_xb, off_q, off_k, off_v, off_att, off_gate, off_up, off_logits, off_tok,
      off_pos, off_mask;
  const auto part = [&](size_t* at, size_t bytes) {
    *at = offset;
    offset += (bytes + 63) / 64 * 64;
  };
  part(&off_x, b * hp.n_embd * sizeof(float));
  part(&off_xb, b * std::max(hp.n_embd, hp.q_dim()) * sizeof(float));
  part(&off_q, b * hp.q_dim() * sizeof(float));
  part(&off_k, b * hp.k_dim() * sizeof(float));
  part(&off_v, b * hp.v_dim() * sizeof(float));
  part(&off_att, b * hp.n_head * hp.head_dim_v * sizeof(float));
  part(&off_gate, b * hp.n_ff * sizeof(float));
  part(&off_up, b * hp.n_ff * sizeof(float));
  part(&off_logits, static_cast<size_t>(logit_rows_) * hp.n_vocab * sizeof(float));
  part(&off_tok, b * sizeof(int32_t));
  part(&off_pos, b * sizeof(int32_t));
  part(&off_mask, b * static_cast<size_t>(n_ctx));
  mem_ = model.backend().alloc(offset);
  const auto at = [&](size_t off) { return mem_->as<uint8_t>(off); };
  const auto f32 = [&](size_t off) {
    return DevicePtr<float>(reinterpret_cast<float*>(at(off).get()));
  };
  x = f32(off_x);
  xb = f32(off_xb);
  q = f32(off_q);
  k = f32(off_k);
  v = f32(off_v);
  att = f32(off_att);
  gate = f32(off_gate);
  up = f32(off_up);
  logits = f32(off_logits);
  tokens = DevicePtr<int32_t>(reinterpret_cast<int32_t*>(at(off_tok).get()));
  positions = DevicePtr<int32_t>(reinterpret_cast<int32_t*>(at(off_pos).get()));
  mask = at(off_mask);
  host_positions.resize(b);
  if (hp.moe()) moe = std::make_unique<MoeScratch>(model.backend(), hp, max_batch);
}

ForwardScratch::~ForwardScratch() = default;

std::string backend_refusal(const ModelHParams& hp, const Backend& be) {
  if (hp.moe() && !be.supports_moe()) {
    return be.name() + ": architecture " + hp.arch +
           " (mixture of experts) is not supported yet; use --backend cpu";
  }
  if (find_arch(hp.arch)->needs_arch_ops && !be.supports_arch_ops()) {
    return be.name() + ": architecture '" + hp.arch + "' is not supported yet; use --backend cpu";
  }
  return "";
}

std::unique_ptr<Model> Model::load(const std::string& path, std::shared_ptr<Backend> backend) {
  std::unique_ptr<Model> m(new Model());
  m->file_ = GgufFile::open(path);
  m->backend_ = std::move(backend);
  m->hp_ = read_hparams(*m->file_);
  if (const std::string why = backend_refusal(m->hp_, *m->backend_); !why.empty()) {
    m->file_->fail(why);
  }
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

std::vector<WeightView> Model::expert_matrices(const std::string& name, int64_t cols, int64_t rows,
                                               int64_t experts) {
  const GgufTensorInfo& t = file_->require_tensor(name);
  if (!matmul_type(t.type)) {
    file_->fail("unsupported tensor type " + type_name(t.type) + " in '" + name + "'");
  }
  if (t.n_dims != 3 || static_cast<int64_t>(t.ne[0]) != cols ||
      static_cast<int64_t>(t.ne[1]) != rows || static_cast<int64_t>(t.ne[2]) != experts) {
    file_->fail("tensor '" + name + "' has shape " + shape_str(t) + ", expected " +
                shape_str({cols, rows, experts}));
  }
  std::vector<WeightView> out(experts);
  const size_t row_bytes = ggml_row_bytes(t.type, cols);
  for (int64_t e = 0; e < experts; ++e) {
    WeightView& w = out[e];
    w.type = t.type;
    w.data = t.data + static_cast<size_t>(e) * rows * row_bytes;
    w.rows = rows;
    w.cols = cols;
    w.row_bytes = row_bytes;
  }
  // A decoded token reads only the experts it is routed to.
  weight_bytes_ += row_bytes * rows * hp_.n_expert_used;
  return out;
}

// A 1-D tensor (norm weight, bias) decoded to f32 and queued for upload; absent optional
// tensors leave `slot` null.
void Model::vector(const std::string& name, int64_t len, bool required, Vec& slot) {
  const GgufTensorInfo* t = required ? &file_->require_tensor(name) : file_->tensor(name);
  if (!t) return;
  if (t->type != GgmlType::F32 && t->type != GgmlType::F16 && t->type != GgmlType::BF16) {
    file_->fail("unsupported tensor type " + type_name(t->type) + " in '" + name + "'");
  }
  if (t->n_elements() != static_cast<uint64_t>(len) || t->ne[0] != static_cast<uint64_t>(len)) {
    file_->fail("tensor '" + name + "' has shape " + shape_str(*t) + ", expected " +
                shape_str({len}));
  }
  std::vector<float> out(len);
  format::dequantize_row(t->type, t->data, out.data(), len);
  pending_vectors_.emplace_back(std::move(out), &slot);
}

// Every queued 1-D tensor into one backend allocation.
void Model::upload_vectors() {
  size_t total = 0;
  for (const auto& [v, slot] : pending_vectors_) total += (v.size() + 15) / 16 * 16;
  vector_memory_ = backend_->alloc(std::max<size_t>(total, 1) * sizeof(float));
  size_t at = 0;
  for (auto& [v, slot] : pending_vectors_) {
    DevicePtr<float> dst = vector_memory_->as<float>(at);
    backend_->upload(dst, v.data(), v.size());
    *slot = dst;
    at += (v.size() + 15) / 16 * 16;
  }
  pending_vectors_.clear();
}

void Model::load_tensors() {
  const ArchFeatures& ft = hp_.features;
  const GgufTensorInfo& emb = file_->require_tensor("token_embd.weight");
  if (emb.n_dims != 2 || emb.ne[0] != static_cast<uint64_t>(hp_.n_embd) || emb.ne[1] == 0) {
    file_->fail("tensor 'token_embd.weight' has shape " + shape_str(emb) + ", expected [" +
                std::to_string(hp_.n_embd) + ", n_vocab]");
  }
  hp_.n_vocab = static_cast<int>(emb.ne[1]);
  tok_embd_ = matrix("token_embd.weight", hp_.n_embd, hp_.n_vocab);
  weight_bytes_ = 0;  // the embedding is read one row per token, not whole
  vector("output_norm.weight", hp_.n_embd, true, output_norm_);
  vector("output_norm.bias", hp_.n_embd, ft.norm == NormKind::Layer, output_norm_b_);
  // No output.weight: the output projection is tied to the embedding.
  const bool untied = file_->tensor("output.weight") && !ft.tied_output_only;
  output_ = untied ? matrix("output.weight", hp_.n_embd, hp_.n_vocab)
                   : matrix("token_embd.weight", hp_.n_embd, hp_.n_vocab);

  layers_.resize(hp_.n_layer);
  for (int l = 0; l < hp_.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    load_attention(p, layers_[l]);
    load_ffn(p, layers_[l]);
  }
  upload_vectors();
  make_weights_resident();
}

std::vector<WeightView*> Model::product_weights(Layer& L) {
  std::vector<WeightView*> out = {&L.wq, &L.wk, &L.wv, &L.wo};
  if (L.moe.router.data) {
    out.push_back(&L.moe.router);
    for (auto* set : {&L.moe.gate, &L.moe.up, &L.moe.down}) {
      for (WeightView& w : *set) out.push_back(&w);
    }
  } else {
    for (WeightView* w : {&L.gate, &L.up, &L.down}) {
      if (w->data) out.push_back(w);  // starcoder2 has no gate
    }
  }
  return out;
}

namespace {

// Rows [r0, r0 + rows) of a weight: one part of a fused projection (attn_qkv, phi3's
// gate|up), a weight of its own for the backend.
WeightView row_range(const WeightView& w, int64_t r0, int64_t rows) {
  WeightView part = w;
  part.data = w.row(r0);
  part.rows = rows;
  return part;
}

}  // namespace

void Model::load_attention(const std::string& p, Layer& L) {
  const ArchFeatures& ft = hp_.features;
  const bool layer_norm = ft.norm == NormKind::Layer;
  const int E = hp_.n_embd;
  vector(p + "attn_norm.weight", E, true, L.attn_norm);
  vector(p + "attn_norm.bias", E, layer_norm, L.attn_norm_b);
  if (file_->tensor(p + "attn_qkv.weight")) {
    if (file_->tensor(p + "attn_qkv.bias")) file_->fail("fused 'attn_qkv.bias' is not supported");
    const WeightView qkv = matrix(p + "attn_qkv.weight", E, hp_.q_dim() + 2 * hp_.k_dim());
    L.wq = row_range(qkv, 0, hp_.q_dim());
    L.wk = row_range(qkv, hp_.q_dim(), hp_.k_dim());
    L.wv = row_range(qkv, hp_.q_dim() + hp_.k_dim(), hp_.v_dim());
  } else {
    L.wq = matrix(p + "attn_q.weight", E, hp_.q_dim());
    L.wk = matrix(p + "attn_k.weight", E, hp_.k_dim());
    L.wv = matrix(p + "attn_v.weight", E, hp_.v_dim());
  }
  vector(p + "attn_q.bias", hp_.q_dim(), false, L.bq);
  vector(p + "attn_k.bias", hp_.k_dim(), false, L.bk);
  vector(p + "attn_v.bias", hp_.v_dim(), false, L.bv);
  const bool qk_norm_required =
      hp_.arch == "qwen3" || hp_.arch == "qwen3moe" || hp_.arch == "gemma3";
  vector(p + "attn_q_norm.weight", hp_.head_dim, qk_norm_required, L.q_norm);
  vector(p + "attn_k_norm.weight", hp_.head_dim, qk_norm_required, L.k_norm);
  L.wo = matrix(p + "attn_output.weight", hp_.n_head * hp_.head_dim_v, E);
  vector(p + "attn_output.bias", E, false, L.bo);
  vector(p + "post_attention_norm.weight", E, ft.post_norms, L.attn_post_norm);
}

void Model::load_ffn(const std::string& p, Layer& L) {
  const ArchFeatures& ft = hp_.features;
  const int E = hp_.n_embd, F = hp_.n_ff;
  vector(p + "ffn_norm.weight", E, true, L.ffn_norm);
  vector(p + "ffn_norm.bias", E, ft.norm == NormKind::Layer, L.ffn_norm_b);
  if (hp_.moe()) {
    L.moe.router = matrix(p + "ffn_gate_inp.weight", E, hp_.n_expert);
    L.moe.gate = expert_matrices(p + "ffn_gate_exps.weight", E, hp_.n_ff_exp, hp_.n_expert);
    L.moe.up = expert_matrices(p + "ffn_up_exps.weight", E, hp_.n_ff_exp, hp_.n_expert);
    L.moe.down = expert_matrices(p + "ffn_down_exps.weight", hp_.n_ff_exp, E, hp_.n_expert);
    return;
  }
  if (ft.fused_up_gate) {
    const WeightView up = matrix(p + "ffn_up.weight", E, 2 * F);
    L.gate = row_range(up, 0, F);
    L.up = row_range(up, F, F);
  } else {
    if (ft.ffn != FfnKind::Gelu) L.gate = matrix(p + "ffn_gate.weight", E, F);
    L.up = matrix(p + "ffn_up.weight", E, F);
  }
  L.down = matrix(p + "ffn_down.weight", F, E);
  vector(p + "ffn_gate.bias", F, false, L.b_gate);
  vector(p + "ffn_up.bias", F, false, L.b_up);
  vector(p + "ffn_down.bias", E, false, L.b_down);
  vector(p + "post_ffw_norm.weight", E, ft.post_norms, L.ffn_post_norm);
}

// Hands every matrix to the backend, which copies it into its memory and layout where it
// needs to (the embedding table is only looked up; a tied output projection is a product).
void Model::make_weights_resident() {
  // In one call: a backend may cache its copies per model (Backend::load_weights).
  std::vector<WeightView*> views;
  std::vector<Backend::WeightRequest> requests;
  auto resident = [&](WeightView& w, Backend::WeightUse use) {
    views.push_back(&w);
    requests.push_back({w, use});
  };
  resident(tok_embd_, Backend::WeightUse::Lookups);
  for (Layer& L : layers_) {
    for (WeightView* w : product_weights(L)) resident(*w, Backend::WeightUse::Products);
  }
  resident(output_, Backend::WeightUse::Products);
  std::vector<ResidentWeight> loaded =
      backend_->load_weights({file_->identity(), file_->absolute_path(), file_->base()}, requests);
  for (size_t i = 0; i < views.size(); ++i) {
    *views[i] = loaded[i].view;
    if (loaded[i].memory) weight_memory_.push_back(std::move(loaded[i].memory));
  }
  // What passes still read from the mapping: the embedding rows (looked up) and any product
  // weight the backend left unpacked. Those become private copies and the file is let go
  // (gguf/detach.cpp: a file truncated or rewritten under a loaded model must not SIGBUS).
  // Views the backend moved into memory of its own (the CPU backend's shared packed-weight
  // cache keeps them too) lie outside the mapping, and detach_from_file skips them.
  std::vector<std::span<const uint8_t>> in_place;
  const auto bytes_of = [](const WeightView& w) {
    return std::span<const uint8_t>(w.data, w.row_bytes * static_cast<size_t>(w.rows));
  };
  in_place.push_back(bytes_of(tok_embd_));
  for (Layer& L : layers_) {
    for (const WeightView* w : product_weights(L)) {
      if (!w->packed) in_place.push_back(bytes_of(*w));
    }
  }
  if (!output_.packed) in_place.push_back(bytes_of(output_));
  file_->detach_from_file(in_place);
}

const float* Model::forward(const ForwardBatch& b, KvStorage& kv, ForwardScratch& s) const {
  const int n = b.n;
  if (n < 1 || n > s.max_batch()) throw std::invalid_argument("forward: bad batch size");
  if (b.all_logits && n > s.logit_rows()) {
    throw std::invalid_argument("forward: " + std::to_string(n) +
                                " rows of logits, the scratch holds " +
                                std::to_string(s.logit_rows()));
  }
  if (b.pos < 0 || b.pos + n > kv.layout().n_ctx) {
    throw std::length_error("forward: context is full (" + std::to_string(kv.layout().n_ctx) +
                            " positions)");
  }
  Backend& be = *backend_;
  const ModelHParams& hp = hp_;
  const int E = hp.n_embd;
  const size_t nE = static_cast<size_t>(n) * E;
  const int kv_len = b.pos + n;
  for (int i = 0; i < n; ++i) s.host_positions[i] = b.positions ? b.positions[i] : b.pos + i;

  be.begin_pass(PassShape{n, kv_len, b.mask != nullptr});
  // The pass's host inputs, once.
  be.upload(s.tokens, b.tokens, n);
  be.upload(s.positions, s.host_positions.data(), n);
  if (b.mask) be.upload(s.mask, b.mask, static_cast<size_t>(n) * kv_len);

  const ArchFeatures& ft = hp.features;
  const DevicePtr<float> x = s.x, xb = s.xb;
  be.get_rows(tok_embd_, s.tokens, n, x);
  if (ft.embedding_scale != 0) be.scale(x, nE, ft.embedding_scale);

  AttentionArgs att;
  att.q = s.q;
  att.n = n;
  att.n_heads = hp.n_head;
  att.kv_len = kv_len;
  att.q_pos = s.positions;
  if (b.mask) att.mask = s.mask;
  att.scale = ft.attention_scale != 0 ? ft.attention_scale
                                      : 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  att.softcap = ft.attn_softcap;
  att.out = s.att;
  // Where llama.cpp scales Q itself (phi3, gemma), the scores are left unscaled.
  const float q_scale = ft.scale_q ? att.scale : 1.0f;
  if (ft.scale_q) att.scale = 1.0f;
  RopeParams swa_rope = hp.rope;
  swa_rope.freq_base = ft.rope_freq_base_swa;
  swa_rope.freq_scale = ft.rope_freq_scale_swa;

  for (int l = 0; l < hp.n_layer; ++l) {
    const Layer& L = layers_[l];
    // Attention block.
    norm(x, L.attn_norm, L.attn_norm_b, n, xb);
    {
      // One activation preparation and one parallel job for Q, K and V.
      const WeightView* w[3] = {&L.wq, &L.wk, &L.wv};
      const DevicePtr<float> y[3] = {s.q, s.k, s.v};
      be.matmul_multi(w, y, 3, xb, n);
    }
    if (L.bq) be.add_bias(s.q, L.bq, n, hp.q_dim());
    if (L.bk) be.add_bias(s.k, L.bk, n, hp.k_dim());
    if (L.bv) be.add_bias(s.v, L.bv, n, hp.v_dim());
    if (L.q_norm) be.rms_norm(s.q, L.q_norm, n * hp.n_head, hp.head_dim, hp.rms_eps, s.q);
    if (L.k_norm) be.rms_norm(s.k, L.k_norm, n * hp.n_head_kv, hp.head_dim, hp.rms_eps, s.k);
    const bool swa = ft.is_swa(l);
    const RopeParams& rope = swa ? swa_rope : hp.rope;
    be.rope(s.q, n, hp.n_head, hp.head_dim, s.positions, rope);
    be.rope(s.k, n, hp.n_head_kv, hp.head_dim, s.positions, rope);
    if (ft.scale_q) be.scale(s.q, static_cast<size_t>(n) * hp.q_dim(), q_scale);
    kv.store(l, b.pos, n, s.k, s.v);
    att.layer = l;
    att.window = swa ? ft.sliding_window : 0;
    be.attention(kv, att);
    be.matmul(L.wo, s.att, n, xb);
    if (L.bo) be.add_bias(xb, L.bo, n, E);
    if (L.attn_post_norm) be.rms_norm(xb, L.attn_post_norm, n, E, hp.rms_eps, xb);
    if (ft.residual_scale != 0) be.scale(xb, nE, ft.residual_scale);
    be.add(x, xb, nE);

    // Feed-forward block.
    norm(x, L.ffn_norm, L.ffn_norm_b, n, xb);
    ffn(L, s, n);
  }

  const int rows = b.all_logits ? n : 1;
  const DevicePtr<float> last = b.all_logits ? x : x + static_cast<size_t>(n - 1) * E;
  norm(last, output_norm_, output_norm_b_, rows, xb);
  be.matmul(output_, xb, rows, s.logits);
  const size_t n_logits = static_cast<size_t>(rows) * hp.n_vocab;
  if (ft.logit_scale != 0) be.scale(s.logits, n_logits, 1.0f / ft.logit_scale);
  if (ft.final_softcap != 0) be.softcap(s.logits, n_logits, ft.final_softcap);
  be.end_pass();
  const DevicePtr<const float> logits = s.logits;
  if (const void* host = be.host_address(logits)) return static_cast<const float*>(host);
  if (s.staging.size() < n_logits) s.staging.resize(n_logits);
  be.download(s.staging.data(), logits, n_logits);
  return s.staging.data();
}

}  // namespace leapfrog

namespace leapfrog {

void Model::norm(DevicePtr<const float> x, const Vec& w, const Vec& b, int n,
                 DevicePtr<float> y) const {
  if (hp_.features.norm == NormKind::Layer) {
    backend_->layer_norm(x, w, b, n, hp_.n_embd, hp_.rms_eps, y);
  } else {
    backend_->rms_norm(x, w, n, hp_.n_embd, hp_.rms_eps, y);
  }
}

void Model::ffn(const Layer& L, ForwardScratch& s, int n) const {
  Backend& be = *backend_;
  if (hp_.moe()) {
    // The experts' weighted outputs go straight into the residual stream.
    moe_ffn(be, hp_, L.moe, s.xb, n, s.x, *s.moe);
    return;
  }
  const int F = hp_.n_ff;
  if (hp_.features.ffn == FfnKind::Gelu) {
    be.matmul(L.up, s.xb, n, s.up);
    if (L.b_up) be.add_bias(s.up, L.b_up, n, F);
    be.gelu(s.up, static_cast<size_t>(n) * F);
    be.matmul(L.down, s.up, n, s.xb);
  } else {
    const WeightView* w[2] = {&L.gate, &L.up};
    const DevicePtr<float> y[2] = {s.gate, s.up};
    be.matmul_multi(w, y, 2, s.xb, n);
    if (L.b_gate) be.add_bias(s.gate, L.b_gate, n, F);
    if (L.b_up) be.add_bias(s.up, L.b_up, n, F);
    if (hp_.features.ffn == FfnKind::GeluGated) {
      be.geglu(s.gate, s.up, n, F);
    } else {
      be.swiglu(s.gate, s.up, n, F);
    }
    be.matmul(L.down, s.gate, n, s.xb);
  }
  if (L.b_down) be.add_bias(s.xb, L.b_down, n, hp_.n_embd);
  const size_t nE = static_cast<size_t>(n) * hp_.n_embd;
  if (L.ffn_post_norm) be.rms_norm(s.xb, L.ffn_post_norm, n, hp_.n_embd, hp_.rms_eps, s.xb);
  if (hp_.features.residual_scale != 0) be.scale(s.xb, nE, hp_.features.residual_scale);
  be.add(s.x, s.xb, nE);
}

}  // namespace leapfrog
