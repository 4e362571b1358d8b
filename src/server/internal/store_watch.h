// What the server's watch-fed caches (NamespaceCache, OwnerIndex,
// PriorityClassCache) share.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/store.h"

namespace draplane::server {

// How a cache follows a prefix of the store (start_watch). The callbacks run
// under the cache's mutex, except after_batch.
struct WatchFeed {
  // One object as listed or changed: its value, or null when deleted.
  std::function<void(const std::string& key, const std::string* value, int64_t mod_revision)> apply;
  // After the list was applied, with its revision (optional).
  std::function<void(int64_t revision)> listed;
  // The watch ended or could not start: `running` is false from then on, and
  // callers read the store (optional).
  std::function<void()> ended;
  // After each batch of changes, outside the mutex (optional).
  std::function<void()> after_batch;
};

// Lists `prefix` into the cache, marks it running, then follows its changes
// from the list's revision; `watch` receives the handle (stop_watch ends it).
inline Status start_watch(store::Store& store, const std::string& prefix, std::mutex& mu, bool& running,
                          std::unique_ptr<store::WatchHandle>& watch, WatchFeed feed) {
  auto l = store.list(prefix);
  if (!l.has_value()) return l.error();
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& kv : l->items) feed.apply(kv.key, &kv.value, kv.mod_revision);
    if (feed.listed) feed.listed(l->revision);
    running = true;
  }
  auto h = store.watch(prefix, l->revision + 1,
                       [&mu, &running, feed](const std::vector<store::Event>& events, const Status& end) {
                         {
                           std::lock_guard<std::mutex> lock(mu);
                           for (const auto& ev : events) {
                             feed.apply(ev.kv.key, ev.type == store::EventType::kPut ? &ev.kv.value : nullptr,
                                        ev.kv.mod_revision);
                           }
                           if (!end.ok()) {
                             running = false;
                             if (feed.ended) feed.ended();
                           }
                         }
                         if (feed.after_batch) feed.after_batch();
                       });
  std::lock_guard<std::mutex> lock(mu);
  if (!h.has_value()) {
    running = false;
    if (feed.ended) feed.ended();
    return h.error();
  }
  watch = std::move(h).value();
  return Status();
}

// Stops a cache's store watch: marks it not running and drops the handle,
// taken out under `mu` but released outside it (its callback takes `mu`).
// No callback runs after this returns.
inline void stop_watch(std::mutex& mu, std::unique_ptr<store::WatchHandle>& watch, bool& running) {
  std::unique_ptr<store::WatchHandle> w;
  {
    std::lock_guard<std::mutex> l(mu);
    w = std::move(watch);
    running = false;
  }
  w.reset();
}

}  // namespace draplane::server
