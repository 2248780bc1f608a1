#include "base/huge_pages.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace zerodrop {
namespace {

constexpr uintptr_t kHugePage = 2 << 20;
// Headroom malloc asks of brk at each growth: a huge page needs its whole 2 MiB range inside
// the heap's mapping before it is first touched, so the heap must grow well ahead of use.
constexpr int kTopPad = 32 << 20;

bool enabled = false;
uintptr_t advised_end = 0;  // the heap below it is advised already

uintptr_t heap_end() {
  return reinterpret_cast<uintptr_t>(sbrk(0));
}

}  // namespace

void enable_huge_heap() {
  if (enabled) {
    return;
  }
  enabled = true;
  mallopt(M_TOP_PAD, kTopPad);
  // Large blocks (a file's text, its vector of objects) from the heap too, not from mmap:
  // they get huge pages as well. A run that holds them frees them at exit anyway.
  mallopt(M_MMAP_MAX, 0);
  advised_end = heap_end();
}

void note_heap_growth() {
  if (!enabled) {
    return;
  }
  uintptr_t end = heap_end();
  if (end < advised_end + kHugePage) {
    return;  // nothing new, or less than a huge page: advised with the next growth
  }
  // Whole huge pages inside the heap only; the part of the first one, maybe touched already,
  // stays in small pages.
  uintptr_t begin = (advised_end + kHugePage - 1) & ~(kHugePage - 1);
  uintptr_t stop = end & ~(kHugePage - 1);
  if (stop > begin) {
    madvise(reinterpret_cast<void*>(begin), stop - begin, MADV_HUGEPAGE);  // best effort
  }
  advised_end = std::max(stop, begin);
}

}  // namespace zerodrop
