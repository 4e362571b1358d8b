#include "server/internal/watch_event_cache.h"

#include "server/internal/api_impl.h"

namespace draplane::server {

const std::string& WatchEventCache::Entry::rendered(const ResourceInfo& served, bool use_prev) const {
  std::lock_guard<std::mutex> l(mu_);
  auto key = std::make_pair(&served, use_prev);
  auto it = rendered_.find(key);
  if (it == rendered_.end()) {
    const Json& j = use_prev ? *prev : *object;
    it = rendered_.emplace(key, served_text(served, to_string(j))).first;
  }
  return it->second;
}

std::shared_ptr<const WatchEventCache::Entry> WatchEventCache::get(const store::Event& ev) {
  std::string id = std::to_string(ev.kv.mod_revision) + ' ' + ev.kv.key;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = entries_.find(id);
    if (it != entries_.end()) return it->second;
  }
  auto e = std::make_shared<Entry>();
  if (ev.type == store::EventType::kPut) {
    auto obj = parse_json(ev.kv.value);
    if (obj.has_value()) {
      e->object = std::make_unique<Json>(std::move(*obj));
      set_resource_version(*e->object, ev.kv.mod_revision);
    }
    if (ev.prev) {
      auto prev = parse_json(ev.prev->value);
      if (prev.has_value()) e->prev = std::make_unique<Json>(std::move(*prev));
    }
  } else if (ev.prev) {
    auto prev = parse_json(ev.prev->value);
    if (prev.has_value()) {
      e->prev = std::make_unique<Json>(std::move(*prev));
      set_resource_version(*e->prev, ev.kv.mod_revision);
    }
  }
  std::lock_guard<std::mutex> l(mu_);
  auto [it, inserted] = entries_.emplace(id, e);
  if (inserted) {
    order_.push_back(id);
    while (order_.size() > capacity_) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
  }
  return it->second;
}

}  // namespace draplane::server
