// Randomized model test: the same random operations on the memory store (the
// model) and on each real backend (SQLite, a real etcd) must give identical
// results, lists and watch streams (LevelDB's ModelDB idea). Seeds are fixed so a
// failure replays exactly.
#include <gtest/gtest.h>

#include <random>

#include "etcd_test_util.h"
#include "store_test_util.h"

namespace draplane::store {
namespace {

using testing::Collector;
using testing::TempDir;

std::string describe(const Result<KeyValue>& r) {
  if (!r.has_value()) return std::string(code_name(r.error().code()));
  return r->key + "=" + r->value + "@" + std::to_string(r->create_revision) + "/" +
         std::to_string(r->mod_revision) + "/v" + std::to_string(r->version);
}
std::string describe(const Result<WriteResult>& r) {
  if (!r.has_value()) return std::string(code_name(r.error().code()));
  return (r->succeeded ? "ok " : "stale ") + describe(Result<KeyValue>(r->kv)) + " rev " + std::to_string(r->revision);
}
std::string describe(const Result<ListResult>& r) {
  if (!r.has_value()) return std::string(code_name(r.error().code()));
  std::string out = "rev " + std::to_string(r->revision) + (r->more ? " more " : " ") + std::to_string(r->remaining) + ":";
  for (const auto& kv : r->items) out += " " + describe(Result<KeyValue>(kv));
  return out;
}

class ModelTest : public ::testing::TestWithParam<std::tuple<std::string, uint32_t>> {};

TEST_P(ModelTest, BackendMatchesMemoryModel) {
  const auto& [backend, seed] = GetParam();
  TempDir dir;
  auto model = new_memory_store();
  std::unique_ptr<Store> real;
  if (backend == "etcd") {
    if (testing::etcd_binary().empty()) GTEST_SKIP() << testing::kNoEtcd;
    real = testing::new_etcd_store();
    ASSERT_NE(real, nullptr) << "etcd did not start";
  } else {
    auto real_r = open_sqlite_store({dir.path() + "/db", false});
    ASSERT_TRUE(real_r.has_value());
    real = std::move(real_r).value();
  }
  Collector model_events, real_events;
  auto mw = model->watch("/k/", 0, model_events.callback());
  auto rw = real->watch("/k/", 0, real_events.callback());
  ASSERT_TRUE(mw.has_value() && rw.has_value());

  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  const std::vector<std::string> keys = {"/k/a", "/k/b", "/k/c", "/k/d", "/k/e", "/x/a"};
  for (int step = 0; step < 400; ++step) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " step " + std::to_string(step));
    const std::string& key = keys[static_cast<size_t>(pick(static_cast<int>(keys.size())))];
    std::string value = "v" + std::to_string(step);
    int64_t now = model->current_revision();
    int64_t rev = pick(3) == 0 ? 0 : 1 + pick(static_cast<int>(now + 1));  // sometimes future
    switch (pick(8)) {
      case 0:
      case 1:
        EXPECT_EQ(describe(model->create(key, value)), describe(real->create(key, value)));
        break;
      case 2: {
        int64_t expect = pick(2) == 0 ? 0 : rev;
        EXPECT_EQ(describe(model->update(key, value, expect)), describe(real->update(key, value, expect)));
        break;
      }
      case 3: {
        auto cur = model->get(key);
        int64_t expect = cur.has_value() && pick(2) == 0 ? cur->mod_revision : rev;
        EXPECT_EQ(describe(model->remove(key, expect)), describe(real->remove(key, expect)));
        break;
      }
      case 4:
        EXPECT_EQ(describe(model->get(key, rev)), describe(real->get(key, rev)));
        break;
      case 5: {
        ListOptions o{rev, pick(4), pick(2) == 0 ? "" : key};
        EXPECT_EQ(describe(model->list("/k/", o)), describe(real->list("/k/", o)));
        break;
      }
      case 6:
        if (pick(10) == 0) {
          int64_t c = 1 + pick(static_cast<int>(now));
          EXPECT_EQ(model->compact(c).code(), real->compact(c).code());
        }
        break;
      default:
        EXPECT_EQ(describe(model->list("")), describe(real->list("")));
    }
    ASSERT_EQ(model->current_revision(), real->current_revision());
    ASSERT_EQ(model->compacted_revision(), real->compacted_revision());
  }
  // A sentinel write marks the end of each stream; the /x/ writes are filtered out.
  ASSERT_TRUE(model->create("/k/zz-end", "").has_value());
  ASSERT_TRUE(real->create("/k/zz-end", "").has_value());
  auto ev_model = model_events.wait_until_key("/k/zz-end");
  auto ev_real = real_events.wait_until_key("/k/zz-end");
  EXPECT_EQ(ev_model, ev_real);
  EXPECT_GT(ev_model.size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ModelTest,
                         ::testing::Combine(::testing::Values("sqlite", "etcd"), ::testing::Values(1u, 2u, 3u, 42u, 1234u)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param));
                         });

TEST(SqliteStore, ReopenKeepsDataAndNeverReusesRevisions) {
  TempDir dir;
  std::string path = dir.path() + "/db";
  {
    auto s = open_sqlite_store({path, true});
    ASSERT_TRUE(s.has_value());
    ASSERT_TRUE((*s)->create("/a", "1").has_value());   // 2
    ASSERT_TRUE((*s)->create("/b", "1").has_value());   // 3
    ASSERT_TRUE((*s)->remove("/b", 0).has_value());     // 4
    ASSERT_TRUE((*s)->compact(4).ok());                 // removes /b's rows entirely
  }
  auto s = open_sqlite_store({path, true});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ((*s)->current_revision(), 4);
  EXPECT_EQ((*s)->compacted_revision(), 4);
  auto a = (*s)->get("/a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(*a, (KeyValue{"/a", "1", 2, 2, 1}));
  auto b = (*s)->create("/b", "2");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->mod_revision, 5);
  EXPECT_EQ((*s)->get("/a", 3).error().code(), Code::kGone);
}

TEST(SqliteStore, OpenFailsOnUnwritablePath) {
  auto s = open_sqlite_store({"/nonexistent-dir/x/db", true});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), Code::kUnavailable);
}

}  // namespace
}  // namespace draplane::store
