// RecentObjects: the objects this server wrote last, by store key, parsed and
// with their revision, for the next update of the same object. Reading the
// object back from the store and parsing it again was about a tenth of an
// update's cost, and most updates follow this server's own previous write of
// the object (a pod's status moves Pending -> claims recorded -> Running ->
// Succeeded; a claim gets a finalizer, an allocation, a release).
//
// A hint, never the truth: writes by other paths (bindings, deletes, another
// server on the same etcd) do not pass through here. The update that starts
// from an entry commits only when the store still holds that revision (the
// write's precondition; revisions are never reused), and settles every other
// outcome (conflict, no-op, validation error, dry run) against the store.
//
// An entry is taken, not read: each revision is the base of at most one
// successful update, which puts its own result back.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "server/internal/api_impl.h"

namespace draplane::server {

class RecentObjects {
 public:
  // `budget_bytes`: the stored (JSON text) size of all entries together; the
  // oldest go first beyond it.
  explicit RecentObjects(size_t budget_bytes) : budget_(budget_bytes) {}

  // Removes and returns the entry of `key`, if any.
  std::optional<Stored> take(const std::string& key);
  // `object` as stored at `object.mod_revision`, with its resourceVersion set;
  // `bytes` its stored size. Replaces an older entry of the key.
  void put(const std::string& key, Stored object, size_t bytes);
  void erase(const std::string& key);

  size_t size() const;
  size_t bytes() const;

 private:
  struct Entry {
    Stored object;
    size_t bytes = 0;
    std::list<std::string>::iterator age;
  };
  void erase_locked(std::unordered_map<std::string, Entry>::iterator it);

  const size_t budget_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;
  std::list<std::string> oldest_first_;
  size_t bytes_ = 0;
};

}  // namespace draplane::server
