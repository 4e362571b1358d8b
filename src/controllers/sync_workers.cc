#include "controllers/sync_workers.h"

#include <pthread.h>
#include <spdlog/sinks/null_sink.h>

#include <algorithm>
#include <utility>

namespace draplane::controllers {

std::shared_ptr<spdlog::logger> null_logger_if_unset(std::shared_ptr<spdlog::logger> logger) {
  if (logger) return logger;
  return std::make_shared<spdlog::logger>("controllers", std::make_shared<spdlog::sinks::null_sink_mt>());
}

SyncWorkers::SyncWorkers(std::string name, Sync sync, std::shared_ptr<spdlog::logger> logger)
    : name_(std::move(name)), sync_(std::move(sync)), logger_(std::move(logger)) {}

SyncWorkers::~SyncWorkers() { stop(); }

void SyncWorkers::start_watches() {
  if (std::exchange(watching_, true)) return;
  for (auto& w : watched_) w.start();
}

void SyncWorkers::start(int workers) {
  if (watching_) return;
  start_watches();
  for (int i = 0; i < std::max(1, workers); ++i) threads_.emplace_back([this] {
    pthread_setname_np(pthread_self(), (name_.substr(0, 10) + "-ctrl").c_str());
    run();
  });
}

void SyncWorkers::stop() {
  queue_.shutdown();
  for (auto& t : threads_) t.join();
  threads_.clear();
  if (!std::exchange(watching_, false)) return;
  for (auto& w : watched_) w.stop();
}

bool SyncWorkers::wait_synced(int timeout_ms) const {
  return std::all_of(watched_.begin(), watched_.end(), [&](const Watch& w) { return w.wait_synced(timeout_ms); });
}

void SyncWorkers::run() {
  while (auto item = queue_.get()) {
    const std::string& k = *item;
    Status st = sync_(k);
    int failures = 0;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (st.ok()) failures_.erase(k);
      else failures = ++failures_[k];
    }
    if (!st.ok()) {
      auto delay = retry_backoff(failures);
      logger_->info("{} {}: sync failed (retry in {} ms): {}", name_, k, delay.count(), st.to_string());
      queue_.add_after(k, delay);
    }
    queue_.done(k);
  }
}

}  // namespace draplane::controllers
