#include "tokenizer/unicode.h"

#include <algorithm>
#include <array>

#include "tokenizer/unicode_tables.h"

namespace leapfrog::unicode {
namespace {

namespace ut = unicode_tables;

uint16_t category_by_search(uint32_t cp) {
  const uint32_t* begin = ut::kCategoryRanges;
  const uint32_t* end = ut::kCategoryRanges + ut::kCategoryRangeCount;
  // First entry whose start is > cp, then step back one.
  const uint32_t* it = std::upper_bound(
      begin, end, cp, [](uint32_t value, uint32_t entry) { return value < (entry >> 8); });
  return it == begin ? uint16_t{kUndefined} : static_cast<uint16_t>(it[-1] & 0xFF);
}

bool whitespace_by_search(uint32_t cp) {
  return std::binary_search(ut::kWhitespace, ut::kWhitespace + ut::kWhitespaceCount, cp);
}

// Flags for the Basic Multilingual Plane, expanded once from the range tables.
struct BmpTable {
  std::array<uint16_t, 0x10000> flags;
  BmpTable() {
    for (size_t i = 0; i < ut::kCategoryRangeCount; ++i) {
      const uint32_t first = ut::kCategoryRanges[i] >> 8;
      const uint32_t last =
          i + 1 < ut::kCategoryRangeCount ? ut::kCategoryRanges[i + 1] >> 8 : 0x110000;
      for (uint32_t cp = first; cp < last && cp < 0x10000; ++cp) {
        flags[cp] = static_cast<uint16_t>(ut::kCategoryRanges[i] & 0xFF);
      }
    }
    for (size_t i = 0; i < ut::kWhitespaceCount; ++i) flags[ut::kWhitespace[i]] |= kWhitespace;
  }
};

const BmpTable& bmp() {
  static const BmpTable table;
  return table;
}

}  // namespace

uint16_t flags(uint32_t cp) {
  if (cp < 0x10000) return bmp().flags[cp];
  if (cp > 0x10FFFF) return kUndefined;
  return category_by_search(cp) | (whitespace_by_search(cp) ? kWhitespace : 0);
}

uint32_t to_lower(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  const ut::LowerRun* end = ut::kLowerRuns + ut::kLowerRunCount;
  const ut::LowerRun* it =
      std::upper_bound(ut::kLowerRuns, end, cp,
                       [](uint32_t value, const ut::LowerRun& r) { return value < r.first; });
  if (it == ut::kLowerRuns) return cp;
  const ut::LowerRun& run = it[-1];
  if (cp > run.last || (cp - run.first) % run.stride != 0) return cp;
  return static_cast<uint32_t>(static_cast<int64_t>(cp) + run.delta);
}

void decode_utf8(std::string_view s, std::vector<uint32_t>& out) {
  out.clear();
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  auto cont = [&](size_t i) { return i < n && (p[i] & 0xC0) == 0x80; };
  size_t i = 0;
  while (i < n) {
    const uint8_t b = p[i];
    if (b < 0x80) {
      out.push_back(b);
      i += 1;
    } else if ((b & 0xE0) == 0xC0 && cont(i + 1)) {
      out.push_back(((b & 0x1Fu) << 6) | (p[i + 1] & 0x3Fu));
      i += 2;
    } else if ((b & 0xF0) == 0xE0 && cont(i + 1) && cont(i + 2)) {
      out.push_back(((b & 0x0Fu) << 12) | ((p[i + 1] & 0x3Fu) << 6) | (p[i + 2] & 0x3Fu));
      i += 3;
    } else if ((b & 0xF8) == 0xF0 && cont(i + 1) && cont(i + 2) && cont(i + 3)) {
      out.push_back(((b & 0x07u) << 18) | ((p[i + 1] & 0x3Fu) << 12) | ((p[i + 2] & 0x3Fu) << 6) |
                    (p[i + 3] & 0x3Fu));
      i += 4;
    } else {
      out.push_back(0xFFFD);
      i += 1;
    }
  }
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp <= 0x10FFFF) {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

size_t valid_utf8_prefix(std::string_view bytes, bool* incomplete_tail) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t n = bytes.size();
  size_t i = 0;
  *incomplete_tail = false;
  while (i < n) {
    const uint8_t b = p[i];
    size_t len = 0;
    uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (b < 0x80) {
      len = 1;
    } else if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      return i;  // not a lead byte
    }
    for (size_t k = 1; k < len; ++k) {
      if (i + k >= n) {
        *incomplete_tail = true;
        return i;
      }
      const uint8_t c = p[i + k];
      const uint8_t min = k == 1 ? lo : 0x80, max = k == 1 ? hi : 0xBF;
      if (c < min || c > max) return i;
    }
    i += len;
  }
  return i;
}

}  // namespace leapfrog::unicode
