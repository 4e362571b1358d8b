#include "store/internal/watch_hub.h"

#include <pthread.h>

#include <atomic>
#include <iterator>
#include <map>

namespace draplane::store::internal {

struct WatchHub::Watcher {
  uint64_t id = 0;
  std::string prefix;
  int64_t live_after = 0;
  WatchCallback callback;
  std::vector<Event> pending;  // replayed history not yet delivered; guarded by WatchHub::mu_
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
    std::vector<Event> incoming;
    // Per watcher: its replayed history, when it has one waiting.
    std::vector<std::pair<std::shared_ptr<Watcher>, std::vector<Event>>> targets;
    bool stop = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || has_pending_ || !incoming_.empty(); });
      incoming.assign(std::make_move_iterator(incoming_.begin()), std::make_move_iterator(incoming_.end()));
      incoming_.clear();
      has_pending_ = false;
      stop = stopping_;
      targets.reserve(watchers_.size());
      for (auto& [id, w] : watchers_) {
        targets.emplace_back(w, std::move(w->pending));
        w->pending.clear();
      }
      if (stop) watchers_.clear();
    }
    // Most watchers share a prefix (every node agent watches pods): the batch is
    // filtered once per prefix and handed to each of them, not copied per watcher.
    std::map<std::string, std::vector<Event>> by_prefix;
    auto events_for = [&](const std::string& prefix) -> const std::vector<Event>& {
      auto [it, inserted] = by_prefix.try_emplace(prefix);
      if (inserted) {
        for (const Event& ev : incoming) {
          if (ev.kv.key.compare(0, prefix.size(), prefix) == 0) it->second.push_back(ev);
        }
      }
      return it->second;
    };
    const int64_t first_rev = incoming.empty() ? 0 : incoming.front().kv.mod_revision;
    for (auto& [w, history] : targets) {
      std::lock_guard<std::mutex> deliver(w->deliver_mu);
      if (w->cancelled) continue;
      const std::vector<Event>& live = events_for(w->prefix);
      if (history.empty() && (live.empty() || first_rev > w->live_after)) {
        if (!live.empty()) w->callback(live, Status());
      } else {
        // A new watcher: its history, then the live events after its snapshot.
        std::vector<Event> events = std::move(history);
        for (const Event& ev : live) {
          if (ev.kv.mod_revision > w->live_after) events.push_back(ev);
        }
        if (!events.empty()) w->callback(events, Status());
      }
      if (stop && !w->cancelled) w->callback({}, Status(Code::kUnavailable, "store is closing"));
    }
    if (stop) return;
  }
}

}  // namespace draplane::store::internal
