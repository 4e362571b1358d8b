#include "common/malloc_tuning.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <vector>

#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DRAPLANE_SANITIZED_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DRAPLANE_SANITIZED_MALLOC 1
#endif
#endif

namespace draplane {
namespace {

#if defined(__GLIBC__)
TEST(MallocTuning, MediumBlocksComeFromTheHeapAndStayAfterFree) {
#if defined(DRAPLANE_SANITIZED_MALLOC)
  GTEST_SKIP() << "the sanitizer's allocator replaces glibc's malloc: its thresholds do not apply";
#endif
  ASSERT_TRUE(tune_malloc_for_server());
  // 1 MiB is above glibc's default 128 KiB mmap threshold: untuned, it would be
  // its own mapping (hblks + 1) and be unmapped on free.
  size_t mapped_before = mallinfo2().hblks;
  const size_t size = size_t{1} << 20;
  void* p = std::malloc(size);
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, size);
  EXPECT_EQ(mallinfo2().hblks, mapped_before);
  std::free(p);
  // Below the 32 MiB trim threshold: the freed space stays with the heap.
  EXPECT_GE(mallinfo2().fordblks, size);
}

long resident_kib() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  std::fclose(f);
  return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// What a connection flood leaves: many small blocks freed below a block still
// in use, so the heap's top cannot shrink and the trim threshold keeps the
// rest. release_free_memory() gives the pages back to the kernel.
TEST(MallocTuning, ReleaseFreeMemoryReturnsFreedPagesBelowTheTop) {
#if defined(DRAPLANE_SANITIZED_MALLOC)
  GTEST_SKIP() << "the sanitizer's allocator replaces glibc's malloc";
#endif
  ASSERT_TRUE(tune_malloc_for_server());
  std::vector<void*> blocks;
  for (int i = 0; i < 64 * 1024; ++i) {  // 64 MiB in 1 KiB blocks, touched
    void* p = std::malloc(1024);
    std::memset(p, 1, 1024);
    blocks.push_back(p);
  }
  void* pin = std::malloc(64);  // above them: the top stays in use
  long full = resident_kib();
  for (void* p : blocks) std::free(p);
  long freed = resident_kib();
  EXPECT_GT(freed, full - 16 * 1024) << "glibc returned the freed blocks by itself";
  EXPECT_TRUE(release_free_memory());
  long released = resident_kib();
  EXPECT_LT(released, freed - 32 * 1024) << "resident KiB: " << full << " full, " << freed << " freed, " << released
                                         << " released";
  std::free(pin);
}
#endif

}  // namespace
}  // namespace draplane
