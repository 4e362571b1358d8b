// Validation phase and depth-first search of one allocate() call, following the
// upstream incubating allocator step by step (see allocator.h for what differs).
#include <algorithm>
#include <climits>

#include "alloc/attribute_match.h"
#include "alloc/capacity.h"
#include "alloc/internal/search.h"
#include "alloc/taint_rules.h"

namespace draplane::alloc::internal {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

uint64_t zobrist(uint32_t cand, int req) { return mix((uint64_t{cand} << 32) ^ static_cast<uint32_t>(req)); }

}  // namespace

Search::Search(const NodeView& view, const std::vector<const api::ResourceClaim*>& claims, const Options& options,
               bool nested)
    : view_(view),
      snap_(view.snapshot()),
      allocated_(view.allocated()),
      claims_(claims),
      options_(options),
      share_rng_(options.share_id_seed),
      nested_(nested) {}

std::string Search::kobj(int claim) const {
  const auto& m = claims_[claim]->metadata;
  return m.namespace_.empty() ? m.name : m.namespace_ + "/" + m.name;
}

Result<void> Search::prepare() {
  const size_t n = claims_.size();
  slots_.resize(n);
  constraints_.resize(n);
  picked_.resize(n);
  allocating_.assign(view_.candidates().size(), 0);
  sharing_.assign(view_.candidates().size(), 0);
  // Per pool on first use (allocate_device): thousands of pools, a handful touched.
  counters_.assign(view_.pools().size(), {});

  for (int ci = 0; ci < static_cast<int>(n); ++ci) {
    const auto& claim = *claims_[ci];
    const auto& requests = claim.spec.devices.requests;
    slots_[ci].resize(requests.size());
    int64_t min_devices = 0;
    for (int ri = 0; ri < static_cast<int>(requests.size()); ++ri) {
      const auto& req = requests[ri];
      Slot& slot = slots_[ci][ri];
      slot.first = static_cast<int>(reqs_.size());
      auto validate = [&](ReqData rd, const std::string& class_name, const std::string& mode,
                          std::optional<int64_t> count) -> Result<int> {
        const std::string who = "claim " + kobj(ci) + ", request " + rd.name;
        for (size_t i = 0; i < rd.selectors->size(); ++i) {
          if (!(*rd.selectors)[i].cel) {
            return invalid_error(who + ", selector #" + std::to_string(i) +
                                 ": CEL expression empty (unsupported selector type?)");
          }
        }
        if (class_name.empty()) return invalid_error(who + ": missing device class name (unsupported request type?)");
        rd.class_name = class_name;
        rd.cls = snap_.find_class(class_name);
        if (rd.cls == nullptr) {
          return invalid_error(who + ": could not retrieve device class " + class_name +
                               ": deviceclass.resource.k8s.io \"" + class_name + "\" not found");
        }
        rd.programs.resize(rd.selectors->size());
        rd.compile_errors.resize(rd.selectors->size());
        for (size_t i = 0; i < rd.selectors->size(); ++i) {
          auto p = snap_.programs().get((*rd.selectors)[i].cel->expression);
          if (p) {
            rd.programs[i] = *p;
          } else {
            rd.compile_errors[i] = p.error().message();
          }
        }
        rd.match.assign(view_.candidates().size(), 255);
        if (mode.empty() || mode == api::kAllocationModeExactCount) {
          int64_t c = count.value_or(1);
          if (c > INT_MAX) return invalid_error(who + ": exact count " + std::to_string(c) + " is too large");
          rd.num = static_cast<int>(c);
        } else if (mode == api::kAllocationModeAll) {
          rd.all = true;
          const auto& cands = view_.candidates();
          size_t next = 0;
          for (uint32_t pi = 0; pi < view_.pools().size(); ++pi) {
            const auto& pool = view_.pools()[pi];
            if (pool.incomplete) {
              return invalid_error(who + ": asks for all devices, but resource pool " + pool.id() +
                                   " is currently being updated");
            }
            if (pool.invalid) {
              return invalid_error(who + ": asks for all devices, but resource pool " + pool.id() +
                                   " is currently invalid");
            }
            for (; next < cands.size() && cands[next].pool == pi; ++next) {
              bool ok = false;
              if (selectable(rd, static_cast<uint32_t>(next), ok) == Outcome::kError) return error_;
              if (ok && capacity_ok(rd, static_cast<uint32_t>(next))) rd.all_devices.push_back(static_cast<uint32_t>(next));
            }
          }
          rd.num = static_cast<int>(rd.all_devices.size());
        } else {
          return invalid_error(who + ": unsupported count mode " + mode);
        }
        int num = rd.num;
        reqs_.push_back(std::move(rd));
        return num;
      };
      if (!req.firstAvailable.empty()) {
        slot.has_subs = true;
        slot.count = static_cast<int>(req.firstAvailable.size());
        int min_req = INT_MAX;
        for (int si = 0; si < slot.count; ++si) {
          const auto& sub = req.firstAvailable[si];
          ReqData rd;
          rd.claim = ci;
          rd.request = ri;
          rd.sub = si;
          rd.name = sub.name;
          rd.parent = req.name;
          rd.full = req.name + "/" + sub.name;
          rd.selectors = &sub.selectors;
          rd.tolerations = &sub.tolerations;
          rd.capacity = sub.capacity ? &*sub.capacity : nullptr;
          ASSIGN_OR_RETURN(int num, validate(std::move(rd), sub.deviceClassName, sub.allocationMode, sub.count));
          min_req = std::min(min_req, num);
        }
        min_devices += min_req;
      } else {
        ReqData rd;
        rd.claim = ci;
        rd.request = ri;
        rd.name = req.name;
        rd.full = req.name;
        static const std::vector<api::DeviceSelector> kNoSelectors;
        static const std::vector<api::DeviceToleration> kNoTolerations;
        if (!req.exactly) {
          rd.selectors = &kNoSelectors;
          rd.tolerations = &kNoTolerations;
          ASSIGN_OR_RETURN(int num, validate(std::move(rd), "", "", std::nullopt));
          min_devices += num;
          continue;
        }
        const auto& ex = *req.exactly;
        rd.selectors = &ex.selectors;
        rd.tolerations = &ex.tolerations;
        rd.capacity = ex.capacity ? &*ex.capacity : nullptr;
        rd.admin = ex.adminAccess.value_or(false);
        ASSIGN_OR_RETURN(int num, validate(std::move(rd), ex.deviceClassName, ex.allocationMode, ex.count));
        min_devices += num;
      }
    }
    if (min_devices > kMaxResults) {
      return invalid_error("claim " + kobj(ci) + ": number of requested devices " + std::to_string(min_devices) +
                           " exceeds the claim limit of " + std::to_string(kMaxResults));
    }
    const auto& cons = claim.spec.devices.constraints;
    for (size_t i = 0; i < cons.size(); ++i) {
      Constraint c;
      c.requests = cons[i].requests;
      if (cons[i].matchAttribute) {
        c.match = true;
        c.attribute = *cons[i].matchAttribute;
      } else if (cons[i].distinctAttribute) {
        c.match = false;
        c.attribute = *cons[i].distinctAttribute;
      } else {
        return invalid_error("claim " + kobj(ci) + ", constraint #" + std::to_string(i) +
                             ": empty constraint (unsupported constraint type?)");
      }
      constraints_[ci].push_back(std::move(c));
    }
  }
  if (options_.policy == Policy::kPacking) {
    for (auto& rd : reqs_) rd.order = &view_.packing_order();
  }
  return {};
}

Outcome Search::selectable(ReqData& r, uint32_t c, bool& ok) {
  uint8_t& cached = r.match[c];
  if (cached != 255) {
    ok = cached == Snapshot::kYes;
    return Outcome::kDone;
  }
  const Candidate& cand = view_.candidates()[c];
  ok = false;
  switch (r.cls->match[cand.device]) {
    case Snapshot::kNo:
      cached = Snapshot::kNo;
      return Outcome::kDone;
    case Snapshot::kError:
      error_ = invalid_error(r.cls->errors.at(cand.device));
      cel_errors_seen_ = true;
      return Outcome::kError;
    default:
      break;
  }
  for (size_t i = 0; i < r.programs.size(); ++i) {
    if (!r.programs[i]) {
      error_ = invalid_error("claim " + kobj(r.claim) + ": selector #" + std::to_string(i) +
                             ": CEL compile error: " + r.compile_errors[i]);
      cel_errors_seen_ = true;
      return Outcome::kError;
    }
    cel::EvalResult e = r.programs[i]->eval(snap_.binding(cand.device));
    if (!e.ok()) {
      error_ = invalid_error("claim " + kobj(r.claim) + ": selector #" + std::to_string(i) +
                             ": CEL runtime error: " + e.error + snap_.cel_error_hint(cand.device, e.error));
      cel_errors_seen_ = true;
      return Outcome::kError;
    }
    if (!e.value) {
      cached = Snapshot::kNo;
      return Outcome::kDone;
    }
  }
  cached = cand.node_ok ? Snapshot::kYes : Snapshot::kNo;
  ok = cand.node_ok;
  return Outcome::kDone;
}

bool Search::in_use(uint32_t c) const {
  if (allocating_[c] > 0) return true;
  if (options_.shortcuts) return (view_.blocked()[c] & NodeView::kTaken) != 0;  // the same, kept by the view
  const auto* u = allocated_.in_use(snap_.devices()[view_.candidates()[c].device].key);
  return u != nullptr && u->dedicated;
}

bool Search::allocating_for_claim(uint32_t c, int claim) const {
  for (const auto& p : picked_[claim]) {
    if (p.cand == c && !p.multi) return true;
  }
  return false;
}

bool Search::capacity_ok(const ReqData& r, uint32_t c) const {
  uint32_t dev = view_.candidates()[c].device;
  const auto& d = snap_.device(dev);
  const bool unrequested = r.capacity == nullptr || r.capacity->requests.empty();
  if (d.capacity.empty() && unrequested) return true;
  const auto* u = allocated_.in_use(snap_.devices()[dev].key);
  const std::map<std::string, __int128>* allocated = (u != nullptr && u->has_capacity) ? &u->capacity : nullptr;
  auto it = sharing_capacity_.find(c);
  // Nothing asked, nothing consumed yet: the device's own verdict, computed once.
  if (unrequested && allocated == nullptr && it == sharing_capacity_.end()) return snap_.capacity_fits_unrequested(dev);
  return capacity_fits(d, r.capacity, allocated, it == sharing_capacity_.end() ? nullptr : &it->second);
}

bool Search::tainted(const ReqData& r, const api::Device& d) const {
  for (const auto& taint : d.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    bool ok = false;
    for (const auto& t : *r.tolerations) ok = ok || tolerates(t, taint);
    if (!ok) return true;
  }
  return false;
}

namespace {
bool constraint_applies(const Constraint& c, const ReqData& r) {
  if (c.requests.empty()) return true;
  const std::string& base = r.parent.empty() ? r.name : r.parent;
  for (const auto& n : c.requests) {
    if (n == base || (!r.parent.empty() && n == r.full)) return true;
  }
  return false;
}
}  // namespace

bool Search::constraints_add(int claim, const ReqData& r, uint32_t c, std::string* failed) {
  uint32_t dev = view_.candidates()[c].device;
  const auto& d = snap_.device(dev);
  const std::string& driver = snap_.slice_of(dev).spec.driver;
  const std::string& base = r.parent.empty() ? r.name : r.parent;
  auto& cons = constraints_[claim];
  for (size_t i = 0; i < cons.size(); ++i) {
    Constraint& k = cons[i];
    bool added = true;
    if (constraint_applies(k, r)) {
      const api::DeviceAttribute* a = lookup_attribute(d, driver, k.attribute);
      if (a == nullptr) {
        added = false;
      } else if (k.match) {
        if (k.num == 0) {
          k.value = a;
          k.num = 1;
        } else if (same_value(*a, *k.value)) {
          ++k.num;
        } else {
          added = false;
        }
      } else {
        bool distinct = true;
        if (k.num > 0) {
          for (const auto& [name, v] : k.values) distinct = distinct && !same_value(*a, *v);
        }
        if (distinct) {
          // One value per request name (upstream keeps a map keyed by request).
          bool replaced = false;
          for (auto& [name, v] : k.values) {
            if (name == base) {
              v = a;
              replaced = true;
            }
          }
          if (!replaced) k.values.emplace_back(base, a);
          ++k.num;
        } else {
          added = false;
        }
      }
    }
    if (!added) {
      for (size_t e = 0; e < i; ++e) {
        // Roll back the constraints already updated for this device.
        Constraint& prev = cons[e];
        if (!constraint_applies(prev, r)) continue;
        --prev.num;
        if (!prev.match) {
          std::erase_if(prev.values, [&](const auto& kv) { return kv.first == base; });
        }
      }
      if (failed != nullptr) *failed = k.attribute;
      return false;
    }
  }
  return true;
}

void Search::constraints_remove(int claim, const ReqData& r, uint32_t c) {
  const std::string& base = r.parent.empty() ? r.name : r.parent;
  for (auto& k : constraints_[claim]) {
    if (!constraint_applies(k, r)) continue;
    --k.num;
    if (!k.match) std::erase_if(k.values, [&](const auto& kv) { return kv.first == base; });
  }
}

bool Search::shared_counters_consumed(uint32_t c) const {
  const auto* u = allocated_.in_use(snap_.devices()[view_.candidates()[c].device].key);
  return (u != nullptr && u->has_capacity) || sharing_[c] > 0;
}

int Search::allocate_device(int req_index, uint32_t c, bool must) {
  const ReqData& r = reqs_[req_index];
  const Candidate& cand = view_.candidates()[c];
  const auto& d = snap_.device(cand.device);
  bool multi = d.allowMultipleAllocations.value_or(false);
  if (!multi && r.admin && allocating_for_claim(c, r.claim)) return 0;
  if (!r.admin && in_use(c)) return 0;
  bool skip_counters = multi && shared_counters_consumed(c);
  bool counters_added = false;
  auto& consumed = counters_[cand.pool];
  if (consumed.empty()) consumed.assign(view_.pools()[cand.pool].available.size(), 0);
  const auto& uses = view_.counter_uses();
  auto undo_counters = [&] {
    if (!counters_added) return;
    for (uint32_t k = cand.counters_begin; k < cand.counters_end; ++k) consumed[uses[k].counter] -= uses[k].amount;
  };
  if (!skip_counters && cand.counters_begin != cand.counters_end) {
    const auto& pool = view_.pools()[cand.pool];
    if (pool.overdrawn) return 0;
    for (uint32_t k = cand.counters_begin; k < cand.counters_end; ++k) consumed[uses[k].counter] += uses[k].amount;
    counters_added = true;
    for (uint32_t k = cand.counters_begin; k < cand.counters_end; ++k) {
      if (consumed[uses[k].counter] > pool.available[uses[k].counter]) {
        undo_counters();
        return 0;
      }
    }
  }
  if (tainted(r, d)) {
    undo_counters();
    return 0;
  }
  if (!constraints_add(r.claim, r, c, nullptr)) {
    undo_counters();
    if (must) {
      error_ = invalid_error("claim " + kobj(r.claim) + ", request " + r.name + ": cannot add device " +
                             snap_.device_id(cand.device) + " because a claim constraint would not be satisfied");
      return -1;
    }
    return 0;
  }
  if (!capacity_ok(r, c)) {
    constraints_remove(r.claim, r, c);
    undo_counters();
    return 0;
  }
  Picked p;
  p.req = req_index;
  p.cand = c;
  p.multi = multi;
  p.counters_added = counters_added;
  p.admin = r.admin;
  if (multi) {
    ++sharing_[c];
    p.consumed = consumed_capacity(d, r.capacity);
    if (!p.consumed.empty()) {
      auto& sum = sharing_capacity_[c];
      for (const auto& [name, q] : p.consumed) sum[name] += q.nanos();
    }
  } else {
    ++allocating_[c];
  }
  hash_ ^= zobrist(c, req_index);
  picked_[r.claim].push_back(std::move(p));
  return 1;
}

void Search::deallocate(int claim) {
  Picked& p = picked_[claim].back();
  const ReqData& r = reqs_[p.req];
  const Candidate& cand = view_.candidates()[p.cand];
  constraints_remove(claim, r, p.cand);
  if (p.multi) {
    --sharing_[p.cand];
    if (!p.consumed.empty()) {
      auto it = sharing_capacity_.find(p.cand);
      for (const auto& [name, q] : p.consumed) it->second[name] -= q.nanos();
      if (sharing_[p.cand] == 0) sharing_capacity_.erase(it);
    }
  } else {
    --allocating_[p.cand];
  }
  if (p.counters_added) {
    const auto& uses = view_.counter_uses();
    auto& consumed = counters_[cand.pool];
    for (uint32_t k = cand.counters_begin; k < cand.counters_end; ++k) consumed[uses[k].counter] -= uses[k].amount;
  }
  hash_ ^= zobrist(p.cand, p.req);
  picked_[claim].pop_back();
}

Outcome Search::next_request(int claim, int request) {
  // Request boundaries are memoized: what follows depends only on what is
  // allocated so far (hash_) and the position.
  uint64_t key = hash_ ^ mix(0x5bd1e995ULL ^ (uint64_t(claim) << 24) ^ uint64_t(request));
  if (!memo_.empty()) {
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
  }
  Outcome o = one(claim, request, 0, 0, false, 0);
  if (o == Outcome::kFail || o == Outcome::kMaxSize) memo_.emplace(key, o);
  return o;
}

Outcome Search::one(int claim, int request, int sub, int dev_index, bool alloc_sub, uint32_t start) {
  ++steps_;
  if ((steps_ & 1023) == 0) {
    if ((options_.max_steps > 0 && steps_ >= options_.max_steps) || (options_.should_stop && options_.should_stop())) {
      stopped_ = true;
      return Outcome::kStop;
    }
  }
  if (claim >= static_cast<int>(claims_.size())) return Outcome::kDone;
  auto& slots = slots_[claim];
  if (request >= static_cast<int>(slots.size())) {
    Outcome o = next_request(claim + 1, 0);
    return o == Outcome::kMaxSize ? Outcome::kFail : o;
  }
  Slot& slot = slots[request];
  if (!alloc_sub && slot.has_subs) {
    bool all_exceeded = true;
    for (int s = 0; s < slot.count; ++s) {
      Outcome o = one(claim, request, s, 0, true, 0);
      if (o == Outcome::kMaxSize) continue;
      all_exceeded = false;
      if (o == Outcome::kDone) {
        slot.selected = s;
        return o;
      }
      if (o != Outcome::kFail) return o;
    }
    return all_exceeded ? Outcome::kMaxSize : Outcome::kFail;
  }
  const int ri = slot.first + (slot.has_subs ? sub : 0);
  ReqData& r = reqs_[ri];
  if (r.all && r.all_devices.empty()) return Outcome::kFail;
  if (dev_index >= r.num) return next_request(claim, request + 1);
  if (static_cast<int>(picked_[claim].size()) + r.num - dev_index > kMaxResults) return Outcome::kMaxSize;

  if (r.all) {
    int a = allocate_device(ri, r.all_devices[dev_index], true);
    if (a < 0) return Outcome::kError;
    if (a == 0) return Outcome::kFail;
    Outcome o = one(claim, request, sub, dev_index + 1, alloc_sub, 0);
    if (o != Outcome::kDone) deallocate(claim);
    return o;
  }
  const uint8_t no_counters = options_.shortcuts ? NodeView::kNoCounters : 0;
  // Blocked devices (taken, counters exhausted) fail below; when asking their
  // selectors cannot fail, they are passed over before asking.
  const bool pass_blocked = options_.shortcuts && !r.admin && r.never_errs();
  const auto& blocked = view_.blocked();
  // Candidate c at position pos of the request's order: kFail to go on with the next.
  auto attempt = [&](uint32_t pos, uint32_t c) -> Outcome {
    if (pass_blocked && blocked[c] != 0) return Outcome::kFail;
    if (r.admin ? allocating_for_claim(c, claim) : in_use(c)) return Outcome::kFail;
    bool ok = false;
    if (selectable(r, c, ok) == Outcome::kError) return Outcome::kError;
    if (!ok || (blocked[c] & no_counters) || !capacity_ok(r, c)) return Outcome::kFail;
    int a = allocate_device(ri, c, false);
    if (a < 0) return Outcome::kError;
    if (a == 0) return Outcome::kFail;
    Outcome o = one(claim, request, sub, dev_index + 1, alloc_sub, pos + 1);
    if (o != Outcome::kDone) deallocate(claim);
    return o;
  };
  if (const std::vector<uint32_t>* only = matching_candidates(claim, r)) {
    // Only the devices with the value already matched can be added: visit
    // those, in the order's positions from `start`, as the walk would.
    std::vector<std::pair<uint32_t, uint32_t>> at;  // position, candidate
    for (uint32_t c : *only) {
      const uint32_t pos = r.order == nullptr ? c : view_.packing_position(c);
      if (pos >= start) at.emplace_back(pos, c);
    }
    std::sort(at.begin(), at.end());
    for (const auto& [pos, c] : at) {
      Outcome o = attempt(pos, c);
      if (o != Outcome::kFail) return o;
    }
    return Outcome::kFail;
  }
  const uint32_t n = static_cast<uint32_t>(view_.candidates().size());
  for (uint32_t pos = start; pos < n; ++pos) {
    if (pass_blocked) {  // to the next device that is not blocked (r.order is null or the packing order)
      pos = r.order == nullptr ? view_.next_unblocked(pos) : view_.next_unblocked_position(pos);
      if (pos >= n) break;
    }
    Outcome o = attempt(pos, r.order == nullptr ? pos : (*r.order)[pos]);
    if (o != Outcome::kFail) return o;
  }
  return Outcome::kFail;
}

const std::vector<uint32_t>* Search::matching_candidates(int claim, const ReqData& r) const {
  // Skipping a device must not skip an error the walk would report: only
  // requests whose selectability cannot fail (no CEL of their own, a class
  // without errors) and that do not ask for admin access.
  if (!options_.shortcuts || r.admin || !r.never_errs()) return nullptr;  // as pass_blocked in one()
  for (const Constraint& k : constraints_[claim]) {
    if (!k.match || k.num == 0 || k.value == nullptr || !constraint_applies(k, r)) continue;
    if (const auto* only = view_.candidates_with(k.attribute, value_key(*k.value))) return only;
  }
  return nullptr;
}

bool Search::feasible_by_count() {
  // Upper bound per request on devices usable on their own; a request whose
  // bound is below its count cannot be satisfied, whatever the search does.
  // Only sound without CEL errors (upstream would report those), so any error
  // seen here disables the check.
  const auto& cands = view_.candidates();
  for (size_t ci = 0; ci < slots_.size(); ++ci) {
    for (const Slot& slot : slots_[ci]) {
      bool any = false;
      for (int s = 0; s < slot.count && !any; ++s) {
        ReqData& r = reqs_[slot.first + s];
        if (r.all) {
          any = !r.all_devices.empty();
          continue;
        }
        int usable = 0;
        // Blocked devices are not usable alone; when asking about them cannot
        // fail, they are passed over here a byte each.
        const bool skip_blocked = options_.shortcuts && !r.admin && r.never_errs();
        const auto& blocked = view_.blocked();
        for (uint32_t c = 0; c < cands.size() && usable < r.num; ++c) {
          if (skip_blocked && blocked[c] != 0) {
            c = view_.next_unblocked(c);
            if (c >= cands.size()) break;
          }
          int u = usable_alone(r, c);
          if (u < 0) return true;
          usable += u;
        }
        any = usable >= r.num;
      }
      if (!any) return false;
    }
  }
  return true;
}

int Search::usable_alone(ReqData& r, uint32_t c) {
  const auto& cand = view_.candidates()[c];
  if (!r.admin && in_use(c)) return 0;
  const bool no_counters = options_.shortcuts && (view_.blocked()[c] & NodeView::kNoCounters);
  if (no_counters && r.never_errs()) return 0;  // asking its selectors cannot fail: not asked
  bool ok = false;
  if (selectable(r, c, ok) == Outcome::kError) {
    error_ = Status();
    return -1;
  }
  if (!ok || no_counters) return 0;
  if (!capacity_ok(r, c) || tainted(r, snap_.device(cand.device))) return 0;
  bool counted = snap_.device(cand.device).allowMultipleAllocations.value_or(false) && shared_counters_consumed(c);
  if (!counted && cand.counters_begin != cand.counters_end) {
    const auto& pool = view_.pools()[cand.pool];
    if (pool.overdrawn) return 0;
    for (uint32_t k = cand.counters_begin; k < cand.counters_end; ++k) {
      const auto& u = view_.counter_uses()[k];
      if (u.amount > pool.available[u.counter]) return 0;
    }
  }
  return 1;
}

std::string Search::new_share_id(uint32_t c) {
  uint32_t dev = view_.candidates()[c].device;
  const auto* u = allocated_.in_use(snap_.devices()[dev].key);
  auto& mine = new_shares_[c];
  for (;;) {
    uint64_t a = mix(share_rng_++), b = mix(share_rng_++ ^ 0xA5A5A5A5A5A5A5A5ULL);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%08x-%04x-4%03x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                  static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xfff),
                  static_cast<unsigned>(0x8000 | ((b >> 48) & 0x3fff)),
                  static_cast<unsigned long long>(b & 0xffffffffffffULL));
    std::string id(buf);
    if (u != nullptr && u->share_ids.count(id)) continue;
    if (std::find(mine.begin(), mine.end(), id) != mine.end()) continue;
    mine.push_back(id);
    return id;
  }
}

Result<Allocation> Search::run() {
  RETURN_IF_ERROR(prepare());
  Allocation a;
  if (claims_.empty()) {
    a.fits = true;
    return a;
  }
  bool feasible = feasible_by_count();
  if (feasible && !nested_ && !cel_errors_seen_) feasible = !matching_infeasible() && !solo_infeasible();
  Outcome o = feasible ? next_request(0, 0) : Outcome::kFail;
  a.steps = steps_;
  switch (o) {
    case Outcome::kError:
      return error_;
    case Outcome::kMaxSize:
      return invalid_error("claim " + kobj(0) + ": allocation max size exceeded");
    case Outcome::kDone:
      a.fits = true;
      a.results = build_results();
      for (const auto& slots : slots_) {
        for (const auto& s : slots) a.score += 8 - s.selected;
      }
      return a;
    case Outcome::kStop:
      a.timed_out = true;
      a.reasons.push_back("the search for devices stopped after " + std::to_string(steps_) +
                          " steps without an answer (too many combinations; raise the deadline or simplify the claim)");
      return a;
    case Outcome::kFail:
      break;
  }
  if (view_.any_invalid()) {
    std::string which;
    for (const auto& p : view_.pools()) {
      if (p.invalid) which += (which.empty() ? "" : ", ") + p.id() + " (" + p.invalid_reason + ")";
    }
    return invalid_error("invalid resource pools were encountered: " + which);
  }
  if (options_.explain) a.reasons = explain();
  return a;
}

}  // namespace draplane::alloc::internal
