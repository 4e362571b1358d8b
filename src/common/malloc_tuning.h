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
// That bound is per arena (glibc keeps up to 8 per core, one per busy thread),
// and memory freed below an arena's top is never trimmed at all: after a burst
// (thousands of connections, each with its buffers) the process keeps its peak.
// release_free_memory() gives all of it back; call it after such a burst, not
// per request (it walks every arena).
//
// Thread-safety: tune_malloc_for_server() once, at the start of main, before
// threads start; release_free_memory() from any thread.
#pragma once

namespace draplane {

// False where the C library is not glibc (nothing to tune) or refused a value.
bool tune_malloc_for_server();

// Returns the allocator's free pages, in every arena, to the kernel. False
// where there is nothing to do (not glibc) or nothing was released.
bool release_free_memory();

}  // namespace draplane
