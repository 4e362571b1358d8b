#include "controllers/deployment_controller.h"


#include <algorithm>
#include <climits>

#include "api/codec.h"
#include "client/resource_path.h"
#include "common/rfc3339.h"
#include "controllers/deployment_logic.h"
#include "controllers/replica_set_logic.h"

namespace draplane::controllers {
namespace {

using client::resources::kDeployments;
using client::resources::kReplicaSets;

std::string key_of(const api::ObjectMeta& m) { return m.namespace_ + "/" + m.name; }
int64_t now_unix() { return common::unix_seconds_of(std::chrono::system_clock::now()); }

client::ObjectReference ref_of(const api::Deployment& d) {
  return {"apps/v1", "Deployment", d.metadata.namespace_, d.metadata.name, d.metadata.uid, "", ""};
}

client::Path rs_path(const api::ReplicaSet& rs) { return kReplicaSets.ns(rs.metadata.namespace_).name(rs.metadata.name); }

bool has_revision_history_limit(const api::Deployment& d) {
  return d.spec.revisionHistoryLimit && *d.spec.revisionHistoryLimit != INT32_MAX;
}

bool has_progress_deadline(const api::Deployment& d) {
  return d.spec.progressDeadlineSeconds && *d.spec.progressDeadlineSeconds != INT32_MAX;
}

}  // namespace

DeploymentController::DeploymentController(client::RestClient& rest, ControllerOptions options)
    : QueueController(rest, {"deployment-controller", "deployment", options.workers, options.informers, options.logger},
                      [this](const std::string& key) { return sync(key).status(); }),
      deployments_(informers_->deployments()),
      sets_(informers_->replica_sets()) {
  deployments_.add_handler([this](client::EventType, const api::Deployment*, const api::Deployment& d) {
    workers_.queue().add(key_of(d.metadata));
  });
  sets_.add_handler([this](client::EventType t, const api::ReplicaSet* old_rs, const api::ReplicaSet& rs) {
    on_replica_set(old_rs, rs, t == client::EventType::kDeleted);
  });
}

void DeploymentController::on_replica_set(const api::ReplicaSet* old_rs, const api::ReplicaSet& rs, bool deleted) {
  auto ref = controller_of(rs.metadata);
  if (ref && ref->kind == "Deployment") {
    workers_.queue().add(rs.metadata.namespace_ + "/" + ref->name);
  } else if (!deleted) {
    // An orphan: a Deployment whose selector matches may adopt it.
    for (const auto& d : deployments_.list()) {
      if (d.metadata.namespace_ == rs.metadata.namespace_ && selector_matches(d.spec.selector, rs.metadata.labels)) {
        workers_.queue().add(key_of(d.metadata));
      }
    }
  }
  if (old_rs != nullptr) {
    auto old_ref = controller_of(old_rs->metadata);
    if (old_ref && old_ref->kind == "Deployment" && (!ref || ref->uid != old_ref->uid)) {
      workers_.queue().add(rs.metadata.namespace_ + "/" + old_ref->name);
    }
  }
}


Result<std::vector<api::ReplicaSet>> DeploymentController::claim_replica_sets(const api::Deployment& d) {
  std::vector<api::ReplicaSet> out;
  const bool deleting = !d.metadata.deletionTimestamp.empty();
  std::optional<bool> can_adopt;
  for (auto& rs : sets_.list()) {
    if (rs.metadata.namespace_ != d.metadata.namespace_) continue;
    auto ref = controller_of(rs.metadata);
    const bool matches = selector_matches(d.spec.selector, rs.metadata.labels);
    if (ref && ref->uid == d.metadata.uid) {
      if (matches || deleting) {
        out.push_back(std::move(rs));
        continue;
      }
      // Release: the selector no longer matches.
      auto& refs = rs.metadata.ownerReferences;
      refs.erase(std::remove_if(refs.begin(), refs.end(), [&](const auto& r) { return r.uid == d.metadata.uid; }),
                 refs.end());
    } else if (!ref && matches && !deleting && rs.metadata.deletionTimestamp.empty()) {
      // Adopt, unless the server says the Deployment is going away (the cache may
      // not show that yet: upstream's RecheckDeletionTimestamp).
      if (!can_adopt) {
        ASSIGN_OR_RETURN(std::string body, rest_.get(kDeployments.ns(d.metadata.namespace_).name(d.metadata.name)));
        ASSIGN_OR_RETURN(api::Deployment fresh, api::decode_as<api::Deployment>(body));
        can_adopt = fresh.metadata.uid == d.metadata.uid && fresh.metadata.deletionTimestamp.empty();
      }
      if (!*can_adopt) continue;
      rs.metadata.ownerReferences.push_back(controller_ref("apps/v1", "Deployment", d.metadata));
    } else {
      continue;
    }
    auto written = rest_.put(rs_path(rs), api::to_json(api::Object(rs)));
    if (!written.has_value()) {
      if (written.error().code() == Code::kNotFound) continue;
      return written.error();
    }
    ASSIGN_OR_RETURN(api::ReplicaSet now, api::decode_as<api::ReplicaSet>(*written));
    if (controller_of(now.metadata)) out.push_back(std::move(now));  // adopted
  }
  sort_by_creation(out);
  return out;
}

std::vector<const api::ReplicaSet*> DeploymentController::all_of(const State& s, const Split& split) const {
  std::vector<const api::ReplicaSet*> all;
  for (int i : split.old) all.push_back(&s.list[i]);
  if (split.new_rs >= 0) all.push_back(&s.list[split.new_rs]);
  return all;
}

Result<void> DeploymentController::write_deployment(State& s, bool status) {
  auto path = kDeployments.ns(s.d.metadata.namespace_).name(s.d.metadata.name);
  ASSIGN_OR_RETURN(std::string out, rest_.put(status ? path.sub("status") : path, api::to_json(api::Object(s.d))));
  ASSIGN_OR_RETURN(s.d, api::decode_as<api::Deployment>(out));
  return {};
}

Result<int> DeploymentController::create_new(State& s, const Split& split, int64_t revision) {
  api::ReplicaSet rs = new_replica_set(s.d);
  std::vector<api::ReplicaSet> all;
  for (int i : split.old) all.push_back(s.list[i]);
  all.push_back(rs);
  rs.spec.replicas = new_rs_new_replicas(s.d, all, rs);
  set_new_replica_set_annotations(s.d, rs, revision, false);
  bool already_exists = false;
  auto out = rest_.post(kReplicaSets.ns(rs.metadata.namespace_), api::to_json(api::Object(rs)));
  if (!out.has_value() && out.error().code() == Code::kAlreadyExists) {
    // Ours from an earlier sync the cache does not show yet, or a hash collision.
    ASSIGN_OR_RETURN(std::string body, rest_.get(rs_path(rs)));
    ASSIGN_OR_RETURN(api::ReplicaSet existing, api::decode_as<api::ReplicaSet>(body));
    auto ref = controller_of(existing.metadata);
    if (!ref || ref->uid != s.d.metadata.uid || !equal_ignore_hash(existing.spec.template_, s.d.spec.template_)) {
      s.d.status.collisionCount = s.d.status.collisionCount.value_or(0) + 1;
      RETURN_IF_ERROR(write_deployment(s, true));
      return conflict_error("deployment " + key_of(s.d.metadata) + ": hash collision with replicaset " +
                            existing.metadata.name + ", status.collisionCount raised");
    }
    already_exists = true;
    out = body;
  }
  if (!out.has_value()) return out.error();
  ASSIGN_OR_RETURN(api::ReplicaSet created, api::decode_as<api::ReplicaSet>(*out));
  if (!already_exists && replicas_of(created) > 0) {
    events_.record(ref_of(s.d), "Normal", "ScalingReplicaSet", "",
                   "Scaled up replica set " + created.metadata.name + " from 0 to " +
                       std::to_string(replicas_of(created)));
  }
  s.list.push_back(std::move(created));
  const int index = static_cast<int>(s.list.size()) - 1;
  const std::string rev = s.list[index].metadata.annotations[kRevisionAnnotation];
  if (s.d.metadata.annotations[kRevisionAnnotation] != rev) {
    s.d.metadata.annotations[kRevisionAnnotation] = rev;
    RETURN_IF_ERROR(write_deployment(s, false));
  }
  if (!already_exists && has_progress_deadline(s.d)) {
    set_condition(s.d.status, new_condition("Progressing", "True", kNewRSCreatedReason,
                                            "Created new replica set \"" + s.list[index].metadata.name + "\"",
                                            now_unix()));
    RETURN_IF_ERROR(write_deployment(s, true));
  }
  return index;
}

Result<DeploymentController::Split> DeploymentController::get_all(State& s, bool create) {
  Split split;
  split.new_rs = find_new_replica_set(s.d, s.list);
  int64_t max_old = 0;
  for (int i = 0; i < static_cast<int>(s.list.size()); ++i) {
    if (i == split.new_rs) continue;
    split.old.push_back(i);
    max_old = std::max(max_old, revision_of(s.list[i].metadata));
  }
  const int64_t revision = max_old + 1;
  if (split.new_rs < 0) {
    if (create) {
      ASSIGN_OR_RETURN(split.new_rs, create_new(s, split, revision));
    }
    return split;
  }
  api::ReplicaSet& rs = s.list[split.new_rs];
  api::ReplicaSet copy = rs;
  bool changed = set_new_replica_set_annotations(s.d, copy, revision, true);
  if (copy.spec.minReadySeconds != s.d.spec.minReadySeconds) {
    copy.spec.minReadySeconds = s.d.spec.minReadySeconds;
    changed = true;
  }
  if (changed) {
    ASSIGN_OR_RETURN(std::string out, rest_.put(rs_path(rs), api::to_json(api::Object(copy))));
    ASSIGN_OR_RETURN(rs, api::decode_as<api::ReplicaSet>(out));
  }
  const std::string rev = rs.metadata.annotations[kRevisionAnnotation];
  auto it = s.d.metadata.annotations.find(kRevisionAnnotation);
  if (it == s.d.metadata.annotations.end() || it->second != rev) {
    s.d.metadata.annotations[kRevisionAnnotation] = rev;
    RETURN_IF_ERROR(write_deployment(s, false));
  }
  if (has_progress_deadline(s.d) && find_condition(s.d.status, "Progressing") == nullptr) {
    set_condition(s.d.status, new_condition("Progressing", "True", kFoundNewRSReason,
                                            "Found new replica set \"" + rs.metadata.name + "\"", now_unix()));
    RETURN_IF_ERROR(write_deployment(s, true));
  }
  return split;
}

Result<bool> DeploymentController::scale(State& s, int index, int32_t replicas, bool always_annotate) {
  api::ReplicaSet& rs = s.list[index];
  const int32_t from = replicas_of(rs);
  const bool resize = from != replicas;
  if (!resize && !always_annotate) return false;
  api::ReplicaSet copy = rs;
  bool annotate = set_replicas_annotations(copy, replicas_of(s.d), replicas_of(s.d) + max_surge(s.d));
  if (!resize && !annotate) return false;
  copy.spec.replicas = replicas;
  ASSIGN_OR_RETURN(std::string out, rest_.put(rs_path(rs), api::to_json(api::Object(copy))));
  ASSIGN_OR_RETURN(rs, api::decode_as<api::ReplicaSet>(out));
  if (resize) {
    events_.record(ref_of(s.d), "Normal", "ScalingReplicaSet", "",
                   std::string("Scaled ") + (replicas > from ? "up" : "down") + " replica set " + rs.metadata.name +
                       " from " + std::to_string(from) + " to " + std::to_string(replicas));
  }
  return resize;
}

Result<void> DeploymentController::scale_proportionally(State& s, const Split& split) {
  std::vector<int> active;
  for (int i : split.old) {
    if (replicas_of(s.list[i]) > 0) active.push_back(i);
  }
  if (split.new_rs >= 0 && replicas_of(s.list[split.new_rs]) > 0) active.push_back(split.new_rs);
  // One active ReplicaSet (or none: the newest takes it): it gets all replicas.
  if (active.size() <= 1) {
    int target = active.empty() ? split.new_rs : active[0];
    if (target < 0 && !split.old.empty()) target = split.old.back();  // the newest (`list` is oldest first)
    if (target >= 0) RETURN_IF_ERROR(scale(s, target, replicas_of(s.d), false).status());
    return {};
  }
  // The new ReplicaSet is saturated: the old ones go.
  if (split.new_rs >= 0) {
    const api::ReplicaSet& n = s.list[split.new_rs];
    auto desired = n.metadata.annotations.find(kDesiredReplicasAnnotation);
    if (desired != n.metadata.annotations.end() && desired->second == std::to_string(replicas_of(s.d)) &&
        n.status.availableReplicas == replicas_of(s.d) && replicas_of(n) == replicas_of(s.d)) {
      for (int i : split.old) RETURN_IF_ERROR(scale(s, i, 0, false).status());
      return {};
    }
  }
  if (!is_rolling_update(s.d)) return {};
  std::vector<api::ReplicaSet> sets;
  for (int i : active) sets.push_back(s.list[i]);
  auto sizes = proportional_sizes(s.d, sets);
  for (int i : active) RETURN_IF_ERROR(scale(s, i, sizes[s.list[i].metadata.name], true).status());
  return {};
}

Result<void> DeploymentController::cleanup(State& s, const Split& split) {
  if (!has_revision_history_limit(s.d)) return {};
  std::vector<int> cleanable;
  for (int i : split.old) {
    if (s.list[i].metadata.deletionTimestamp.empty()) cleanable.push_back(i);
  }
  const int diff = static_cast<int>(cleanable.size()) - *s.d.spec.revisionHistoryLimit;
  if (diff <= 0) return {};
  // Oldest revisions first (ties: by creation, as `list` is).
  std::stable_sort(cleanable.begin(), cleanable.end(), [&](int a, int b) {
    return revision_of(s.list[a].metadata) < revision_of(s.list[b].metadata);
  });
  for (int k = 0; k < diff; ++k) {
    const api::ReplicaSet& rs = s.list[cleanable[k]];
    if (rs.status.replicas != 0 || replicas_of(rs) != 0 || rs.metadata.generation > rs.status.observedGeneration) {
      continue;  // still has pods, or its controller has not caught up
    }
    auto r = rest_.request("DELETE", rs_path(rs),
                           R"({"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":")" + rs.metadata.uid + "\"}}");
    if (!r.has_value()) return r.error();
    if (r->status != 404 && (r->status < 200 || r->status >= 300)) return client::status_from_response(*r);
  }
  return {};
}

Result<void> DeploymentController::sync_status(State& s, const Split& split, bool rollout) {
  const int64_t now = now_unix();
  const api::ReplicaSet* new_rs = split.new_rs >= 0 ? &s.list[split.new_rs] : nullptr;
  api::DeploymentStatus st =
      rollout ? rollout_status(s.d, all_of(s, split), new_rs, now) : calculate_status(s.d, all_of(s, split), new_rs, now);
  if (st != s.d.status) {
    s.d.status = st;
    RETURN_IF_ERROR(write_deployment(s, true));
  }
  // requeueStuckDeployment: look again when the progress deadline passes.
  const auto* c = find_condition(s.d.status, "Progressing");
  if (rollout && has_progress_deadline(s.d) && c != nullptr && c->reason != kTimedOutReason &&
      !deployment_complete(s.d, s.d.status)) {
    int64_t due = common::parse_rfc3339(c->lastUpdateTime).value_or(now) + *s.d.spec.progressDeadlineSeconds - now;
    workers_.queue().add_after(key_of(s.d.metadata), std::chrono::seconds(std::max<int64_t>(1, due + 1)));
  }
  return {};
}

Result<void> DeploymentController::check_paused_condition(State& s) {
  if (!has_progress_deadline(s.d)) return {};
  const auto* c = find_condition(s.d.status, "Progressing");
  if (c != nullptr && c->reason == kTimedOutReason) return {};
  const bool paused_cond = c != nullptr && c->reason == kPausedReason;
  if (s.d.spec.paused && !paused_cond) {
    set_condition(s.d.status, new_condition("Progressing", "Unknown", kPausedReason, "Deployment is paused", now_unix()));
  } else if (!s.d.spec.paused && paused_cond) {
    set_condition(s.d.status, new_condition("Progressing", "Unknown", kResumedReason, "Deployment is resumed", now_unix()));
  } else {
    return {};
  }
  return write_deployment(s, true);
}

Result<bool> DeploymentController::reconcile_old(State& s, const Split& split) {
  std::vector<int> old;
  for (int i : split.old) {
    if (replicas_of(s.list[i]) > 0) old.push_back(i);
  }
  if (old.empty()) return false;
  const api::ReplicaSet& n = s.list[split.new_rs];
  const int32_t min_available = replicas_of(s.d) - max_unavailable(s.d);
  const int32_t new_unavailable = replicas_of(n) - n.status.availableReplicas;
  const int32_t max_scaled_down = spec_replicas(all_of(s, split)) - min_available - new_unavailable;
  if (max_scaled_down <= 0) return false;
  bool scaled = false;
  // First the unhealthy replicas of old ReplicaSets (oldest first; `old` is).
  int32_t cleaned = 0;
  for (int i : old) {
    if (cleaned >= max_scaled_down) break;
    const api::ReplicaSet& rs = s.list[i];
    if (replicas_of(rs) == 0 || rs.status.availableReplicas == replicas_of(rs)) continue;
    int32_t down = std::min(max_scaled_down - cleaned, replicas_of(rs) - rs.status.availableReplicas);
    ASSIGN_OR_RETURN(bool r, scale(s, i, replicas_of(rs) - down, false));
    scaled |= r;
    cleaned += down;
  }
  // Then healthy ones, as far as availability allows.
  const int32_t available = available_replicas(all_of(s, split));
  if (available > min_available) {
    const int32_t total = available - min_available;
    int32_t done = 0;
    for (int i : old) {
      if (done >= total) break;
      const api::ReplicaSet& rs = s.list[i];
      if (replicas_of(rs) == 0) continue;
      int32_t down = std::min(replicas_of(rs), total - done);
      ASSIGN_OR_RETURN(bool r, scale(s, i, replicas_of(rs) - down, false));
      scaled |= r;
      done += down;
    }
  }
  return scaled;
}

Result<void> DeploymentController::rollout_rolling(State& s) {
  ASSIGN_OR_RETURN(Split split, get_all(s, true));
  const int32_t want = replicas_of(s.d);
  const int32_t have = replicas_of(s.list[split.new_rs]);
  if (have != want) {
    std::vector<api::ReplicaSet> all;
    for (const auto* rs : all_of(s, split)) all.push_back(*rs);
    int32_t target = have > want ? want : new_rs_new_replicas(s.d, all, s.list[split.new_rs]);
    ASSIGN_OR_RETURN(bool up, scale(s, split.new_rs, target, false));
    if (up) return sync_status(s, split, true);
  }
  ASSIGN_OR_RETURN(bool down, reconcile_old(s, split));
  if (down) return sync_status(s, split, true);
  if (deployment_complete(s.d, s.d.status)) RETURN_IF_ERROR(cleanup(s, split));
  return sync_status(s, split, true);
}

Result<void> DeploymentController::rollout_recreate(State& s) {
  ASSIGN_OR_RETURN(Split split, get_all(s, false));
  bool scaled_down = false;
  for (int i : split.old) {
    if (replicas_of(s.list[i]) == 0) continue;
    ASSIGN_OR_RETURN(bool r, scale(s, i, 0, false));
    scaled_down |= r;
  }
  if (scaled_down) return sync_status(s, split, true);
  // The old pods must be gone before new ones start.
  for (int i : split.old) {
    if (s.list[i].status.replicas > 0) return sync_status(s, split, true);
  }
  if (split.new_rs < 0) {
    ASSIGN_OR_RETURN(split, get_all(s, true));
  }
  RETURN_IF_ERROR(scale(s, split.new_rs, replicas_of(s.d), false).status());
  if (deployment_complete(s.d, s.d.status)) RETURN_IF_ERROR(cleanup(s, split));
  return sync_status(s, split, true);
}

Result<void> DeploymentController::sync(const std::string& key) {
  RETURN_IF_ERROR(caches_synced());
  auto d = deployments_.get(key);
  if (!d) return {};
  State s;
  s.d = std::move(*d);
  ASSIGN_OR_RETURN(s.list, claim_replica_sets(s.d));
  if (!s.d.metadata.deletionTimestamp.empty()) {
    ASSIGN_OR_RETURN(Split split, get_all(s, false));
    return sync_status(s, split, false);
  }
  RETURN_IF_ERROR(check_paused_condition(s));
  ASSIGN_OR_RETURN(Split split, get_all(s, false));
  bool scaling = false;
  for (const auto* rs : all_of(s, split)) {
    if (replicas_of(*rs) == 0) continue;
    auto it = rs->metadata.annotations.find(kDesiredReplicasAnnotation);
    scaling |= it != rs->metadata.annotations.end() && it->second != std::to_string(replicas_of(s.d));
  }
  if (s.d.spec.paused || scaling) {
    RETURN_IF_ERROR(scale_proportionally(s, split));
    if (s.d.spec.paused) RETURN_IF_ERROR(cleanup(s, split));
    return sync_status(s, split, false);
  }
  return is_rolling_update(s.d) ? rollout_rolling(s) : rollout_recreate(s);
}

}  // namespace draplane::controllers
