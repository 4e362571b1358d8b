// The structured allocator: finds devices for a pod's claims on one node, all
// of them or none, with the semantics of the upstream Kubernetes 1.36 allocator
// ("incubating" variant, every DRA feature on).
//
// allocate() is a pure function of (snapshot, allocated state, node, claims,
// options) -- the NodeView carries the first three -- and changes none of them:
// - fit: one AllocationResult per claim, in claim order;
// - does not fit: Allocation::fits == false with one explanation line per
//   request that a person can act on (or a note that the search ran out of
//   steps / time);
// - error (Code::kInvalid): broken input upstream also rejects: unknown class
//   ("could not retrieve device class"), CEL compile/runtime errors, more than
//   32 devices for a claim, allocationMode All on an incomplete or invalid pool,
//   an All device breaking a constraint, and invalid pools when nothing else
//   fits ("invalid resource pools were encountered").
// Claims must be distinct objects; each gets its request names validated by the
// API layer beforehand (the allocator trusts names and counts as upstream does).
//
// Search: depth-first with backtracking over claims -> requests -> devices,
// combinations (not permutations) within a request, exactly upstream's order, so
// first-fit returns upstream's answer. Additions that upstream lacks and that
// never change which solution is found first: a per-request feasibility count
// before the search, a memo of request boundaries known to fail (keyed by a
// 64-bit Zobrist hash of what is allocated so far), and a step budget / stop
// callback that turns a pathological search into a clear "did not finish" no-fit.
//
// Thread-safety: allocate() only reads the snapshot, the allocated state and the
// view; concurrent calls are safe while their owner changes none of them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "alloc/allocated.h"
#include "alloc/node_view.h"
#include "alloc/snapshot.h"
#include "api/types.h"
#include "common/result.h"

namespace draplane::alloc {

enum class Policy {
  kFirstFit,  // upstream's choice exactly
  kPacking,   // prefer shares of already-shared devices and partitions of partly used
              // counter sets, keeping whole devices and counter sets free
};

// Parses "first-fit" / "packing"; error names the accepted values.
Result<Policy> parse_policy(std::string_view text);

struct Options {
  Policy policy = Policy::kFirstFit;
  // Upper bound on search steps (one step = one upstream allocateOne call);
  // beyond it the answer is "does not fit" with timed_out set. 0 = unlimited.
  int64_t max_steps = 20'000'000;
  // Checked every 1024 steps; returning true stops the search like max_steps
  // (the scheduler plugs its deadline or cancellation in here).
  std::function<bool()> should_stop;
  // Seed of the shareID generator. IDs are UUID-shaped, unique per device
  // among the allocated state's shares and this call's.
  uint64_t share_id_seed = 0;
  // Build explanation lines when a claim does not fit.
  bool explain = true;
  // Pass over the candidates the view marks blocked (NodeView::blocked) at a
  // glance and, once a matchAttribute constraint has its value, visit only
  // the devices with that value (NodeView::candidates_with). The answer is
  // the same either way (tests compare); off, every candidate is looked at as
  // upstream's walk does.
  bool shortcuts = true;
};

struct Allocation {
  bool fits = false;
  std::vector<api::AllocationResult> results;  // one per claim when fits
  std::vector<std::string> reasons;            // when !fits
  bool timed_out = false;                      // stopped by max_steps / should_stop
  int64_t steps = 0;                           // search steps taken
  // Scheduler score: sum over requests of (8 - index of the chosen subrequest).
  int64_t score = 0;
};

// Allocates `claims` (pending; spec only is read) on the view's node, next to
// what the view's AllocatedState holds.
Result<Allocation> allocate(const NodeView& view, const std::vector<const api::ResourceClaim*>& claims,
                            const Options& options = {});

// Convenience: builds the NodeView for `node` first. `allocated` must be a state
// of `snapshot`'s devices.
Result<Allocation> allocate(const Snapshot& snapshot, const AllocatedState& allocated,
                            const std::vector<const api::ResourceClaim*>& claims, const api::Node& node,
                            const Options& options = {});

}  // namespace draplane::alloc
