#include "common/malloc_tuning.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace draplane {
namespace {

#if defined(__GLIBC__)
TEST(MallocTuning, MediumBlocksComeFromTheHeapAndStayAfterFree) {
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
