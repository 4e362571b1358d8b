// JobController: the batch/v1 Job controller of kube-controller-manager
// (pkg/controller/job, with the TTL-after-finished controller), over the
// Kubernetes REST API.
//
// For each Job it keeps the wanted pods running (parallelism, completions,
// completionMode NonIndexed or Indexed), counts finished pods through the
// batch.kubernetes.io/job-tracking finalizer (status.uncountedTerminatedPods
// first, then the finalizer is removed, then the counts move to
// succeeded/failed, so a pod is never counted twice), applies
// podFailurePolicy, backoffLimit (with exponential backoff before a failed pod
// is replaced), backoffLimitPerIndex/maxFailedIndexes, activeDeadlineSeconds
// and suspend, writes the status (active, ready, terminating, succeeded,
// failed, completedIndexes, failedIndexes, startTime, completionTime and the
// conditions with upstream's reasons), and deletes a finished Job once its
// ttlSecondsAfterFinished has passed.
//
// Thread-safety: start()/stop() from one thread; sync_job may be called from
// any thread, but not for the same key concurrently (the work queue ensures it).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "common/clock.h"
#include "common/result.h"
#include "common/uid_memo.h"
#include "controllers/informers.h"
#include "controllers/queue_controller.h"

namespace draplane::controllers {

struct JobControllerOptions {
  int workers = 4;  // 0: none (tests call sync_job themselves)
  // Delay before the first replacement of a failed pod, doubled per further
  // failure up to the cap (upstream: 10 s, 6 min).
  std::chrono::milliseconds pod_failure_backoff{10000};
  std::chrono::milliseconds max_pod_failure_backoff{360000};
  // Time source (startTime, deadlines, TTL); the real clock when null.
  std::shared_ptr<const common::Clock> clock;
  // Logger; nullptr logs nothing.
  std::shared_ptr<spdlog::logger> logger;
  // The process's shared informers; nullptr: the controller's own.
  Informers* informers = nullptr;
};

class JobController : public QueueController {
 public:
  // `rest` must outlive the controller.
  JobController(client::RestClient& rest, JobControllerOptions options);
  ~JobController() { stop(); }

  // One reconciliation of the Job "namespace/name". OK when done (also when it
  // is gone); an error means "retry later".
  Result<void> sync_job(const std::string& key);

 private:
  struct Sync;
  struct Backoff {
    int failures = 0;  // since the last success
    common::Clock::TimePoint last_failure{};
  };

  void on_pod(const api::Pod& pod);
  std::vector<api::Pod> pods_of(const api::Job& job);
  Result<void> write_status(Sync& s);
  Result<void> release_pod(const api::Pod& pod);
  Result<void> delete_pod(Sync& s, const api::Pod& pod);
  Result<void> create_pod(Sync& s, std::optional<int> index, int index_failures);
  Result<void> count_finished(Sync& s);
  void decide_terminal(Sync& s);
  // True (and a requeue in a second) while pods this controller created are not in its cache yet.
  bool awaiting_created_pods(Sync& s);
  Result<void> manage_pods(Sync& s);
  // Creates the Job's Workload and PodGroup (spec.scheduling) before its first pods.
  Result<void> ensure_pod_group(Sync& s);
  Result<void> finish(Sync& s);
  void event(const api::Job& job, const char* type, const char* reason, const std::string& message);

  JobControllerOptions options_;
  client::Informer<api::Job>& jobs_;
  client::Informer<api::Pod>& pods_;

  std::mutex mu_;
  std::map<std::string, Backoff> backoff_;  // job key -> pod failures
  // Job key -> the newest Job this controller wrote (the cache may lag).
  std::map<std::string, api::Job> written_;
  // Job key -> names of pods created and not yet seen in the cache, with when.
  std::map<std::string, std::map<std::string, common::Clock::TimePoint>> expected_;
  // UIDs of pods this controller deleted (not counted as failures) or released
  // (finalizer removed); the newest 4096 are kept.
  common::UidMemo deleted_uids_{4096};
  common::UidMemo released_uids_{4096};
  // Jobs whose Workload and PodGroup exist and are theirs (created, or found
  // controlled by the Job), by UID, with the gang minCount they were given.
  std::map<std::string, int32_t> grouped_;
};

}  // namespace draplane::controllers
