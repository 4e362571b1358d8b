// What a bench mode provides to the driver (run.cc): a cluster to create the
// workload's objects in, and the times pods were created and bound.
//
// Thread-safety: Tracker is thread-safe; a Target is driven from one thread
// (its own threads report to the Tracker).
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/types.h"
#include "common/result.h"

namespace draplane::bench {

using Clock = std::chrono::steady_clock;

// Per pod ("namespace/name"): created, first seen bound, last reported
// Unschedulable.
class Tracker {
 public:
  void created(const std::string& key);
  void bound(const std::string& key);
  void unschedulable(const std::string& key, const std::string& message);
  // "<bound> of <n> bound" and the first Unschedulable message, for a timeout.
  std::string progress(const std::vector<std::string>& keys);
  // Waits until `keys` are all bound, or (when allow_unschedulable) bound or
  // Unschedulable; false at the deadline.
  bool wait(const std::vector<std::string>& keys, Clock::time_point deadline, int allow_unschedulable = 0);
  struct Times {
    Clock::time_point created{}, bound{};
    bool is_bound = false, is_created = false, is_unschedulable = false;
    bool awaited = false;  // one of the current wait()'s pods
    std::string message;  // the last Unschedulable message
  };
  std::map<std::string, Times> snapshot();

 private:
  // Records the pod bound (`unschedulable` null) or Unschedulable with that
  // message, and wakes the waiter once none of its pods is left unsettled
  // (neither), not at every pod: a wake-up per pod bound cost the scheduler's
  // thread a futex call and a context switch per pod (a tenth of its time in
  // the steady state).
  void record(const std::string& key, const std::string* unschedulable);

  std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, Times> pods_;
  // How many of the current wait()'s pods are neither bound nor Unschedulable.
  size_t unsettled_ = 0;
};

struct FinalState {
  std::vector<api::Pod> pods;
  std::vector<api::ResourceClaim> claims;
};

class Target {
 public:
  virtual ~Target() = default;
  // Any setup object (namespace, node, slice, class, rule, template, claim).
  virtual Result<void> create(const api::Object& object) = 0;
  // A claim with status.allocation set: created, then its status written.
  virtual Result<void> create_allocated(const api::ResourceClaim& claim) = 0;
  // Creates the pods (concurrently where the mode has several clients),
  // recording each creation in the tracker.
  virtual Result<void> create_pods(const std::vector<api::Pod>& pods) = 0;
  // Deletes bound pods at once (no kubelet to wait for); their generated
  // claims go as the claim controller lets them go.
  virtual Result<void> delete_pods(const std::vector<api::Pod>& pods) = 0;
  virtual Result<FinalState> final_state() = 0;
  // Stops the components; the allocator call count once stopped (-1: unknown).
  virtual int64_t stop() = 0;
  // After stop(): the scheduler's own counters, for the report ("" unknown).
  virtual std::string scheduler_stats() { return ""; }
  // Requests the API server answered so far, watches and lists aside (its
  // apiserver_request_total); -1 where there is no API server.
  virtual int64_t api_requests() { return -1; }
};

std::string pod_key(const api::Pod& pod);

}  // namespace draplane::bench
