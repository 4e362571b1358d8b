// The binding cycle: PreBind (DynamicResources' claim writes) and Bind, and
// taking written reservations back: the only API writes the scheduler makes,
// all through Binder.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "sched/framework.h"
#include "sched/scheduler.h"

namespace draplane::sched {
namespace {

using framework::ClaimWrite;

bool has_finalizer(const api::ResourceClaim& claim) {
  const auto& f = claim.metadata.finalizers;
  return std::find(f.begin(), f.end(), kDeleteProtectionFinalizer) != f.end();
}

// Equal once every run of digits is treated as one token.
bool same_but_numbers(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      while (i < a.size() && digit(a[i])) ++i;
      while (j < b.size() && digit(b[j])) ++j;
      continue;
    }
    if (a[i] != b[j]) return false;
    ++i;
    ++j;
  }
  return i == a.size() && j == b.size();
}

}  // namespace

Scheduler::BindOutcome Scheduler::write_reservation(const CycleState& cs, const NodeFit& fit,
                                                    Reservation& reservation) {
  const api::Pod& pod = cs.pod;
  std::vector<ClaimWrite>& to_write = reservation.writes;
  BindOutcome out;
  auto fail = [&](const Status& st, const std::string& what) {
    out.ok = false;
    out.status = st;
    out.what = what;
    out.rollback = rollback_writes(pod, out.written);
    return out;
  };

  // PreBind, extended resources: create the claim, record it in the pod's
  // status (so a retry reuses it), then it is written like the others.
  if (fit.extended_mask.find('1') != std::string::npos) {
    api::ResourceClaim ext = cs.dra.extended_claims.at(fit.extended_mask);
    ext.metadata.name.clear();
    auto created = binder_.create_claim(ext);
    if (!created.has_value()) return fail(created.error(), "create extended resource claim");
    api::PodExtendedResourceClaimStatus st;
    st.requestMappings = cs.dra.extended_mappings.at(fit.extended_mask);
    st.resourceClaimName = created->metadata.name;
    auto ps = binder_.update_pod_status(pod, [&](api::Pod& p) { p.status.extendedResourceClaimStatus = st; });
    ClaimWrite w{*created, true, true, pod_consumer(pod)};
    w.claim.status.allocation = fit.results.back();
    w.claim.status.reservedFor = {w.consumer};
    if (!ps.has_value()) {
      out.written.push_back({*created, true, false, pod_consumer(pod)});
      return fail(ps.error(), "record extendedResourceClaimStatus");
    }
    to_write.push_back(std::move(w));
  }

  // PreBind: finalizer first (a claim must not vanish while allocated), then
  // allocation + reservedFor in one status update; both with preconditions.
  for (auto& w : to_write) {
    const std::string name = object_key(w.claim.metadata);
    if (w.newly_allocated && !has_finalizer(w.claim)) {
      w.claim.metadata.finalizers.push_back(kDeleteProtectionFinalizer);
      auto stored = binder_.update_claim(w.claim);
      if (!stored.has_value()) return fail(stored.error(), "add finalizer to resourceclaim " + name);
      w.claim.metadata = stored->metadata;
    }
    auto stored = binder_.update_claim_status(w.claim);
    if (!stored.has_value()) return fail(stored.error(), "update status of resourceclaim " + name);
    out.written.push_back({std::move(*stored), w.newly_allocated, w.extended, w.consumer});
  }

  auto b = binder_.bind(pod, fit.node);
  if (!b.has_value()) return fail(b.error(), "bind to node " + fit.node);
  binder_.record_event(pod, "Normal", "Scheduled", "Binding",
                       "Successfully assigned " + pod.metadata.namespace_ + "/" + pod.metadata.name + " to " + fit.node);
  out.ok = true;
  return out;
}

CycleResult Scheduler::finish_binding(const CycleState& cs, const NodeFit& fit, const Reservation& reservation,
                                      BindOutcome& out) {
  if (!out.ok) {
    for (const auto& key : reservation.reserved_keys) cache_.forget_claim(key);
    for (const auto& [key, stored] : out.rollback) {
      if (stored) cache_.assume_claim(*stored);
      else cache_.forget_claim(key);
    }
    cache_.forget_bound(cs.pod_key);
    if (out.status.code() == Code::kConflict) ++stats_.conflicts;
    ++stats_.retries;
    auto now = clock_.now();
    // An event may have dropped the pod from the queue while its binding was in
    // flight (it looked bound); it is pending again.
    const api::Pod* cached = cache_.pod(cs.pod_key);
    if (!queue_.contains(cs.pod_key) && cached != nullptr && is_ours_pending(*cached)) {
      queue_.add(cs.pod_key, cached->spec.priority.value_or(0), now, false);
    }
    queue_.backoff(cs.pod_key, now);
    std::string msg = out.what + ": " + out.status.message();
    log_->debug("pod {}: {}; retrying after backoff", cs.pod_key, msg);
    // kube-scheduler reports every failed attempt, binding ones included.
    binder_.record_event(cs.pod, "Warning", "FailedScheduling", "Scheduling", msg);
    return CycleResult{Outcome::kRetry, cs.pod_key, fit.node, msg};
  }
  for (auto& w : out.written) {
    if (w.extended && !reservation.extended_placeholder.empty()) {
      // Forget the placeholder before the real claim counts: the snapshot
      // keeps one in-use record per device, not a count of holders.
      cache_.forget_claim(reservation.extended_placeholder);
    }
    cache_.assume_claim(std::move(w.stored));
  }
  queue_.remove(cs.pod_key);
  ++stats_.bound;
  log_->debug("pod {} bound to {}", cs.pod_key, fit.node);
  return CycleResult{Outcome::kBound, cs.pod_key, fit.node, ""};
}

CycleResult Scheduler::commit(CycleState& cs, const NodeFit& fit, Reservation& reservation) {
  BindOutcome out = write_reservation(cs, fit, reservation);
  return finish_binding(cs, fit, reservation, out);
}

std::vector<std::pair<std::string, std::optional<api::ResourceClaim>>> Scheduler::rollback_writes(
    const api::Pod& pod, const std::vector<WrittenClaim>& written) {
  std::vector<std::pair<std::string, std::optional<api::ResourceClaim>>> out;
  for (const auto& w : written) {
    api::ResourceClaim r = w.stored;
    auto& rf = r.status.reservedFor;
    rf.erase(std::remove_if(rf.begin(), rf.end(),
                             [&](const auto& c) {
                               return c.apiGroup == w.consumer.apiGroup && c.resource == w.consumer.resource &&
                                      c.uid == w.consumer.uid;
                             }),
             rf.end());
    if (w.newly_allocated && rf.empty()) r.status.allocation.reset();
    std::string key = object_key(r.metadata);
    auto res = binder_.update_claim_status(r);
    if (res.has_value()) {
      out.emplace_back(key, std::move(*res));
    } else {
      // The claim controller drops reservations of pods that are not bound.
      log_->warn("unreserve resourceclaim {} for pod {}/{}: {}", key, pod.metadata.namespace_, pod.metadata.name,
                 res.error().message());
      out.emplace_back(key, std::nullopt);
    }
  }
  return out;
}

void Scheduler::mark_unschedulable(const api::Pod& pod, const std::string& message) {
  // Every failed attempt is reported, as kube-scheduler's failure handler does;
  // the recorder aggregates the repeats into one event's series and rate-limits them.
  binder_.record_event(pod, "Warning", "FailedScheduling", "Scheduling", message);
  bool shown = false;  // the pod already says so, but with other numbers
  for (const auto& c : pod.status.conditions) {
    if (c.type == "PodScheduled" && c.status == "False" && c.reason == "Unschedulable") {
      if (c.message == message) return;
      shown = same_but_numbers(c.message, message);
    }
  }
  // Only the counts changed (they move with every allocation): rewritten at
  // most once per second per pod, so waiting pods retried on every freed
  // device do not flood the API server and its watchers. A new explanation
  // is written at once.
  const std::string key = object_key(pod.metadata);
  const auto t = clock_.now();
  auto last = condition_written_.find(key);
  if (last != condition_written_.end()) {
    // Written moments ago: the cache does not show our own write yet (writing
    // it again from the older copy would only draw a conflict). Later, the
    // cache is the judge (a failed write, or one someone overwrote).
    if (last->second.message == message && t - last->second.at < std::chrono::seconds(5)) return;
    if (shown && t - last->second.at < std::chrono::seconds(1)) return;
  }
  condition_written_[key] = ConditionWritten{t, message};
  std::string now = clock_.rfc3339();
  if (options_.bind_workers > 0) {
    // Off the scheduling thread, like the binding cycle: hundreds of waiting
    // pods must not each hold the next cycle for a GET and a PUT.
    // Bindings go first; a newer message for the same pod replaces a queued one.
    std::string key = object_key(pod.metadata);
    std::lock_guard<std::mutex> lock(bind_mu_);
    auto [it, inserted] = status_writes_.try_emplace(key);
    it->second = StatusWrite{pod, message, now, t};
    if (inserted) status_order_.push_back(key);
    bind_cv_.notify_one();
    return;
  }
  write_unschedulable(pod, message, now, t);
}

void Scheduler::write_unschedulable(const api::Pod& pod, const std::string& message, const std::string& now,
                                    Clock::TimePoint at) {
  auto r = binder_.update_pod_status(pod, [&](api::Pod& p) {
    // Bound meanwhile (an earlier attempt's message arriving late): leave it.
    if (!p.spec.nodeName.empty()) return;
    api::PodCondition* cond = nullptr;
    for (auto& c : p.status.conditions) {
      if (c.type == "PodScheduled") cond = &c;
    }
    if (cond == nullptr) {
      p.status.conditions.push_back(api::PodCondition{"PodScheduled", "", "", "", "", ""});
      cond = &p.status.conditions.back();
    }
    if (cond->status != "False") cond->lastTransitionTime = now;
    cond->status = "False";
    cond->reason = "Unschedulable";
    cond->message = message;
  });
  if (r.has_value()) return;
  log_->debug("pod {}/{}: condition not written: {}", pod.metadata.namespace_, pod.metadata.name, r.error().message());
  if (r.error().code() == Code::kNotFound) return;  // gone: its delete event cleans up
  // Otherwise the scheduler must not believe it wrote the condition (it would
  // hold the same message back for seconds, and a pod nothing retries would
  // never show it): forget the write and retry the pod after a backoff.
  std::string key = object_key(pod.metadata);
  {
    std::lock_guard<std::mutex> lock(mu_);
    completions_.push_back([this, key, message, at] {
      auto it = condition_written_.find(key);
      if (it == condition_written_.end() || it->second.at != at || it->second.message != message) return;
      condition_written_.erase(it);
      const api::Pod* p = cache_.pod(key);
      if (p != nullptr && is_ours_pending(*p)) queue_.backoff(key, clock_.now());
    });
  }
  cv_.notify_one();
}

}  // namespace draplane::sched
