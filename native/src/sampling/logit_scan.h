// Whole-vocabulary scans of one row of logits that run every decoding step: the argmax (every
// greedy token, target and draft) and the softmax's denominator (a draft model's confidence in
// its token). Four lanes at a time in GCC/Clang vector extensions, so the same code is SSE2
// on x86-64 and NEON on arm64 without an instruction-set build of its own. A draft step of the
// bundled draft model (24,576 tokens) spent ~0.11-0.19 ms in scalar versions of these, against
// ~0.36 ms in its forward pass (timed per step, 2026-12-03).
#pragma once
#include <cstdint>

namespace leapfrog {

// The first index of the largest logit (llama.cpp's tie rule); NaNs are never the largest
// (index 0 if every logit is NaN).
int32_t argmax_logit(const float* logits, int n);

// sum over i of exp(logits[i] - m), m the largest logit, to about 1e-5 relative (a Taylor
// polynomial of e^r, not libm): for confidence estimates, not for sampling.
double softmax_denominator(const float* logits, int n, float m);

}  // namespace leapfrog
