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
  auto l = store_.list(std::string(kPrefix));
  if (!l.has_value()) return l.error();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& kv : l->items) apply(kv.key, &kv.value, kv.mod_revision);
    running_ = true;
  }
  auto h = store_.watch(std::string(kPrefix), l->revision + 1,
                        [this](const std::vector<store::Event>& events, const Status& end) {
                          std::lock_guard<std::mutex> lock(mu_);
                          for (const auto& ev : events) {
                            apply(ev.kv.key, ev.type == store::EventType::kPut ? &ev.kv.value : nullptr,
                                  ev.kv.mod_revision);
                          }
                          if (!end.ok()) {
                            running_ = false;  // callers read the store from now on
                            entries_.clear();
                          }
                        });
  std::lock_guard<std::mutex> lock(mu_);
  if (!h.has_value()) {
    running_ = false;
    entries_.clear();
    return h.error();
  }
  watch_ = std::move(h).value();
  return Status();
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
