#include "server/event_ttl.h"

#include <algorithm>

#include "server/internal/api_impl.h"

namespace draplane::server {

EventTtl::EventTtl(store::Store& store, int64_t ttl_seconds, std::shared_ptr<const common::Clock> clock)
    : store_(store), ttl_(ttl_seconds), clock_(std::move(clock)) {}

EventTtl::~EventTtl() { stop(); }

int64_t EventTtl::default_interval_ms(int64_t ttl_seconds) {
  return std::clamp<int64_t>(ttl_seconds * 100, 1000, 60000);
}

int64_t EventTtl::last_recorded(const std::string& json, int64_t fallback) {
  auto obj = parse_json(json);
  if (!obj.has_value()) return fallback;
  int64_t latest = -1;
  for (auto path : {std::initializer_list<std::string_view>{"series", "lastObservedTime"},
                    std::initializer_list<std::string_view>{"lastTimestamp"},
                    std::initializer_list<std::string_view>{"eventTime"},
                    std::initializer_list<std::string_view>{"metadata", "creationTimestamp"}}) {
    std::string t = get_string(*obj, path);
    if (!t.empty()) latest = std::max(latest, common::parse_rfc3339(t).value_or(-1));
  }
  return latest < 0 ? fallback : latest;
}

size_t EventTtl::sweep() {
  const int64_t now = clock_->unix_seconds();
  auto listed = store_.list("/registry/events/");
  if (!listed.has_value()) return 0;
  std::unordered_map<std::string, Seen> next;
  next.reserve(listed->items.size());
  size_t deleted = 0;
  for (const auto& kv : listed->items) {
    auto it = seen_.find(kv.key);
    Seen s{kv.mod_revision, now};
    if (it != seen_.end() && it->second.mod_revision == kv.mod_revision) {
      s.written_at = it->second.written_at;
    } else if (it == seen_.end() && first_) {
      // Stored before this server started: its own timestamps tell its age.
      s.written_at = std::min(now, last_recorded(kv.value, now));
    }
    if (now - s.written_at >= ttl_) {
      auto r = store_.remove(kv.key, kv.mod_revision);
      if (r.has_value() && r->succeeded) {
        ++deleted;
        continue;
      }
      s.written_at = now;  // written meanwhile: it lives on
    }
    next.emplace(kv.key, s);
  }
  seen_.swap(next);
  first_ = false;
  return deleted;
}

void EventTtl::start(int64_t interval_ms) {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this, interval_ms] {
    std::unique_lock<std::mutex> l(mu_);
    while (!stop_) {
      l.unlock();
      sweep();
      l.lock();
      cv_.wait_for(l, std::chrono::milliseconds(interval_ms), [this] { return stop_; });
    }
  });
}

void EventTtl::stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace draplane::server
