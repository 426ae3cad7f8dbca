#pragma once
// base/memory: asks the kernel for the pages of a block the caller is about to fill, in one call (issue 19, round 18).
// A whole-catalogue plan writes ~120 MB of fresh candidate slots; on Linux each 4 KiB page then faults in at its first
// write, ~30,000 faults at several microseconds each in a VM, a third of the plan's time.
#include <cstddef>
#include <limits>
#include <new>

namespace preflight {

// Backs the whole pages inside [data, data + bytes) with writable memory now (Linux MADV_POPULATE_WRITE, kernel 5.14+),
// so that writing them later takes no page fault. The contents are unchanged. Elsewhere, on an older kernel or for a
// range under a page, nothing happens and the pages fault in at first write as before: a speed hint, never an error.
void prefault_writable(void* data, size_t bytes);

// Issue 19 (round 20): blocks of at least k_large_block_bytes taken from chunks of address space that the kernel is
// asked to back with transparent huge pages (Linux MADV_HUGEPAGE: 2 MiB pages, one fault and one zeroing call for 512
// pages of 4 KiB; on this 2-vCPU VM 128 MB of fresh 4 KiB pages cost 340-700 ms, of huge pages 20-80 ms). Each block
// is placed at the next 64-byte boundary of a chunk shared by every thread (under a lock: a plan asks for a few
// thousand such blocks); a chunk is returned to the system when its last block is freed. Where huge pages are not
// offered the chunk is ordinary memory. Smaller blocks (and every block off Linux) come from operator new.
// `large_block_free` takes the block and the size it was asked for, as `large_block_allocate` gave it.
inline constexpr size_t k_large_block_bytes = size_t{64} << 10;
void* large_block_allocate(size_t bytes);
void large_block_free(void* block, size_t bytes) noexcept;
// How many chunks are mapped now (for the tests: 0 once every block is freed).
size_t large_block_chunks();

// A std::allocator for containers whose blocks are large and freshly written (a plan's candidate lists): blocks of
// k_large_block_bytes or more through large_block_allocate, smaller ones through operator new. Stateless; any two
// compare equal, so containers move their blocks between each other as with std::allocator.
template <class T>
struct LargeBlockAllocator {
  static_assert(alignof(T) <= 64, "large blocks are placed at 64-byte boundaries");
  using value_type = T;
  LargeBlockAllocator() = default;
  template <class U>
  LargeBlockAllocator(const LargeBlockAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > std::numeric_limits<size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    const size_t bytes = n * sizeof(T);
    if (bytes >= k_large_block_bytes) return static_cast<T*>(large_block_allocate(bytes));
    return static_cast<T*>(::operator new(bytes, std::align_val_t{alignof(T)}));
  }
  void deallocate(T* p, size_t n) noexcept {
    const size_t bytes = n * sizeof(T);
    if (bytes >= k_large_block_bytes) large_block_free(p, bytes);
    else ::operator delete(p, std::align_val_t{alignof(T)});
  }
  template <class U>
  bool operator==(const LargeBlockAllocator<U>&) const noexcept { return true; }
};

}  // namespace preflight
