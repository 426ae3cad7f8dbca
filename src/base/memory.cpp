#include "base/memory.hpp"

#include <cstdint>

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

}  // namespace preflight
