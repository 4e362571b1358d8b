#include "server/internal/recent_objects.h"

namespace draplane::server {

std::optional<Stored> RecentObjects::take(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  std::optional<Stored> out(std::move(it->second.object));
  erase_locked(it);
  return out;
}

void RecentObjects::put(const std::string& key, Stored object, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) erase_locked(it);
  if (bytes > budget_) return;
  while (bytes_ + bytes > budget_ && !oldest_first_.empty()) erase_locked(entries_.find(oldest_first_.front()));
  oldest_first_.push_back(key);
  Entry& e = entries_[key];
  e.object = std::move(object);
  e.bytes = bytes;
  e.age = std::prev(oldest_first_.end());
  bytes_ += bytes;
}

void RecentObjects::erase(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) erase_locked(it);
}

void RecentObjects::erase_locked(std::unordered_map<std::string, Entry>::iterator it) {
  bytes_ -= it->second.bytes;
  oldest_first_.erase(it->second.age);
  entries_.erase(it);
}

size_t RecentObjects::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

size_t RecentObjects::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

}  // namespace draplane::server
