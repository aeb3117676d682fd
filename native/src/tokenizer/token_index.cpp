#include "tokenizer/token_index.h"

#include <cstring>

namespace leapfrog {
namespace {

size_t table_size(size_t n) {
  size_t size = 16;
  while (size < n * 2) size <<= 1;
  return size;
}

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ull;
  x ^= x >> 33;
  return x;
}

}  // namespace

uint64_t TextIndex::hash(std::string_view s) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = mix(h ^ w);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  return mix(h ^ tail ^ (uint64_t{0xA5} << 56));
}

void TextIndex::reset(size_t n) {
  slots_.assign(table_size(n), Slot{0, -1});
  mask_ = slots_.size() - 1;
}

int32_t TextIndex::insert(const std::vector<std::string_view>& texts, int32_t id) {
  const uint64_t h = hash(texts[id]);
  for (size_t i = h & mask_;; i = (i + 1) & mask_) {
    Slot& slot = slots_[i];
    if (slot.id < 0) {
      slot = {static_cast<uint32_t>(h >> 32), id};
      return -1;
    }
    if (slot.hash == static_cast<uint32_t>(h >> 32) && texts[slot.id] == texts[id]) return slot.id;
  }
}

int32_t TextIndex::find(const std::vector<std::string_view>& texts, std::string_view s) const {
  if (slots_.empty()) return -1;
  const uint64_t h = hash(s);
  const auto tag = static_cast<uint32_t>(h >> 32);
  for (size_t i = h & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.id < 0) return -1;
    if (slot.hash == tag && texts[slot.id] == s) return slot.id;
  }
}

void PairIndex::reset(size_t n) {
  slots_.assign(table_size(n), Slot{kEmpty, -1});
  mask_ = slots_.size() - 1;
  size_ = 0;
}

size_t PairIndex::slot_of(uint64_t key) const {
  size_t i = mix(key) & mask_;
  while (slots_[i].key != kEmpty && slots_[i].key != key) i = (i + 1) & mask_;
  return i;
}

void PairIndex::insert(uint32_t a, uint32_t b, int32_t value) {
  const uint64_t key = (uint64_t{a} << 32) | b;
  Slot& slot = slots_[slot_of(key)];
  if (slot.key == kEmpty) {
    slot = {key, value};
    ++size_;
  }
}

int32_t PairIndex::find(uint32_t a, uint32_t b) const {
  if (slots_.empty()) return -1;
  return slots_[slot_of((uint64_t{a} << 32) | b)].value;
}

}  // namespace leapfrog
