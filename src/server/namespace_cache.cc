#include "server/internal/namespace_cache.h"

#include "server/internal/store_watch.h"
#include "server/json_util.h"

namespace draplane::server {
namespace {

constexpr std::string_view kPrefix = "/registry/namespaces/";

}  // namespace

NamespaceCache::~NamespaceCache() { stop_watch(mu_, watch_, running_); }

void NamespaceCache::apply(const std::string& key, const std::string* value, int64_t revision) {
  if (key.size() <= kPrefix.size() || key.compare(0, kPrefix.size(), kPrefix) != 0) return;
  Entry& e = entries_[key.substr(kPrefix.size())];
  if (revision < e.revision) return;
  e.revision = revision;
  e.state = State::kUnknown;  // deleted or unreadable: the caller reads the store
  if (value == nullptr) return;
  auto obj = parse_json(*value);
  if (!obj.has_value()) return;
  e.state = get_string(*obj, {"metadata", "deletionTimestamp"}).empty() ? State::kActive : State::kTerminating;
}

Status NamespaceCache::start() {
  WatchFeed feed;
  feed.apply = [this](const std::string& key, const std::string* value, int64_t revision) {
    apply(key, value, revision);
  };
  feed.ended = [this] { entries_.clear(); };  // callers read the store from now on
  return start_watch(store_, std::string(kPrefix), mu_, running_, watch_, std::move(feed));
}

NamespaceCache::State NamespaceCache::state(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!running_) return State::kUnknown;
  auto it = entries_.find(name);
  return it == entries_.end() ? State::kUnknown : it->second.state;
}

void NamespaceCache::invalidate(const std::string& name, int64_t revision) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = entries_[name];
  if (revision <= e.revision) return;  // the watch already delivered it
  e.state = State::kUnknown;
  e.revision = revision;
}

}  // namespace draplane::server
