// base/memory: prefault_writable is a hint that never changes what a block holds, whatever its size and alignment.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/memory.hpp"

using namespace preflight;

namespace {

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 131 + 7);
  return v;
}

}  // namespace

// Issue 19 (round 18): blocks of a few bytes, of one page and of many pages (a plan's slot lists, ~240 KB each), at
// odd offsets: after the call every byte is what was written before it, and the block can still be written.
TEST(Memory, Issue19_PrefaultKeepsTheContents) {
  for (const size_t n : {size_t{0}, size_t{1}, size_t{100}, size_t{4096}, size_t{4097}, size_t{245760}, size_t{3} << 20}) {
    for (const size_t offset : {size_t{0}, size_t{1}, size_t{17}}) {
      std::vector<uint8_t> block(n + offset + 1, 0);
      const auto want = pattern(n);
      std::copy(want.begin(), want.end(), block.begin() + static_cast<std::ptrdiff_t>(offset));
      prefault_writable(block.data() + offset, n);
      EXPECT_TRUE(std::equal(want.begin(), want.end(), block.begin() + static_cast<std::ptrdiff_t>(offset))) << n << " at +" << offset;
      EXPECT_EQ(block[n + offset], 0) << n << " at +" << offset;  // the byte after the block is not touched
      if (n > 0) {
        block[offset + n - 1] = 0xAB;
        EXPECT_EQ(block[offset + n - 1], 0xAB);
      }
    }
  }
  prefault_writable(nullptr, 1 << 20);  // no block: nothing happens
}
