// OwnerIndex: which stored objects name a given owner UID in
// metadata.ownerReferences, kept from a store watch of every key (as
// Kubernetes' garbage collector keeps its graph from informers). Deleting an
// owner (a pod) then finds its dependents (its generated claims) directly;
// scanning every object of the namespace on each delete made deleting N pods
// cost O(N^2).
//
// dependents() first waits until the index has applied the store's events up
// to a given revision (the owner's delete), so an object written just before
// is never missed; when the index is not running (no watch, or it fell
// behind and stopped) it answers nullopt and the caller scans.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/reverse_index.h"
#include "store/store.h"

namespace draplane::server {

class OwnerIndex {
 public:
  explicit OwnerIndex(store::Store& store) : store_(store) {}
  ~OwnerIndex();

  // Lists every object under `prefix`, then follows the changes.
  Status start(const std::string& prefix);
  // Keys of the objects naming `owner_uid`, once every change up to `revision`
  // is applied (waiting at most `timeout_ms`); nullopt when the index cannot answer.
  std::optional<std::vector<std::string>> dependents(const std::string& owner_uid, int64_t revision,
                                                     int timeout_ms = 5000);

 private:
  void apply(const std::string& key, const std::string* value);  // mu_ held; null value: deleted

  store::Store& store_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool running_ = false;
  int64_t applied_ = 0;
  common::ReverseIndex<std::string, std::string> owners_;  // key -> owner uids, and back
  std::unique_ptr<store::WatchHandle> watch_;
};

}  // namespace draplane::server
