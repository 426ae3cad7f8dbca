#include "base/memory.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace preflight {

void prefault_writable(void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  if (!data || page == 0) return;
  // madvise takes page-aligned ranges: the whole pages inside the block (the pages at its ends may hold other blocks,
  // which populating would not change either, but they are not this caller's to ask for).
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);  // EINVAL before 5.14: no-op
#else
  (void)data;
  (void)bytes;
#endif
}

#if defined(__linux__)
namespace {

constexpr uintptr_t k_huge = uintptr_t{2} << 20;     // the huge page size the chunks are aligned to
constexpr size_t k_chunk_bytes = size_t{64} << 20;   // address space per chunk (only what is written is backed)
constexpr uintptr_t k_block_align = 64;

struct Chunk {
  uintptr_t base = 0, top = 0, end = 0;  // [base, end) mapped and aligned to k_huge; blocks are below top
  size_t live = 0;                       // blocks not yet freed
  void* mapping = nullptr;               // what mmap returned, and its length (a few pages more, for the alignment)
  size_t mapped = 0;
};

struct Chunks {
  std::mutex lock;
  std::vector<Chunk> list;  // the last one is the one new blocks go to
};

Chunks& chunks() {
  static Chunks* c = new Chunks;  // never destroyed: blocks may be freed by static destructors after main
  return *c;
}

bool map_chunk(Chunk& c, size_t bytes) {
  const size_t want = (bytes + k_huge - 1) / k_huge * k_huge;
  c.mapped = want + k_huge;
  c.mapping = mmap(nullptr, c.mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (c.mapping == MAP_FAILED) return false;
  c.base = c.top = (reinterpret_cast<uintptr_t>(c.mapping) + k_huge - 1) / k_huge * k_huge;
  c.end = c.base + want;
#if defined(MADV_HUGEPAGE)
  (void)madvise(reinterpret_cast<void*>(c.base), want, MADV_HUGEPAGE);  // a hint: EINVAL without THP leaves 4 KiB pages
#endif
  return true;
}

}  // namespace

void* large_block_allocate(size_t bytes) {
  const size_t need = (bytes + k_block_align - 1) / k_block_align * k_block_align;
  Chunks& all = chunks();
  std::lock_guard<std::mutex> hold(all.lock);
  if (all.list.empty() || all.list.back().end - all.list.back().top < need) {
    Chunk c;
    if (!map_chunk(c, std::max(need, k_chunk_bytes))) throw std::bad_alloc();
    all.list.push_back(c);
  }
  Chunk& c = all.list.back();
  void* block = reinterpret_cast<void*>(c.top);
  c.top += need;
  ++c.live;
  return block;
}

void large_block_free(void* block, size_t bytes) noexcept {
  (void)bytes;
  if (!block) return;
  Chunks& all = chunks();
  std::lock_guard<std::mutex> hold(all.lock);
  const uintptr_t at = reinterpret_cast<uintptr_t>(block);
  const auto c = std::find_if(all.list.begin(), all.list.end(), [&](const Chunk& x) { return at >= x.base && at < x.end; });
  if (c == all.list.end() || --c->live > 0) return;
  (void)munmap(c->mapping, c->mapped);  // its last block: back to the system (the current chunk too: the next is mapped fresh)
  all.list.erase(c);
}

size_t large_block_chunks() {
  Chunks& all = chunks();
  std::lock_guard<std::mutex> hold(all.lock);
  return all.list.size();
}

#else

void* large_block_allocate(size_t bytes) { return ::operator new(bytes); }
void large_block_free(void* block, size_t bytes) noexcept { ::operator delete(block, bytes); }
size_t large_block_chunks() { return 0; }

#endif

}  // namespace preflight
