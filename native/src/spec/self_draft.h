// Self-drafting for a user with one model: a lower-bit copy of the model's own weights
// (Q4_0: about half the bytes of Q8_0, so a draft step costs about half a target step) is
// written once next to the user's cache and loaded as the draft model. Same vocabulary,
// same architecture, close predictions — a draft that needs no second download.
#pragma once
#include <string>

namespace leapfrog {

// Writes `dst`: `src` with every matrix whose rows fit Q4_0 blocks stored as Q4_0 (types
// that are already 4-bit or smaller are copied as they are), metadata carried over byte for
// byte. Written to a temporary name and renamed, so a half-written file is never loaded.
// Throws std::runtime_error naming the file on failure.
void write_lower_bit_copy(const std::string& src, const std::string& dst);

}  // namespace leapfrog
