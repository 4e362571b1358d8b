#include "controllers/queue_controller.h"

#include "controllers/informer_options.h"

namespace draplane::controllers {

QueueController::QueueController(client::RestClient& rest, Setup setup, SyncWorkers::Sync sync)
    : rest_(rest),
      logger_(null_logger_if_unset(std::move(setup.logger))),
      informers_(rest, setup.informers),
      events_(rest, event_options(setup.component)),
      workers_(std::move(setup.name), std::move(sync), logger_),
      worker_count_(setup.workers) {
  informers_.watch_with(workers_);
}

void QueueController::start() {
  if (worker_count_ > 0) {
    workers_.start(worker_count_);
  } else {
    workers_.start_watches();
  }
}

Result<void> QueueController::caches_synced() {
  if (!wait_synced(30000)) return unexpected(Status(Code::kUnavailable, "informer caches not synced"));
  return {};
}

}  // namespace draplane::controllers
