// Private to src/estimate: the per-thread memo of texts that are the same on every row of a device (speed.cpp).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/shared_text.hpp"
#include "estimate/held_texts.hpp"

namespace preflight::estimate {

// Issue 19: a plan explains tens of thousands of rows, and the texts that name the device's bandwidth basis, the
// profile's efficiency and the link are the same on every row of a device (the layout changes only the numbers
// below them). Such a text is built once per thread and reused while its inputs repeat: the key holds every input
// of the text, so a hit returns what building it would.
// Round 10: the texts are SharedText, so that a hit hands the row a reference to the text, not a copy of it.
// Round 12: a source text (device id, evidence, catalogue sources: up to a few hundred bytes each) enters the hashed
// key by its address and length, not its characters (hashing and copying whole texts into the key on every row was
// 5.6% of the JSON form's instructions). The characters are kept with the entry and compared on a hit, so a text at an
// address a different text held before (a freed catalogue, a reused buffer) never returns the other text's result:
// its entry is built afresh. A text with the same characters at another address is a key of its own (built once more).
template <size_t k_slots = 1024>
class TextMemo {
  static_assert((k_slots & (k_slots - 1)) == 0, "k_slots is a power of two");

 public:
  TextMemo& add(double v) { return add_word(std::bit_cast<uint64_t>(v)); }
  TextMemo& add(int64_t v) { return add_word(static_cast<uint64_t>(v)); }
  TextMemo& add(std::string_view v) {
    add_word(reinterpret_cast<uintptr_t>(v.data()));
    add_word(v.size());
    if (n_sources_ < k_sources) sources_[n_sources_] = v;
    ++n_sources_;
    return *this;
  }
  // The texts for the key built since the last call: `build` fills them only when the key is not among those kept
  // or its source texts' characters differ from those it was built from (a plan runs one model and variant over every
  // card of a platform and its counts, so a few hundred keys recur; at k_slots / 2 keys the memo starts again empty,
  // which bounds its memory).
  // Round 17: the entries are an open-addressed table of k_slots slots (linear probing from the key's hash), each
  // keeping one key's words and source texts and its texts; emptying the table keeps every slot's vectors, so after the
  // first keys neither a hit nor a miss allocates a key or a node (the unordered_map of round 12 built a key string, a
  // node and an entry's vectors per miss and hashed the key twice: 4% of the JSON form's instructions).
  template <class Build>
  const std::vector<SharedText>& texts(Build build) {
    // A key longer than the inline one (no caller's is: the longest, the link's, is at most 24 words and 7 texts) is never kept.
    if (n_words_ > k_words || n_sources_ > k_sources) {
      n_words_ = n_sources_ = 0;
      overflow_.clear();
      build(overflow_);
      return overflow_;
    }
    // Issue 19 (fitstart): the table starts at k_first_slots and doubles, keeping its keys, until it has k_slots: a fit
    // uses a few keys, and 8192 fresh slots (650 KB) were half of its page faults. Keys are dropped only at k_slots, as before.
    if (slots_.empty()) slots_.resize(std::min(k_slots, k_first_slots));
    size_t i = probe();
    if (!slots_[i].filled && filled_ >= slots_.size() / 2) {
      if (slots_.size() < k_slots) {
        grow();
      } else {  // full: start again empty (the slots keep their vectors)
        for (Slot& e : slots_) e.filled = false;
        filled_ = 0;
      }
      i = probe();
    }
    Slot& slot = slots_[i];
    // Planfast6: under a HeldTexts, an entry compared or built under its epoch is not compared again (held_texts.hpp).
    const uint64_t held = held_texts_epoch();
    if (const bool fresh = !slot.filled; fresh || !((held != 0 && slot.verified == held) || same_sources(slot.sources))) {
      slot.filled = false;  // a build that throws leaves the slot empty (a probe passes it; a later key may take it)
      if (!fresh) --filled_;
      slot.words.assign(words_.begin(), words_.begin() + static_cast<std::ptrdiff_t>(n_words_));
      slot.sources.resize(n_sources_);
      for (size_t k = 0; k < n_sources_; ++k) slot.sources[k].assign(sources_[k]);
      slot.texts.clear();
      build(slot.texts);
      slot.filled = true;
      ++filled_;
    }
    slot.verified = held;
    n_words_ = n_sources_ = 0;
    return slot.texts;
  }

 private:
  struct Slot {
    std::vector<uint64_t> words;       // the key: numbers' bits, texts' addresses and lengths
    std::vector<std::string> sources;  // the characters of the source texts the key names by address
    std::vector<SharedText> texts;
    bool filled = false;
    uint64_t verified = 0;  // the HeldTexts epoch its sources were last compared (or built) under; 0: none
  };
  static constexpr size_t k_words = 32, k_sources = 16, k_first_slots = 16;
  // A key's words hashed a word at a time.
  static size_t hash(const uint64_t* words, size_t n_words) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n_words;
    for (size_t k = 0; k < n_words; ++k) {
      h = (h ^ words[k]) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 32;
    }
    return static_cast<size_t>(h);
  }
  // The slot of the key built since the last call, or the empty slot where it goes (linear probing).
  size_t probe() const {
    const size_t mask = slots_.size() - 1, key_bytes = n_words_ * sizeof(uint64_t);
    size_t i = hash(words_.data(), n_words_) & mask;
    while (slots_[i].filled && (slots_[i].words.size() != n_words_ || std::memcmp(slots_[i].words.data(), words_.data(), key_bytes) != 0)) i = (i + 1) & mask;
    return i;
  }
  // Twice the slots, every kept key moved to its place in the larger table.
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_ = std::vector<Slot>(old.size() * 2);
    const size_t mask = slots_.size() - 1;
    for (Slot& e : old) {
      if (!e.filled) continue;
      size_t i = hash(e.words.data(), e.words.size()) & mask;
      while (slots_[i].filled) i = (i + 1) & mask;
      slots_[i] = std::move(e);
    }
  }
  TextMemo& add_word(uint64_t w) {
    if (n_words_ < k_words) words_[n_words_] = w;
    ++n_words_;
    return *this;
  }
  bool same_sources(const std::vector<std::string>& kept) const {
    if (kept.size() != n_sources_) return false;
    for (size_t i = 0; i < n_sources_; ++i)
      if (std::string_view(kept[i]) != sources_[i]) return false;
    return true;
  }
  std::array<uint64_t, k_words> words_{};
  size_t n_words_ = 0;
  std::array<std::string_view, k_sources> sources_{};
  size_t n_sources_ = 0;
  std::vector<SharedText> overflow_;
  std::vector<Slot> slots_;  // k_first_slots once the memo is first used, doubling to k_slots (1024; the decode and prefill lines' 8192)
  size_t filled_ = 0;
};

}  // namespace preflight::estimate
