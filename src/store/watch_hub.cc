#include "store/internal/watch_hub.h"

#include <pthread.h>

#include <atomic>

namespace draplane::store::internal {

struct WatchHub::Watcher {
  uint64_t id = 0;
  std::string prefix;
  int64_t live_after = 0;
  WatchCallback callback;
  std::vector<Event> pending;  // guarded by WatchHub::mu_
  std::mutex deliver_mu;       // held while the callback runs
  std::atomic<bool> cancelled{false};
};

class WatchHub::Handle : public WatchHandle {
 public:
  Handle(WatchHub* hub, uint64_t id) : hub_(hub), id_(id) {}
  ~Handle() override { hub_->cancel(id_); }

 private:
  WatchHub* hub_;
  uint64_t id_;
};

WatchHub::WatchHub() : thread_([this] { run(); }) {}

WatchHub::~WatchHub() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void WatchHub::publish(Event event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (watchers_.empty()) return;  // nobody to tell; history covers later watchers
    incoming_.push_back(std::move(event));
  }
  cv_.notify_one();
}

std::unique_ptr<WatchHandle> WatchHub::add(std::string prefix, std::vector<Event> history,
                                           int64_t live_after, WatchCallback callback) {
  auto w = std::make_shared<Watcher>();
  w->prefix = std::move(prefix);
  w->live_after = live_after;
  w->callback = std::move(callback);
  w->pending = std::move(history);
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = next_id_++;
    w->id = id;
    if (!w->pending.empty()) has_pending_ = true;
    watchers_.emplace(id, std::move(w));
  }
  cv_.notify_one();
  return std::make_unique<Handle>(this, id);
}

size_t WatchHub::watcher_count() {
  std::lock_guard<std::mutex> lock(mu_);
  return watchers_.size();
}

void WatchHub::cancel(uint64_t id) {
  std::shared_ptr<Watcher> w;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = watchers_.find(id);
    if (it == watchers_.end()) return;
    w = std::move(it->second);
    watchers_.erase(it);
  }
  w->cancelled = true;
  // Inside a callback (on the hub thread) the flag is enough; elsewhere wait for
  // an in-flight delivery so the caller may free what the callback uses.
  if (std::this_thread::get_id() != thread_.get_id()) {
    std::lock_guard<std::mutex> wait(w->deliver_mu);
  }
}

void WatchHub::run() {
  pthread_setname_np(pthread_self(), "watch-hub");
  for (;;) {
    std::vector<std::pair<std::shared_ptr<Watcher>, std::vector<Event>>> batches;
    bool stop = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || has_pending_ || !incoming_.empty(); });
      for (Event& ev : incoming_) {
        for (auto& [id, w] : watchers_) {
          if (ev.kv.mod_revision <= w->live_after) continue;
          if (ev.kv.key.compare(0, w->prefix.size(), w->prefix) != 0) continue;
          w->pending.push_back(ev);
        }
      }
      incoming_.clear();
      has_pending_ = false;
      stop = stopping_;
      for (auto& [id, w] : watchers_) {
        if (!w->pending.empty() || stop) batches.emplace_back(w, std::move(w->pending));
        w->pending.clear();
      }
      if (stop) watchers_.clear();
    }
    for (auto& [w, events] : batches) {
      std::lock_guard<std::mutex> deliver(w->deliver_mu);
      if (w->cancelled) continue;
      if (!events.empty()) w->callback(events, Status());
      if (stop && !w->cancelled) w->callback({}, Status(Code::kUnavailable, "store is closing"));
    }
    if (stop) return;
  }
}

}  // namespace draplane::store::internal
