#include "server/internal/priority_class_cache.h"

#include "server/internal/store_watch.h"
#include "server/json_util.h"

namespace draplane::server {
namespace {

constexpr std::string_view kPrefix = "/registry/priorityclasses/";

}  // namespace

PriorityClassCache::~PriorityClassCache() { stop_watch(mu_, watch_, running_); }

void PriorityClassCache::apply(const std::string& key, const std::string* value) {
  std::optional<Json> obj;
  if (value != nullptr) {
    if (auto parsed = parse_json(*value); parsed.has_value()) obj = std::move(*parsed);
  }
  if (!obj) {
    classes_.erase(key);
    return;
  }
  classes_[key] = priority_class_info(*obj);
}

Status PriorityClassCache::start() {
  auto l = store_.list(std::string(kPrefix));
  if (!l.has_value()) return l.error();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& kv : l->items) apply(kv.key, &kv.value);
    running_ = true;
  }
  auto h = store_.watch(std::string(kPrefix), l->revision + 1,
                        [this](const std::vector<store::Event>& events, const Status& end) {
                          std::lock_guard<std::mutex> lock(mu_);
                          for (const auto& ev : events) {
                            apply(ev.kv.key, ev.type == store::EventType::kPut ? &ev.kv.value : nullptr);
                          }
                          if (!end.ok()) {
                            running_ = false;  // callers read the store from now on
                            classes_.clear();
                          }
                        });
  std::lock_guard<std::mutex> lock(mu_);
  if (!h.has_value()) {
    running_ = false;
    classes_.clear();
    return h.error();
  }
  watch_ = std::move(h).value();
  return Status();
}

std::optional<std::vector<PriorityClassInfo>> PriorityClassCache::classes() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!running_) return std::nullopt;
  std::vector<PriorityClassInfo> out;
  out.reserve(classes_.size());
  for (const auto& [key, info] : classes_) out.push_back(info);
  return out;
}

}  // namespace draplane::server
