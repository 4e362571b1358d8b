// One scheduling cycle: PreFilter (resolve claims), Filter per node (node
// filters, extended resources, device allocation on the shared snapshot) and
// Score. The allocator state is the cache's snapshot and per-node views, built
// once and reused by every pod until the inventory changes.
#include <spdlog/spdlog.h>

#include <chrono>

#include "alloc/node_selector.h"
#include "api/codec.h"
#include "sched/cycle_state.h"
#include "sched/fit_error.h"
#include "sched/gang.h"
#include "sched/node_filter.h"

namespace draplane::sched {
namespace {

std::string join(const std::vector<std::string>& lines, const char* sep) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : sep) + l;
  return out;
}

}  // namespace

bool Scheduler::prefilter(CycleState& cs, std::string* waiting) {
  ResolvedClaims rc = resolve_claims(cs.pod, cache_);
  if (!rc.waiting.empty()) {
    *waiting = rc.waiting;
    cs.awaiting_generated_claim = rc.awaiting_generated_claim;
    return false;
  }
  const std::string ext_name = cs.pod.status.extendedResourceClaimStatus
                                   ? cs.pod.status.extendedResourceClaimStatus->resourceClaimName
                                   : std::string();
  for (const auto& key : rc.keys) {
    const api::ResourceClaim* c = cache_.claim(key);
    if (!ext_name.empty() && c->metadata.name == ext_name) cs.extended_claim_exists = true;
    if (c->status.allocation) {
      cs.allocated.push_back(*c);
    } else {
      cs.pending.push_back(*c);
      cs.claims_signature += key + "/" + c->metadata.uid + "@" + c->metadata.resourceVersion + ";";
    }
  }
  if (!cs.extended_claim_exists) cs.extended = extended_needs(cs.pod);
  if (cs.extended.empty() && !cs.pending.empty()) {
    for (const auto& c : cs.pending) {
      cs.shape += claim_shape(c);
      cs.shape += '\n';
      cs.claim_names.push_back(c.metadata.namespace_.empty() ? c.metadata.name
                                                               : c.metadata.namespace_ + "/" + c.metadata.name);
    }
  }
  return true;
}

const std::string& Scheduler::claim_shape(const api::ResourceClaim& claim) {
  // A claim's spec is immutable: its encoding is kept by UID.
  auto it = shapes_.find(claim.metadata.uid);
  if (it != shapes_.end() && !claim.metadata.uid.empty()) return it->second;
  if (shapes_.size() >= kMaxShapeCache) shapes_.clear();
  api::ResourceClaim spec_only;
  spec_only.spec = claim.spec;
  return shapes_[claim.metadata.uid] = api::to_json(api::Object(std::move(spec_only)));
}

// `detail` was written for claims `from`; the same words for claims `to` (the
// allocator names a claim as "claim <namespace/name>" followed by ':' or ',').
std::string Scheduler::renamed(std::string detail, const std::vector<std::string>& from,
                               const std::vector<std::string>& to) {
  for (size_t i = 0; i < from.size() && i < to.size(); ++i) {
    if (from[i] == to[i]) continue;
    for (const char* end : {":", ","}) {
      const std::string a = "claim " + from[i] + end, b = "claim " + to[i] + end;
      for (size_t pos = 0; (pos = detail.find(a, pos)) != std::string::npos; pos += b.size()) detail.replace(pos, a.size(), b);
    }
  }
  return detail;
}

bool Scheduler::fit_node(CycleState& cs, const api::Node& node, NodeFit& fit, std::string* reason,
                         std::string* detail) {
  const std::string& name = node.metadata.name;
  const int on_node = cache_.pods_on_node(name);
  if (auto r = filter_node(cs.pod, node, on_node)) {
    *reason = *r;
    return false;
  }
  // Extended resources: the node's own (device plugin) count, else DRA.
  std::string mask(cs.extended.size(), '0');
  for (size_t i = 0; i < cs.extended.size(); ++i) {
    const auto& need = cs.extended[i];
    auto it = node.status.allocatable.find(need.resource);
    if (it != node.status.allocatable.end()) {
      if (cache_.extended_in_use(name, need.resource) + need.count > it->second.value()) {
        *reason = "Insufficient " + need.resource;
        return false;
      }
      continue;
    }
    if (class_for_extended(cache_.classes(), need.resource) == nullptr) {
      *reason = "Insufficient " + need.resource;
      return false;
    }
    mask[i] = '1';
  }
  // Claims allocated earlier must be usable from this node.
  for (const auto& c : cs.allocated) {
    const auto& sel = c.status.allocation->nodeSelector;
    if (!sel) continue;
    auto m = alloc::node_selector_matches(&node, *sel);
    if (!m.has_value() || !*m) {
      *reason = "resourceclaim not available on the node";
      return false;
    }
  }
  std::vector<const api::ResourceClaim*> claims;
  for (const auto& c : cs.pending) claims.push_back(&c);
  if (mask.find('1') != std::string::npos) {
    auto it = cs.extended_claims.find(mask);
    if (it == cs.extended_claims.end()) {
      std::vector<ExtendedNeed> needs;
      for (size_t i = 0; i < mask.size(); ++i) {
        if (mask[i] == '1') needs.push_back(cs.extended[i]);
      }
      std::vector<api::ContainerExtendedResourceRequest> mappings;
      api::ResourceClaim ext = build_extended_claim(cs.pod, needs, cache_.classes(), &mappings);
      ext.metadata.name = ext.metadata.generateName;  // names it in explanations; cleared on create
      it = cs.extended_claims.emplace(mask, std::move(ext)).first;
      cs.extended_mappings[mask] = std::move(mappings);
    }
    claims.push_back(&it->second);
    fit.extended_mask = mask;
  }
  fit.node = name;
  fit.free_after = cache_.free_devices(name);
  if (claims.empty()) return true;

  auto view = cache_.node_view(name);
  if (!view.has_value()) {
    *reason = view.error().message();
    return false;
  }
  // A failure remembered for this node (see fail_memo_) answers without the
  // allocator: retries of waiting pods, and pods of one shape, cost a lookup
  // per unchanged node.
  PodFailMemo& memo = *cs.memo;
  const uint64_t epoch = cache_.view_epoch(name);  // after node_view(), which may rebuild it
  if (auto m = memo.nodes.find(name); m != memo.nodes.end() && m->second.epoch == epoch &&
                                      m->second.pods_on_node == on_node) {
    if (m->second.claim_names != cs.claim_names) ++stats_.shape_memo_hits;
    *reason = kReasonCannotAllocate;
    *detail = renamed(m->second.detail, m->second.claim_names, cs.claim_names);
    return false;
  }
  auto remember = [&](const std::string& why) { memo.nodes[name] = FailMemo{epoch, on_node, why, cs.claim_names}; };
  alloc::Options opts;
  opts.policy = options_.policy;
  opts.max_steps = options_.max_steps;
  opts.share_id_seed = share_seed_;
  ++stats_.allocator_runs;
  auto a = alloc::allocate(**view, claims, opts);
  if (!a.has_value()) {
    // Broken input for this node (unknown class, CEL error, invalid pool): the
    // pod waits with the allocator's message, as upstream.
    *reason = kReasonCannotAllocate;
    *detail = a.error().message();
    remember(*detail);
    return false;
  }
  if (!a->fits) {
    *reason = kReasonCannotAllocate;
    *detail = join(a->reasons, "; ");
    if (!a->timed_out) remember(*detail);
    return false;
  }
  fit.score = a->score;
  for (const auto& r : a->results) fit.free_after -= static_cast<int>(r.devices.results.size());
  fit.results = std::move(a->results);
  return true;
}

bool Scheduler::start_cycle(const std::string& key, CycleState& cs) {
  const api::Pod* p = cache_.pod(key);
  if (p == nullptr || !is_ours_pending(*p)) return false;
  cs.pod_key = key;
  cs.pod = *p;
  return true;
}

bool Scheduler::find_node(CycleState& cs, NodeFit& best, std::string* message) {
  const auto& nodes = cache_.nodes();
  FitError fit_error(static_cast<int>(nodes.size()));
  std::string waiting;
  bool found = false;
  if (!prefilter(cs, &waiting)) {
    fit_error.set_pre_filter(waiting);
  } else {
    (void)cache_.snapshot();  // rebuilt now if stale, so the view epochs below are current
    // Pods of one claim shape share an entry; others have their own, valid
    // for their current pending claims.
    const std::string memo_key = cs.shape.empty() ? pod_memo_key(cs.pod_key) : cs.shape;
    if (fail_memo_.size() >= kMaxMemos && fail_memo_.count(memo_key) == 0) fail_memo_.clear();
    cs.memo = &fail_memo_[memo_key];
    // A shape entry's key is its claims' content; a pod's entry holds for the
    // claims (identities and versions) it was made for.
    if (cs.shape.empty() && cs.memo->claims_signature != cs.claims_signature) {
      cs.memo->claims_signature = cs.claims_signature;
      cs.memo->nodes.clear();
    }
    for (const auto& [name, node] : nodes) {
      NodeFit fit;
      std::string reason, detail;
      if (!fit_node(cs, node, fit, &reason, &detail)) {
        fit_error.add(reason, detail);
        continue;
      }
      // Higher allocator score, then fewer free devices left (packing), then name.
      if (!found || fit.score > best.score || (fit.score == best.score && fit.free_after < best.free_after)) {
        best = std::move(fit);
        found = true;
      }
    }
  }
  if (!found) *message = fit_error.message(options_.max_detail_lines);
  return found;
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
  struct Timer {
    double& total;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    ~Timer() { total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
  } timer{stats_.cycle_seconds};
  ++stats_.cycles;
  ++share_seed_;
  CycleState cs;
  if (!start_cycle(key, cs)) {
    queue_.remove(key);
    return CycleResult{Outcome::kSkipped, key, "", ""};
  }
  if (auto g = gang_of(cs.pod)) return schedule_gang(key, g->name, g->min_member);
  if (wait_for_in_flight_claim(cs)) return CycleResult{Outcome::kSkipped, key, "", "a claim's write is in flight"};
  NodeFit best;
  std::string msg;
  if (!find_node(cs, best, &msg)) {
    ++stats_.unschedulable;
    queue_.unschedulable(key, now);
    if (!cs.awaiting_generated_claim) mark_unschedulable(cs.pod, msg);
    return CycleResult{Outcome::kUnschedulable, key, "", msg};
  }
  fail_memo_.erase(pod_memo_key(key));
  cs.memo = nullptr;
  Reservation r = reserve(cs, best);
  if (options_.bind_workers > 0) {
    std::string node = best.node;
    bind_async(std::move(cs), std::move(best), std::move(r));
    return CycleResult{Outcome::kBinding, key, node, ""};
  }
  return commit(cs, best, r);
}

}  // namespace draplane::sched
