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
  WatchFeed feed;
  feed.apply = [this](const std::string& key, const std::string* value, int64_t) { apply(key, value); };
  feed.ended = [this] { classes_.clear(); };  // callers read the store from now on
  return start_watch(store_, std::string(kPrefix), mu_, running_, watch_, std::move(feed));
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
