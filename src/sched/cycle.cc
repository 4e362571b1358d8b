// One scheduling cycle through the framework's extension points (framework.h):
// PreFilter, Filter per node, Score, then PostFilter when no node passed, or
// Reserve and Permit on the best node. The allocator state is the cache's
// snapshot and per-node views, built once and reused by every pod until the
// inventory changes.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>

#include "alloc/node_selector.h"
#include "common/clock.h"
#include "sched/fit_error.h"
#include "sched/scheduler.h"
#include "sched/gang.h"
#include "sched/plugins/dynamic_resources.h"
#include "sched/plugins/gang_scheduling.h"
#include "sched/plugins/preemption.h"

namespace draplane::sched {

bool Scheduler::start_cycle(const std::string& key, CycleState& cs) {
  const api::Pod* p = cache_.pod(key);
  if (p == nullptr || !is_ours_pending(*p)) return false;
  cs.pod_key = key;
  cs.pod = *p;
  return true;
}

namespace {

// The best node offered so far: the plugins' scores (framework.h), then the
// first by name.
struct Choice {
  framework::NodeFit best;
  std::vector<int64_t> best_scores, scores;
  bool found = false;
  void offer(framework::NodeFit&& fit) {
    if (found && !framework::Framework::better(scores, best_scores) &&
        !(scores == best_scores && fit.node < best.node)) {
      return;
    }
    best = std::move(fit);
    best_scores.swap(scores);
    found = true;
  }
};

}  // namespace

bool Scheduler::find_node(CycleState& cs, NodeFit& best, std::string* message, framework::NodeStatusMap* statuses) {
  const auto& nodes = cache_.nodes();
  FitError fit_error(static_cast<int>(nodes.size()));
  // Nominated pods of higher or equal priority keep their node's room (before
  // PreFilter: holding runs theirs).
  auto hold = preempt_ != nullptr ? preempt_->hold_nominated(cs.pod_key, cs.pod.spec.priority.value_or(0)) : nullptr;
  framework::Status pre = fw_->run_pre_filter(cs);
  if (!pre.ok()) {
    fit_error.set_pre_filter(pre.reason());
    *message = fit_error.message(options_.max_detail_lines);
    // As upstream: a PreFilter verdict that evictions may cure (a KAI queue
    // at its limit) is every node's, so PostFilter looks for victims.
    if (statuses != nullptr && pre.code() == framework::Code::kUnschedulable) {
      for (const auto& [name, node] : nodes) statuses->emplace_back(name, pre);
    }
    return false;
  }
  Choice choice;
  // Filter and Score on one node; its Filter status when it does not fit.
  auto try_node = [&](const std::string& name, const api::Node& node) -> framework::Status {
    framework::NodeInfo info{&node, cache_.pods_on_node(name)};
    NodeFit fit;
    fit.node = name;
    framework::Status st = fw_->run_filter(cs, info, fit);
    if (!st.ok()) return st;
    fw_->run_score(cs, info, fit, choice.scores);
    choice.offer(std::move(fit));
    return {};
  };
  // Only the chosen node's allocation is renamed for it (NodeFit::borrowed).
  cs.dra.lazy_results = true;
  // Claims allocated earlier whose node selectors name their nodes (node-local
  // devices): no other node passes DynamicResources' Filter, so those alone
  // are tried (as a PreFilterResult's node names narrow kube-scheduler's
  // pass); the passes below run only when none fits, for the per-node reasons.
  if (auto named = nodes_named_by_allocated_claims(cs)) {
    for (const std::string& name : *named) {
      if (const api::Node* node = cache_.node(name)) (void)try_node(name, *node);
    }
  }
  // The first node by name of each group of interchangeable nodes
  // (node_classes.h): the others would get the same verdict and scores, and
  // lose the tie to it, so the choice is the node by node pass's.
  if (!choice.found && use_node_groups(cs)) {
    for (const std::string* name : node_classes_->representatives()) {
      if (const api::Node* node = cache_.node(*name)) (void)try_node(*name, *node);
    }
    if (choice.found) ++stats_.node_group_cycles;
  }
  // Node by node; also when no group's first node passed, for the
  // explanation and PostFilter's per-node statuses.
  if (!choice.found) {
    for (const auto& [name, node] : nodes) {
      framework::Status st = try_node(name, node);
      if (st.ok()) continue;
      fit_error.add(st.reason(), st.detail());
      if (statuses != nullptr) statuses->emplace_back(name, std::move(st));
    }
  }
  cs.dra.lazy_results = false;
  if (!choice.found) {
    *message = fit_error.message(options_.max_detail_lines);
    return false;
  }
  best = std::move(choice.best);
  dra_->materialize(best);
  return true;
}

std::optional<std::vector<std::string>> Scheduler::nodes_named_by_allocated_claims(const CycleState& cs) const {
  std::optional<std::vector<std::string>> named;
  for (const auto& c : cs.dra.allocated) {
    const auto& sel = c.status.allocation->nodeSelector;
    if (!sel) continue;
    auto names = alloc::nodes_named_by(*sel);
    if (!names) continue;
    if (!named) {
      named = std::move(names);
      continue;
    }
    std::vector<std::string> both;
    std::set_intersection(named->begin(), named->end(), names->begin(), names->end(), std::back_inserter(both));
    named = std::move(both);
  }
  return named;
}

bool Scheduler::node_groups_serve(const CycleState& cs) {
  // What the groups leave out: node labels and names (nodeSelector, node
  // affinity), claims allocated earlier (their node selectors name nodes), and
  // extended resources a node offers itself (NodeResourcesFit checks them
  // against that node's pods, which the groups do not compare).
  if (node_classes_ == nullptr || !cs.pod.spec.nodeSelector.empty() || cs.pod.spec.affinity ||
      !cs.dra.allocated.empty()) {
    return false;
  }
  node_classes_->refresh();
  if (cs.dra.extended.empty()) return true;
  // A group's nodes have equal allocatable: where no group's first node offers
  // any of the pod's extended resources, none does, and DRA serves them all
  // from the nodes' devices, which the groups do compare.
  for (const std::string* name : node_classes_->representatives()) {
    const api::Node* n = cache_.node(*name);
    if (n == nullptr) return false;
    for (const auto& need : cs.dra.extended) {
      if (n->status.allocatable.count(need.resource) != 0) return false;
    }
  }
  return true;
}

std::optional<uint64_t> Scheduler::node_group(const CycleState& cs, const std::string& node) {
  if (!node_groups_serve(cs)) return std::nullopt;
  return node_classes_->group_of(node);
}

bool Scheduler::use_node_groups(const CycleState& cs) {
  if (!node_groups_serve(cs)) return false;
  // Mostly distinct nodes: the groups would save little and, when nothing
  // fits, the node by node pass would repeat the work.
  return node_classes_->size() * 4 <= cache_.nodes().size() * 3;
}

bool Scheduler::reserve(CycleState& cs, const NodeFit& fit, Reservation& r) {
  if (!fw_->run_reserve(cs, fit, r).ok()) return false;
  cache_.assume_bound(cs.pod_key, fit.node);
  return true;
}

void Scheduler::unreserve(CycleState& cs, const NodeFit& fit, Reservation& r) {
  fw_->run_unreserve(cs, fit, r);
  cache_.forget_bound(cs.pod_key);
}

CycleResult Scheduler::unschedulable(CycleState& cs, const std::string& message,
                                     const framework::NodeStatusMap& statuses, Clock::TimePoint now) {
  if (fw_->has_post_filter()) {
    // Preemption: victims are evicted by the plugin; the pod waits (parked)
    // for their claims to be released like any other pod.
    framework::PostFilterResult pf = fw_->run_post_filter(cs, statuses);
    if (pf.status.ok()) log_->debug("pod {}: post-filter made room on node {}", cs.pod_key, pf.nominated_node);
  }
  ++stats_.unschedulable;
  queue_.unschedulable(cs.pod_key, now);
  if (!cs.dra.awaiting_generated_claim) mark_unschedulable(cs.pod, message);
  return CycleResult{Outcome::kUnschedulable, cs.pod_key, "", message};
}

CycleResult Scheduler::schedule_one() {
  auto now = clock_.now();
  if (queue_.active_size() == 0) maybe_flush(now);  // also when idle
  auto key = queue_.pop(now);
  if (!key) return {};
  CycleResult result = cycle(*key, now);
  after_cycle(result.outcome, now);
  return result;
}

CycleResult Scheduler::cycle(const std::string& key, Clock::TimePoint now) {
  common::ScopedSeconds timer(&stats_.cycle_seconds);
  ++stats_.cycles;
  dra_->next_cycle();
  CycleState cs;
  if (!start_cycle(key, cs)) {
    queue_.remove(key);
    return CycleResult{Outcome::kSkipped, key, "", ""};
  }
  if (auto r = gang_cycle(key, cs.pod, now)) return *r;
  if (wait_for_in_flight_claim(cs)) return CycleResult{Outcome::kSkipped, key, "", "a claim's write is in flight"};
  framework::NodeFit best;
  std::string msg;
  framework::NodeStatusMap statuses;
  if (!find_node(cs, best, &msg, fw_->has_post_filter() ? &statuses : nullptr)) {
    return unschedulable(cs, msg, statuses, now);
  }
  dra_->forget_pod(key);
  cs.dra.memo = nullptr;
  Reservation r;
  if (!reserve(cs, best, r)) {
    ++stats_.retries;
    queue_.backoff(key, now);
    return CycleResult{Outcome::kRetry, key, best.node, "reserve failed"};
  }
  // Permit: a pod outside a gang's cycle is allowed at once, unless a plugin rejects it.
  if (framework::Status p = fw_->run_permit(cs, best); !p.ok()) {
    unreserve(cs, best, r);
    return unschedulable(cs, p.reason(), {}, now);
  }
  if (options_.bind_workers > 0) {
    std::string node = best.node;
    bind_async(std::move(cs), std::move(best), std::move(r));
    return CycleResult{Outcome::kBinding, key, node, ""};
  }
  return commit(cs, best, r);
}

}  // namespace draplane::sched
