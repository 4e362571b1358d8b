// common::ReverseIndex: what a key names, and the keys naming a value, stay in step.
#include "common/reverse_index.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace draplane::common {
namespace {

using Keys = std::set<std::string>;

TEST(ReverseIndex, SetReplacesWhatAKeyNamed) {
  ReverseIndex<std::string, std::string> idx;
  idx.set("pod-a", std::vector<std::string>{"claim-1", "claim-2"});
  idx.set("pod-b", std::vector<std::string>{"claim-2"});
  EXPECT_EQ(idx.keys_of("claim-1"), Keys{"pod-a"});
  EXPECT_EQ(idx.keys_of("claim-2"), (Keys{"pod-a", "pod-b"}));
  // pod-a now names only claim-3: it leaves claim-1 and claim-2.
  idx.set("pod-a", std::set<std::string>{"claim-3"});
  EXPECT_TRUE(idx.keys_of("claim-1").empty());
  EXPECT_EQ(idx.keys_of("claim-2"), Keys{"pod-b"});
  EXPECT_EQ(idx.keys_of("claim-3"), Keys{"pod-a"});
}

TEST(ReverseIndex, EraseAndEmptySetsForgetTheKey) {
  ReverseIndex<std::string, std::string> idx;
  idx.set("a", std::vector<std::string>{"u", "u"});  // repeated values count once
  EXPECT_EQ(idx.keys_of("u"), Keys{"a"});
  idx.set("a", std::vector<std::string>{});
  EXPECT_TRUE(idx.keys_of("u").empty());
  idx.set("b", std::vector<std::string>{"v"});
  idx.erase("b");
  idx.erase("never-set");
  EXPECT_TRUE(idx.keys_of("v").empty());
}

}  // namespace
}  // namespace draplane::common
