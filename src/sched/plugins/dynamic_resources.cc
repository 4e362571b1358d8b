#include "sched/plugins/dynamic_resources.h"

#include "alloc/allocator.h"
#include "alloc/node_selector.h"
#include "api/codec.h"
#include "sched/cluster_cache.h"
#include "sched/fit_error.h"
#include "sched/scheduler.h"

namespace draplane::sched::plugins {
namespace {

using framework::Status;

// Whether two views of one snapshot show the same devices, counter uses and
// pools (what does not change with allocations): what device_class_of reads of
// a view, compared instead of rebuilt. Two such views built on one
// AllocatedState also show the same allocations: a pool's available counters
// come from the same consumers (the pool's devices in the node's slices and in
// the others, the same for equal candidates) and the packing order from those
// counters and the devices' uses, and the cache refreshes every view holding a
// pool when its allocations change (an incrementally refreshed view equals a
// fresh one: NodeView.AnIncrementallyRefreshedViewEqualsAFreshOne). Comparing
// their counters and packing orders too was 62% of the scheduler's time with
// 2,000 pools seen by every node: 99 views x 12,000 candidates per pod.
bool same_structure(const alloc::NodeView& a, const alloc::NodeView& b) {
  if (&a.snapshot() != &b.snapshot() || &a.allocated() != &b.allocated()) return false;
  const auto& ca = a.candidates();
  const auto& cb = b.candidates();
  if (ca.size() != cb.size() || a.pools().size() != b.pools().size() ||
      a.counter_uses().size() != b.counter_uses().size()) {
    return false;
  }
  for (size_t i = 0; i < ca.size(); ++i) {
    if (ca[i].device != cb[i].device || ca[i].pool != cb[i].pool || ca[i].node_ok != cb[i].node_ok ||
        ca[i].counters_begin != cb[i].counters_begin || ca[i].counters_end != cb[i].counters_end) {
      return false;
    }
  }
  for (size_t i = 0; i < a.counter_uses().size(); ++i) {
    if (a.counter_uses()[i].counter != b.counter_uses()[i].counter ||
        a.counter_uses()[i].amount != b.counter_uses()[i].amount) {
      return false;
    }
  }
  for (size_t i = 0; i < a.pools().size(); ++i) {
    const alloc::PoolView& p = a.pools()[i];
    const alloc::PoolView& q = b.pools()[i];
    if (p.foreign != q.foreign || p.binding_conditions != q.binding_conditions || p.incomplete != q.incomplete ||
        p.invalid != q.invalid || p.pool != q.pool || p.driver != q.driver || p.counter_names != q.counter_names ||
        p.total != q.total) {
      return false;
    }
  }
  return true;
}

}  // namespace

Status DynamicResources::pre_filter(framework::CycleState& cs) {
  auto& st = cs.dra;
  ClusterCache& cache = *h_.cache;
  ResolvedClaims rc = resolve_claims(cs.pod, cache);
  if (!rc.waiting.empty()) {
    st.awaiting_generated_claim = rc.awaiting_generated_claim;
    // No eviction creates, releases or frees a claim's reservedFor slot: no
    // victims are searched for it.
    return Status::unresolvable(rc.waiting);
  }
  const std::string ext_name = cs.pod.status.extendedResourceClaimStatus
                                   ? cs.pod.status.extendedResourceClaimStatus->resourceClaimName
                                   : std::string();
  for (size_t k = 0; k < rc.keys.size(); ++k) {
    const std::string& key = rc.keys[k];
    const api::ResourceClaim* c = cache.claim(key);
    if (!ext_name.empty() && c->metadata.name == ext_name) st.extended_claim_exists = true;
    if (c->status.allocation) {
      st.allocated.push_back(*c);
      st.allocated_consumers.push_back(rc.consumers[k]);
    } else {
      st.pending.push_back(*c);
      st.pending_consumers.push_back(rc.consumers[k]);
      st.claims_signature += key + "/" + c->metadata.uid + "@" + c->metadata.resourceVersion + ";";
    }
  }
  if (!st.extended_claim_exists) st.extended = extended_needs(cs.pod);
  for (auto& need : st.extended) need.served_by = extended_class(need.resource);
  clear_answers();  // a new pod (or gang member): answers were for other claims
  if (st.extended.empty() && !st.pending.empty()) {
    for (const auto& c : st.pending) {
      st.shape += claim_shape(c);
      st.shape += '\n';
      st.claim_names.push_back(c.metadata.namespace_.empty() ? c.metadata.name
                                                              : c.metadata.namespace_ + "/" + c.metadata.name);
    }
  }
  (void)cache.snapshot();  // rebuilt now if stale, so the view epochs Filter reads are current
  if (st.pending.empty() && st.allocated.empty() && st.extended.empty()) return Status(framework::Code::kSkip, "");
  // Pods of one claim shape share an entry; others have their own, valid
  // for their current pending claims.
  const std::string memo_key = st.shape.empty() ? pod_memo_key(cs.pod_key) : st.shape;
  if (memo_.size() >= kMaxMemos && memo_.count(memo_key) == 0) memo_.clear();
  st.memo = &memo_[memo_key];
  // A shape entry's key is its claims' content; a pod's entry holds for the
  // claims (identities and versions) it was made for.
  if (st.shape.empty() && st.memo->claims_signature != st.claims_signature) {
    st.memo->claims_signature = st.claims_signature;
    st.memo->nodes.clear();
  }
  return {};
}

const std::string& DynamicResources::claim_shape(const api::ResourceClaim& claim) {
  // A claim's spec is immutable: its encoding is kept by UID.
  auto it = shapes_.find(claim.metadata.uid);
  if (it != shapes_.end() && !claim.metadata.uid.empty()) return it->second;
  if (shapes_.size() >= kMaxShapeCache) shapes_.clear();
  // Claims made from one template have one spec: a comparison with the
  // recent specs saves encoding each new claim (a sixth of PreFilter).
  for (const auto& [spec, shape] : recent_shapes_) {
    if (spec == claim.spec) return shapes_[claim.metadata.uid] = shape;
  }
  api::ResourceClaim spec_only;
  spec_only.spec = claim.spec;
  std::string shape = api::to_json(api::Object(std::move(spec_only)));
  if (recent_shapes_.size() >= kRecentShapes) recent_shapes_.erase(recent_shapes_.begin());
  recent_shapes_.emplace_back(claim.spec, shape);
  return shapes_[claim.metadata.uid] = std::move(shape);
}

// The allocator begins each explanation (and each error about one claim)
// with "claim <namespace/name>" followed by ':' or ','.
std::vector<framework::NodeFailures::Line> DynamicResources::by_claim(const std::vector<std::string>& lines,
                                                                      const std::vector<std::string>& names) {
  std::vector<framework::NodeFailures::Line> out;
  out.reserve(lines.size());
  for (const auto& line : lines) {
    framework::NodeFailures::Line l;
    for (size_t i = 0; i < names.size() && l.claim < 0; ++i) {
      const size_t n = 6 + names[i].size();  // "claim " + name
      if (line.size() > n && line.compare(0, 6, "claim ") == 0 && line.compare(6, names[i].size(), names[i]) == 0 &&
          (line[n] == ':' || line[n] == ',')) {
        l.claim = static_cast<int>(i);
        l.text = line.substr(n);
      }
    }
    if (l.claim < 0) l.text = line;
    out.push_back(std::move(l));
  }
  return out;
}

std::string DynamicResources::render(const std::vector<framework::NodeFailures::Line>& lines,
                                     const std::vector<std::string>& names) {
  std::string out;
  for (const auto& l : lines) {
    if (!out.empty()) out += "; ";
    if (l.claim >= 0 && static_cast<size_t>(l.claim) < names.size()) {
      out += "claim ";
      out += names[l.claim];
    }
    out += l.text;
  }
  return out;
}

Status DynamicResources::filter(framework::CycleState& cs, const framework::NodeInfo& ni, framework::NodeFit& fit) {
  auto& st = cs.dra;
  ClusterCache& cache = *h_.cache;
  const api::Node& node = *ni.node;
  const std::string& name = node.metadata.name;
  // Extended resources the node does not offer itself are served by DRA
  // (NodeResourcesFit rejected those no class serves).
  std::string mask(st.extended.size(), '0');
  for (size_t i = 0; i < st.extended.size(); ++i) {
    if (node.status.allocatable.count(st.extended[i].resource) == 0) mask[i] = '1';
  }
  // Claims allocated earlier must be usable from this node.
  for (const auto& c : st.allocated) {
    const auto& sel = c.status.allocation->nodeSelector;
    if (!sel) continue;
    auto m = alloc::node_selector_matches(&node, *sel);
    if (!m.has_value() || !*m) return Status::unresolvable("resourceclaim not available on the node");
  }
  std::vector<const api::ResourceClaim*> claims;
  for (const auto& c : st.pending) claims.push_back(&c);
  if (mask.find('1') != std::string::npos) {
    auto it = st.extended_claims.find(mask);
    if (it == st.extended_claims.end()) {
      std::vector<ExtendedNeed> needs;
      for (size_t i = 0; i < mask.size(); ++i) {
        if (mask[i] == '1') needs.push_back(st.extended[i]);
      }
      std::vector<api::ContainerExtendedResourceRequest> mappings;
      api::ResourceClaim ext = build_extended_claim(cs.pod, needs, &mappings);
      ext.metadata.name = ext.metadata.generateName;  // names it in explanations; cleared on create
      it = st.extended_claims.emplace(mask, std::move(ext)).first;
      st.extended_mappings[mask] = std::move(mappings);
    }
    claims.push_back(&it->second);
    fit.extended_mask = mask;
  }
  if (claims.empty()) return {};

  auto view = cache.node_view(name);
  if (!view.has_value()) return Status::unschedulable(view.error().message());
  // A remembered failure answers without the allocator: retries of waiting
  // pods, and pods of one shape, cost a lookup per unchanged node.
  framework::NodeFailures& memo = *st.memo;
  const uint64_t epoch = cache.view_epoch(name);  // after node_view(), which may rebuild it
  if (auto m = memo.nodes.find(name);
      m != memo.nodes.end() && m->second.epoch == epoch && m->second.pods_on_node == ni.pods_on_node) {
    if (m->second.made_for != cs.pod_key) ++h_.stats->shape_memo_hits;
    return Status::unschedulable(kReasonCannotAllocate, render(m->second.lines, st.claim_names));
  }
  auto remember = [&](const std::vector<std::string>& lines) {
    memo.nodes[name] = framework::NodeFailures::Entry{epoch, ni.pods_on_node, by_claim(lines, st.claim_names), cs.pod_key};
  };
  // An equivalent node already answered for this pod?
  const DeviceClass& cls = device_class_of(name, epoch, **view);
  const uint64_t hash = cls.hash;
  uint64_t answer_key = hash;
  for (char ch : mask) answer_key = (answer_key ^ static_cast<uint8_t>(ch)) * 1099511628211ULL;
  const Answer* answer = nullptr;
  Answer computed;
  if (auto it = answers_.find(answer_key);
      hash != 0 && it != answers_.end() && it->second.mask == mask &&
      cache.view_epoch(it->second.node) == it->second.epoch &&
      (it->second.signature == cls.signature || *it->second.signature == *cls.signature) &&
      !(it->second.error && it->second.node != name)) {  // an error's message may name the other node's pool
    answer = &it->second;
    ++h_.stats->equivalent_node_hits;
  } else {
    alloc::Options opts;
    opts.policy = h_.options->policy;
    opts.max_steps = h_.options->max_steps;
    opts.share_id_seed = share_seed_;
    ++h_.stats->allocator_runs;
    auto a = alloc::allocate(**view, claims, opts);
    computed.view = *view;
    computed.node = name;
    computed.mask = mask;
    computed.epoch = epoch;
    if (!a.has_value()) {
      computed.error = true;
      computed.message = a.error().message();
    } else {
      computed.fits = a->fits;
      computed.timed_out = a->timed_out;
      computed.reasons = std::move(a->reasons);
      computed.score = a->score;
      computed.results = std::move(a->results);
      for (const auto& r : computed.results) computed.devices += static_cast<int>(r.devices.results.size());
    }
    answer = &computed;
    // An answer stays where it is for the pod's pass (NodeFit::borrowed points at it).
    if (hash != 0 && answers_.count(answer_key) == 0) {
      computed.signature = cls.signature;
      answer = &(answers_[answer_key] = std::move(computed));
    }
  }
  if (answer->error) {
    // Broken input for this node (unknown class, CEL error, invalid pool): the
    // pod waits with the allocator's message, as upstream.
    remember({answer->message});
    return Status::unschedulable(kReasonCannotAllocate, answer->message);
  }
  if (!answer->fits) {
    std::string detail;
    for (const auto& r : answer->reasons) detail += (detail.empty() ? "" : "; ") + r;
    if (!answer->timed_out) remember(answer->reasons);
    return Status::unschedulable(kReasonCannotAllocate, std::move(detail));
  }
  fit.score = answer->score;
  fit.devices_chosen = answer->devices;
  // A node of no class keeps its own answer: move it, no copy (a copy per
  // node and pod was 12% of the scheduling cycle with node-local devices).
  if (answer == &computed) {
    fit.results = std::move(computed.results);
  } else {
    fit.borrowed = &answer->results;
    fit.borrowed_from = answer->view;
    fit.borrowed_generation = answers_generation_;
    if (!st.lazy_results) materialize(fit);
  }
  return {};
}

void DynamicResources::materialize(framework::NodeFit& fit) {
  if (fit.borrowed == nullptr) return;
  const alloc::NodeView* from = fit.borrowed_from;
  fit.results = *fit.borrowed;
  fit.borrowed = nullptr;
  fit.borrowed_from = nullptr;
  const std::string& from_node = from->node().metadata.name;
  if (from_node == fit.node) return;
  auto to = h_.cache->node_view(fit.node);
  if (!to.has_value()) return;  // cannot happen: Filter just read it
  // A view the two nodes share: the same pools, and nothing in it names a node.
  if (*to == from) return;
  const auto& from_pools = from->pools();
  const auto& to_pools = (*to)->pools();
  for (auto& r : fit.results) {
    for (auto& d : r.devices.results) {
      // Equivalent views list the same pools in the same order.
      for (size_t k = 0; k < from_pools.size() && k < to_pools.size(); ++k) {
        if (from_pools[k].driver == d.driver && from_pools[k].pool == d.pool) {
          d.pool = to_pools[k].pool;
          break;
        }
      }
    }
    // The allocator's selector for node-local devices names the node.
    if (r.nodeSelector && r.nodeSelector->nodeSelectorTerms.size() == 1) {
      auto& term = r.nodeSelector->nodeSelectorTerms[0];
      if (term.matchExpressions.empty() && term.matchFields.size() == 1 &&
          term.matchFields[0].key == "metadata.name" && term.matchFields[0].values.size() == 1 &&
          term.matchFields[0].values[0] == from_node) {
        term.matchFields[0].values[0] = fit.node;
      }
    }
  }
}

const std::string& DynamicResources::extended_class(const std::string& resource) {
  ClusterCache& cache = *h_.cache;
  (void)cache.snapshot();  // rebuilt now if the classes changed: its count tells
  if (extended_classes_at_ != cache.snapshot_builds()) {
    extended_classes_.clear();
    extended_classes_at_ = cache.snapshot_builds();
  }
  auto [it, fresh] = extended_classes_.try_emplace(resource);
  if (fresh) {
    const api::DeviceClass* cls = class_for_extended(cache.classes(), resource);
    if (cls != nullptr) it->second = cls->metadata.name;
  }
  return it->second;
}

DynamicResources::Signature DynamicResources::device_signature(const std::string& node) {
  auto view = h_.cache->node_view(node);
  if (!view.has_value()) return {};
  const DeviceClass& cls = device_class_of(node, h_.cache->view_epoch(node), **view);
  if (cls.hash == 0) return {};
  return Signature{cls.signature, cls.hash};
}

const std::vector<uint64_t>& DynamicResources::device_hashes(const alloc::Snapshot& snap) {
  if (hashed_snapshot_ == h_.cache->snapshot_builds() && device_hashes_.size() == snap.devices().size()) {
    return device_hashes_;
  }
  hashed_snapshot_ = h_.cache->snapshot_builds();
  device_hashes_.assign(snap.devices().size(), 0);
  // A slice's spec without what names where it is: equal specs publish equal
  // devices, in the same order.
  std::vector<uint64_t> slice_hash(snap.slices().size(), 0);
  for (size_t s = 0; s < snap.slices().size(); ++s) {
    api::ResourceSlice spec_only;
    spec_only.spec = snap.slices()[s].spec;
    spec_only.spec.nodeName.reset();
    spec_only.spec.pool.name.clear();
    spec_only.spec.pool.generation = 0;
    spec_only.spec.pool.resourceSliceCount = 0;
    slice_hash[s] = std::hash<std::string>()(api::to_json(api::Object(std::move(spec_only))));
  }
  for (size_t d = 0; d < snap.devices().size(); ++d) {
    const auto& e = snap.devices()[d];
    device_hashes_[d] = (slice_hash[e.slice] ^ (e.index * 0x9E3779B97F4A7C15ULL)) * 1099511628211ULL;
  }
  return device_hashes_;
}

const DynamicResources::DeviceClass& DynamicResources::device_class_of(const std::string& node, uint64_t epoch,
                                                                       const alloc::NodeView& view) {
  DeviceClass& k = device_classes_[node];
  if (k.view == &view && k.epoch == epoch && epoch != 0) return k;
  k.view = &view;
  k.epoch = epoch;
  k.signature.reset();
  k.hash = 0;
  // Shareable devices: share IDs are drawn per device, answers are not alike.
  if (view.any_invalid() || view.any_incomplete() || view.any_shareable()) return k;
  if (const uint64_t generation = h_.cache->views_generation(); generation != made_generation_) {
    made_.clear();
    made_generation_ = generation;
  }
  for (const Made& m : made_) {
    if (m.view == &view) {  // a view nodes share (ClusterCache::node_view), made for another of them
      k.signature = m.signature;
      k.hash = m.hash;
      return k;
    }
    // Structure is compared once per pair of views (until any view is rebuilt).
    const int64_t builds = h_.cache->view_builds();
    bool structural = k.twin_of == &view && k.twin == m.view && k.twin_builds == builds;
    if (!structural && same_structure(*m.view, view)) {
      k.twin_of = &view;
      k.twin = m.view;
      k.twin_builds = builds;
      structural = true;
    }
    if (structural) {
      k.signature = m.signature;
      k.hash = m.hash;
      return k;
    }
  }
  const alloc::Snapshot& snap = view.snapshot();
  if (view.candidates().size() > h_.options->max_signature_candidates) {
    // A token for this view's content, new in each views generation, which
    // its structural twins share (the loop above): grouping this node with a
    // node of another structure and equal content is given up; no node is
    // grouped with one it differs from.
    ++tokens_;
    k.signature = std::make_shared<const std::vector<uint64_t>>(std::vector<uint64_t>{~uint64_t{0}, tokens_});
    k.hash = (tokens_ * 0x9E3779B97F4A7C15ULL) | 1;
    if (made_.size() < kMaxMade) made_.push_back(Made{&view, k.signature, k.hash});
    return k;
  }
  const auto& content = device_hashes(snap);
  const alloc::AllocatedState& allocated = view.allocated();
  auto built = std::make_shared<std::vector<uint64_t>>();
  std::vector<uint64_t>& sig = *built;
  sig.reserve(view.candidates().size() * 6 + view.pools().size() * 4);
  auto add128 = [&sig](__int128 v) {
    sig.push_back(static_cast<uint64_t>(v));
    sig.push_back(static_cast<uint64_t>(v >> 64));
  };
  const std::hash<std::string> text;
  for (const alloc::Candidate& c : view.candidates()) {
    sig.insert(sig.end(), {content[c.device], c.pool, c.node_ok ? 1u : 2u, c.counters_end - c.counters_begin});
    for (uint32_t u = c.counters_begin; u < c.counters_end; ++u) {
      sig.push_back(view.counter_uses()[u].counter);
      add128(view.counter_uses()[u].amount);
    }
    const alloc::AllocatedState::InUse* use = allocated.in_use(snap.devices()[c.device].key);
    if (use == nullptr) {
      sig.push_back(8);
      continue;
    }
    sig.push_back((use->dedicated ? 1 : 0) | (use->shared ? 2 : 0) | (use->has_capacity ? 4 : 0));
    sig.push_back(use->capacity.size());
    for (const auto& [capacity, amount] : use->capacity) {
      sig.push_back(text(capacity));
      add128(amount);
    }
  }
  for (const alloc::PoolView& p : view.pools()) {
    sig.insert(sig.end(), {text(p.driver), (p.foreign ? 1u : 0u) | (p.binding_conditions ? 2u : 0u) |
                                               (p.overdrawn ? 4u : 0u),
                           p.counter_names.size()});
    for (size_t i = 0; i < p.counter_names.size(); ++i) {
      sig.push_back(text(p.counter_names[i]));
      add128(p.total[i]);
      add128(p.available[i]);
    }
  }
  sig.insert(sig.end(), view.packing_order().begin(), view.packing_order().end());
  uint64_t h = 1469598103934665603ULL;
  for (uint64_t v : sig) h = (h ^ v) * 1099511628211ULL;
  k.hash = h == 0 ? 1 : h;
  k.signature = std::move(built);
  if (made_.size() < kMaxMade) made_.push_back(Made{&view, k.signature, k.hash});
  return k;
}

int64_t DynamicResources::score(const framework::CycleState&, const framework::NodeInfo&,
                                const framework::NodeFit& fit) {
  return fit.score;
}

Status DynamicResources::reserve(framework::CycleState& cs, const framework::NodeFit& fit,
                                 framework::Reservation& r) {
  const api::Pod& pod = cs.pod;
  ClusterCache& cache = *h_.cache;
  for (size_t i = 0; i < cs.dra.pending.size(); ++i) {
    framework::ClaimWrite w{cs.dra.pending[i], true, false, cs.dra.pending_consumers[i]};
    w.claim.status.allocation = fit.results[i];
    w.claim.status.reservedFor.push_back(w.consumer);
    r.writes.push_back(std::move(w));
  }
  for (size_t i = 0; i < cs.dra.allocated.size(); ++i) {
    const api::ResourceClaim& c = cs.dra.allocated[i];
    // In use by the pod already, or by its PodGroup (an earlier member).
    if (api::reserved_for_pod_or_group(c, pod)) continue;
    framework::ClaimWrite w{c, false, false, cs.dra.allocated_consumers[i]};
    w.claim.status.reservedFor.push_back(w.consumer);
    r.writes.push_back(std::move(w));
  }
  clear_answers();  // the cache changes: answers no longer hold
  // From now on the next cycles see these devices taken. An empty
  // resourceVersion keeps an assumption until forgotten or replaced when the
  // binding cycle's writes land.
  for (const auto& w : r.writes) {
    api::ResourceClaim assumed = w.claim;
    assumed.metadata.resourceVersion.clear();
    r.reserved_keys.push_back(object_key(assumed.metadata));
    cache.assume_claim(std::move(assumed));
  }
  // The extended-resource claim does not exist yet: hold its devices under a
  // placeholder name until it is created.
  if (fit.extended_mask.find('1') != std::string::npos) {
    api::ResourceClaim placeholder = cs.dra.extended_claims.at(fit.extended_mask);
    placeholder.metadata.name = placeholder.metadata.generateName + "reserved-" + pod.metadata.uid;
    placeholder.status.allocation = fit.results.back();
    r.extended_placeholder = object_key(placeholder.metadata);
    r.reserved_keys.push_back(r.extended_placeholder);
    cache.assume_claim(std::move(placeholder));
  }
  return {};
}

void DynamicResources::unreserve(framework::CycleState&, const framework::NodeFit&, framework::Reservation& r) {
  clear_answers();
  for (const auto& k : r.reserved_keys) h_.cache->forget_claim(k);
}

}  // namespace draplane::sched::plugins
