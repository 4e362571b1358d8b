// SchedulingQueue: pending pods in three sets, after kube-scheduler's
// PriorityQueue:
// - active: ready to try, popped by priority (higher first), then by the order
//   they became active (FIFO);
// - backoff: failed recently; become active when their backoff ends
//   (initial * 2^(attempts-1), capped at max);
// - unschedulable: no node fits; wait for a cluster change (move_all), then go
//   to backoff (or straight to active when their backoff already ended).
// When nothing is active, pop() takes a pod waiting out its backoff after a
// cluster change rather than leave the scheduler idle (kube-scheduler's
// SchedulerPopFromBackoffQ, on by default since 1.33); pods backing off after an
// error wait their time.
// The active set's order is the queue sort plugin's (framework.h; without one,
// PrioritySort's: priority, then FIFO).
// The queue holds keys and priorities; the pods live in the ClusterCache.
//
// Thread-safety: not synchronized; owned by the scheduler's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/clock.h"
#include "sched/framework.h"

namespace draplane::sched {

// The scheduler's only source of time (backoff deadlines, condition
// timestamps), so tests drive time by hand.
using common::Clock;

class SchedulingQueue {
 public:
  struct Options {
    std::chrono::milliseconds initial_backoff{1000};  // kube-scheduler podInitialBackoffSeconds
    std::chrono::milliseconds max_backoff{10000};     // podMaxBackoffSeconds
  };
  SchedulingQueue() = default;
  explicit SchedulingQueue(Options options, const framework::QueueSortPlugin* sort = nullptr)
      : options_(options), active_(ActiveLess{sort}) {}

  // A pending pod appeared or changed in a way that may let it fit. New pods go
  // to active; known pods keep their set unless `reactivate` (then as move_all).
  void add(const std::string& key, int32_t priority, Clock::TimePoint now, bool reactivate);
  // Forgets the pod (deleted, bound, or no longer ours).
  void remove(const std::string& key);
  // Highest-priority active pod, after promoting expired backoffs; nullopt when
  // nothing is ready.
  std::optional<std::string> pop(Clock::TimePoint now);
  // The attempt failed for a transient reason (conflict, API error): retry after backoff.
  void backoff(const std::string& key, Clock::TimePoint now);
  // No node fits: park until move_all.
  void unschedulable(const std::string& key, Clock::TimePoint now);
  // Cluster state changed: every parked pod gets another chance.
  void move_all(Clock::TimePoint now);
  // Devices were freed: the `n` pods parked longest get another chance (the
  // scheduler widens this one pod at a time, see Scheduler::handle). Returns
  // how many moved.
  // Only pods parked before `parked_before` (at or before, when `inclusive`).
  size_t wake_oldest(Clock::TimePoint now, size_t n, Clock::TimePoint parked_before, bool inclusive);
  // One parked pod gets another chance (its claim appeared, say).
  void wake(const std::string& key, Clock::TimePoint now);
  size_t unschedulable_size() const { return unsched_.size(); }
  // Earliest time a backoff pod becomes ready; nullopt when none waits.
  std::optional<Clock::TimePoint> next_ready() const;

  bool contains(const std::string& key) const { return pods_.count(key) > 0; }
  bool is_unschedulable(const std::string& key) const;
  size_t active_size() const { return active_.size(); }
  size_t size() const { return pods_.size(); }
  int attempts(const std::string& key) const;

 private:
  enum class Where { kActive, kBackoff, kUnschedulable, kInFlight };
  struct Entry {
    int32_t priority = 0;
    int attempts = 0;
    Where where = Where::kActive;
    uint64_t seq = 0;
    Clock::TimePoint ready{};
    bool after_error = false;  // in backoff because an attempt failed, not unschedulable
  };
  struct ActiveKey {
    int32_t priority;
    uint64_t seq;
    std::string key;
  };
  struct ActiveLess {
    const framework::QueueSortPlugin* sort = nullptr;
    bool operator()(const ActiveKey& a, const ActiveKey& b) const {
      if (sort != nullptr) return sort->less({&a.key, a.priority, a.seq}, {&b.key, b.priority, b.seq});
      return std::tie(b.priority, a.seq, a.key) < std::tie(a.priority, b.seq, b.key);
    }
  };

  void activate(const std::string& key, Entry& e);
  void to_backoff_or_active(const std::string& key, Entry& e, Clock::TimePoint now);
  void detach(const std::string& key, Entry& e);
  Clock::TimePoint backoff_end(const Entry& e) const;

  Options options_;
  std::map<std::string, Entry> pods_;
  std::set<ActiveKey, ActiveLess> active_;
  std::set<std::pair<Clock::TimePoint, std::string>> backoff_;
  std::set<std::pair<Clock::TimePoint, std::string>> unsched_;  // (parked since, key)
  uint64_t seq_ = 0;
};

}  // namespace draplane::sched
