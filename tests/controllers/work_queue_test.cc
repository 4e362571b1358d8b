#include "controllers/work_queue.h"

#include <gtest/gtest.h>

#include <thread>

namespace draplane::controllers {
namespace {

TEST(WorkQueue, DeduplicatesWaitingKeys) {
  WorkQueue q;
  q.add("a");
  q.add("b");
  q.add("a");
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.get(), std::optional<std::string>("a"));
  EXPECT_EQ(q.get(), std::optional<std::string>("b"));
}

TEST(WorkQueue, KeyAddedWhileProcessingComesBackAfterDone) {
  WorkQueue q;
  q.add("a");
  ASSERT_EQ(q.get(), std::optional<std::string>("a"));
  q.add("a");
  EXPECT_EQ(q.size(), 0u);  // not handed to a second worker
  q.done("a");
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.get(), std::optional<std::string>("a"));
  q.done("a");
  EXPECT_EQ(q.size(), 0u);
}

TEST(WorkQueue, DelayedKeyArrives) {
  WorkQueue q;
  q.add_after("later", std::chrono::milliseconds(1));
  EXPECT_EQ(q.get(), std::optional<std::string>("later"));
}

TEST(WorkQueue, ShutdownWakesGetters) {
  WorkQueue q;
  std::optional<std::string> got = "x";
  std::thread t([&] { got = q.get(); });
  q.shutdown();
  t.join();
  EXPECT_EQ(got, std::nullopt);
  q.add("a");
  EXPECT_EQ(q.size(), 0u);
}

}  // namespace
}  // namespace draplane::controllers
