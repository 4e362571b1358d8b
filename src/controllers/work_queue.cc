#include "controllers/work_queue.h"

#include <algorithm>

namespace draplane::controllers {

std::chrono::milliseconds retry_backoff(int failures) {
  return std::chrono::milliseconds(std::min<int64_t>(10000, int64_t{5} << std::clamp(failures - 1, 0, 11)));
}

void WorkQueue::add_locked(const std::string& key) {
  if (shutdown_ || dirty_.count(key)) return;
  dirty_.insert(key);
  if (processing_.count(key)) return;  // done() queues it
  queue_.push_back(key);
  cv_.notify_one();
}

void WorkQueue::add(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  add_locked(key);
}

void WorkQueue::add_after(const std::string& key, std::chrono::milliseconds delay) {
  std::lock_guard<std::mutex> l(mu_);
  if (shutdown_) return;
  delayed_.emplace(Clock::now() + delay, key);
  cv_.notify_one();
}

std::optional<std::string> WorkQueue::get() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    if (shutdown_) return std::nullopt;
    auto now = Clock::now();
    while (!delayed_.empty() && delayed_.begin()->first <= now) {
      std::string k = delayed_.begin()->second;
      delayed_.erase(delayed_.begin());
      add_locked(k);
    }
    if (!queue_.empty()) {
      std::string k = std::move(queue_.front());
      queue_.pop_front();
      dirty_.erase(k);
      processing_.insert(k);
      return k;
    }
    if (delayed_.empty()) {
      cv_.wait(l);
    } else {
      // A copy: wait_until reads its deadline again after waking, and another
      // thread may have erased this entry while the lock was released.
      const Clock::time_point deadline = delayed_.begin()->first;
      cv_.wait_until(l, deadline);
    }
  }
}

void WorkQueue::done(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  processing_.erase(key);
  if (dirty_.count(key) && !shutdown_) {
    queue_.push_back(key);
    cv_.notify_one();
  }
}

void WorkQueue::shutdown() {
  std::lock_guard<std::mutex> l(mu_);
  shutdown_ = true;
  cv_.notify_all();
}

size_t WorkQueue::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return queue_.size();
}

}  // namespace draplane::controllers
