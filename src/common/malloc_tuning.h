// Allocator settings for draplane's long-running processes (server, agents, up,
// and the benchmarks that measure them).
//
// glibc returns the top of a heap to the kernel (madvise/brk) as soon as it grows
// past 128 KiB of free memory; every JSON document draplane parses takes a 64 KiB
// rapidjson chunk, so each request freed a chunk, the heap shrank, and the next
// request faulted the same pages back in: ~8% of the API server's CPU on a
// create (perf: heap_trim, shrink_heap, page faults). Keeping up to 32 MiB of free
// top per arena and serving blocks under 4 MiB from the heap (fixed thresholds
// instead of glibc's sliding ones) removes that churn; memory stays bounded by
// the arenas' high-water marks.
//
// Thread-safety: call once, at the start of main, before threads start.
#pragma once

namespace draplane {

// False where the C library is not glibc (nothing to tune) or refused a value.
bool tune_malloc_for_server();

}  // namespace draplane
