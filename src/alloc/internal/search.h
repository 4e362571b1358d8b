// Internal state of one allocate() call: per-request data, the depth-first
// search (search.cc), result assembly (results.cc) and explanations
// (explain.cc). Not part of the module's API.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "alloc/allocator.h"
#include "cel/cel.h"

namespace draplane::alloc::internal {

inline constexpr int kMaxResults = 32;  // resourceapi.AllocationResultsMaxSize

enum class Outcome { kFail, kDone, kMaxSize, kError, kStop };

// One request or one subrequest of a claim.
struct ReqData {
  int claim = 0, request = 0, sub = -1;
  std::string name;    // request or subrequest name
  std::string parent;  // parent request name for a subrequest, "" otherwise
  std::string full;    // "req" or "req/sub"
  std::string class_name;
  const Snapshot::ClassEntry* cls = nullptr;
  bool all = false;
  int num = 0;
  bool admin = false;
  const std::vector<api::DeviceSelector>* selectors = nullptr;
  std::vector<std::shared_ptr<const cel::Program>> programs;
  std::vector<std::string> compile_errors;
  const std::vector<api::DeviceToleration>* tolerations = nullptr;
  const api::CapacityRequirements* capacity = nullptr;
  std::vector<uint32_t> all_devices;  // candidate indexes (mode All)
  const std::vector<uint32_t>* order = nullptr;  // candidate visiting order (packing); null = natural
  std::vector<uint8_t> match;         // per candidate: 255 unknown, else Snapshot::Match
  // Selectability cannot fail (no selectors of its own, a class without CEL
  // errors): a device may be passed over without asking.
  bool never_errs() const { return programs.empty() && cls != nullptr && cls->errors.empty(); }
  std::unordered_map<uint32_t, std::string> errors;
};

// A claim's request: its ReqData range (several for firstAvailable).
struct Slot {
  int first = 0;
  int count = 1;
  bool has_subs = false;
  int selected = 0;
};

struct Picked {
  int req = 0;  // ReqData index
  uint32_t cand = 0;
  bool multi = false;           // allowMultipleAllocations device
  bool counters_added = false;  // consumption recorded in counters_
  bool admin = false;
  std::map<std::string, api::Quantity> consumed;  // shares only
};

struct Constraint {
  bool match = true;  // matchAttribute; false = distinctAttribute
  std::vector<std::string> requests;
  std::string attribute;
  const api::DeviceAttribute* value = nullptr;  // matchAttribute
  std::vector<std::pair<std::string, const api::DeviceAttribute*>> values;  // distinct, per request
  int num = 0;
};

class Search {
 public:
  // `nested`: a relaxation run by the pruning itself (no further pruning).
  Search(const NodeView& view, const std::vector<const api::ResourceClaim*>& claims, const Options& options,
         bool nested = false);

  // Validation phase (upstream validateDeviceRequest and constraints): errors
  // for unknown classes, All on incomplete/invalid pools, limits.
  Result<void> prepare();
  // Runs the search; fills Allocation (results or reasons). Errors as upstream.
  Result<Allocation> run();

  // results.cc
  std::vector<api::AllocationResult> build_results();
  // explain.cc
  std::vector<std::string> explain();

 private:
  friend struct Explainer;
  Outcome one(int claim, int request, int sub, int dev_index, bool alloc_sub, uint32_t start);
  Outcome next_request(int claim, int request);
  // Selectability of candidate c for request data r (selectors + per-device node).
  Outcome selectable(ReqData& r, uint32_t c, bool& ok);
  bool in_use(uint32_t c) const;
  bool allocating_for_claim(uint32_t c, int claim) const;
  bool capacity_ok(const ReqData& r, uint32_t c) const;
  // upstream allocateDevice: 1 = allocated, 0 = not usable, -1 = error set.
  int allocate_device(int req_index, uint32_t c, bool must);
  void deallocate(int claim);
  bool tainted(const ReqData& r, const api::Device& d) const;
  // A shareable device already allocated (before this search or by it) has
  // consumed its counters once; later shares consume none.
  bool shared_counters_consumed(uint32_t c) const;
  bool constraints_add(int claim, const ReqData& r, uint32_t c, std::string* failed_name);
  // The only candidates a matchAttribute constraint whose value is set admits
  // for r (NodeView::candidates_with); null to walk them all.
  const std::vector<uint32_t>* matching_candidates(int claim, const ReqData& r) const;
  void constraints_remove(int claim, const ReqData& r, uint32_t c);
  bool feasible_by_count();
  // prune.cc: relaxations that prove "does not fit" before the search.
  bool solo_infeasible();       // some request cannot be satisfied even alone
  bool matching_infeasible();   // requests need more distinct devices than exist
  // Usable on its own for r (ignoring what this call allocates); -1 on a CEL error.
  int usable_alone(ReqData& r, uint32_t c);
  std::string kobj(int claim) const;
  std::string new_share_id(uint32_t c);

  const NodeView& view_;
  const Snapshot& snap_;
  const AllocatedState& allocated_;
  const std::vector<const api::ResourceClaim*>& claims_;
  const Options& options_;
  std::vector<ReqData> reqs_;
  std::vector<std::vector<Slot>> slots_;  // per claim, per request
  std::vector<std::vector<Constraint>> constraints_;
  std::vector<std::vector<Picked>> picked_;
  // Per candidate: claims allocating it dedicatedly; shares in flight and their capacity.
  std::vector<uint16_t> allocating_;
  std::vector<uint16_t> sharing_;
  std::unordered_map<uint32_t, std::map<std::string, __int128>> sharing_capacity_;
  std::vector<std::vector<__int128>> counters_;  // per pool, consumed in this call
  uint64_t hash_ = 0;
  std::unordered_map<uint64_t, Outcome> memo_;
  int64_t steps_ = 0;
  Status error_;
  bool stopped_ = false;
  bool cel_errors_seen_ = false;
  uint64_t share_rng_ = 0;
  bool nested_ = false;
  std::unordered_map<uint32_t, std::vector<std::string>> new_shares_;
};

}  // namespace draplane::alloc::internal
