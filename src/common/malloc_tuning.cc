#include "common/malloc_tuning.h"

#include <cstddef>  // defines __GLIBC__ on glibc systems

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace draplane {

bool tune_malloc_for_server() {
#if defined(__GLIBC__)
  // Values are bytes. Setting either disables glibc's sliding mmap threshold,
  // which is why both are set.
  bool trim = mallopt(M_TRIM_THRESHOLD, 32 << 20) == 1;
  bool mmap = mallopt(M_MMAP_THRESHOLD, 4 << 20) == 1;
  return trim && mmap;
#else
  return false;
#endif
}

bool release_free_memory() {
#if defined(__GLIBC__)
  return malloc_trim(0) == 1;
#else
  return false;
#endif
}

}  // namespace draplane
