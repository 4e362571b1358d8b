#include "common/malloc_tuning.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

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
#endif

}  // namespace
}  // namespace draplane
