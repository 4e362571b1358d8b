// WorkQueue: a queue of object keys for controllers, like client-go's
// workqueue: a key waiting in the queue is held once however often it is added;
// a key being processed is not handed to a second worker, and one added while
// it is processed is queued again when done() is called; add_after() delays a
// retry (backoff).
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace draplane::controllers {

// The delay before the next try of a key that failed `failures` times in a row:
// 5 ms doubling to 10 s, like client-go's default controller rate limiter.
std::chrono::milliseconds retry_backoff(int failures);

class WorkQueue {
 public:
  using Clock = std::chrono::steady_clock;

  void add(const std::string& key);
  void add_after(const std::string& key, std::chrono::milliseconds delay);
  // Blocks until a key is ready; nullopt once shut down.
  std::optional<std::string> get();
  // Marks the key processed (requeues it if it was added meanwhile).
  void done(const std::string& key);
  // Wakes every get() with nullopt; later adds are ignored.
  void shutdown();
  // Keys waiting now (not delayed ones); for tests.
  size_t size() const;

 private:
  void add_locked(const std::string& key);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::set<std::string> dirty_;
  std::set<std::string> processing_;
  std::multimap<Clock::time_point, std::string> delayed_;
  bool shutdown_ = false;
};

}  // namespace draplane::controllers
