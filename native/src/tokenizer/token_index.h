// Flat open-addressing hash tables for the hot lookups of tokenization: token text -> id and
// (left id, right id) -> merge rank. Much faster to build and to probe than node-based maps.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace leapfrog {

// Maps token texts (owned elsewhere, looked up through `texts`) to their ids.
class TextIndex {
 public:
  static uint64_t hash(std::string_view s);
  // Sizes the table for n entries; drops previous entries.
  void reset(size_t n);
  // Inserts `id` (whose text is texts[id]); returns the id already there for that text, or -1.
  int32_t insert(const std::vector<std::string_view>& texts, int32_t id);
  int32_t find(const std::vector<std::string_view>& texts, std::string_view s) const;

 private:
  struct Slot {
    uint32_t hash;
    int32_t id;  // -1: empty
  };
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

// Maps a pair of 32-bit ids to a 32-bit value.
class PairIndex {
 public:
  void reset(size_t n);
  // Keeps the first value inserted for a pair (as std::map::emplace does).
  void insert(uint32_t a, uint32_t b, int32_t value);
  int32_t find(uint32_t a, uint32_t b) const;  // -1 when absent
  size_t size() const { return size_; }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  struct Slot {
    uint64_t key;
    int32_t value;
  };
  size_t slot_of(uint64_t key) const;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace leapfrog
