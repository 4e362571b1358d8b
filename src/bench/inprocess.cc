// --mode inprocess: the scheduler on an in-memory object store, no HTTP.
//
// The store keeps typed objects with resourceVersions; writes with a stale
// resourceVersion fail with kConflict, as the API server's do. Every write is
// posted back to the scheduler as the informer event it would cause. The
// claim controller's step that matters for scheduling (a claim made from the
// pod's template, recorded in the pod's status) runs where the pod is created,
// with the controller's own function (claim_from_template).
#include "bench/modes.h"

#include <atomic>
#include <cstdio>
#include <thread>

#include "api/codec.h"
#include "controllers/claim_logic.h"
#include "sched/policy_flag.h"
#include "sched/scheduler.h"

namespace draplane::bench {
namespace {

std::string key_of(const api::ObjectMeta& m) { return m.namespace_ + "/" + m.name; }

class MemTarget;

// The scheduler's API writes, against the store.
class MemBinder final : public sched::Binder {
 public:
  explicit MemBinder(MemTarget& t) : t_(t) {}
  Result<api::ResourceClaim> create_claim(const api::ResourceClaim& claim) override;
  Result<api::ResourceClaim> update_claim(const api::ResourceClaim& claim) override;
  Result<api::ResourceClaim> update_claim_status(const api::ResourceClaim& claim) override;
  Result<void> bind(const api::Pod& pod, const std::string& node) override;
  Result<void> update_pod_status(const api::Pod& pod, const std::function<void(api::Pod&)>& mutate) override;

 private:
  MemTarget& t_;
};

class MemTarget final : public Target {
 public:
  MemTarget(Tracker& tracker, const sched::SchedulerOptions& o) : tracker_(tracker), binder_(*this) {
    sched_ = std::make_unique<sched::Scheduler>(binder_, clock_, o);
    thread_ = std::thread([this] { sched_->run(stop_); });
  }
  ~MemTarget() override { stop(); }

  Result<void> create(const api::Object& object) override {
    api::Object o = object;
    {
      std::lock_guard<std::mutex> l(mu_);
      stamp(api::meta_of(o), true);
      if (auto* t = std::get_if<api::ResourceClaimTemplate>(&o)) templates_[key_of(t->metadata)] = *t;
      if (auto* c = std::get_if<api::ResourceClaim>(&o)) claims_[key_of(c->metadata)] = *c;
    }
    sched_->post(sched::Event{sched::Event::Op::kUpsert, std::move(o)});
    return {};
  }

  Result<void> create_allocated(const api::ResourceClaim& claim) override { return create(claim); }

  Result<void> create_pods(const std::vector<api::Pod>& pods) override {
    for (const auto& pod : pods) {
      api::Pod p = pod;
      std::vector<api::ResourceClaim> made;
      {
        std::lock_guard<std::mutex> l(mu_);
        stamp(p.metadata, true);
        for (const auto& pc : p.spec.resourceClaims) {
          if (!pc.resourceClaimTemplateName) continue;
          auto t = templates_.find(p.metadata.namespace_ + "/" + *pc.resourceClaimTemplateName);
          if (t == templates_.end()) {
            return Status(Code::kNotFound, "resourceclaimtemplate " + *pc.resourceClaimTemplateName + " not found");
          }
          api::ResourceClaim c = controllers::claim_from_template(p, pc, t->second);
          c.metadata.name = c.metadata.generateName + std::to_string(++names_);
          stamp(c.metadata, true);
          claims_[key_of(c.metadata)] = c;
          p.status.resourceClaimStatuses.push_back(api::PodResourceClaimStatus{pc.name, c.metadata.name});
          made.push_back(std::move(c));
        }
        p.status.phase = "Pending";
        pods_[key_of(p.metadata)] = p;
      }
      for (auto& c : made) sched_->post(sched::Event{sched::Event::Op::kUpsert, std::move(c)});
      tracker_.created(key_of(p.metadata));
      sched_->post(sched::Event{sched::Event::Op::kUpsert, std::move(p)});
    }
    return {};
  }

  Result<void> delete_pods(const std::vector<api::Pod>& pods) override {
    for (const auto& pod : pods) {
      std::vector<api::Object> gone;
      {
        std::lock_guard<std::mutex> l(mu_);
        auto it = pods_.find(pod_key(pod));
        if (it == pods_.end()) continue;
        // The claim controller deletes the claims generated for the pod.
        for (const auto& name : controllers::claim_names_of(it->second)) {
          auto c = claims_.find(pod.metadata.namespace_ + "/" + name);
          if (c == claims_.end() || !controllers::owning_pod(c->second)) continue;
          gone.push_back(c->second);
          claims_.erase(c);
        }
        gone.insert(gone.begin(), it->second);
        pods_.erase(it);
      }
      for (auto& o : gone) sched_->post(sched::Event{sched::Event::Op::kDelete, std::move(o)});
    }
    return {};
  }

  Result<FinalState> final_state() override {
    FinalState s;
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [k, p] : pods_) s.pods.push_back(p);
    for (const auto& [k, c] : claims_) s.claims.push_back(c);
    return s;
  }

  int64_t stop() override {
    if (thread_.joinable()) {
      stop_ = true;
      sched_->wake();
      thread_.join();
      sched_->quiesce();
    }
    return sched_->stats().allocator_runs;
  }

  std::string scheduler_stats() override {
    const auto& st = sched_->stats();
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "scheduler: %lld cycles, %lld bound, %lld unschedulable, %lld retries, %lld conflicts, "
                  "%lld shape-memo hits; %.2f s in cycles, %.2f s applying %lld events",
                  (long long)st.cycles, (long long)st.bound, (long long)st.unschedulable, (long long)st.retries,
                  (long long)st.conflicts, (long long)st.shape_memo_hits, st.cycle_seconds, st.event_seconds,
                  (long long)st.events);
    return buf;
  }

  // Store operations for the binder (any thread).
  Result<api::ResourceClaim> write_claim(const api::ResourceClaim& claim, bool create, bool status_only) {
    api::ResourceClaim stored;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (create) {
        stored = claim;
        if (stored.metadata.name.empty()) stored.metadata.name = stored.metadata.generateName + std::to_string(++names_);
        if (claims_.count(key_of(stored.metadata)) != 0) return Status(Code::kAlreadyExists, "claim exists");
        stamp(stored.metadata, true);
        claims_[key_of(stored.metadata)] = stored;
      } else {
        auto it = claims_.find(key_of(claim.metadata));
        if (it == claims_.end()) return Status(Code::kNotFound, "resourceclaims \"" + claim.metadata.name + "\" not found");
        if (it->second.metadata.resourceVersion != claim.metadata.resourceVersion) {
          return Status(Code::kConflict, "the object has been modified; please apply your changes to the latest version");
        }
        // Changed where it is stored: one copy for the watch event, one returned.
        api::ResourceClaim& current = it->second;
        if (status_only) {
          current.status = claim.status;
        } else {
          current.metadata = claim.metadata;
          current.spec = claim.spec;
        }
        stamp(current.metadata, false);
        stored = current;
      }
    }
    sched_->post(sched::Event{sched::Event::Op::kUpsert, stored});
    return stored;
  }

  Result<void> write_pod(const api::Pod& pod, const std::function<void(api::Pod&)>& mutate, std::string* unschedulable) {
    api::Pod stored;
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = pods_.find(key_of(pod.metadata));
      if (it == pods_.end()) return Status(Code::kNotFound, "pods \"" + pod.metadata.name + "\" not found");
      mutate(it->second);
      stamp(it->second.metadata, false);
      stored = it->second;
    }
    unschedulable->clear();
    for (const auto& c : stored.status.conditions) {
      if (c.type == "PodScheduled" && c.status == "False") *unschedulable = c.message.empty() ? c.reason : c.message;
    }
    sched_->post(sched::Event{sched::Event::Op::kUpsert, std::move(stored)});
    return {};
  }

  Tracker& tracker() { return tracker_; }

 private:
  // A fresh resourceVersion (and uid on create); called with mu_ held.
  void stamp(api::ObjectMeta& m, bool create) {
    m.resourceVersion = std::to_string(++rv_);
    if (create && m.uid.empty()) m.uid = "uid-" + std::to_string(rv_);
  }

  Tracker& tracker_;
  common::RealClock clock_;
  MemBinder binder_;
  std::unique_ptr<sched::Scheduler> sched_;
  std::atomic<bool> stop_{false};
  std::thread thread_;

  std::mutex mu_;
  int64_t rv_ = 0, names_ = 0;
  std::map<std::string, api::Pod> pods_;
  std::map<std::string, api::ResourceClaim> claims_;
  std::map<std::string, api::ResourceClaimTemplate> templates_;
};

Result<api::ResourceClaim> MemBinder::create_claim(const api::ResourceClaim& claim) {
  return t_.write_claim(claim, true, false);
}
Result<api::ResourceClaim> MemBinder::update_claim(const api::ResourceClaim& claim) {
  return t_.write_claim(claim, false, false);
}
Result<api::ResourceClaim> MemBinder::update_claim_status(const api::ResourceClaim& claim) {
  return t_.write_claim(claim, false, true);
}
Result<void> MemBinder::bind(const api::Pod& pod, const std::string& node) {
  std::string unschedulable;
  auto r = t_.write_pod(pod, [&](api::Pod& p) { p.spec.nodeName = node; }, &unschedulable);
  if (r.has_value()) t_.tracker().bound(pod_key(pod));
  return r;
}
Result<void> MemBinder::update_pod_status(const api::Pod& pod, const std::function<void(api::Pod&)>& mutate) {
  std::string unschedulable;
  auto r = t_.write_pod(pod, mutate, &unschedulable);
  if (r.has_value() && !unschedulable.empty()) t_.tracker().unschedulable(pod_key(pod), unschedulable);
  return r;
}

}  // namespace

Result<std::unique_ptr<Target>> make_inprocess_target(Tracker& tracker, const Options& options) {
  sched::SchedulerOptions o;
  // The reservation and binding written in the scheduling thread, not handed
  // to binding threads as `draplane scheduler` does (--bind-workers, for API
  // writes of a millisecond): the store's writes here take microseconds, less
  // than the hand-off (SteadyState/empty: 18-20k pods/s so, 12-16k with 16
  // binding threads; docs/benchmarks.md, session 12).
  o.bind_workers = 0;
  if (!options.policy.empty()) RETURN_IF_ERROR(sched::apply_policy(options.policy, o));
  return std::unique_ptr<Target>(std::make_unique<MemTarget>(tracker, o));
}

}  // namespace draplane::bench
