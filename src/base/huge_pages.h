#pragma once

// Transparent huge pages for the malloc heap, for runs that build tens of megabytes of small
// objects at once (`zerodrop audit` on one 30 MiB file). On a VM every first touch of a 4 KiB
// page is a fault that can cost ~15 µs: a third of such a run's CPU time. Glibc does the same
// with GLIBC_TUNABLES=glibc.malloc.hugetlb=1, which a program cannot set for itself.

namespace zerodrop {

// From now on, note_heap_growth() asks for huge pages; the heap grows in steps of 32 MiB of
// address space (not of memory: pages are only backed when touched). Call once, before the
// allocations; harmless where the kernel has no THP. Not thread-safe.
void enable_huge_heap();

// Advises the part of the heap added since the last call (MADV_HUGEPAGE), so that its first
// touches fault 2 MiB at a time. Cheap when the heap has not grown: call it often while
// allocating. Does nothing before enable_huge_heap().
void note_heap_growth();

}  // namespace zerodrop
