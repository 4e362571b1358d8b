#include "server/object_ids.h"

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace draplane::server {
namespace {

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

TEST(ObjectIds, UidIsAVersion4Uuid) {
  for (int i = 0; i < 1000; ++i) {
    std::string u = new_object_uid();
    ASSERT_EQ(u.size(), 36u) << u;
    for (size_t p = 0; p < u.size(); ++p) {
      if (p == 8 || p == 13 || p == 18 || p == 23) {
        ASSERT_EQ(u[p], '-') << u;
      } else {
        ASSERT_TRUE(is_hex(u[p])) << u;
      }
    }
    EXPECT_EQ(u[14], '4') << u;
    EXPECT_NE(std::string("89ab").find(u[19]), std::string::npos) << u;
  }
}

TEST(ObjectIds, UidsDifferAcrossThreads) {
  std::mutex mu;
  std::set<std::string> seen;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      std::vector<std::string> mine;
      for (int i = 0; i < 5000; ++i) mine.push_back(new_object_uid());
      std::lock_guard<std::mutex> lock(mu);
      seen.insert(mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(seen.size(), 20000u);  // separately seeded generators do not repeat each other
}

TEST(ObjectIds, SuffixUsesTheKubernetesAlphabet) {
  const std::string alphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::set<char> used;
  for (int i = 0; i < 2000; ++i) {
    std::string s = new_name_suffix();
    ASSERT_EQ(s.size(), 5u);
    for (char c : s) {
      ASSERT_NE(alphabet.find(c), std::string::npos) << s;
      used.insert(c);
    }
  }
  EXPECT_EQ(used.size(), alphabet.size());  // every character turns up in 10,000 draws
}

}  // namespace
}  // namespace draplane::server
