// Generated Unicode tables (see native/tools/gen_unicode_tables.py); read them via unicode.h.
#pragma once
#include <cstddef>
#include <cstdint>

namespace leapfrog::unicode_tables {

struct LowerRun {
  uint32_t first;
  uint32_t last;
  int32_t delta;
  uint32_t stride;
};

extern const char* const kUnicodeVersion;
extern const uint32_t kCategoryRanges[];  // (first << 8) | flag, ascending
extern const size_t kCategoryRangeCount;
extern const uint32_t kWhitespace[];  // White_Space, ascending
extern const size_t kWhitespaceCount;
extern const LowerRun kLowerRuns[];  // ascending by first
extern const size_t kLowerRunCount;

}  // namespace leapfrog::unicode_tables
