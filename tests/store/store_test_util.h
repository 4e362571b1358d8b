// Helpers shared by the store tests: store factories and a watch event collector.
#pragma once

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/memory_store.h"
#include "store/sqlite_store.h"
#include "store/store.h"

namespace draplane::store::testing {

// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "draplane-store-XXXXXX").string();
    path_ = mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Collects watch deliveries; wait_for() blocks until n events arrived (or the end
// status), bounded so a broken watch fails the test instead of hanging it.
class Collector {
 public:
  WatchCallback callback() {
    return [this](const std::vector<Event>& evs, const Status& end) {
      std::lock_guard<std::mutex> l(mu_);
      events_.insert(events_.end(), evs.begin(), evs.end());
      if (!end.ok()) end_ = end;
      cv_.notify_all();
    };
  }
  std::vector<Event> wait_for(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, std::chrono::seconds(20), [&] { return events_.size() >= n || !end_.ok(); });
    return events_;
  }
  // Waits until an event for `key` arrived.
  std::vector<Event> wait_until_key(const std::string& key) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, std::chrono::seconds(20), [&] {
      for (const auto& e : events_) {
        if (e.kv.key == key) return true;
      }
      return !end_.ok();
    });
    return events_;
  }
  std::vector<Event> events() {
    std::lock_guard<std::mutex> l(mu_);
    return events_;
  }
  Status end() {
    std::lock_guard<std::mutex> l(mu_);
    return end_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Event> events_;
  Status end_;
};

}  // namespace draplane::store::testing
