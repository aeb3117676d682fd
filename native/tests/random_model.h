// Random-weight models written as GGUF at test time (model_random_test, packed_cache_test):
// a minimal GGUF v3 writer, weights of every type with scales that keep activations O(1),
// and the llama / qwen2 / qwen3 / qwen3moe shapes (Spec) written to a file under /tmp.
#pragma once
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "format/fp16.h"
#include "gguf/ggml_types.h"

namespace lftest {

using leapfrog::ggml_row_bytes;
using leapfrog::GgmlType;

// A minimal GGUF v3 writer (just what these tests need).
class GgufWriter {
 public:
  void str(const std::string& k, const std::string& v) {
    kv(k, 8, [&] { s(v); });
  }
  void u32(const std::string& k, uint32_t v) {
    kv(k, 4, [&] { raw(&v, 4); });
  }
  void f32(const std::string& k, float v) {
    kv(k, 6, [&] { raw(&v, 4); });
  }
  void tensor(const std::string& name, uint32_t type, std::vector<uint64_t> ne,
              std::vector<uint8_t> data) {
    tensors_.push_back({name, type, ne, std::move(data)});
  }
  void write(const std::string& path) {
    std::vector<uint8_t> out;
    auto put = [&](const void* p, size_t n) {
      out.insert(out.end(), (const uint8_t*)p, (const uint8_t*)p + n);
    };
    uint32_t magic = 0x46554747, version = 3;
    uint64_t nt = tensors_.size(), nkv = n_kv_;
    put(&magic, 4), put(&version, 4), put(&nt, 8), put(&nkv, 8);
    put(kv_.data(), kv_.size());
    uint64_t off = 0;
    for (auto& t : tensors_) {
      uint64_t len = t.name.size();
      put(&len, 8), put(t.name.data(), len);
      uint32_t nd = t.ne.size();
      put(&nd, 4);
      for (uint64_t d : t.ne) put(&d, 8);
      put(&t.type, 4), put(&off, 8);
      off += (t.data.size() + 31) / 32 * 32;
    }
    while (out.size() % 32) out.push_back(0);
    for (auto& t : tensors_) {
      put(t.data.data(), t.data.size());
      while (out.size() % 32) out.push_back(0);
    }
    FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(out.data(), 1, out.size(), f);
    std::fclose(f);
  }

 private:
  struct T {
    std::string name;
    uint32_t type;
    std::vector<uint64_t> ne;
    std::vector<uint8_t> data;
  };
  void raw(const void* p, size_t n) {
    kv_.insert(kv_.end(), (const uint8_t*)p, (const uint8_t*)p + n);
  }
  void s(const std::string& v) {
    uint64_t n = v.size();
    raw(&n, 8);
    raw(v.data(), n);
  }
  void kv(const std::string& k, uint32_t type, const std::function<void()>& value) {
    s(k);
    raw(&type, 4);
    value();
    ++n_kv_;
  }
  std::vector<uint8_t> kv_;
  uint64_t n_kv_ = 0;
  std::vector<T> tensors_;
};

// Random weights of `type` with scales chosen so activations stay O(1) through the layers.
inline std::vector<uint8_t> random_weights(GgmlType type, uint64_t cols, uint64_t rows, float scale,
                                           std::mt19937& rng) {
  const size_t rb = ggml_row_bytes(type, cols);
  std::vector<uint8_t> d(rb * rows);
  for (auto& b : d) b = uint8_t(rng());
  std::normal_distribution<float> nd(0, scale);
  auto half = [&](size_t off, float v) {
    uint16_t h = leapfrog::format::f32_to_f16(v);
    std::memcpy(d.data() + off, &h, 2);
  };
  const size_t n = cols * rows;
  switch (type) {
    case GgmlType::F32:
      for (size_t i = 0; i < n; ++i) {
        float v = nd(rng);
        std::memcpy(d.data() + 4 * i, &v, 4);
      }
      break;
    case GgmlType::F16:
      for (size_t i = 0; i < n; ++i) half(2 * i, nd(rng));
      break;
    case GgmlType::BF16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t h = leapfrog::format::f32_to_bf16(nd(rng));
        std::memcpy(d.data() + 2 * i, &h, 2);
      }
      break;
    case GgmlType::Q8_0:
      for (size_t b = 0; b < n / 32; ++b) half(34 * b, scale / 64);
      break;
    case GgmlType::Q4_0:
      for (size_t b = 0; b < n / 32; ++b) half(18 * b, scale / 4);
      break;
    case GgmlType::Q4_K:  // scales up to 63, quants up to 15
      for (size_t b = 0; b < n / 256; ++b)
        half(144 * b, scale / 200), half(144 * b + 2, scale / 100);
      break;
    case GgmlType::Q5_K:
      for (size_t b = 0; b < n / 256; ++b)
        half(176 * b, scale / 400), half(176 * b + 2, scale / 100);
      break;
    case GgmlType::Q6_K:  // int8 scales, quants -32..31
      for (size_t b = 0; b < n / 256; ++b) half(210 * b + 208, scale / 1000);
      break;
    default:
      break;
  }
  return d;
}

inline std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

struct Spec {
  std::string arch = "llama";
  GgmlType type = GgmlType::Q8_0;
  uint32_t embd = 256, ff = 512, heads = 4, kv_heads = 2, layers = 2, vocab = 300;
  uint32_t key_length = 0;  // 0: embd / heads
  bool tied = false;
  // qwen3moe: experts per layer, used per token, expert FFN size (ff is then unused).
  uint32_t experts = 8, experts_used = 2, expert_ff = 256;
  // rope.scaling.* keys (none written when the type is empty; orig 0: not written).
  std::string rope_scaling;
  float rope_factor = 1;
  uint32_t rope_orig = 0;
  // Corruptions for the error tests.
  std::string wrong_shape_tensor, wrong_type_tensor, missing_tensor, missing_key;
  std::vector<std::string> extra_tensors;                // more 1-D f32 tensors of embd values
  std::vector<std::pair<std::string, float>> extra_f32;  // more metadata
};

inline std::string write_model(const Spec& sp, const std::string& name) {
  std::mt19937 rng(1234);
  GgufWriter w;
  const std::string a = sp.arch + ".";
  auto key_u32 = [&](const std::string& k, uint32_t v) {
    if (k != sp.missing_key) w.u32(k, v);
  };
  w.str("general.architecture", sp.arch);
  key_u32(a + "context_length", 512);
  key_u32(a + "embedding_length", sp.embd);
  key_u32(a + "block_count", sp.layers);
  key_u32(a + "feed_forward_length", sp.ff);
  key_u32(a + "attention.head_count", sp.heads);
  key_u32(a + "attention.head_count_kv", sp.kv_heads);
  if (sp.key_length) {
    key_u32(a + "attention.key_length", sp.key_length);
    key_u32(a + "attention.value_length", sp.key_length);
  }
  w.f32(a + "attention.layer_norm_rms_epsilon", 1e-6f);
  if (!sp.rope_scaling.empty()) {
    w.str(a + "rope.scaling.type", sp.rope_scaling);
    w.f32(a + "rope.scaling.factor", sp.rope_factor);
    if (sp.rope_orig) key_u32(a + "rope.scaling.original_context_length", sp.rope_orig);
  }
  const bool moe = sp.arch == "qwen3moe";
  if (moe) {
    key_u32(a + "expert_count", sp.experts);
    key_u32(a + "expert_used_count", sp.experts_used);
    key_u32(a + "expert_feed_forward_length", sp.expert_ff);
  }
  w.f32(a + "rope.freq_base", sp.arch == "llama" ? 10000.0f : 1000000.0f);
  w.u32("tokenizer.ggml.eos_token_id", 2);
  const uint32_t hd = sp.key_length ? sp.key_length : sp.embd / sp.heads;
  const uint32_t qd = sp.heads * hd, kd = sp.kv_heads * hd;
  std::normal_distribution<float> nd(1.0f, 0.1f);
  auto vec = [&](const std::string& n, uint32_t len, float mean) {
    std::vector<float> v(len);
    for (auto& x : v) x = mean == 1.0f ? nd(rng) : (nd(rng) - 1.0f);
    if (n != sp.missing_tensor) w.tensor(n, 0, {len}, f32_bytes(v));
  };
  auto mat = [&](const std::string& n, uint32_t cols, uint32_t rows) {
    if (n == sp.missing_tensor) return;
    uint32_t type = uint32_t(sp.type);
    std::vector<uint64_t> ne = {cols, rows};
    if (n == sp.wrong_shape_tensor) ne = {cols, rows / 2};
    if (n == sp.wrong_type_tensor) {
      w.tensor(n, 9 /* Q8_1: never a weight type */, ne,
               std::vector<uint8_t>(cols / 32 * 36 * rows));
      return;
    }
    w.tensor(n, type, ne, random_weights(sp.type, cols, ne[1], 1.0f / std::sqrt(float(cols)), rng));
  };
  mat("token_embd.weight", sp.embd, sp.vocab);
  vec("output_norm.weight", sp.embd, 1.0f);
  if (!sp.tied) mat("output.weight", sp.embd, sp.vocab);
  for (uint32_t l = 0; l < sp.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    vec(p + "attn_norm.weight", sp.embd, 1.0f);
    mat(p + "attn_q.weight", sp.embd, qd);
    mat(p + "attn_k.weight", sp.embd, kd);
    mat(p + "attn_v.weight", sp.embd, kd);
    if (sp.arch == "qwen2") {
      vec(p + "attn_q.bias", qd, 0.0f);
      vec(p + "attn_k.bias", kd, 0.0f);
      vec(p + "attn_v.bias", kd, 0.0f);
    }
    if (sp.arch == "qwen3" || moe) {
      vec(p + "attn_q_norm.weight", hd, 1.0f);
      vec(p + "attn_k_norm.weight", hd, 1.0f);
    }
    mat(p + "attn_output.weight", qd, sp.embd);
    vec(p + "ffn_norm.weight", sp.embd, 1.0f);
    if (moe) {
      // The router in F32 (as llama.cpp's quantizer leaves it), wide logits: few near-ties.
      w.tensor(
          p + "ffn_gate_inp.weight", 0, {sp.embd, sp.experts},
          random_weights(GgmlType::F32, sp.embd, sp.experts, 3 / std::sqrt(float(sp.embd)), rng));
      const auto exps = [&](const std::string& n, uint32_t cols, uint32_t rows) {
        w.tensor(n, uint32_t(sp.type), {cols, rows, sp.experts},
                 random_weights(sp.type, cols, uint64_t(rows) * sp.experts,
                                1.0f / std::sqrt(float(cols)), rng));
      };
      exps(p + "ffn_gate_exps.weight", sp.embd, sp.expert_ff);
      exps(p + "ffn_up_exps.weight", sp.embd, sp.expert_ff);
      exps(p + "ffn_down_exps.weight", sp.expert_ff, sp.embd);
      continue;
    }
    mat(p + "ffn_gate.weight", sp.embd, sp.ff);
    mat(p + "ffn_up.weight", sp.embd, sp.ff);
    mat(p + "ffn_down.weight", sp.ff, sp.embd);
  }
  for (const auto& n : sp.extra_tensors) vec(n, sp.embd, 1.0f);
  for (const auto& [k, v] : sp.extra_f32) w.f32(k, v);
  const std::string path = "/tmp/lf_model_test_" + std::to_string(getpid()) + "_" + name + ".gguf";
  w.write(path);
  return path;
}

struct TmpFile {
  std::string path;
  ~TmpFile() { std::remove(path.c_str()); }
};

}  // namespace lftest
