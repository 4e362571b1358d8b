// run_scheduler: the production wiring. Informers (list+watch) for pods,
// nodes, resource claims, slices and device classes feed a Scheduler whose
// writes go through a RestBinder; the scheduling loop runs on the calling
// thread until *stop. `draplane scheduler` and `draplane up` (in process) call it.
//
// Thread-safety: one call per RestClient set-up; informer threads only post
// events, all scheduling happens on the caller's thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "client/rest_client.h"
#include "common/result.h"
#include "sched/scheduler.h"

namespace spdlog {
class logger;
}

namespace draplane::sched {

struct RunnerOptions {
  SchedulerOptions scheduler;
  // How long to wait for the first list of every informer before scheduling
  // (scheduling on a partial picture could double-book devices).
  int sync_timeout_ms = 30000;
  std::shared_ptr<spdlog::logger> logger;  // null: spdlog's default
};

// Runs until *stop becomes true. Error (kUnavailable) when the informers do
// not sync within sync_timeout_ms; OK after a requested stop. `client` is used
// by the informers (their own watch connections) and, through a second
// connection made from `binder_client`, for writes; both must outlive the call.
Result<void> run_scheduler(client::RestClient& client, client::RestClient& binder_client,
                           const RunnerOptions& options, const std::atomic<bool>& stop);

}  // namespace draplane::sched
