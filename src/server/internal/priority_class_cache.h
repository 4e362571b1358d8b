// PriorityClassCache: the PriorityClasses, kept from a store watch of
// /registry/priorityclasses/ for the Priority admission of pod creates
// (kube-apiserver's plugin reads them from an informer's lister likewise).
// Listing and parsing every class from the store for each pod was about a
// twentieth of the API server's work in `draplane bench --mode api`.
//
// The cache may lag the store by the watch's delivery, as upstream's lister:
// a pod naming a class the cache does not know has the store read instead
// (a class created a moment ago is found); a default changed a moment ago may
// not be seen yet. Writes of PriorityClasses (the one-default rule) always
// read the store.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <map>
#include <vector>

#include "server/priority_admission.h"
#include "store/store.h"

namespace draplane::server {

class PriorityClassCache {
 public:
  explicit PriorityClassCache(store::Store& store) : store_(store) {}
  ~PriorityClassCache();
  // Lists the classes, then follows their changes.
  Status start();
  // The classes; nullopt when the watch has ended (the caller reads the store).
  std::optional<std::vector<PriorityClassInfo>> classes() const;

 private:
  // mu_ held; null value: deleted.
  void apply(const std::string& key, const std::string* value);

  store::Store& store_;
  mutable std::mutex mu_;
  bool running_ = false;
  std::map<std::string, PriorityClassInfo> classes_;  // by store key: the store's order
  std::unique_ptr<store::WatchHandle> watch_;
};

}  // namespace draplane::server
