#include "alloc/node_view.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "alloc/attribute_match.h"
#include "alloc/node_selector.h"

namespace draplane::alloc {
namespace {

using PoolKey = std::pair<std::string, std::string>;

bool is_allocated(const AllocatedState& a, uint32_t device) {
  return a.in_use(a.snapshot().devices()[device].key) != nullptr;
}

// available = total minus what allocated devices of the pool consume (a shared
// device once); overdrawn when any counter goes negative.
void count_consumption(const AllocatedState& a, PoolView& p) {
  p.available = p.total;
  for (const auto& c : p.consumers) {
    if (!is_allocated(a, c.device)) continue;
    for (uint32_t k = c.begin; k < c.end; ++k) p.available[p.consumer_uses[k].counter] -= p.consumer_uses[k].amount;
  }
  p.overdrawn = false;
  for (__int128 v : p.available) p.overdrawn = p.overdrawn || v < 0;
}

// Builds one complete pool from the node's slices (and, when the node's slices
// alone were not complete, every slice of the pool at that generation).
void build_pool(const AllocatedState& a, PoolView& p, std::vector<uint32_t> targeting,
                const std::vector<uint32_t>* all_at_generation) {
  const Snapshot& s = a.snapshot();
  const auto& slices = s.slices();
  auto by_name = [&](uint32_t a, uint32_t b) { return slices[a].metadata.name < slices[b].metadata.name; };
  std::stable_sort(targeting.begin(), targeting.end(), by_name);
  std::vector<uint32_t> counter_slices;
  for (uint32_t si : targeting) {
    if (!slices[si].spec.sharedCounters.empty()) {
      counter_slices.push_back(si);
    } else {
      p.slices.push_back(si);
    }
  }
  if (all_at_generation != nullptr && all_at_generation->size() > targeting.size()) {
    std::set<std::string> names;
    for (uint32_t si : targeting) names.insert(slices[si].metadata.name);
    for (uint32_t si : *all_at_generation) {
      if (names.count(slices[si].metadata.name)) continue;
      if (!slices[si].spec.sharedCounters.empty()) {
        counter_slices.push_back(si);
      } else {
        p.other_slices.push_back(si);
      }
    }
  }
  auto invalid = [&](std::string reason) {
    p.invalid = true;
    p.invalid_reason = std::move(reason);
    p.slices.clear();
    p.other_slices.clear();
  };
  std::set<std::string> device_names;
  for (uint32_t si : p.slices) {
    for (const auto& d : slices[si].spec.devices) {
      if (!device_names.insert(d.name).second) return invalid("duplicate device name " + d.name);
    }
  }
  // Counter sets: name -> (first flat index, counter name -> flat index).
  std::map<std::string, std::map<std::string, uint32_t>> sets;
  for (uint32_t si : counter_slices) {
    for (const auto& cs : slices[si].spec.sharedCounters) {
      if (sets.count(cs.name)) return invalid("duplicate counter set name " + cs.name);
      auto& idx = sets[cs.name];
      const auto set_index = static_cast<uint32_t>(sets.size() - 1);
      for (const auto& [cname, c] : cs.counters) {
        idx[cname] = static_cast<uint32_t>(p.available.size());
        p.available.push_back(c.value.nanos());
        p.total.push_back(c.value.nanos());
        p.counter_names.push_back(cs.name + "/" + cname);
        p.counter_set.push_back(set_index);
      }
    }
  }
  for (const auto* list : {&p.slices, &p.other_slices}) {
    for (uint32_t si : *list) {
      for (const auto& d : slices[si].spec.devices) {
        for (const auto& use : d.consumesCounters) {
          auto it = sets.find(use.counterSet);
          if (it == sets.end()) return invalid("counter set " + use.counterSet + " not found");
          for (const auto& [cname, c] : use.counters) {
            if (!it->second.count(cname)) {
              return invalid("counter " + cname + " not found in counter set " + use.counterSet);
            }
          }
        }
      }
    }
  }
  // Every device of the pool that consumes counters, with what it consumes, so
  // that refresh_allocations() can recount without the names.
  for (const auto* list : {&p.slices, &p.other_slices}) {
    for (uint32_t si : *list) {
      for (uint32_t di = 0; di < slices[si].spec.devices.size(); ++di) {
        const auto& uses = slices[si].spec.devices[di].consumesCounters;
        if (uses.empty()) continue;
        PoolView::Consumer c;
        c.device = s.first_device(si) + di;
        c.begin = static_cast<uint32_t>(p.consumer_uses.size());
        for (const auto& use : uses) {
          const auto& idx = sets[use.counterSet];
          for (const auto& [cname, q] : use.counters) p.consumer_uses.push_back(CounterUse{idx.at(cname), q.value.nanos()});
        }
        c.end = static_cast<uint32_t>(p.consumer_uses.size());
        p.consumers.push_back(c);
      }
    }
  }
  count_consumption(a, p);
  for (uint32_t si : p.slices) {
    for (const auto& d : slices[si].spec.devices) {
      p.binding_conditions = p.binding_conditions || !d.bindingConditions.empty();
    }
  }
}

// One pool at the newest generation seen among the slices relevant to the node
// (`gen`, `targeting`): built from those slices when they are the whole pool,
// else from every slice of the pool at that generation. False when a newer
// generation exists elsewhere (the pool is ignored); incomplete when slices are
// missing.
bool gather_pool(const AllocatedState& a, PoolView& p, int64_t gen, const std::vector<uint32_t>& targeting) {
  const Snapshot& s = a.snapshot();
  const auto& slices = s.slices();
  const int64_t want = slices[targeting.front()].spec.pool.resourceSliceCount;
  if (static_cast<int64_t>(targeting.size()) == want) {
    build_pool(a, p, targeting, nullptr);
    return true;
  }
  std::vector<uint32_t> all;
  for (uint32_t si : s.slices_of_pool(p.driver, p.pool)) {
    int64_t g = slices[si].spec.pool.generation;
    if (g > gen) return false;
    if (g == gen) all.push_back(si);
  }
  if (static_cast<int64_t>(all.size()) != want) {
    p.incomplete = true;
  } else {
    build_pool(a, p, targeting, &all);
  }
  return true;
}

}  // namespace

namespace {
std::atomic<uint64_t> pool_versions{0};

// Whether `slice` offers `node` anything (upstream GatherPools): counter sets
// count for every node (Kubernetes 1.36), other slices by nodeName, allNodes
// or nodeSelector, or by any device's own selection. Errors as upstream's.
Result<bool> targets_node(const api::ResourceSlice& slice, const api::Node& node) {
  const auto& spec = slice.spec;
  const std::string& node_name = spec.nodeName.value_or("");
  const bool all_nodes = spec.allNodes.value_or(false);
  if (!spec.sharedCounters.empty()) return true;
  if (!node_name.empty() || all_nodes || spec.nodeSelector) {
    auto m = node_target_matches(&node, node_name, all_nodes, spec.nodeSelector ? &*spec.nodeSelector : nullptr);
    if (!m) {
      return invalid_error("failed to perform node selection for slice " + slice.metadata.name + ": " +
                           m.error().message());
    }
    return *m;
  }
  if (!spec.perDeviceNodeSelection.value_or(false)) return false;
  for (const auto& d : spec.devices) {
    auto m = node_target_matches(&node, d.nodeName.value_or(""), d.allNodes.value_or(false),
                                 d.nodeSelector ? &*d.nodeSelector : nullptr);
    if (!m) {
      return invalid_error("failed to perform node selection for device " + d.name + " in slice " +
                           slice.metadata.name + ": " + m.error().message());
    }
    if (*m) return true;
  }
  return false;
}

// An allocation of `d` gets a node selector naming its node (results.cc).
bool names_a_node(const api::Device& d, bool per_device) {
  return d.bindsToNode.value_or(false) || (per_device && !d.nodeName.value_or("").empty());
}
}  // namespace

void NodeView::refresh_allocations() {
  for (auto& p : pools_) {
    if (!p.foreign && !p.invalid && !p.incomplete && !p.total.empty()) count_consumption(*allocated_, p);
  }
  for (auto& v : pool_versions_) v = ++pool_versions;
  mark_blocked(0, static_cast<uint32_t>(candidates_.size()));
  order_packing();
}

namespace {
void set_bit(std::vector<uint64_t>& bits, uint32_t i, bool on) {
  if (on) {
    bits[i >> 6] |= uint64_t{1} << (i & 63);
  } else {
    bits[i >> 6] &= ~(uint64_t{1} << (i & 63));
  }
}
}  // namespace

uint32_t NodeView::next_set(const std::vector<uint64_t>& bits, uint32_t from) const {
  const auto n = static_cast<uint32_t>(candidates_.size());
  if (from >= n) return n;
  size_t w = from >> 6;
  uint64_t word = bits[w] & (~uint64_t{0} << (from & 63));
  while (word == 0) {
    if (++w == bits.size()) return n;
    word = bits[w];
  }
  return std::min<uint32_t>(n, static_cast<uint32_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(word))));
}

void NodeView::mark_blocked(uint32_t first, uint32_t last) {
  blocked_.resize(candidates_.size());
  unblocked_.resize((candidates_.size() + 63) / 64);
  // Positions are set here while the packing order stands; order_packing()
  // sets them all when it changes.
  const bool positions = packing_position_.size() == candidates_.size();
  const Snapshot& s = *snapshot_;
  for (uint32_t c = first; c < last; ++c) {
    const Candidate& cand = candidates_[c];
    const auto* u = allocated_->in_use(s.devices()[cand.device].key);
    uint8_t b = (u != nullptr && u->dedicated) ? kTaken : 0;
    // A shareable device's counters are consumed once, by its first share:
    // whether that happened depends on the search, which checks.
    if (cand.counters_begin != cand.counters_end && !s.device(cand.device).allowMultipleAllocations.value_or(false)) {
      const PoolView& p = pools_[cand.pool];
      bool fits = !p.overdrawn;
      for (uint32_t k = cand.counters_begin; k < cand.counters_end && fits; ++k) {
        fits = counter_uses_[k].amount <= p.available[counter_uses_[k].counter];
      }
      if (!fits) b |= kNoCounters;
    }
    blocked_[c] = b;
    set_bit(unblocked_, c, b == 0);
    if (positions) set_bit(unblocked_positions_, packing_position_[c], b == 0);
  }
}

namespace {

// Per counter set of the pool: whether any of its counters is below its value
// (what order_packing ranks a partitionable candidate by).
std::vector<uint8_t> sets_used(const PoolView& p) {
  std::vector<uint8_t> used(p.counter_set.empty() ? 0 : p.counter_set.back() + 1, 0);
  for (size_t i = 0; i < p.counter_set.size(); ++i) used[p.counter_set[i]] |= p.available[i] < p.total[i];
  return used;
}

}  // namespace

std::vector<uint32_t> NodeView::pools_named(const std::set<std::string>& pool_ids) const {
  std::vector<uint32_t> found;
  for (const auto& id : pool_ids) {
    // "driver/pool": a driver name has no '/', a pool name may.
    const auto slash = id.find('/');
    if (slash == std::string::npos) continue;
    const std::string_view driver(id.data(), slash), pool(id.data() + slash + 1, id.size() - slash - 1);
    auto it = std::lower_bound(by_id_.begin(), by_id_.end(), std::pair{driver, pool},
                               [this](uint32_t pi, const std::pair<std::string_view, std::string_view>& key) {
                                 const PoolView& p = pools_[pi];
                                 return std::pair<std::string_view, std::string_view>{p.driver, p.pool} < key;
                               });
    if (it != by_id_.end() && pools_[*it].driver == driver && pools_[*it].pool == pool) found.push_back(*it);
  }
  return found;
}

std::vector<uint32_t> NodeView::refresh_allocations(const std::set<std::string>& pool_ids) {
  // The pools are found through the sorted index, and only their candidates
  // are looked at: with thousands of pools visible from every node, scanning
  // every pool and candidate of every view after each pod was most of a cycle.
  const std::vector<uint32_t> changed = pools_named(pool_ids);
  bool reorder = false;
  for (uint32_t pi : changed) {
    PoolView& p = pools_[pi];
    if (!p.foreign && !p.invalid && !p.incomplete && !p.total.empty()) {
      std::vector<uint8_t> before = sets_used(p);
      count_consumption(*allocated_, p);
      reorder = reorder || sets_used(p) != before;
    }
    mark_blocked(pool_ranges_[pi].first, pool_ranges_[pi].second);
    pool_versions_[pi] = ++pool_versions;
  }
  // The packing order changes only when a candidate's rank does: a counter set
  // becoming partly used or free, or a shareable device of a changed pool
  // (its shares are not counters). Re-sorting every view on every allocation
  // was most of a cycle with thousands of pools visible from every node.
  for (uint32_t pi : changed) {
    for (uint32_t c = pool_ranges_[pi].first; c < pool_ranges_[pi].second && !reorder; ++c) {
      reorder = snapshot_->device(candidates_[c].device).allowMultipleAllocations.value_or(false);
    }
  }
  if (reorder) order_packing();
  return changed;
}

void NodeView::order_packing() {
  // Static preference per candidate (lower first), ties in upstream order:
  // shareable devices already shared, then devices of partly used counter
  // sets, then plain devices, then untouched shareable ones and untouched
  // partitionable capacity (keep whole GPUs free).
  const Snapshot& s = *snapshot_;
  // Per pool and flat counter: whether the counter's set is partly used (any
  // of its counters below the set value). A set, not just the counters a
  // candidate consumes: placements of one GPU may share no counter but the GPU.
  std::vector<std::vector<uint8_t>> set_used(pools_.size());  // per pool and counter set
  for (size_t pi = 0; pi < pools_.size(); ++pi) {
    const auto& p = pools_[pi];
    if (p.counter_set.empty()) continue;
    set_used[pi].assign(p.counter_set.back() + 1, 0);
    for (size_t i = 0; i < p.counter_set.size(); ++i) set_used[pi][p.counter_set[i]] |= p.available[i] < p.total[i];
  }
  std::vector<int> score(candidates_.size(), 2);
  for (uint32_t c = 0; c < candidates_.size(); ++c) {
    const auto& d = s.device(candidates_[c].device);
    const auto* u = allocated_->in_use(s.devices()[candidates_[c].device].key);
    bool multi = d.allowMultipleAllocations.value_or(false);
    if (multi) {
      score[c] = (u != nullptr && (u->shared || u->has_capacity)) ? 0 : 3;
    } else if (candidates_[c].counters_begin != candidates_[c].counters_end) {
      bool partly_used = false;
      for (uint32_t k = candidates_[c].counters_begin; k < candidates_[c].counters_end; ++k) {
        const uint32_t pool = candidates_[c].pool;
        partly_used = partly_used || set_used[pool][pools_[pool].counter_set[counter_uses_[k].counter]];
      }
      score[c] = partly_used ? 1 : 4;
    }
  }
  packing_order_.resize(candidates_.size());
  for (uint32_t c = 0; c < candidates_.size(); ++c) packing_order_[c] = c;
  std::stable_sort(packing_order_.begin(), packing_order_.end(),
                   [&](uint32_t a, uint32_t b) { return score[a] < score[b]; });
  packing_position_.resize(candidates_.size());
  unblocked_positions_.assign((candidates_.size() + 63) / 64, 0);
  for (uint32_t pos = 0; pos < packing_order_.size(); ++pos) {
    packing_position_[packing_order_[pos]] = pos;
    if (blocked_[packing_order_[pos]] == 0) set_bit(unblocked_positions_, pos, true);
  }
}

struct NodeView::AttributeIndex {
  struct ByValue {
    std::unordered_map<std::string, std::vector<uint32_t>> candidates;  // by value_key
    bool complete = true;  // every candidate's value has a key
  };
  std::mutex mu;
  std::map<std::string, ByValue> by_name;
};

const std::vector<uint32_t>* NodeView::candidates_with(const std::string& attribute, const std::string& key) const {
  static const std::vector<uint32_t> kNone;
  if (key.empty()) return nullptr;
  std::lock_guard<std::mutex> lock(attribute_index_->mu);
  auto [it, fresh] = attribute_index_->by_name.try_emplace(attribute);
  AttributeIndex::ByValue& index = it->second;
  if (fresh) {
    const Snapshot& s = *snapshot_;
    for (uint32_t c = 0; c < candidates_.size(); ++c) {
      const uint32_t d = candidates_[c].device;
      const api::DeviceAttribute* a = lookup_attribute(s.device(d), s.slice_of(d).spec.driver, attribute);
      if (a == nullptr) continue;
      std::string k = value_key(*a);
      if (k.empty()) index.complete = false;
      index.candidates[std::move(k)].push_back(c);
    }
  }
  if (!index.complete) return nullptr;
  auto v = index.candidates.find(key);
  return v == index.candidates.end() ? &kNone : &v->second;
}

Result<NodeView> NodeView::build(const Snapshot& snapshot, const AllocatedState& allocated, const api::Node& node,
                                 ForeignPoolStates* foreign) {
  // Identities are dense per snapshot: another snapshot's state would silently
  // mark the wrong devices in use.
  if (&allocated.snapshot() != &snapshot) return internal_error("allocated state belongs to another snapshot");
  NodeView v;
  v.snapshot_ = &snapshot;
  v.allocated_ = &allocated;
  v.node_ = &node;
  const auto& slices = snapshot.slices();
  // Per pool: newest generation seen among the node's slices, and those slices.
  std::map<PoolKey, std::pair<int64_t, std::vector<uint32_t>>> pools;
  auto consider = [&](uint32_t si) -> Result<void> {
    const auto& spec = slices[si].spec;
    ASSIGN_OR_RETURN(bool relevant, targets_node(slices[si], node));
    if (!relevant) return {};
    auto& entry = pools[{spec.driver, spec.pool.name}];
    if (entry.second.empty() || spec.pool.generation > entry.first) {
      entry.first = spec.pool.generation;
      entry.second.assign(1, si);
    } else if (spec.pool.generation == entry.first) {
      entry.second.push_back(si);
    }
    return {};
  };
  for (uint32_t si : snapshot.slices_with_node_name(node.metadata.name)) {
    v.node_independent_ = false;
    RETURN_IF_ERROR(consider(si));
  }
  for (uint32_t si : snapshot.slices_without_node_name()) RETURN_IF_ERROR(consider(si));

  std::vector<PoolView> normal, with_conditions;
  for (auto& [key, entry] : pools) {
    PoolView p;
    p.driver = key.first;
    p.pool = key.second;
    bool offers_devices = false;
    for (uint32_t si : entry.second) offers_devices = offers_devices || slices[si].spec.sharedCounters.empty();
    if (offers_devices) {
      if (!gather_pool(allocated, p, entry.first, entry.second)) continue;
    } else {
      // Only the pool's state matters here (see ForeignPoolStates).
      p.foreign = true;
      auto cached = foreign != nullptr ? foreign->states_.find(key) : ForeignPoolStates::Map::iterator();
      ForeignPoolStates::State st;
      if (foreign != nullptr && cached != foreign->states_.end()) {
        st = cached->second;
      } else {
        PoolView full;
        full.driver = p.driver;
        full.pool = p.pool;
        st.obsolete = !gather_pool(allocated, full, entry.first, entry.second);
        st.incomplete = full.incomplete;
        st.invalid = full.invalid;
        st.reason = full.invalid_reason;
        if (foreign != nullptr) foreign->states_.emplace(key, st);
      }
      if (st.obsolete) continue;
      p.incomplete = st.incomplete;
      p.invalid = st.invalid;
      p.invalid_reason = st.reason;
    }
    v.any_invalid_ = v.any_invalid_ || p.invalid;
    v.any_incomplete_ = v.any_incomplete_ || p.incomplete;
    (p.binding_conditions ? with_conditions : normal).push_back(std::move(p));
  }
  // std::map already ordered pools by (driver, pool).
  v.pools_ = std::move(normal);
  for (auto& p : with_conditions) v.pools_.push_back(std::move(p));

  v.pool_ranges_.assign(v.pools_.size(), {0, 0});
  for (uint32_t pi = 0; pi < v.pools_.size(); ++pi) {
    const PoolView& p = v.pools_[pi];
    const auto first = static_cast<uint32_t>(v.candidates_.size());
    v.pool_ranges_[pi] = {first, first};
    if (p.incomplete || p.invalid) continue;
    // Counter names -> flat index, to translate each device's consumption.
    std::unordered_map<std::string, uint32_t> flat;
    for (uint32_t i = 0; i < p.counter_names.size(); ++i) flat.emplace(p.counter_names[i], i);
    for (uint32_t si : p.slices) {
      const auto& spec = slices[si].spec;
      bool per_device = spec.perDeviceNodeSelection.value_or(false);
      for (uint32_t di = 0; di < spec.devices.size(); ++di) {
        const auto& d = spec.devices[di];
        Candidate c;
        c.device = snapshot.first_device(si) + di;
        c.pool = pi;
        v.any_shareable_ = v.any_shareable_ || d.allowMultipleAllocations.value_or(false);
        if (names_a_node(d, per_device)) v.node_independent_ = false;
        if (per_device) {
          auto m = node_target_matches(&node, d.nodeName.value_or(""), d.allNodes.value_or(false),
                                       d.nodeSelector ? &*d.nodeSelector : nullptr);
          if (!m) return invalid_error("device " + d.name + " in slice " + slices[si].metadata.name + ": " + m.error().message());
          c.node_ok = *m;
        }
        c.counters_begin = static_cast<uint32_t>(v.counter_uses_.size());
        for (const auto& use : d.consumesCounters) {
          for (const auto& [cname, q] : use.counters) {
            v.counter_uses_.push_back(CounterUse{flat.at(use.counterSet + "/" + cname), q.value.nanos()});
          }
        }
        c.counters_end = static_cast<uint32_t>(v.counter_uses_.size());
        v.candidates_.push_back(c);
      }
    }
    v.pool_ranges_[pi].second = static_cast<uint32_t>(v.candidates_.size());
  }
  v.by_id_.resize(v.pools_.size());
  for (uint32_t pi = 0; pi < v.pools_.size(); ++pi) v.by_id_[pi] = pi;
  std::sort(v.by_id_.begin(), v.by_id_.end(), [&v](uint32_t a, uint32_t b) {
    const PoolView &x = v.pools_[a], &y = v.pools_[b];
    return std::tie(x.driver, x.pool) < std::tie(y.driver, y.pool);
  });
  v.attribute_index_ = std::make_shared<AttributeIndex>();
  v.pool_versions_.resize(v.pools_.size());
  for (auto& version : v.pool_versions_) version = ++pool_versions;
  v.mark_blocked(0, static_cast<uint32_t>(v.candidates_.size()));
  v.order_packing();
  return v;
}

std::optional<std::vector<uint32_t>> NodeView::selection(const Snapshot& snapshot, const api::Node& node) {
  // build()'s rules (targets_node, the candidates' per-device selection),
  // without gathering pools.
  if (!snapshot.slices_with_node_name(node.metadata.name).empty()) return std::nullopt;
  std::vector<uint32_t> out;
  const auto& slices = snapshot.slices();
  for (uint32_t si : snapshot.slices_without_node_name()) {
    auto relevant = targets_node(slices[si], node);
    if (!relevant) return std::nullopt;
    if (!*relevant) continue;
    const auto& spec = slices[si].spec;
    const bool per_device = spec.perDeviceNodeSelection.value_or(false);
    out.push_back(si);
    if (!per_device) {
      for (const auto& d : spec.devices) {
        if (names_a_node(d, false)) return std::nullopt;
      }
      continue;
    }
    std::vector<uint32_t> picked;  // the devices whose own selection matches
    for (uint32_t di = 0; di < spec.devices.size(); ++di) {
      const auto& d = spec.devices[di];
      if (names_a_node(d, true)) return std::nullopt;
      auto m = node_target_matches(&node, "", d.allNodes.value_or(false), d.nodeSelector ? &*d.nodeSelector : nullptr);
      if (!m) return std::nullopt;
      if (*m) picked.push_back(di);
    }
    out.push_back(static_cast<uint32_t>(picked.size()));
    out.insert(out.end(), picked.begin(), picked.end());
  }
  return out;
}

}  // namespace draplane::alloc
