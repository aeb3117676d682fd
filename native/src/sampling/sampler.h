// Token selection from logits: greedy, or a llama.cpp-style chain
//   repetition penalty -> top-k -> top-p -> min-p -> temperature -> draw
// (the order of llama.cpp's default sampler chain, so the same settings mean the same
// thing in both engines). Seeded and reproducible.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "sampling/rng.h"

namespace leapfrog {

struct SamplingParams {
  float temperature = 0;  // <= 0: greedy (argmax after the repetition penalty)
  int top_k = 40;         // <= 0: off
  float top_p = 0.95f;    // >= 1: off
  float min_p = 0.05f;    // <= 0: off
  // llama.cpp's repeat penalty: each distinct token among the last `repeat_last_n` has its
  // logit divided by the penalty when positive, multiplied when negative. 1: off.
  float repeat_penalty = 1.0f;
  int repeat_last_n = 64;
  uint64_t seed = 0;
};

struct TokenProb {
  int32_t id;
  float logit;  // after penalties (and temperature, in distribution())
  float p;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& p) : params_(p), rng_(p.seed) {}
  const SamplingParams& params() const { return params_; }
  bool greedy() const { return params_.temperature <= 0; }

  // Chooses the next token. `history` is the sequence so far (prompt + generated), for the
  // repetition penalty.
  int32_t sample(const float* logits, int n_vocab, std::span<const int32_t> history);

  // The candidates and probabilities `sample` draws from for these logits (sorted by
  // descending probability; for greedy the single argmax with p = 1).
  std::vector<TokenProb> distribution(const float* logits, int n_vocab,
                                      std::span<const int32_t> history) const;

  // Greedy choice: the first index of the maximum logit (llama.cpp's tie rule).
  static int32_t argmax(const float* logits, int n_vocab);

 private:
  // Greedy with nothing to penalize (apply_repeat_penalty would change no logit): the choice
  // is the argmax, and neither sample() nor distribution() needs a copy of the vocabulary.
  bool plain_greedy(std::span<const int32_t> history) const;
  SamplingParams params_;
  Rng rng_;
};

}  // namespace leapfrog
