// GPT-2's reversible byte <-> printable code point mapping used by byte-level BPE vocabularies.
#pragma once
#include <cstdint>
#include <string>

namespace leapfrog::byte_encoding {

// The code point that stands for byte `b` in byte-level BPE token texts.
uint32_t byte_to_cp(uint8_t b);
// The byte a code point stands for, or -1 when it stands for none.
int cp_to_byte(uint32_t cp);
// Appends the UTF-8 of byte_to_cp(b).
void append_encoded(std::string& out, uint8_t b);

}  // namespace leapfrog::byte_encoding
