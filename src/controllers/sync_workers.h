// SyncWorkers: the worker threads of a controller. Each takes a key from the
// work queue and calls the controller's sync; a sync that fails is retried
// after retry_backoff (5 ms doubling to 10 s) and logged, a success resets the
// key's failure count.
//
// Thread-safety: start()/stop() from one thread; queue() from any thread.
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

  void start(int workers);
  // Shuts the queue down and joins the threads.
  void stop();
  WorkQueue& queue() { return queue_; }

 private:
  void run();

  std::string name_;
  Sync sync_;
  std::shared_ptr<spdlog::logger> logger_;
  WorkQueue queue_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::map<std::string, int> failures_;  // key -> consecutive failures
};

}  // namespace draplane::controllers
