// Store benchmarks: create throughput (SQLite durable, with concurrent writers
// sharing group commits; memory for reference), list latency over 10,000 keys,
// and watch fan-out latency to 1,000 watchers.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>

#include "store/memory_store.h"
#include "store/sqlite_store.h"

namespace draplane::store {
namespace {

const std::string kValue(1500, 'x');  // about the size of a ResourceClaim's JSON

std::string temp_db() {
  static std::atomic<int> n{0};
  auto dir = std::filesystem::temp_directory_path() / ("draplane-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return (dir / ("db" + std::to_string(n++))).string();
}

std::unique_ptr<Store> open(bool sqlite) {
  if (!sqlite) return new_memory_store();
  auto s = open_sqlite_store({temp_db(), true});
  return s.has_value() ? std::move(s).value() : nullptr;
}

// Threads share one store: group commit turns concurrent creates into one fsync.
void BM_Create(benchmark::State& state) {
  static std::unique_ptr<Store> store;
  if (state.thread_index() == 0) store = open(state.range(0) == 1);
  int64_t i = 0;
  for (auto _ : state) {
    auto r = store->create("/registry/resourceclaims/default/c-" + std::to_string(state.thread_index()) + "-" +
                               std::to_string(i++),
                           kValue);
    if (!r.has_value()) state.SkipWithError("create failed");
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) state.SetLabel(state.range(0) == 1 ? "sqlite synchronous=FULL" : "memory");
}
BENCHMARK(BM_Create)->Arg(0)->Arg(1)->Threads(1)->Threads(16)->UseRealTime();

void BM_List10k(benchmark::State& state) {
  auto store = open(state.range(0) == 1);
  for (int i = 0; i < 10000; ++i) {
    (void)store->create("/registry/resourceslices/s-" + std::to_string(i), kValue);
  }
  for (auto _ : state) {
    auto l = store->list("/registry/resourceslices/");
    if (!l.has_value() || l->items.size() != 10000) state.SkipWithError("list failed");
  }
  state.SetLabel(state.range(0) == 1 ? "sqlite, 10000 keys" : "memory, 10000 keys");
}
BENCHMARK(BM_List10k)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Time from a write to its delivery to all 1,000 watchers.
void BM_WatchFanout1000(benchmark::State& state) {
  auto store = open(false);
  std::mutex mu;
  std::condition_variable cv;
  int delivered = 0;
  std::vector<std::unique_ptr<WatchHandle>> handles;
  for (int i = 0; i < 1000; ++i) {
    auto h = store->watch("/registry/resourceclaims/", 0, [&](const std::vector<Event>& evs, const Status&) {
      std::lock_guard<std::mutex> l(mu);
      delivered += static_cast<int>(evs.size());
      cv.notify_all();
    });
    handles.push_back(std::move(h).value());
  }
  int64_t i = 0;
  for (auto _ : state) {
    {
      std::lock_guard<std::mutex> l(mu);
      delivered = 0;
    }
    (void)store->create("/registry/resourceclaims/default/w-" + std::to_string(i++), kValue);
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return delivered >= 1000; });
  }
  state.SetLabel("1000 watchers, memory store");
  handles.clear();
}
BENCHMARK(BM_WatchFanout1000)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace draplane::store

BENCHMARK_MAIN();
