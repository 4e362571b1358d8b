#include "sched/queue.h"

#include <algorithm>

namespace draplane::sched {

Clock::TimePoint SchedulingQueue::backoff_end(const Entry& e) const {
  auto d = options_.initial_backoff;
  for (int i = 1; i < e.attempts && d < options_.max_backoff; ++i) d *= 2;
  return e.ready + std::min(d, options_.max_backoff);
}

void SchedulingQueue::detach(const std::string& key, Entry& e) {
  if (e.where == Where::kActive) active_.erase(ActiveKey{e.priority, e.seq, key});
  if (e.where == Where::kBackoff) backoff_.erase({backoff_end(e), key});
  if (e.where == Where::kUnschedulable) unsched_.erase({e.ready, key});
}

void SchedulingQueue::activate(const std::string& key, Entry& e) {
  e.where = Where::kActive;
  e.seq = ++seq_;
  active_.insert(ActiveKey{e.priority, e.seq, key});
}

void SchedulingQueue::to_backoff_or_active(const std::string& key, Entry& e, Clock::TimePoint now) {
  Clock::TimePoint end = backoff_end(e);
  if (e.attempts == 0 || end <= now) {
    activate(key, e);
  } else {
    e.where = Where::kBackoff;
    backoff_.insert({end, key});
  }
}

void SchedulingQueue::add(const std::string& key, int32_t priority, Clock::TimePoint now, bool reactivate) {
  auto [it, inserted] = pods_.try_emplace(key);
  Entry& e = it->second;
  if (inserted) {
    e.priority = priority;
    e.ready = now;
    activate(key, e);
    return;
  }
  if (e.where == Where::kInFlight) {
    e.priority = priority;
    return;
  }
  if (e.priority != priority) {
    detach(key, e);
    e.priority = priority;
    if (e.where == Where::kActive) activate(key, e);
    else if (e.where == Where::kBackoff) backoff_.insert({backoff_end(e), key});
    else if (e.where == Where::kUnschedulable) unsched_.insert({e.ready, key});
  }
  if (reactivate && e.where == Where::kUnschedulable) {
    detach(key, e);
    to_backoff_or_active(key, e, now);
  }
}

void SchedulingQueue::remove(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  detach(key, it->second);
  pods_.erase(it);
}

std::optional<std::string> SchedulingQueue::pop(Clock::TimePoint now) {
  while (!backoff_.empty() && backoff_.begin()->first <= now) {
    std::string key = backoff_.begin()->second;
    backoff_.erase(backoff_.begin());
    activate(key, pods_.at(key));
  }
  if (active_.empty()) {
    auto it = std::find_if(backoff_.begin(), backoff_.end(), [&](const auto& b) { return !pods_.at(b.second).after_error; });
    if (it == backoff_.end()) return std::nullopt;
    std::string key = it->second;
    backoff_.erase(it);
    activate(key, pods_.at(key));
  }
  std::string key = active_.begin()->key;
  active_.erase(active_.begin());
  Entry& e = pods_.at(key);
  e.where = Where::kInFlight;
  ++e.attempts;
  return key;
}

void SchedulingQueue::backoff(const std::string& key, Clock::TimePoint now) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  Entry& e = it->second;
  detach(key, e);
  e.ready = now;
  e.where = Where::kBackoff;
  e.after_error = true;
  backoff_.insert({backoff_end(e), key});
}

void SchedulingQueue::unschedulable(const std::string& key, Clock::TimePoint now) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  detach(key, it->second);
  it->second.ready = now;
  it->second.where = Where::kUnschedulable;
  it->second.after_error = false;
  unsched_.insert({now, key});
}

void SchedulingQueue::move_all(Clock::TimePoint now) {
  for (auto& [key, e] : pods_) {
    if (e.where == Where::kUnschedulable) to_backoff_or_active(key, e, now);
  }
  unsched_.clear();
}

size_t SchedulingQueue::wake_oldest(Clock::TimePoint now, size_t n, Clock::TimePoint parked_before, bool inclusive) {
  size_t moved = 0;
  while (moved < n && !unsched_.empty()) {
    Clock::TimePoint parked = unsched_.begin()->first;
    if (inclusive ? parked > parked_before : parked >= parked_before) break;
    std::string key = unsched_.begin()->second;
    unsched_.erase(unsched_.begin());
    to_backoff_or_active(key, pods_.at(key), now);
    ++moved;
  }
  return moved;
}

void SchedulingQueue::wake(const std::string& key, Clock::TimePoint now) {
  auto it = pods_.find(key);
  if (it == pods_.end() || it->second.where != Where::kUnschedulable) return;
  detach(key, it->second);
  to_backoff_or_active(key, it->second, now);
}

std::optional<Clock::TimePoint> SchedulingQueue::next_ready() const {
  if (backoff_.empty()) return std::nullopt;
  return backoff_.begin()->first;
}

bool SchedulingQueue::is_unschedulable(const std::string& key) const {
  auto it = pods_.find(key);
  return it != pods_.end() && it->second.where == Where::kUnschedulable;
}

int SchedulingQueue::attempts(const std::string& key) const {
  auto it = pods_.find(key);
  return it == pods_.end() ? 0 : it->second.attempts;
}

}  // namespace draplane::sched
