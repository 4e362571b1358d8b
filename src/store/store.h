// store::Store: a revisioned key-value store with watch, shaped like etcd v3 (and
// like k3s's kine, which emulates etcd on SQL).
//
// Keys are paths such as "/registry/resourceclaims/default/claim-1"; values are
// opaque bytes (the object's JSON). Every successful write (create, update,
// delete) advances ONE global revision by exactly one, as in etcd: the revision
// never repeats and never goes backwards, even across restarts and compaction.
// Each stored key-value carries
//   create_revision  the revision of the write that created this incarnation,
//   mod_revision     the revision of its last write (the API's resourceVersion),
//   version          1 on create, +1 per update (etcd's "version").
// The store starts at revision 1 with no keys (etcd's initial revision), so the
// first write gets revision 2.
//
// Reads may name a past revision (0 = the current one). Compaction drops history
// older than a revision; reads and watches that need history before the compacted
// revision fail with Code::kGone ("too old resource version"), never with stale data.
//
// Optimistic concurrency: update and remove take an expected mod_revision. A
// mismatch is NOT an error: it is an expected outcome (WriteResult::succeeded ==
// false) carrying the current value so the caller can redo its read-modify-write,
// like kine's "not updated + current value" and etcd's failed Txn.
//
// Thread-safety: every Store method may be called concurrently from any thread.
// Watch callbacks run on one delivery thread per store, in revision order; a
// callback must not block (hand the events to your own queue / executor).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace draplane::store {

struct KeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t version = 0;
  bool operator==(const KeyValue&) const = default;
};

struct ListOptions {
  int64_t revision = 0;     // read at this revision; 0 = current
  int64_t limit = 0;        // at most this many items; 0 = no limit
  std::string start_after;  // continue: only keys strictly greater than this
};

struct ListResult {
  std::vector<KeyValue> items;  // sorted by key, byte order
  int64_t revision = 0;         // the revision the list was read at
  bool more = false;            // true when `limit` cut the list short
  int64_t remaining = 0;        // keys left after the last item when `more`
};

// Outcome of a conditional write. On success `kv` is the new value (for remove:
// the value that was deleted, with mod_revision of the delete in `revision`); on a
// revision mismatch `succeeded` is false and `kv` is the current value.
struct WriteResult {
  bool succeeded = false;
  KeyValue kv;
  int64_t revision = 0;  // revision of the write (0 when not succeeded)
};

enum class EventType { kPut, kDelete };

// One change. For kPut `kv` is the new value; for kDelete `kv` holds the key and
// mod_revision = the delete's revision and an empty value. `prev` is the value
// just before the change (absent for a put that created the key).
struct Event {
  EventType type = EventType::kPut;
  KeyValue kv;
  std::optional<KeyValue> prev;
  bool operator==(const Event&) const = default;
};

// Receives events in revision order, in batches; a batch never splits a revision.
// An error (Code::kGone when the watcher fell behind compaction, kUnavailable when
// the store closes) ends the watch: it is delivered once, after the last events.
using WatchCallback = std::function<void(const std::vector<Event>& events, const Status& end)>;

// Cancels the watch when destroyed. After the destructor returns the callback is
// not running and will not run again (unless destroyed from inside the callback
// itself, which is allowed and stops further deliveries).
class WatchHandle {
 public:
  virtual ~WatchHandle() = default;
};

class Store {
 public:
  virtual ~Store() = default;

  // The newest revision (1 for an empty new store).
  virtual int64_t current_revision() = 0;
  // The compacted revision (0 when never compacted).
  virtual int64_t compacted_revision() = 0;

  // The value of `key` at `revision` (0 = now). kNotFound when absent (or deleted
  // at that revision); kGone when revision < compacted_revision(); kInvalid when
  // revision > current_revision() (a future revision).
  virtual Result<KeyValue> get(std::string_view key, int64_t revision = 0) = 0;

  // Keys starting with `prefix`, at opts.revision, sorted, at most opts.limit,
  // after opts.start_after. Errors as get() (an empty result is not an error).
  virtual Result<ListResult> list(std::string_view prefix, const ListOptions& opts = {}) = 0;

  // Creates `key`. kAlreadyExists when it exists; the new value on success.
  virtual Result<KeyValue> create(std::string_view key, std::string_view value) = 0;

  // Replaces `key` when its mod_revision == expected_mod_revision (0 = any).
  // kNotFound when absent; a mismatch is a WriteResult with succeeded == false.
  virtual Result<WriteResult> update(std::string_view key, std::string_view value,
                                     int64_t expected_mod_revision) = 0;

  // Deletes `key` when its mod_revision == expected_mod_revision (0 = any).
  // kNotFound when absent; a mismatch is a WriteResult with succeeded == false.
  virtual Result<WriteResult> remove(std::string_view key, int64_t expected_mod_revision) = 0;

  // Streams every change to keys under `prefix` with revision >= start_revision
  // (0 = changes after the current revision). History first, then live events.
  // kGone when start_revision <= compacted_revision() (history missing);
  // kInvalid when start_revision > current_revision() + 1.
  virtual Result<std::unique_ptr<WatchHandle>> watch(std::string_view prefix, int64_t start_revision,
                                                     WatchCallback callback) = 0;

  // Drops history older than `revision`: reads at revisions < revision fail with
  // kGone afterwards; the newest value of every live key is kept. kInvalid when
  // revision > current_revision(); compacting to or below the compacted revision
  // is a no-op. Watches already running are not affected (their events are queued).
  virtual Status compact(int64_t revision) = 0;
};

// "/registry/a/" -> "/registry/a0": the first key after every key with the prefix
// ("" when the prefix is empty or all 0xff: no upper bound).
std::string prefix_end(std::string_view prefix);

}  // namespace draplane::store
