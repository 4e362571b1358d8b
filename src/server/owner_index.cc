#include "server/internal/owner_index.h"

#include <chrono>

#include "server/internal/store_watch.h"
#include "server/json_util.h"

namespace draplane::server {
namespace {

std::vector<std::string> owner_uids(const std::string& value) {
  std::vector<std::string> out;
  if (value.find("\"ownerReferences\"") == std::string::npos) return out;  // most objects
  auto obj = parse_json(value);
  if (!obj.has_value() || !obj->IsObject()) return out;
  auto meta = obj->FindMember("metadata");
  if (meta == obj->MemberEnd() || !meta->value.IsObject()) return out;
  auto refs = meta->value.FindMember("ownerReferences");
  if (refs == meta->value.MemberEnd() || !refs->value.IsArray()) return out;
  for (const auto& r : refs->value.GetArray()) {
    if (!r.IsObject()) continue;
    auto uid = r.FindMember("uid");
    if (uid != r.MemberEnd() && uid->value.IsString()) out.emplace_back(uid->value.GetString(), uid->value.GetStringLength());
  }
  return out;
}

}  // namespace

OwnerIndex::~OwnerIndex() { stop_watch(mu_, watch_, running_); }

void OwnerIndex::apply(const std::string& key, const std::string* value) {
  if (value == nullptr) owners_.erase(key);
  else owners_.set(key, owner_uids(*value));
}

Status OwnerIndex::start(const std::string& prefix) {
  WatchFeed feed;
  feed.apply = [this](const std::string& key, const std::string* value, int64_t revision) {
    apply(key, value);
    applied_ = std::max(applied_, revision);
  };
  feed.listed = [this](int64_t revision) { applied_ = revision; };
  feed.after_batch = [this] { cv_.notify_all(); };  // callers scan once the watch has ended
  return start_watch(store_, prefix, mu_, running_, watch_, std::move(feed));
}

std::optional<std::vector<std::string>> OwnerIndex::dependents(const std::string& owner_uid, int64_t revision,
                                                               int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  bool caught_up = cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                [&] { return !running_ || applied_ >= revision; });
  if (!running_ || !caught_up) return std::nullopt;
  const auto& keys = owners_.keys_of(owner_uid);
  return std::vector<std::string>(keys.begin(), keys.end());
}

}  // namespace draplane::server
