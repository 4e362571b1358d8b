// Store conformance: the same cases run against every Store implementation.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "etcd_test_util.h"
#include "store_test_util.h"

namespace draplane::store {
namespace {

using testing::Collector;
using testing::TempDir;

struct Impl {
  std::string name;
  std::function<std::unique_ptr<Store>(const std::string& dir)> make;
  bool needs_etcd = false;
};

std::unique_ptr<Store> must(Result<std::unique_ptr<Store>> r) {
  EXPECT_TRUE(r.has_value()) << (r.has_value() ? "" : r.error().to_string());
  return r.has_value() ? std::move(r).value() : nullptr;
}

const Impl kImpls[] = {
    {"memory", [](const std::string&) { return new_memory_store(); }},
    {"sqlite_file", [](const std::string& dir) { return must(open_sqlite_store({dir + "/db.sqlite", true})); }},
    {"sqlite_memory", [](const std::string&) { return must(open_sqlite_store({":memory:", false})); }},
    {"etcd", [](const std::string&) { return testing::new_etcd_store(); }, true},
};

class StoreConformance : public ::testing::TestWithParam<Impl> {
 protected:
  void SetUp() override {
    if (GetParam().needs_etcd && testing::etcd_binary().empty()) GTEST_SKIP() << testing::kNoEtcd;
    store_ = GetParam().make(dir_.path());
    ASSERT_NE(store_, nullptr);
  }
  KeyValue put(const std::string& key, const std::string& value) {
    auto r = store_->create(key, value);
    EXPECT_TRUE(r.has_value()) << key;
    return r.has_value() ? *r : KeyValue{};
  }
  std::vector<std::string> keys(const ListResult& l) {
    std::vector<std::string> out;
    for (const auto& kv : l.items) out.push_back(kv.key);
    return out;
  }
  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreConformance, EmptyStoreStartsAtRevisionOne) {
  EXPECT_EQ(store_->current_revision(), 1);
  EXPECT_EQ(store_->compacted_revision(), 0);
  auto g = store_->get("/a");
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().code(), Code::kNotFound);
  auto l = store_->list("/");
  ASSERT_TRUE(l.has_value());
  EXPECT_TRUE(l->items.empty());
  EXPECT_EQ(l->revision, 1);
  EXPECT_FALSE(l->more);
}

TEST_P(StoreConformance, CreateAssignsRevisionsAndRejectsDuplicates) {
  EXPECT_EQ(put("/a", "1"), (KeyValue{"/a", "1", 2, 2, 1}));
  EXPECT_EQ(put("/b", "2"), (KeyValue{"/b", "2", 3, 3, 1}));
  auto dup = store_->create("/a", "x");
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().code(), Code::kAlreadyExists);
  EXPECT_EQ(store_->current_revision(), 3);
  auto g = store_->get("/a");
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(*g, (KeyValue{"/a", "1", 2, 2, 1}));
}

TEST_P(StoreConformance, UpdateIsConditionalOnModRevision) {
  put("/a", "1");
  auto ok = store_->update("/a", "2", 2);
  ASSERT_TRUE(ok.has_value());
  EXPECT_TRUE(ok->succeeded);
  EXPECT_EQ(ok->revision, 3);
  EXPECT_EQ(ok->kv, (KeyValue{"/a", "2", 2, 3, 2}));

  auto stale = store_->update("/a", "3", 2);
  ASSERT_TRUE(stale.has_value());
  EXPECT_FALSE(stale->succeeded);
  EXPECT_EQ(stale->revision, 0);
  EXPECT_EQ(stale->kv, (KeyValue{"/a", "2", 2, 3, 2}));
  EXPECT_EQ(store_->current_revision(), 3);

  auto any = store_->update("/a", "4", 0);
  ASSERT_TRUE(any.has_value());
  EXPECT_TRUE(any->succeeded);
  EXPECT_EQ(any->kv, (KeyValue{"/a", "4", 2, 4, 3}));

  auto missing = store_->update("/nope", "1", 0);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), Code::kNotFound);
}

TEST_P(StoreConformance, RemoveIsConditionalAndRecreateStartsOver) {
  put("/a", "1");
  auto stale = store_->remove("/a", 99);
  ASSERT_TRUE(stale.has_value());
  EXPECT_FALSE(stale->succeeded);
  EXPECT_EQ(stale->kv, (KeyValue{"/a", "1", 2, 2, 1}));

  auto del = store_->remove("/a", 2);
  ASSERT_TRUE(del.has_value());
  EXPECT_TRUE(del->succeeded);
  EXPECT_EQ(del->revision, 3);
  EXPECT_EQ(del->kv, (KeyValue{"/a", "1", 2, 2, 1}));
  EXPECT_EQ(store_->get("/a").error().code(), Code::kNotFound);
  EXPECT_EQ(store_->remove("/a", 0).error().code(), Code::kNotFound);

  EXPECT_EQ(put("/a", "again"), (KeyValue{"/a", "again", 4, 4, 1}));
}

TEST_P(StoreConformance, GetAndListAtPastRevisions) {
  put("/r/a", "a1");                 // 2
  put("/r/b", "b1");                 // 3
  ASSERT_TRUE(store_->update("/r/a", "a2", 2).has_value());  // 4
  ASSERT_TRUE(store_->remove("/r/b", 3).has_value());        // 5

  struct Case {
    int64_t rev;
    std::vector<std::string> values;
  };
  const Case cases[] = {{1, {}}, {2, {"a1"}}, {3, {"a1", "b1"}}, {4, {"a2", "b1"}}, {5, {"a2"}}, {0, {"a2"}}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.rev);
    auto l = store_->list("/r/", {c.rev, 0, ""});
    ASSERT_TRUE(l.has_value());
    std::vector<std::string> values;
    for (const auto& kv : l->items) values.push_back(kv.value);
    EXPECT_EQ(values, c.values);
    EXPECT_EQ(l->revision, c.rev == 0 ? 5 : c.rev);
  }
  auto old = store_->get("/r/b", 3);
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(*old, (KeyValue{"/r/b", "b1", 3, 3, 1}));
  EXPECT_EQ(store_->get("/r/b", 5).error().code(), Code::kNotFound);
  EXPECT_EQ(store_->get("/r/a", 6).error().code(), Code::kInvalid);
  EXPECT_EQ(store_->list("/r/", {6, 0, ""}).error().code(), Code::kInvalid);
}

TEST_P(StoreConformance, ListPrefixLimitAndContinue) {
  for (const char* k : {"/p/c", "/p/a", "/p/b", "/pq/x", "/o/z", "/p/d"}) put(k, k);
  auto all = store_->list("/p/");
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(keys(*all), (std::vector<std::string>{"/p/a", "/p/b", "/p/c", "/p/d"}));

  auto page1 = store_->list("/p/", {0, 3, ""});
  ASSERT_TRUE(page1.has_value());
  EXPECT_EQ(keys(*page1), (std::vector<std::string>{"/p/a", "/p/b", "/p/c"}));
  EXPECT_TRUE(page1->more);
  EXPECT_EQ(page1->remaining, 1);
  // Continue at the first page's revision, even after later writes.
  put("/p/bb", "late");
  auto page2 = store_->list("/p/", {page1->revision, 3, "/p/c"});
  ASSERT_TRUE(page2.has_value());
  EXPECT_EQ(keys(*page2), (std::vector<std::string>{"/p/d"}));
  EXPECT_FALSE(page2->more);
  EXPECT_EQ(page2->remaining, 0);

  auto exact = store_->list("/p/", {0, 5, ""});
  ASSERT_TRUE(exact.has_value());
  EXPECT_EQ(exact->items.size(), 5u);
  EXPECT_FALSE(exact->more);
  auto everything = store_->list("");
  ASSERT_TRUE(everything.has_value());
  EXPECT_EQ(everything->items.size(), 7u);
}

TEST_P(StoreConformance, CompactionMakesOldRevisionsGone) {
  put("/a", "1");                                          // 2
  put("/b", "1");                                          // 3
  ASSERT_TRUE(store_->update("/a", "2", 2).has_value());   // 4
  ASSERT_TRUE(store_->remove("/b", 3).has_value());        // 5
  put("/c", "1");                                          // 6
  ASSERT_TRUE(store_->compact(5).ok());
  EXPECT_EQ(store_->compacted_revision(), 5);
  EXPECT_TRUE(store_->compact(3).ok());  // no-op
  EXPECT_EQ(store_->compacted_revision(), 5);
  EXPECT_EQ(store_->compact(7).code(), Code::kInvalid);

  EXPECT_EQ(store_->get("/a", 4).error().code(), Code::kGone);
  EXPECT_EQ(store_->list("/", {3, 0, ""}).error().code(), Code::kGone);
  auto at5 = store_->list("", {5, 0, ""});
  ASSERT_TRUE(at5.has_value());
  EXPECT_EQ(keys(*at5), (std::vector<std::string>{"/a"}));
  auto now = store_->list("");
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(keys(*now), (std::vector<std::string>{"/a", "/c"}));
  EXPECT_EQ(now->items[0], (KeyValue{"/a", "2", 2, 4, 2}));

  Collector c;
  auto gone = store_->watch("", 5, c.callback());
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().code(), Code::kGone);
  auto w = store_->watch("", 6, c.callback());
  ASSERT_TRUE(w.has_value());
  auto evs = c.wait_for(1);
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].kv, (KeyValue{"/c", "1", 6, 6, 1}));
  // Writes after compaction continue the same revision sequence.
  EXPECT_EQ(put("/b", "new").mod_revision, 7);
}

TEST_P(StoreConformance, WatchReplaysHistoryThenLive) {
  put("/w/a", "1");                                         // 2
  put("/x/other", "1");                                     // 3
  ASSERT_TRUE(store_->update("/w/a", "2", 2).has_value());  // 4
  Collector c;
  auto w = store_->watch("/w/", 2, c.callback());
  ASSERT_TRUE(w.has_value());
  put("/w/b", "1");                                         // 5
  ASSERT_TRUE(store_->remove("/w/a", 4).has_value());       // 6
  auto evs = c.wait_for(4);
  ASSERT_EQ(evs.size(), 4u);
  std::vector<Event> want = {
      {EventType::kPut, {"/w/a", "1", 2, 2, 1}, std::nullopt},
      {EventType::kPut, {"/w/a", "2", 2, 4, 2}, KeyValue{"/w/a", "1", 2, 2, 1}},
      {EventType::kPut, {"/w/b", "1", 5, 5, 1}, std::nullopt},
      {EventType::kDelete, {"/w/a", "", 0, 6, 0}, KeyValue{"/w/a", "2", 2, 4, 2}},
  };
  EXPECT_EQ(evs, want);
  EXPECT_TRUE(c.end().ok());
}

TEST_P(StoreConformance, WatchFromNowAndCancel) {
  put("/a", "old");
  Collector c;
  auto w = store_->watch("/", 0, c.callback());
  ASSERT_TRUE(w.has_value());
  put("/b", "new");
  auto evs = c.wait_for(1);
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].kv.key, "/b");
  w->reset();  // cancel: no more deliveries after this returns
  put("/c", "after cancel");
  Collector probe;  // a second watcher proves the event was published
  auto w2 = store_->watch("/", 4, probe.callback());
  ASSERT_TRUE(w2.has_value());
  EXPECT_EQ(probe.wait_for(1).size(), 1u);
  EXPECT_EQ(c.events().size(), 1u);
  EXPECT_EQ(store_->watch("/", 99, probe.callback()).error().code(), Code::kInvalid);
}

TEST_P(StoreConformance, ConcurrentReadModifyWriteLosesNoUpdate) {
  put("/counter", "0");
  constexpr int kThreads = 4, kIncrements = 25;
  std::vector<std::thread> threads;
  std::atomic<int> conflicts{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        for (;;) {
          auto cur = store_->get("/counter");
          ASSERT_TRUE(cur.has_value());
          auto r = store_->update("/counter", std::to_string(std::stoi(cur->value) + 1), cur->mod_revision);
          ASSERT_TRUE(r.has_value());
          if (r->succeeded) break;
          ++conflicts;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  auto final_value = store_->get("/counter");
  ASSERT_TRUE(final_value.has_value());
  EXPECT_EQ(final_value->value, std::to_string(kThreads * kIncrements));
  EXPECT_EQ(final_value->version, kThreads * kIncrements + 1);
  EXPECT_EQ(store_->current_revision(), 2 + kThreads * kIncrements);
}

INSTANTIATE_TEST_SUITE_P(All, StoreConformance, ::testing::ValuesIn(kImpls),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace draplane::store
