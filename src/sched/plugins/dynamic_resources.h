// DynamicResources (kube-scheduler's plugin of that name): PreFilter resolves
// the pod's claims and extended resources served by DRA; Filter checks that
// allocated claims suit the node and runs the allocator for the pending ones
// on the cache's shared snapshot; Score is the allocator's firstAvailable
// score; Reserve assumes the claims (allocation + reservedFor) in the cache.
// The writes are the binding cycle's (bind.cc, PreBind).
//
// Remembered failures: an allocation that failed on a node is not retried
// while the node's view epoch (ClusterCache::view_epoch: labels, allocations
// in its pools), its pod count and the pending claims are unchanged, so a
// retry after a device freed on one node runs the allocator there only. They
// are kept per claim shape (DynamicResourcesState::shape), so a node where
// one pod of a template failed answers for the next one too, and per pod for
// pods without a shape. An explanation is stored keyed by the index of the
// claim it is about (not as text naming that claim), and is written out with
// the names of the claims of the pod that reads it.
//
// Thread-safety: scheduling thread only.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "alloc/node_view.h"
#include "sched/framework.h"

namespace draplane::sched::framework {

struct NodeFailures {
  // One explanation line: about pending claim `claim` (its text follows
  // "claim <namespace/name>"), or, with claim -1, the whole line.
  struct Line {
    int claim = -1;
    std::string text;
  };
  struct Entry {
    uint64_t epoch = 0;
    int pods_on_node = 0;
    std::vector<Line> lines;
    std::string made_for;  // the pod it was made for (statistics: hits for other pods)
  };
  std::string claims_signature;  // per-pod entries: of the claims they hold for
  std::unordered_map<std::string, Entry> nodes;
};

}  // namespace draplane::sched::framework

namespace draplane::sched::plugins {

class DynamicResources final : public framework::PreFilterPlugin,
                               public framework::FilterPlugin,
                               public framework::ScorePlugin,
                               public framework::ReservePlugin {
 public:
  static constexpr std::string_view kName = "DynamicResources";
  explicit DynamicResources(framework::Handle handle) : h_(handle) {}
  std::string_view name() const override { return kName; }

  framework::Status pre_filter(framework::CycleState& state) override;
  framework::Status filter(framework::CycleState& state, const framework::NodeInfo& node,
                           framework::NodeFit& fit) override;
  int64_t score(const framework::CycleState& state, const framework::NodeInfo& node,
                const framework::NodeFit& fit) override;
  framework::Status reserve(framework::CycleState& state, const framework::NodeFit& fit,
                            framework::Reservation& r) override;
  void unreserve(framework::CycleState& state, const framework::NodeFit& fit, framework::Reservation& r) override;

  // A new cycle: shareIDs of consumable devices come from a fresh seed.
  void next_cycle() {
    ++share_seed_;
    clear_answers();
  }
  // The pod's own remembered failures are void (it changed, was placed or left).
  void forget_pod(const std::string& pod_key) { memo_.erase(pod_memo_key(pod_key)); }

 private:
  static std::string pod_memo_key(const std::string& pod_key) { return "pod:" + pod_key; }
  const std::string& claim_shape(const api::ResourceClaim& claim);
  // The explanation lines of `text` (about the claims `names`), keyed by claim index.
  static std::vector<framework::NodeFailures::Line> by_claim(const std::vector<std::string>& lines,
                                                             const std::vector<std::string>& names);
  static std::string render(const std::vector<framework::NodeFailures::Line>& lines,
                            const std::vector<std::string>& names);

  // Node equivalence classes: nodes whose views are the same up to names --
  // devices of equal content (everything the allocator reads but the node and
  // pool names) in the same search order, in the same allocation state, in
  // pools of the same state and counters -- get the same allocator answer for
  // the same claims, up to those names: results computed on one are renamed
  // for the other (materialize). Nodes with node-local devices form classes
  // too, so on a cluster of identical nodes the allocator runs once per pod
  // and state instead of once per node. Left out (hash 0, each node its own
  // answer): views with invalid or incomplete pools (their messages name
  // pools) and views with shareable devices (share IDs are drawn per device).
  // Within one pod's Filter pass the first node of a class answers for the rest.
  // A view's class: what the allocator reads of it apart from names, as one
  // list of numbers (device content and allocation state per candidate, pool
  // state and counters, packing order; strings and device contents enter as
  // 64-bit hashes). Equal lists, equal answers up to names. Computed once per
  // view and epoch; `hash` 0 when the view forms no class.
  struct DeviceClass {
    const alloc::NodeView* view = nullptr;
    uint64_t epoch = 0;  // ClusterCache::view_epoch when computed
    // Shared, never changed once made (a new one per computation): answers
    // and node groups hold it without copying it (100 nodes seeing 2,000
    // shared pools copied 100 signatures of ~100k entries each per cycle).
    std::shared_ptr<const std::vector<uint64_t>> signature;
    uint64_t hash = 0;
    // A view found structurally equal to this node's view `twin_of` (same
    // devices, counter uses and pools), valid while no view was rebuilt
    // (ClusterCache::view_builds() == twin_builds).
    const alloc::NodeView* twin_of = nullptr;
    const alloc::NodeView* twin = nullptr;
    int64_t twin_builds = -1;
  };
  struct Answer {
    const alloc::NodeView* view = nullptr;  // the node that computed it
    std::string node;
    std::string mask;    // extended mask it was computed for
    uint64_t epoch = 0;  // its view epoch then: an allocation in its pools since voids the answer
    std::shared_ptr<const std::vector<uint64_t>> signature;  // of that view
    bool error = false, fits = false, timed_out = false;
    std::string message;  // error
    std::vector<std::string> reasons;
    int64_t score = 0;
    int devices = 0;
    std::vector<api::AllocationResult> results;
  };
  const DeviceClass& device_class_of(const std::string& node, uint64_t epoch, const alloc::NodeView& view);
  // The content of each device of the snapshot, without node and pool names.
  const std::vector<uint64_t>& device_hashes(const alloc::Snapshot& snap);
  std::unordered_map<std::string, DeviceClass> device_classes_;  // by node
  // Signatures made while the cache's views are unchanged (views_generation),
  // with the view each was made from: a node whose view has the same content
  // (nodes that see only the same shared pools) takes one instead of making
  // its own (100 nodes seeing 2,000 pools made 100 equal signatures a cycle).
  struct Made {
    const alloc::NodeView* view = nullptr;
    std::shared_ptr<const std::vector<uint64_t>> signature;
    uint64_t hash = 0;
  };
  std::vector<Made> made_;
  uint64_t tokens_ = 0;  // signature tokens made (views above max_signature_candidates)
  uint64_t made_generation_ = ~uint64_t{0};
  static constexpr size_t kMaxMade = 4;
  std::unordered_map<uint64_t, Answer> answers_;  // by hash and extended mask; cleared per pod
  uint64_t answers_generation_ = 1;                // counts clear_answers()
  void clear_answers() {
    answers_.clear();
    ++answers_generation_;
  }
  std::vector<uint64_t> device_hashes_;
  int64_t hashed_snapshot_ = -1;  // ClusterCache::snapshot_builds() of device_hashes_

 public:
  // Makes fit.results of what Filter borrowed (NodeFit::borrowed), with the
  // pools and node of the node that computed them renamed to fit.node's.
  void materialize(framework::NodeFit& fit);
  // For the scheduler's node groups (sched/node_classes.h): the signature of
  // the node's device class as above and its hash; null when it forms none
  // (or its view is broken).
  struct Signature {
    std::shared_ptr<const std::vector<uint64_t>> values;
    uint64_t hash = 0;
    bool operator==(const Signature& o) const {
      return hash == o.hash && (values == o.values || (values && o.values && *values == *o.values));
    }
  };
  Signature device_signature(const std::string& node);

 private:
  // The class serving extended resource `resource` (class_for_extended), empty
  // when none; remembered until the inventory changes (a scan of every class
  // per pod was 40% of a cycle with 2,500 classes).
  const std::string& extended_class(const std::string& resource);

  framework::Handle h_;
  uint64_t share_seed_ = 1;
  std::unordered_map<std::string, std::string> extended_classes_;
  int64_t extended_classes_at_ = -1;  // ClusterCache::snapshot_builds() they are for
  std::map<std::string, framework::NodeFailures> memo_;  // by shape or pod_memo_key
  static constexpr size_t kMaxMemos = 4096;              // entries kept (all cleared beyond)
  // Claim UID -> its spec's encoding (part of a shape).
  std::unordered_map<std::string, std::string> shapes_;
  std::vector<std::pair<api::ResourceClaimSpec, std::string>> recent_shapes_;  // spec -> its encoding
  static constexpr size_t kRecentShapes = 8;
  static constexpr size_t kMaxShapeCache = 16384;
};

}  // namespace draplane::sched::plugins
