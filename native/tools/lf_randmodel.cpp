// Writes a random-weight GGUF of a Qwen2.5-Coder or Qwen3-Coder-30B-A3B shape (or a custom one) for
// benchmarks and backend comparisons, tensor by tensor (a 7B file never sits in memory), with no
// tokenizer (tools take token ids) — or, with --tokenizer VOCAB.gguf, with that file's tokenizer.*
// metadata copied byte for byte and the vocabulary sized to it, so that llama.cpp loads the
// same file for a side-by-side on a machine without Node. Runs anywhere the engine builds — on a
// GPU machine with no Node, where test/bench/bench-models.ts cannot run.
//
//   lf_randmodel OUT.gguf [--shape tiny|0.5b|1.5b|3b|7b|30b-a3b|tiny-moe] [--quant Q4_K_M|
//                Q8_0|F16|BF16|F32|Q4_0|Q5_0|Q4_K|Q5_K|Q6_K|Q4_1|Q5_1|Q2_K|Q3_K|IQ4_NL|IQ4_XS]
//                [--arch qwen2|llama|qwen3|qwen3moe|starcoder2|granite|phi3|gemma|gemma2|
//                gemma3] [--layers N] [--vocab N] [--seed S] [--tokenizer VOCAB.gguf]
//
// --shape 30b-a3b (Qwen3-Coder-30B-A3B: 48 layers, hidden 2048, 32 query / 4 KV heads of
// 128, 128 experts of FFN 768 with 8 used per token, vocabulary 151936) is a qwen3moe shape;
// --layers N keeps the first N layers so a fraction of it fits a small machine. The MoE
// shapes imply --arch qwen3moe; the router (ffn_gate_inp) stays F32, as in llama.cpp's files.
//
// Quantization mixes follow bench-models.ts: Q4_K_M is Q4_K for matrices, Q6_K for the
// output (the embedding when tied) and for attn_v / ffn_down in llama.cpp's "use_more_bits"
// layers; inputs not a multiple of 256 fall back to Q5_0 (for Q4_K and the other 256-weight
// types but IQ4_XS, which falls back to IQ4_NL as in llama.cpp) and Q8_0 (for Q6_K).
// Values: uniform codes with scales giving each matrix a spread of about 1/sqrt(inputs) and
// zero-mean K-quant sub-blocks (the mins cancel the codes' mean), so hidden states stay
// O(1) through the layers and greedy outputs are not degenerate. Speed does not depend on
// the values; the outputs are meaningless.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "format/fp16.h"
#include "gguf/ggml_types.h"

using namespace leapfrog;

namespace {

struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float uniform() { return float(next() >> 40) * (1.0f / 16777216.0f); }  // [0, 1)
  float normal() {
    const float u1 = std::max(uniform(), 1e-7f), u2 = uniform();
    return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.2831853f * u2);
  }
  void fill(uint8_t* p, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const uint64_t v = next();
      std::memcpy(p + i, &v, 8);
    }
    for (uint64_t v = next(); i < n; ++i, v >>= 8) p[i] = uint8_t(v);
  }
};

struct Shape {
  int hidden, layers, heads, kv_heads, ffn, vocab;
  bool tied;
  int head_dim = 0;                                   // 0: hidden / heads
  int experts = 0, experts_used = 0, expert_ffn = 0;  // mixture of experts (qwen3moe)
};

Shape shape_named(const std::string& s) {
  if (s == "tiny") return {256, 4, 4, 2, 512, 1000, false};
  if (s == "0.5b") return {896, 24, 14, 2, 4864, 151936, true};
  if (s == "1.5b") return {1536, 28, 12, 2, 8960, 151936, false};
  if (s == "3b") return {2048, 36, 16, 2, 11008, 151936, true};
  if (s == "7b") return {3584, 28, 28, 4, 18944, 152064, false};
  if (s == "30b-a3b") return {2048, 48, 32, 4, 6144, 151936, false, 128, 128, 8, 768};
  if (s == "tiny-moe") return {256, 4, 4, 2, 512, 1000, false, 64, 16, 4, 256};
  throw std::invalid_argument("unknown shape '" + s +
                              "' (tiny, 0.5b, 1.5b, 3b, 7b, 30b-a3b, tiny-moe)");
}

GgmlType type_named(const std::string& s) {
  for (uint32_t t : {0u, 1u, 2u, 3u, 6u, 7u, 8u, 10u, 11u, 12u, 13u, 14u, 20u, 23u, 30u}) {
    if (ggml_type_traits(t)->name == s) return GgmlType(t);
  }
  throw std::invalid_argument("unknown type '" + s + "'");
}

bool use_more_bits(int i, int n) {
  const int e = n / 8;
  return i < e || i >= 7 * e || (i - e) % 3 == 2;
}

struct Planned {
  std::string name;
  GgmlType type;
  std::vector<uint64_t> ne;
  float sigma, mean;  // vectors: N(mean, sigma); matrices: spread sigma
  uint64_t offset = 0;
  size_t bytes() const {
    uint64_t n = 1;
    for (uint64_t d : ne) n *= d;
    return ggml_row_bytes(type, ne[0]) * (n / ne[0]);
  }
};

void half_at(uint8_t* p, float v) {
  const uint16_t h = format::f32_to_f16(v);
  std::memcpy(p, &h, 2);
}

// Q4_K/Q5_K scale bytes: 6-bit scales in [16, 63] and mins that cancel the codes' mean.
void k4_scales(uint8_t* q, Rng& rng, float mean_code, float dmin_over_d) {
  int sc[8], m[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = 16 + int(rng.next() % 48);
    m[j] = std::min(63, int(std::lround(sc[j] * mean_code / dmin_over_d)));
  }
  for (int j = 0; j < 4; ++j) {
    q[j] = uint8_t(sc[j] | ((sc[j + 4] >> 4) << 6));
    q[j + 4] = uint8_t(m[j] | ((m[j + 4] >> 4) << 6));
    q[j + 8] = uint8_t((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
}

// One row of `cols` weights of type t with spread sigma.
void random_row(GgmlType t, uint8_t* p, int64_t cols, float sigma, Rng& rng) {
  const size_t rb = ggml_row_bytes(t, cols);
  switch (t) {
    case GgmlType::F32:
      for (int64_t i = 0; i < cols; ++i) {
        const float v = sigma * rng.normal();
        std::memcpy(p + 4 * i, &v, 4);
      }
      return;
    case GgmlType::F16:
      for (int64_t i = 0; i < cols; ++i) half_at(p + 2 * i, sigma * rng.normal());
      return;
    case GgmlType::BF16:
      for (int64_t i = 0; i < cols; ++i) {
        const uint16_t h = format::f32_to_bf16(sigma * rng.normal());
        std::memcpy(p + 2 * i, &h, 2);
      }
      return;
    default:
      break;
  }
  rng.fill(p, rb);
  switch (t) {
    case GgmlType::Q8_0:  // codes uniform in [-128, 127]: sd 74 d
      for (int64_t b = 0; b < cols / 32; ++b) half_at(p + 34 * b, sigma / 74);
      break;
    case GgmlType::Q4_0:  // [-8, 7]: sd 4.6 d
      for (int64_t b = 0; b < cols / 32; ++b) half_at(p + 18 * b, sigma / 4.6f);
      break;
    case GgmlType::Q5_0:  // [-16, 15]: sd 9.2 d
      for (int64_t b = 0; b < cols / 32; ++b) half_at(p + 22 * b, sigma / 9.2f);
      break;
    case GgmlType::Q4_K:  // d * sc * (code - 7.5), sc about 40: sd 4.6 * 40 d
      for (int64_t b = 0; b < cols / 256; ++b) {
        const float d = sigma / 184;
        half_at(p + 144 * b, d), half_at(p + 144 * b + 2, d * 8);
        k4_scales(p + 144 * b + 4, rng, 7.5f, 8);
      }
      break;
    case GgmlType::Q5_K:  // codes 0..31: sd 9.2 * 40 d
      for (int64_t b = 0; b < cols / 256; ++b) {
        const float d = sigma / 368;
        half_at(p + 176 * b, d), half_at(p + 176 * b + 2, d * 16);
        k4_scales(p + 176 * b + 4, rng, 15.5f, 16);
      }
      break;
    case GgmlType::Q6_K:  // int8 scales (|sc| about 64), codes -32..31 (sd 18.5)
      for (int64_t b = 0; b < cols / 256; ++b) half_at(p + 210 * b + 208, sigma / 1180);
      break;
    case GgmlType::Q4_1:  // codes 0..15 (sd 4.6 d), the offset cancelling their mean 7.5
      for (int64_t b = 0; b < cols / 32; ++b) {
        half_at(p + 20 * b, sigma / 4.6f), half_at(p + 20 * b + 2, -7.5f * sigma / 4.6f);
      }
      break;
    case GgmlType::Q5_1:  // codes 0..31 (sd 9.2 d), mean 15.5
      for (int64_t b = 0; b < cols / 32; ++b) {
        half_at(p + 24 * b, sigma / 9.2f), half_at(p + 24 * b + 2, -15.5f * sigma / 9.2f);
      }
      break;
    case GgmlType::IQ4_NL:  // the 16 levels: sd about 70
      for (int64_t b = 0; b < cols / 32; ++b) half_at(p + 18 * b, sigma / 70);
      break;
    case GgmlType::Q2_K:  // scales 6..10 (codes 0..3, sd 1.12), mins cancelling the mean 1.5
      for (int64_t b = 0; b < cols / 256; ++b) {
        uint8_t* sc = p + 84 * b;
        for (int j = 0; j < 16; ++j) {
          const int s4 = 6 + int(rng.next() % 5);
          sc[j] = uint8_t(s4 | (std::lround(1.5f * s4) << 4));
        }
        const float d = sigma / (1.12f * 8);
        half_at(p + 84 * b + 80, d), half_at(p + 84 * b + 82, d);
      }
      break;
    case GgmlType::Q3_K:  // random 6-bit scales (|s - 32| rms 18.5), codes -4..3 (sd 2.29)
      for (int64_t b = 0; b < cols / 256; ++b) half_at(p + 110 * b + 108, sigma / 42);
      break;
    case GgmlType::IQ4_XS:  // random 6-bit scales (rms 18.5) x levels (sd about 70)
      for (int64_t b = 0; b < cols / 256; ++b) half_at(p + 136 * b, sigma / 1295);
      break;
    default:
      throw std::invalid_argument("unsupported type");
  }
}

// The tokenizer.* key-value pairs of a GGUF, each as its raw bytes (key, type, value), and
// the number of tokens: what --tokenizer copies into the random model.
struct TokenizerKvs {
  std::vector<std::vector<uint8_t>> raw;
  bool has_eos = false;
  uint64_t n_tokens = 0;
};

TokenizerKvs read_tokenizer_kvs(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  const std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), {});
  size_t at = 0;
  auto need = [&](size_t n) {
    if (b.size() - at < n) throw std::runtime_error(path + ": truncated GGUF header");
  };
  auto u32 = [&] {
    need(4);
    uint32_t v;
    std::memcpy(&v, b.data() + at, 4);
    at += 4;
    return v;
  };
  auto u64 = [&] {
    need(8);
    uint64_t v;
    std::memcpy(&v, b.data() + at, 8);
    at += 8;
    return v;
  };
  auto str = [&] {
    const uint64_t n = u64();
    need(n);
    std::string v(reinterpret_cast<const char*>(b.data() + at), n);
    at += n;
    return v;
  };
  // Skips one value of GGUF type t (arrays of arrays are not GGUF tokenizers' business).
  auto skip = [&](uint32_t t, auto& self) -> void {
    static const size_t fixed[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    if (t == 8) {
      str();
    } else if (t == 9) {
      const uint32_t et = u32();
      const uint64_t n = u64();
      for (uint64_t i = 0; i < n; ++i) self(et, self);
    } else if (t < 13) {
      need(fixed[t]);
      at += fixed[t];
    } else {
      throw std::runtime_error(path + ": unknown GGUF value type " + std::to_string(t));
    }
  };
  if (u32() != 0x46554747) throw std::runtime_error(path + ": not a GGUF file");
  u32();  // version
  u64();  // tensors
  const uint64_t n_kv = u64();
  TokenizerKvs out;
  for (uint64_t k = 0; k < n_kv; ++k) {
    const size_t start = at;
    const std::string key = str();
    const uint32_t type = u32();
    const size_t value_at = at;
    skip(type, skip);
    if (!key.starts_with("tokenizer.")) continue;
    out.raw.emplace_back(b.begin() + start, b.begin() + at);
    if (key == "tokenizer.ggml.eos_token_id") out.has_eos = true;
    if (key == "tokenizer.ggml.tokens" && type == 9) {
      std::memcpy(&out.n_tokens, b.data() + value_at + 4, 8);
    }
  }
  if (out.n_tokens == 0) throw std::runtime_error(path + ": no tokenizer.ggml.tokens");
  return out;
}

class Writer {
 public:
  explicit Writer(const std::string& path) : f_(std::fopen(path.c_str(), "wb")) {
    if (!f_) throw std::runtime_error("cannot write " + path);
  }
  ~Writer() {
    if (f_) std::fclose(f_);
  }
  void raw(const void* p, size_t n) {
    if (std::fwrite(p, 1, n, f_) != n) throw std::runtime_error("write failed");
    pos_ += n;
  }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void str(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void pad(size_t a) {
    static const uint8_t zeros[64] = {};
    while (pos_ % a) raw(zeros, std::min<size_t>(a - pos_ % a, 64));
  }
  size_t pos() const { return pos_; }

 private:
  FILE* f_;
  size_t pos_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr,
                 "usage: lf_randmodel OUT.gguf [--shape tiny|0.5b|1.5b|3b|7b|30b-a3b|tiny-moe] "
                 "[--quant Q4_K_M|Q8_0|F16|...] [--arch qwen2|llama|qwen3|qwen3moe|starcoder2|"
                 "granite|phi3|gemma|gemma2|gemma3] [--layers N] [--vocab N] [--seed S] "
                 "[--tokenizer VOCAB.gguf]\n");
    return 2;
  }
  try {
    const std::string out = argv[1];
    std::string shape_name = "1.5b", quant = "Q4_K_M", arch = "qwen2", tokenizer;
    int layers = 0, vocab = 0;
    uint64_t seed = 1;
    for (int i = 2; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&] {
        if (i + 1 >= argc) throw std::invalid_argument("missing value after " + a);
        return std::string(argv[++i]);
      };
      if (a == "--shape")
        shape_name = next();
      else if (a == "--quant")
        quant = next();
      else if (a == "--arch")
        arch = next();
      else if (a == "--layers")
        layers = std::stoi(next());
      else if (a == "--vocab")
        vocab = std::stoi(next());
      else if (a == "--seed")
        seed = std::stoull(next());
      else if (a == "--tokenizer")
        tokenizer = next();
      else
        throw std::invalid_argument("unknown option " + a);
    }
    Shape s = shape_named(shape_name);
    if (s.experts > 0) arch = "qwen3moe";
    if (arch == "qwen3moe" && s.experts == 0) {
      throw std::invalid_argument("--arch qwen3moe needs a MoE shape (30b-a3b, tiny-moe)");
    }
    const bool gemma = arch == "gemma" || arch == "gemma2" || arch == "gemma3";
    const bool starcoder2 = arch == "starcoder2", phi3 = arch == "phi3";
    if (arch == "gemma" || arch == "gemma2") s.tied = true;  // they never read output.weight
    if (layers > 0) s.layers = layers;
    if (vocab > 0) s.vocab = vocab;
    const TokenizerKvs tok = tokenizer.empty() ? TokenizerKvs{} : read_tokenizer_kvs(tokenizer);
    if (!tokenizer.empty()) s.vocab = int(tok.n_tokens);  // llama.cpp wants them equal
    const int H = s.hidden, hd = s.head_dim ? s.head_dim : H / s.heads, kv = s.kv_heads * hd;
    const int qd = s.heads * hd;
    const bool moe = s.experts > 0;
    const bool mixed = quant == "Q4_K_M";
    const GgmlType base = mixed ? GgmlType::Q4_K : type_named(quant);

    auto type_for = [&](const std::string& name, int64_t row_len, int layer) {
      GgmlType t = base;
      if (mixed) {
        const bool is_output = name == "output.weight" || (s.tied && name == "token_embd.weight");
        if (is_output)
          t = GgmlType::Q6_K;
        else if ((name.ends_with("attn_v.weight") || name.ends_with("ffn_down.weight") ||
                  name.ends_with("ffn_down_exps.weight")) &&
                 use_more_bits(layer, s.layers))
          t = GgmlType::Q6_K;
      }
      const uint32_t bs = ggml_type_traits(uint32_t(t))->block_size;
      if (row_len % bs != 0) {
        t = (t == GgmlType::Q6_K || t == GgmlType::Q8_0) ? GgmlType::Q8_0
            : t == GgmlType::IQ4_XS                      ? GgmlType::IQ4_NL
                                                         : GgmlType::Q5_0;
        if (row_len % 32 != 0) t = GgmlType::F16;
      }
      return t;
    };
    std::vector<Planned> plan;
    auto mat = [&](const std::string& name, int64_t in, int64_t outd, float sigma, int layer) {
      plan.push_back({name, type_for(name, in, layer), {uint64_t(in), uint64_t(outd)}, sigma, 0});
    };
    auto vec = [&](const std::string& name, int64_t n, float sigma, float mean) {
      plan.push_back({name, GgmlType::F32, {uint64_t(n)}, sigma, mean});
    };
    // gemma multiplies the embeddings by sqrt(H): drawn that much smaller, so the (tied)
    // logits do not just repeat the current token.
    mat("token_embd.weight", H, s.vocab, gemma ? 1.0f / std::sqrt(float(H)) : 1.0f, -1);
    for (int l = 0; l < s.layers; ++l) {
      const std::string p = "blk." + std::to_string(l) + ".";
      const float si = 1.0f / std::sqrt(float(H));
      vec(p + "attn_norm.weight", H, 0.1f, 1);
      if (starcoder2) vec(p + "attn_norm.bias", H, 0.1f, 0);
      if (phi3) {
        mat(p + "attn_qkv.weight", H, qd + 2 * kv, si, l);
      } else {
        mat(p + "attn_q.weight", H, qd, si, l);
        mat(p + "attn_k.weight", H, kv, si, l);
        mat(p + "attn_v.weight", H, kv, si, l);
      }
      if (arch == "qwen2" || starcoder2) {
        vec(p + "attn_q.bias", qd, 0.1f, 0);
        vec(p + "attn_k.bias", kv, 0.1f, 0);
        vec(p + "attn_v.bias", kv, 0.1f, 0);
      }
      if (arch == "qwen3" || moe || arch == "gemma3") {
        vec(p + "attn_q_norm.weight", hd, 0.1f, 1);
        vec(p + "attn_k_norm.weight", hd, 0.1f, 1);
      }
      mat(p + "attn_output.weight", qd, H, 0.5f / std::sqrt(float(qd)), l);
      if (starcoder2) vec(p + "attn_output.bias", H, 0.1f, 0);
      if (gemma && arch != "gemma") vec(p + "post_attention_norm.weight", H, 0.1f, 1);
      vec(p + "ffn_norm.weight", H, 0.1f, 1);
      if (starcoder2) vec(p + "ffn_norm.bias", H, 0.1f, 0);
      if (moe) {
        plan.push_back({p + "ffn_gate_inp.weight",
                        GgmlType::F32,
                        {uint64_t(H), uint64_t(s.experts)},
                        2 * si,
                        0});
        const auto exps = [&](const std::string& name, int64_t in, int64_t outd, float sigma) {
          plan.push_back({name,
                          type_for(name, in, l),
                          {uint64_t(in), uint64_t(outd), uint64_t(s.experts)},
                          sigma,
                          0});
        };
        const float sf = 0.5f / std::sqrt(float(s.expert_ffn));
        exps(p + "ffn_gate_exps.weight", H, s.expert_ffn, si);
        exps(p + "ffn_up_exps.weight", H, s.expert_ffn, si);
        exps(p + "ffn_down_exps.weight", s.expert_ffn, H, sf);
        continue;
      }
      if (phi3) {
        mat(p + "ffn_up.weight", H, 2 * s.ffn, si, l);  // gate rows, then up rows
      } else {
        if (!starcoder2) mat(p + "ffn_gate.weight", H, s.ffn, si, l);
        mat(p + "ffn_up.weight", H, s.ffn, si, l);
      }
      if (starcoder2) vec(p + "ffn_up.bias", s.ffn, 0.1f, 0);
      mat(p + "ffn_down.weight", s.ffn, H, 0.5f / std::sqrt(float(s.ffn)), l);
      if (starcoder2) vec(p + "ffn_down.bias", H, 0.1f, 0);
      if (gemma && arch != "gemma") vec(p + "post_ffw_norm.weight", H, 0.1f, 1);
    }
    vec("output_norm.weight", H, 0.1f, 1);
    if (starcoder2) vec("output_norm.bias", H, 0.1f, 0);
    if (!s.tied) mat("output.weight", H, s.vocab, 1.0f / std::sqrt(float(H)), -1);

    uint64_t off = 0;
    for (Planned& t : plan) {
      t.offset = off;
      off += (t.bytes() + 31) / 32 * 32;
    }

    Writer w(out);
    const std::string a = arch + ".";
    struct Kv {
      std::string key;
      uint32_t type;  // 4 u32, 6 f32, 8 string
      uint32_t u;
      float f;
      std::string s;
    };
    std::vector<Kv> kvs = {
        {"general.architecture", 8, 0, 0, arch},
        {"general.name", 8, 0, 0, "random " + shape_name + " " + quant},
        {a + "context_length", 4, 32768, 0, ""},
        {a + "embedding_length", 4, uint32_t(H), 0, ""},
        {a + "block_count", 4, uint32_t(s.layers), 0, ""},
        {a + "feed_forward_length", 4, uint32_t(s.ffn), 0, ""},
        {a + "attention.head_count", 4, uint32_t(s.heads), 0, ""},
        {a + "attention.head_count_kv", 4, uint32_t(s.kv_heads), 0, ""},
        {a + (starcoder2 ? "attention.layer_norm_epsilon" : "attention.layer_norm_rms_epsilon"), 6,
         0, 1e-6f, ""},
        {a + "rope.freq_base", 6, 0, arch == "llama" ? 10000.0f : 1000000.0f, ""},
    };
    if (moe) {
      kvs.push_back({a + "expert_count", 4, uint32_t(s.experts), 0, ""});
      kvs.push_back({a + "expert_used_count", 4, uint32_t(s.experts_used), 0, ""});
      kvs.push_back({a + "expert_feed_forward_length", 4, uint32_t(s.expert_ffn), 0, ""});
    }
    if (qd != H) {
      kvs.push_back({a + "attention.key_length", 4, uint32_t(hd), 0, ""});
      kvs.push_back({a + "attention.value_length", 4, uint32_t(hd), 0, ""});
    }
    std::vector<Kv> own = kvs;
    // The multipliers, caps and windows of the architectures beyond llama (model/arch_*.cpp),
    // with values that change the results (a window shorter than cuda_model_test's 72
    // positions).
    if (arch == "granite") {
      own.push_back({a + "logit_scale", 6, 0, 4.0f, ""});
      own.push_back({a + "residual_scale", 6, 0, 0.5f, ""});
      own.push_back({a + "embedding_scale", 6, 0, 2.0f, ""});
      own.push_back({a + "attention.scale", 6, 0, 0.5f / std::sqrt(float(hd)), ""});
    }
    if (arch == "gemma2") {
      own.push_back({a + "attn_logit_softcapping", 6, 0, 5.0f, ""});
      own.push_back({a + "final_logit_softcapping", 6, 0, 30.0f, ""});
    }
    if (arch == "gemma2" || arch == "gemma3") {
      own.push_back({a + "attention.sliding_window", 4, 32, 0, ""});
      own.push_back({a + "attention.sliding_window_pattern", 4, 2, 0, ""});
    }
    if (!tok.has_eos)
      own.push_back({"tokenizer.ggml.eos_token_id", 4, uint32_t(s.vocab - 1), 0, ""});
    w.u32(0x46554747);
    w.u32(3);
    w.u64(plan.size());
    w.u64(own.size() + tok.raw.size());
    for (const std::vector<uint8_t>& kv : tok.raw) w.raw(kv.data(), kv.size());
    for (const Kv& k : own) {
      w.str(k.key);
      w.u32(k.type);
      if (k.type == 4)
        w.u32(k.u);
      else if (k.type == 6)
        w.raw(&k.f, 4);
      else
        w.str(k.s);
    }
    for (const Planned& t : plan) {
      w.str(t.name);
      w.u32(uint32_t(t.ne.size()));
      for (uint64_t d : t.ne) w.u64(d);
      w.u32(uint32_t(t.type));
      w.u64(t.offset);
    }
    w.pad(32);
    Rng rng{seed};
    std::vector<uint8_t> buf;
    size_t total = 0;
    for (const Planned& t : plan) {
      buf.resize(t.bytes());
      if (t.ne.size() == 1) {
        for (uint64_t i = 0; i < t.ne[0]; ++i) {
          const float v = t.mean + t.sigma * rng.normal();
          std::memcpy(buf.data() + 4 * i, &v, 4);
        }
      } else {
        const size_t rb = ggml_row_bytes(t.type, t.ne[0]);
        const uint64_t rows = t.bytes() / rb;  // every row of a 2-D or 3-D tensor
        for (uint64_t r = 0; r < rows; ++r)
          random_row(t.type, buf.data() + r * rb, t.ne[0], t.sigma, rng);
      }
      w.raw(buf.data(), buf.size());
      w.pad(32);
      total += buf.size();
    }
    std::fprintf(
        stderr, "lf_randmodel: wrote %s (%s %s, %d layers, %zu tensors, %.2f GB of weights)\n",
        out.c_str(), shape_name.c_str(), quant.c_str(), s.layers, plan.size(), total / 1e9);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lf_randmodel: error: %s\n", e.what());
    return 1;
  }
}
