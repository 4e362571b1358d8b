// WatchEventCache: every watch stream of a resource sees the same store events,
// and with one watch per node agent (pods by spec.nodeName) plus the
// controllers' and scheduler's, each pod change reached ~100 streams, each of
// which parsed the stored JSON (object and previous value) and rendered it
// again on the store's single delivery thread. The cache decodes an event once
// (by key and revision) and keeps each served version's rendering, so the
// streams only evaluate their selectors.
//
// Thread-safety: all methods may be called concurrently; returned entries are
// shared and immutable except for their guarded rendering cache.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "server/json_util.h"
#include "store/store.h"

namespace draplane::server {

struct ResourceInfo;

class WatchEventCache {
 public:
  struct Entry {
    // kPut: the new object, resourceVersion set; null when it does not parse.
    std::unique_ptr<Json> object;
    // The previous value (kPut: for selection; kDelete: rendered, with the
    // delete's resourceVersion); null when absent or unparsable.
    std::unique_ptr<Json> prev;

    // The object (prev=false) or prev rendered in `served`'s version.
    const std::string& rendered(const ResourceInfo& served, bool prev) const;

   private:
    mutable std::mutex mu_;
    mutable std::map<std::pair<const ResourceInfo*, bool>, std::string> rendered_;
  };

  explicit WatchEventCache(size_t capacity = 4096) : capacity_(capacity) {}

  // The decoded event (decoding it on first use).
  std::shared_ptr<const Entry> get(const store::Event& event);

 private:
  size_t capacity_;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const Entry>> entries_;
  std::deque<std::string> order_;  // oldest first, for eviction
};

}  // namespace draplane::server
