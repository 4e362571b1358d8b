// QueueController: what kube-controller-manager's work-queue controllers
// (here the resource-claim, Job, ReplicaSet and Deployment controllers) share:
// the REST client, the process's shared informers or their own, an event
// recorder under the controller's component name, and the worker threads
// (SyncWorkers) that call the controller's sync for each queued key and start,
// stop and wait for the informers with it.
//
// A derived controller asks for its informers and adds its handlers in its
// constructor, and calls stop() in its own destructor: its handlers and state
// must outlive the threads, and a base destructor runs too late for that.
//
// Thread-safety: start()/stop() from one thread; wait_synced() and
// caches_synced() from any thread (the workers call them).
#pragma once

#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "client/event_recorder.h"
#include "client/rest_client.h"
#include "common/result.h"
#include "controllers/informers.h"
#include "controllers/sync_workers.h"

namespace draplane::controllers {

class QueueController {
 public:
  QueueController(const QueueController&) = delete;
  QueueController& operator=(const QueueController&) = delete;

  // Starts the informers, then the workers; with no workers (tests that call
  // the sync functions themselves) the informers alone.
  void start();
  // Joins the workers, then stops the controller's own informers.
  void stop() { workers_.stop(); }
  // True once every informer the controller watches delivered its first list.
  bool wait_synced(int timeout_ms) { return workers_.wait_synced(timeout_ms); }

 protected:
  struct Setup {
    const char* component;  // the events' source component ("job-controller")
    std::string name;       // the threads' name and the log lines' subject ("job")
    int workers = 1;
    Informers* informers = nullptr;  // shared; nullptr: the controller's own
    std::shared_ptr<spdlog::logger> logger;  // nullptr logs nothing
  };
  // `rest` must outlive the controller; `sync` runs on the workers.
  QueueController(client::RestClient& rest, Setup setup, SyncWorkers::Sync sync);
  ~QueueController() = default;

  // Workers run from start(), but a sync must see complete caches (as
  // kube-controller-manager waits for its informers before its workers): one
  // that saw an object before its dependents' list arrived would create or
  // delete wrongly. kUnavailable (retry later) while they are not synced.
  Result<void> caches_synced();

  client::RestClient& rest_;
  std::shared_ptr<spdlog::logger> logger_;  // never null
  InformersRef informers_;
  client::EventRecorder events_;
  SyncWorkers workers_;  // and the informers

 private:
  int worker_count_;
};

}  // namespace draplane::controllers
