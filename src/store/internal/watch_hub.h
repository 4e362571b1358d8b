// WatchHub: fans committed events out to watchers on one delivery thread.
//
// Stores call publish() for every committed write while still holding their write
// lock, so the hub sees events in revision order. add() registers a watcher with
// its replayed history and the revision after which live events apply; the two are
// joined without gaps or duplicates because the caller takes its history snapshot
// and calls add() under the same write lock as publish().
//
// Why one thread: thousands of watchers must not cost a thread each, and a single
// deliverer keeps per-watcher order trivially. Callbacks must not block.
//
// Thread-safety: all methods are thread-safe. Handles may be destroyed on any
// thread, including inside the watcher's own callback.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "store/store.h"

namespace draplane::store::internal {

class WatchHub {
 public:
  WatchHub();
  ~WatchHub();  // ends every watch with kUnavailable and joins the thread
  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  // Queues one committed event (caller holds its store's write lock).
  void publish(Event event);

  // Registers a watcher on `prefix`: `history` is delivered first, then published
  // events whose revision > `live_after`. Never fails.
  std::unique_ptr<WatchHandle> add(std::string prefix, std::vector<Event> history, int64_t live_after,
                                   WatchCallback callback);

  // Number of registered watchers (for metrics and tests).
  size_t watcher_count();

 private:
  struct Watcher;
  class Handle;
  void run();
  void cancel(uint64_t id);

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> incoming_;
  std::map<uint64_t, std::shared_ptr<Watcher>> watchers_;
  uint64_t next_id_ = 1;
  bool stopping_ = false;
  bool has_pending_ = false;
  std::thread thread_;
};

}  // namespace draplane::store::internal
