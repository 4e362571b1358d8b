// What the server's watch-fed caches (NamespaceCache, OwnerIndex) share.
#pragma once

#include <memory>
#include <mutex>

#include "store/store.h"

namespace draplane::server {

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
