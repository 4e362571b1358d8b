// NodeView: the part of a Snapshot one node can use, in the allocator's search
// order (upstream GatherPools): pools of the slices that target the node, at
// their newest generation, complete or not, valid or not; pools sorted by
// (driver, pool) with pools that have binding conditions last; slices by name;
// devices in slice order. Also each pool's shared counters with what allocated
// devices (in any slice of the pool, per the AllocatedState) already consume.
//
// A NodeView borrows the Snapshot, the AllocatedState and the Node: all must
// outlive it. The scheduler may build one per (snapshot, node) and reuse it for
// many pods, calling refresh_allocations() after it changed the AllocatedState.
// Thread-safety: immutable after build() except for refresh_allocations(),
// which, like changes to the AllocatedState, needs the owner to be its only user.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "alloc/allocated.h"
#include "alloc/snapshot.h"
#include "api/types.h"
#include "common/result.h"

namespace draplane::alloc {

struct CounterUse {
  uint32_t counter;  // index into PoolView::available
  __int128 amount;
};

struct PoolView {
  std::string driver;
  std::string pool;
  bool incomplete = false;
  bool invalid = false;
  std::string invalid_reason;
  bool binding_conditions = false;
  // Offers the node no devices (only counter slices target it): counters and
  // slices are left empty, only the state above is set.
  bool foreign = false;
  std::vector<uint32_t> slices;        // device slices targeting the node, sorted by name
  std::vector<uint32_t> other_slices;  // device slices of the pool not targeting the node
  // Shared counters, flattened: counter_names[i] = "set/counter".
  std::vector<std::string> counter_names;
  std::vector<uint32_t> counter_set;  // flat counter -> index of its set (in slice order)
  std::vector<__int128> total;      // set value
  std::vector<__int128> available;  // set value minus consumption of allocated devices
  bool overdrawn = false;           // some available counter is already negative
  // The pool's devices that consume counters (for refresh_allocations()):
  // Snapshot device index and its range in consumer_uses.
  struct Consumer {
    uint32_t device = 0;
    uint32_t begin = 0, end = 0;
  };
  std::vector<Consumer> consumers;
  std::vector<CounterUse> consumer_uses;
  std::string id() const { return driver + "/" + pool; }
};

struct Candidate {
  uint32_t device = 0;  // Snapshot device index
  uint32_t pool = 0;    // index into NodeView::pools
  bool node_ok = true;  // per-device node selection (true for whole-slice selection)
  uint32_t counters_begin = 0, counters_end = 0;  // range in NodeView::counter_uses
};

// The state (valid or why not) of pools that offer a node no devices: with
// Kubernetes 1.36 every node sees every pool's counter-only slices, and such a
// pool still matters through its state (an invalid pool fails allocations, an
// incomplete one fails allocationMode All), but not through its counters. That
// state depends only on the slices, so the views of one Snapshot share it.
// Not synchronized; clear() whenever the snapshot is rebuilt.
class ForeignPoolStates {
 public:
  void clear() { states_.clear(); }
  size_t size() const { return states_.size(); }

 private:
  friend class NodeView;
  struct State {
    bool obsolete = false;  // a newer generation exists: the pool is ignored
    bool incomplete = false;
    bool invalid = false;
    std::string reason;
  };
  using Map = std::map<std::pair<std::string, std::string>, State>;
  Map states_;
};

class NodeView {
 public:
  // Gathers the pools for `node`, counting what `allocated` (a state of this
  // snapshot's devices) holds. Error (kInvalid) for a node selector that cannot
  // be parsed, as upstream ("failed to perform node selection ..."); kInternal
  // when `allocated` belongs to another snapshot. `foreign` (optional)
  // memoizes the state of pools offering the node no devices.
  static Result<NodeView> build(const Snapshot& snapshot, const AllocatedState& allocated, const api::Node& node,
                                ForeignPoolStates* foreign = nullptr);

  // Recounts the pools' available counters after the AllocatedState changed
  // (the candidates do not depend on it): cheaper than a rebuild.
  // Not thread-safe against concurrent readers of this view.
  void refresh_allocations();
  // The same for an allocation change in the pools named "driver/pool" only:
  // with thousands of pools visible from every node, recounting all of them
  // in every view after each pod was most of a scheduling cycle. Returns the
  // indices of the view's pools among them.
  std::vector<uint32_t> refresh_allocations(const std::set<std::string>& pool_ids);
  // Indices into pools() of the pools named "driver/pool" that this view has.
  std::vector<uint32_t> pools_named(const std::set<std::string>& pool_ids) const;
  // The candidates of pools()[pool]: [first, second) in candidates() (a
  // pool's candidates are contiguous).
  std::pair<uint32_t, uint32_t> pool_candidates(uint32_t pool) const { return pool_ranges_[pool]; }

  const Snapshot& snapshot() const { return *snapshot_; }
  const AllocatedState& allocated() const { return *allocated_; }
  const api::Node& node() const { return *node_; }
  const std::vector<PoolView>& pools() const { return pools_; }
  // Devices of complete, valid pools in search order.
  const std::vector<Candidate>& candidates() const { return candidates_; }
  const std::vector<CounterUse>& counter_uses() const { return counter_uses_; }
  // Candidates in the packing policy's order, as of build() or the last
  // refresh_allocations().
  const std::vector<uint32_t>& packing_order() const { return packing_order_; }
  // Where candidate c is in packing_order().
  uint32_t packing_position(uint32_t c) const { return packing_position_[c]; }
  // Changes whenever pools()[pool]'s available counters may have (build, and
  // refresh_allocations for that pool); never the same for two views of a
  // process, so a reader may cache what it derives from a pool by it.
  uint64_t pool_version(uint32_t pool) const { return pool_versions_[pool]; }

  // Per candidate, so that the allocator passes over what cannot be used in
  // a few instructions (a pool full of partitions costs a look at each):
  // kTaken, allocated without sharing (only admin access may use it again);
  // kNoCounters, a device that cannot be shared and consumes more of a shared
  // counter than its pool has left, or whose pool is overdrawn (no allocation
  // can add it). Kept current by build() and refresh_allocations().
  enum Blocked : uint8_t { kTaken = 1, kNoCounters = 2 };
  const std::vector<uint8_t>& blocked() const { return blocked_; }
  // The first candidate from c on (natural order), and the first position from
  // pos on (packing order), that is not blocked; candidates().size() when none.
  // A walk over pools mostly full jumps their devices 64 at a time.
  uint32_t next_unblocked(uint32_t c) const { return next_set(unblocked_, c); }
  uint32_t next_unblocked_position(uint32_t pos) const { return next_set(unblocked_positions_, pos); }

  // The candidates (ascending) whose attribute `attribute` (as
  // lookup_attribute reads it) has a value with value_key `key`: the only
  // devices a matchAttribute constraint admits once its value is set. Built
  // on first use per attribute name and kept (candidates and attributes do
  // not change); thread-safe. Null when the index cannot tell (an empty key,
  // or some candidate's value sets no type or several).
  const std::vector<uint32_t>* candidates_with(const std::string& attribute, const std::string& key) const;
  bool any_invalid() const { return any_invalid_; }
  // Some candidate allows multiple allocations (is shareable).
  bool any_shareable() const { return any_shareable_; }
  bool any_incomplete() const { return any_incomplete_; }

  // Sharing one view between nodes. A view is node-independent when nothing
  // in it names its node: no slice targets the node by name, and no candidate
  // device is bound to a node by name or bindsToNode (an allocation of such a
  // device gets a node selector naming the node). A scheduler may keep one
  // view for all the nodes with the same selection() (every node of a cluster
  // whose devices are all network-attached or selected by labels) and
  // refresh it once per allocation instead of once per node.
  bool node_independent() const { return node_independent_; }
  // What build() selects for `node`, without building the view: the slices
  // that target it and, of slices that select per device, which devices.
  // Nodes with equal selections get views of the same content. Nullopt when
  // the view would not be node-independent, or a node selector fails to
  // evaluate (build() reports it).
  static std::optional<std::vector<uint32_t>> selection(const Snapshot& snapshot, const api::Node& node);
  // The node a shared view is said to be for (node()), when the node it was
  // built for stops sharing it. Only for node-independent views.
  void set_node(const api::Node& node) { node_ = &node; }

 private:
  void order_packing();
  void mark_blocked(uint32_t first, uint32_t last);
  uint32_t next_set(const std::vector<uint64_t>& bits, uint32_t from) const;

  const Snapshot* snapshot_ = nullptr;
  const AllocatedState* allocated_ = nullptr;
  const api::Node* node_ = nullptr;
  std::vector<PoolView> pools_;
  std::vector<Candidate> candidates_;
  std::vector<CounterUse> counter_uses_;
  std::vector<uint32_t> packing_order_;
  std::vector<uint32_t> packing_position_;
  std::vector<uint8_t> blocked_;
  std::vector<uint64_t> unblocked_;            // bit c: blocked_[c] == 0
  std::vector<uint64_t> unblocked_positions_;  // bit pos: blocked_[packing_order_[pos]] == 0
  std::vector<uint64_t> pool_versions_;
  struct AttributeIndex;
  std::shared_ptr<AttributeIndex> attribute_index_;  // shared by copies: the same candidates
  std::vector<std::pair<uint32_t, uint32_t>> pool_ranges_;  // per pool: its candidates
  std::vector<uint32_t> by_id_;                             // pools sorted by (driver, pool)
  bool any_invalid_ = false;
  bool any_incomplete_ = false;
  bool node_independent_ = true;
  bool any_shareable_ = false;
};

}  // namespace draplane::alloc
