#include "tokenizer/byte_encoding.h"

#include <array>

#include "tokenizer/unicode.h"

namespace leapfrog::byte_encoding {
namespace {

struct Tables {
  std::array<uint32_t, 256> to_cp{};
  std::array<int16_t, 512> to_byte{};  // every mapped code point is below 0x144
  std::array<std::string, 256> encoded;
  Tables() {
    to_byte.fill(-1);
    auto printable = [](int b) {
      return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      to_cp[b] = printable(b) ? static_cast<uint32_t>(b) : next++;
      to_byte[to_cp[b]] = static_cast<int16_t>(b);
      unicode::append_utf8(encoded[b], to_cp[b]);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

uint32_t byte_to_cp(uint8_t b) { return tables().to_cp[b]; }

int cp_to_byte(uint32_t cp) { return cp < 512 ? tables().to_byte[cp] : -1; }

void append_encoded(std::string& out, uint8_t b) { out += tables().encoded[b]; }

}  // namespace leapfrog::byte_encoding
