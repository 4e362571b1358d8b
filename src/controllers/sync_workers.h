// SyncWorkers: the worker threads of a controller. Each takes a key from the
// work queue and calls the controller's sync; a sync that fails is retried
// after retry_backoff (5 ms doubling to 10 s) and logged, a success resets the
// key's failure count. The informers feeding the queue (watch()) start before
// the workers and stop after them, so a controller's start/stop/wait_synced
// are these.
//
// Thread-safety: watch()/start()/stop() from one thread; queue() and
// wait_synced() from any thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>

#include "common/result.h"
#include "controllers/work_queue.h"

namespace draplane::controllers {

// `logger`, or one that logs nothing when it is null.
std::shared_ptr<spdlog::logger> null_logger_if_unset(std::shared_ptr<spdlog::logger> logger);

class SyncWorkers {
 public:
  using Sync = std::function<Status(const std::string& key)>;
  // `name`: the threads' name and the log lines' subject ("replicaset").
  SyncWorkers(std::string name, Sync sync, std::shared_ptr<spdlog::logger> logger);
  ~SyncWorkers();

  // The informers the controller watches (anything with start(), stop() and
  // wait_synced(int ms)), which must outlive this; call before start().
  template <typename... Watched>
  void watch(Watched&... watched) {
    (watched_.push_back(Watch{[&watched] { watched.start(); }, [&watched] { watched.stop(); },
                              [&watched](int timeout_ms) { return watched.wait_synced(timeout_ms); }}),
     ...);
  }
  // Informers started and stopped by their owner (shared by several
  // controllers): wait_synced() waits for them, start() and stop() leave them.
  template <typename... Watched>
  void wait_for(const Watched&... watched) {
    (watched_.push_back(Watch{[] {}, [] {}, [&watched](int timeout_ms) { return watched.wait_synced(timeout_ms); }}),
     ...);
  }
  // Starts the informers, in watch() order, then max(1, workers) threads;
  // nothing when started already.
  void start(int workers);
  // The informers alone, no threads (a controller whose owner calls sync).
  void start_watches();
  // Shuts the queue down, joins the threads, then stops the informers;
  // nothing when not started.
  void stop();
  // Whether every informer listed its objects within `timeout_ms` each.
  bool wait_synced(int timeout_ms) const;
  WorkQueue& queue() { return queue_; }

 private:
  void run();
  struct Watch {
    std::function<void()> start, stop;
    std::function<bool(int)> wait_synced;
  };
  std::vector<Watch> watched_;
  bool watching_ = false;

  std::string name_;
  Sync sync_;
  std::shared_ptr<spdlog::logger> logger_;
  WorkQueue queue_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::map<std::string, int> failures_;  // key -> consecutive failures
};

}  // namespace draplane::controllers
