#include "controllers/replica_set_controller.h"


#include <algorithm>

#include "api/codec.h"
#include "client/resource_path.h"
#include "common/rfc3339.h"
#include "controllers/replica_set_logic.h"

namespace draplane::controllers {
namespace {

using client::resources::kPods;
using client::resources::kReplicaSets;

std::string key_of(const api::ObjectMeta& m) { return m.namespace_ + "/" + m.name; }

int64_t now_unix() { return common::unix_seconds_of(std::chrono::system_clock::now()); }

client::ObjectReference ref_of(const api::ReplicaSet& rs) {
  return {"apps/v1", "ReplicaSet", rs.metadata.namespace_, rs.metadata.name, rs.metadata.uid, "", ""};
}

// A DELETE of `name` guarded by its uid; a pod already gone is fine.
Result<void> delete_pod(client::RestClient& rest, const api::Pod& pod) {
  std::string opts = R"({"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":")" + pod.metadata.uid +
                     "\"}}";
  auto r = rest.request("DELETE", kPods.ns(pod.metadata.namespace_).name(pod.metadata.name), opts);
  if (!r.has_value()) return r.error();
  if (r->status == 404 || (r->status >= 200 && r->status < 300)) return {};
  return client::status_from_response(*r);
}

}  // namespace

ReplicaSetController::ReplicaSetController(client::RestClient& rest, ControllerOptions options)
    : QueueController(rest, {"replicaset-controller", "replicaset", options.workers, options.informers, options.logger},
                      [this](const std::string& key) { return sync(key).status(); }),
      sets_(informers_->replica_sets()),
      pods_(informers_->pods()) {
  sets_.add_handler([this](client::EventType, const api::ReplicaSet*, const api::ReplicaSet& rs) {
    workers_.queue().add(key_of(rs.metadata));
  });
  pods_.add_handler([this](client::EventType t, const api::Pod* old_pod, const api::Pod& pod) {
    on_pod(old_pod, pod, t == client::EventType::kDeleted);
  });
}

void ReplicaSetController::on_pod(const api::Pod* old_pod, const api::Pod& pod, bool deleted) {
  auto ref = controller_of(pod.metadata);
  if (ref && ref->kind == "ReplicaSet") {
    std::string key = pod.metadata.namespace_ + "/" + ref->name;
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = expect_.find(key);
      if (it != expect_.end()) {
        it->second.creates.erase(pod.metadata.uid);
        if (deleted) it->second.deletes.erase(pod.metadata.uid);
      }
    }
    workers_.queue().add(key);
  } else if (!deleted) {
    enqueue_matching(pod);  // an orphan: a ReplicaSet may adopt it
  }
  if (old_pod != nullptr) {
    auto old_ref = controller_of(old_pod->metadata);
    if (old_ref && old_ref->kind == "ReplicaSet" && (!ref || old_ref->uid != ref->uid)) {
      workers_.queue().add(pod.metadata.namespace_ + "/" + old_ref->name);
    }
    // New labels may make the pod match another ReplicaSet (or no longer match its own).
    if (old_pod->metadata.labels != pod.metadata.labels && !ref) enqueue_matching(*old_pod);
  }
}

void ReplicaSetController::enqueue_matching(const api::Pod& pod) {
  for (const auto& rs : sets_.list()) {
    if (rs.metadata.namespace_ == pod.metadata.namespace_ && selector_matches(rs.spec.selector, pod.metadata.labels)) {
      workers_.queue().add(key_of(rs.metadata));
    }
  }
}


Result<void> ReplicaSetController::set_owner(const api::Pod& pod, const std::optional<api::OwnerReference>& ref,
                                             const std::string& remove_uid) {
  api::Pod updated = pod;
  auto& refs = updated.metadata.ownerReferences;
  refs.erase(std::remove_if(refs.begin(), refs.end(), [&](const auto& r) { return r.uid == remove_uid; }), refs.end());
  if (ref) refs.push_back(*ref);
  auto out = rest_.put(kPods.ns(pod.metadata.namespace_).name(pod.metadata.name), api::to_json(api::Object(updated)));
  if (!out.has_value() && out.error().code() != Code::kNotFound) return out.error();
  return {};
}

Result<std::vector<api::Pod>> ReplicaSetController::claim_pods(const api::ReplicaSet& rs,
                                                               const std::vector<api::Pod>& all) {
  std::vector<api::Pod> out;
  const bool deleting = !rs.metadata.deletionTimestamp.empty();
  std::optional<bool> can_adopt;
  for (const auto& p : all) {
    if (!pod_active(p)) continue;
    auto ref = controller_of(p.metadata);
    bool matches = selector_matches(rs.spec.selector, p.metadata.labels);
    if (ref && ref->uid == rs.metadata.uid) {
      if (matches) {
        out.push_back(p);
      } else if (!deleting) {
        // Release: the selector no longer matches (upstream's ClaimObject).
        RETURN_IF_ERROR(set_owner(p, std::nullopt, rs.metadata.uid));
      }
      continue;
    }
    if (ref || !matches || deleting) continue;
    // Adopt an orphan, unless the server says the ReplicaSet is going away (the
    // cache may not show that yet: upstream's RecheckDeletionTimestamp).
    if (!can_adopt) {
      ASSIGN_OR_RETURN(std::string body, rest_.get(kReplicaSets.ns(rs.metadata.namespace_).name(rs.metadata.name)));
      ASSIGN_OR_RETURN(api::ReplicaSet fresh, api::decode_as<api::ReplicaSet>(body));
      can_adopt = fresh.metadata.uid == rs.metadata.uid && fresh.metadata.deletionTimestamp.empty();
    }
    if (!*can_adopt) continue;
    RETURN_IF_ERROR(set_owner(p, controller_ref("apps/v1", "ReplicaSet", rs.metadata), ""));
    out.push_back(p);
  }
  return out;
}

Status ReplicaSetController::manage(const api::ReplicaSet& rs, const std::vector<api::Pod>& controlled,
                                    const std::vector<api::Pod>& all, int pending_creates) {
  const std::string key = key_of(rs.metadata);
  const int want = rs.spec.replicas.value_or(1);
  const int diff = static_cast<int>(controlled.size()) + pending_creates - want;
  if (diff < 0) {
    // Slow start: batches of 1, 2, 4, ...; the first failure stops the rest.
    const int n = std::min(-diff, kBurstReplicas);
    const std::string body = api::to_json(api::Object(pod_from_template(rs)));
    int done = 0;
    for (int batch = 1; done < n; batch *= 2) {
      for (int i = 0, size = std::min(batch, n - done); i < size; ++i, ++done) {
        auto out = rest_.post(kPods.ns(rs.metadata.namespace_), body);
        if (!out.has_value()) {
          events_.record(ref_of(rs), "Warning", "FailedCreate", "", "Error creating: " + out.error().message());
          return out.error();
        }
        auto pod = api::decode_as<api::Pod>(*out);
        if (!pod.has_value()) return pod.error();
        {
          std::lock_guard<std::mutex> l(mu_);
          expect_[key].creates[pod->metadata.uid] = Clock::now();
        }
        events_.record(ref_of(rs), "Normal", "SuccessfulCreate", "", "Created pod: " + pod->metadata.name);
      }
    }
    return {};
  }
  if (diff == 0) return {};
  // The pods of this ReplicaSet's siblings (same controlling owner) rank the victims.
  std::vector<api::Pod> related = controlled;
  if (auto owner = controller_of(rs.metadata)) {
    std::set<std::string> siblings;
    for (const auto& s : sets_.list()) {
      auto o = controller_of(s.metadata);
      if (o && o->uid == owner->uid && s.metadata.uid != rs.metadata.uid) siblings.insert(s.metadata.uid);
    }
    for (const auto& p : all) {
      auto o = controller_of(p.metadata);
      if (o && siblings.count(o->uid)) related.push_back(p);
    }
  }
  for (const auto& victim : pods_to_delete(controlled, related, std::min(diff, kBurstReplicas))) {
    {
      std::lock_guard<std::mutex> l(mu_);
      expect_[key].deletes[victim.metadata.uid] = Clock::now();
    }
    auto st = delete_pod(rest_, victim);
    if (!st.has_value()) {
      std::lock_guard<std::mutex> l(mu_);
      expect_[key].deletes.erase(victim.metadata.uid);
      return st.error();
    }
    events_.record(ref_of(rs), "Normal", "SuccessfulDelete", "", "Deleted pod: " + victim.metadata.name);
  }
  return {};
}

Result<void> ReplicaSetController::write_status(const api::ReplicaSet& rs, const api::ReplicaSetStatus& st) {
  api::ReplicaSet updated = rs;
  updated.status = st;
  auto out = rest_.put(kReplicaSets.ns(rs.metadata.namespace_).name(rs.metadata.name).sub("status"),
                       api::to_json(api::Object(updated)));
  if (!out.has_value() && out.error().code() != Code::kNotFound) return out.error();
  return {};
}

Result<void> ReplicaSetController::sync(const std::string& key) {
  RETURN_IF_ERROR(caches_synced());
  auto rs = sets_.get(key);
  if (!rs) {
    std::lock_guard<std::mutex> l(mu_);
    expect_.erase(key);
    return {};
  }
  // The expectations are read before the pods are listed (upstream's
  // satisfiedExpectations): the pod handler drops one only once the cache shows
  // the write, so read after the list, a pod added meanwhile would be neither
  // listed nor expected, and one more would be created.
  decltype(expect_)::mapped_type seen_before_list;
  {
    std::lock_guard<std::mutex> l(mu_);
    seen_before_list = expect_[key];
  }
  std::vector<api::Pod> all;
  for (auto& p : pods_.list()) {
    if (p.metadata.namespace_ == rs->metadata.namespace_) all.push_back(std::move(p));
  }
  ASSIGN_OR_RETURN(std::vector<api::Pod> controlled, claim_pods(*rs, all));
  // Our writes the cache does not show yet (expectations).
  int pending_creates = 0;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto& e = expect_[key];
    std::set<std::string> cached;
    for (const auto& p : all) cached.insert(p.metadata.uid);
    const auto now = Clock::now();
    for (auto it = seen_before_list.creates.begin(); it != seen_before_list.creates.end();) {
      bool settled = cached.count(it->first) || now - it->second > kExpectationTtl;
      if (settled) e.creates.erase(it->first);
      it = settled ? seen_before_list.creates.erase(it) : std::next(it);
    }
    for (auto it = seen_before_list.deletes.begin(); it != seen_before_list.deletes.end();) {
      bool settled = !cached.count(it->first) || now - it->second > kExpectationTtl;
      if (settled) e.deletes.erase(it->first);
      it = settled ? seen_before_list.deletes.erase(it) : std::next(it);
    }
    pending_creates = static_cast<int>(seen_before_list.creates.size());
    controlled.erase(std::remove_if(controlled.begin(), controlled.end(),
                                    [&](const api::Pod& p) { return seen_before_list.deletes.count(p.metadata.uid) > 0; }),
                     controlled.end());
  }
  Status managed;
  if (rs->metadata.deletionTimestamp.empty()) managed = manage(*rs, controlled, all, pending_creates);
  const int64_t now = now_unix();
  std::string reason, message;
  if (!managed.ok()) {
    reason = static_cast<int>(controlled.size()) < rs->spec.replicas.value_or(1) ? "FailedCreate" : "FailedDelete";
    message = managed.message();
  }
  api::ReplicaSetStatus st = replica_set_status(*rs, controlled, now, reason, message);
  if (st != rs->status) RETURN_IF_ERROR(write_status(*rs, st));
  // A ready pod becomes available after minReadySeconds: look again then.
  int64_t wait = 0;
  for (const auto& p : controlled) {
    int64_t s = seconds_until_available(p, rs->spec.minReadySeconds, now);
    if (s > 0 && (wait == 0 || s < wait)) wait = s;
  }
  if (wait > 0) workers_.queue().add_after(key, std::chrono::seconds(wait));
  return managed;
}

}  // namespace draplane::controllers
