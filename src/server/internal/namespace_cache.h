// NamespaceCache: which namespaces exist and which are terminating, kept from a
// store watch of /registry/namespaces/ (as the API server's NamespaceLifecycle
// admission keeps them in an informer). Every namespaced create must check its
// namespace; reading and parsing the namespace from the store for each one was
// about a tenth of a create's cost.
//
// The cache may lag the store by the watch's delivery: a namespace it does not
// know (created a moment ago) answers kUnknown and the caller reads the store.
// The server's own deletes call invalidate(), so once a DELETE of a namespace is
// answered no create sees it active; only a create concurrent with the delete
// may (as with upstream's informer-based check).
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "store/store.h"

namespace draplane::server {

class NamespaceCache {
 public:
  enum class State { kUnknown, kActive, kTerminating };

  explicit NamespaceCache(store::Store& store) : store_(store) {}
  ~NamespaceCache();

  // Lists the namespaces, then follows their changes.
  Status start();
  State state(const std::string& name) const;
  // The namespace was written at `revision`: kUnknown until the watch delivers
  // that revision (older events of it are ignored).
  void invalidate(const std::string& name, int64_t revision);

 private:
  struct Entry {
    State state = State::kUnknown;
    int64_t revision = 0;  // of the change the state reflects
  };
  // mu_ held; null value: deleted.
  void apply(const std::string& key, const std::string* value, int64_t revision);

  store::Store& store_;
  mutable std::mutex mu_;
  bool running_ = false;
  // Deleted namespaces stay as kUnknown entries so that their revision still
  // guards against older events.
  std::unordered_map<std::string, Entry> entries_;
  std::unique_ptr<store::WatchHandle> watch_;
};

}  // namespace draplane::server
