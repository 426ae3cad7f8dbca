// base/memory: prefault_writable is a hint that never changes what a block holds, whatever its size and alignment;
// LargeBlockAllocator gives distinct, aligned blocks that keep what is written and are returned when freed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <thread>
#include <utility>
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

// Issue 19 (round 20): LargeBlockAllocator. Vectors of large blocks (a plan's candidate lists, 64 KiB and more) and of
// small ones (operator new), grown, moved, swapped and filled from two threads at once: every element reads what was
// written, no two live blocks overlap, each block is aligned for its type, and once every block is freed no chunk is
// left mapped. A block larger than a chunk gets one of its own.
TEST(Memory, Issue19_LargeBlocksKeepTheirContentsAndAreReturned) {
  using Big = std::vector<uint64_t, LargeBlockAllocator<uint64_t>>;
  ASSERT_EQ(large_block_chunks(), 0u);
  {
    std::vector<Big> lists;
    const size_t sizes[] = {1, 100, k_large_block_bytes / 8 - 1, k_large_block_bytes / 8, 30'000, 250'000, size_t{10} << 20};  // the last: 80 MB
    for (size_t round = 0; round < 3; ++round)
      for (const size_t n : sizes) {
        Big v;
        for (size_t i = 0; i < n; ++i) v.push_back(i * 2654435761u + n + round);  // grows through every size below n
        lists.push_back(std::move(v));
      }
    std::vector<std::pair<uintptr_t, uintptr_t>> spans;
    for (size_t l = 0; l < lists.size(); ++l) {
      const Big& v = lists[l];
      const size_t n = sizes[l % std::size(sizes)], round = l / std::size(sizes);
      ASSERT_EQ(v.size(), n);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(v[i], i * 2654435761u + n + round) << "list " << l << " element " << i;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % alignof(uint64_t), 0u);
      spans.emplace_back(reinterpret_cast<uintptr_t>(v.data()), reinterpret_cast<uintptr_t>(v.data() + v.capacity()));
    }
    std::sort(spans.begin(), spans.end());
    for (size_t s = 1; s < spans.size(); ++s) EXPECT_LE(spans[s - 1].second, spans[s].first) << "blocks " << s - 1 << " and " << s << " overlap";
    EXPECT_GE(large_block_chunks(), 2u);  // the 80 MB blocks do not fit a 64 MB chunk
    // Moved and swapped between containers as a std::vector's block is, then freed in an order unlike the allocation's.
    Big a = std::move(lists[5]);
    std::swap(a, lists[12]);
    EXPECT_EQ(a.size(), sizes[12 % std::size(sizes)]);
    for (size_t l = lists.size(); l-- > 0;)
      if (l % 2) lists[l] = Big();
    lists.clear();
  }
  EXPECT_EQ(large_block_chunks(), 0u);
  // Two threads filling their own lists at once from the shared chunks.
  {
    std::vector<Big> mine(2);
    std::thread other([&] {
      for (size_t i = 0; i < 200'000; ++i) mine[1].push_back(i ^ 0x5555);
    });
    for (size_t i = 0; i < 200'000; ++i) mine[0].push_back(i * 3);
    other.join();
    for (size_t i = 0; i < 200'000; ++i) {
      ASSERT_EQ(mine[0][i], i * 3);
      ASSERT_EQ(mine[1][i], i ^ 0x5555);
    }
  }
  EXPECT_EQ(large_block_chunks(), 0u);
}
