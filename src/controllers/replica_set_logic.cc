#include "controllers/replica_set_logic.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <tuple>

#include "common/rfc3339.h"

namespace draplane::controllers {
namespace {

bool requirement_matches(const api::LabelSelectorRequirement& r, const std::map<std::string, std::string>& labels) {
  auto it = labels.find(r.key);
  bool has = it != labels.end();
  bool in = has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
  if (r.operator_ == "In") return in;
  if (r.operator_ == "NotIn") return !in;
  if (r.operator_ == "Exists") return has;
  if (r.operator_ == "DoesNotExist") return !has;
  return false;  // validation rejects other operators
}

const api::PodCondition* ready_condition(const api::Pod& pod) {
  for (const auto& c : pod.status.conditions) {
    if (c.type == "Ready") return &c;
  }
  return nullptr;
}

// Upstream's podPhaseToOrdinal: Pending < Unknown < Running.
int phase_ordinal(const std::string& phase) {
  if (phase == "Pending") return 0;
  if (phase == "Unknown") return 1;
  if (phase == "Running") return 2;
  return 3;
}

// The most restarts of any container of the pod (maxContainerRestarts).
int64_t max_restarts(const api::Pod& pod) {
  if (pod.status.containerStatuses.empty()) return 0;
  rapidjson::Document d;
  d.Parse(pod.status.containerStatuses.text.c_str());
  if (d.HasParseError() || !d.IsArray()) return 0;
  int64_t most = 0;
  for (const auto& c : d.GetArray()) {
    if (!c.IsObject()) continue;
    auto r = c.FindMember("restartCount");
    if (r != c.MemberEnd() && r->value.IsInt64()) most = std::max(most, r->value.GetInt64());
  }
  return most;
}

// Unix seconds of an RFC 3339 time; `missing` when unset or unreadable.
int64_t seconds_of(const std::string& t, int64_t missing) { return common::parse_rfc3339(t).value_or(missing); }

}  // namespace

bool selector_matches(const std::optional<api::LabelSelector>& selector,
                      const std::map<std::string, std::string>& labels) {
  if (!selector) return false;
  for (const auto& [k, v] : selector->matchLabels) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  for (const auto& r : selector->matchExpressions) {
    if (!requirement_matches(r, labels)) return false;
  }
  return true;
}

std::optional<api::OwnerReference> controller_of(const api::ObjectMeta& meta) {
  for (const auto& r : meta.ownerReferences) {
    if (r.controller.value_or(false)) return r;
  }
  return std::nullopt;
}

api::OwnerReference controller_ref(const std::string& api_version, const std::string& kind,
                                   const api::ObjectMeta& owner) {
  api::OwnerReference r;
  r.apiVersion = api_version;
  r.kind = kind;
  r.name = owner.name;
  r.uid = owner.uid;
  r.controller = true;
  r.blockOwnerDeletion = true;
  return r;
}

bool pod_active(const api::Pod& pod) {
  return pod.status.phase != "Succeeded" && pod.status.phase != "Failed" && pod.metadata.deletionTimestamp.empty();
}

bool pod_ready(const api::Pod& pod) {
  const api::PodCondition* c = ready_condition(pod);
  return c != nullptr && c->status == "True";
}

int64_t seconds_until_available(const api::Pod& pod, int32_t min_ready_seconds, int64_t now_unix) {
  if (!pod_ready(pod) || min_ready_seconds <= 0) return 0;
  const api::PodCondition* c = ready_condition(pod);
  auto since = common::parse_rfc3339(c->lastTransitionTime);
  if (!since) return 0;  // no transition time: upstream counts it available
  return std::max<int64_t>(0, *since + min_ready_seconds - now_unix);
}

bool pod_available(const api::Pod& pod, int32_t min_ready_seconds, int64_t now_unix) {
  if (!pod_ready(pod)) return false;
  if (min_ready_seconds <= 0) return true;
  const api::PodCondition* c = ready_condition(pod);
  auto since = common::parse_rfc3339(c->lastTransitionTime);
  return !since || *since + min_ready_seconds <= now_unix;
}

api::Pod pod_from_template(const api::ReplicaSet& rs) {
  api::Pod pod;
  pod.typeMeta = {"v1", "Pod"};
  const auto& t = rs.spec.template_;
  pod.metadata.labels = t.metadata.labels;
  pod.metadata.annotations = t.metadata.annotations;
  pod.metadata.finalizers = t.metadata.finalizers;
  pod.metadata.namespace_ = rs.metadata.namespace_;
  // Upstream's getPodsPrefix: "<controller name>-" (the API server completes it).
  pod.metadata.generateName = rs.metadata.name + "-";
  pod.metadata.ownerReferences.push_back(controller_ref("apps/v1", "ReplicaSet", rs.metadata));
  pod.spec = t.spec;
  return pod;
}

std::vector<api::Pod> pods_to_delete(const std::vector<api::Pod>& pods, const std::vector<api::Pod>& related,
                                     int count) {
  if (count <= 0) return {};
  if (static_cast<size_t>(count) >= pods.size()) return pods;
  // Rank: how many related active pods share the pod's node.
  std::map<std::string, int> on_node;
  for (const auto& p : related) {
    if (pod_active(p) && !p.spec.nodeName.empty()) ++on_node[p.spec.nodeName];
  }
  struct Ranked {
    const api::Pod* pod;
    int rank;
    int64_t ready_since;
    int64_t restarts;
    int64_t created;
  };
  std::vector<Ranked> ranked;
  for (const auto& p : pods) {
    const api::PodCondition* rc = ready_condition(p);
    int64_t ready_since = pod_ready(p) && rc ? seconds_of(rc->lastTransitionTime, INT64_MAX) : INT64_MAX;
    ranked.push_back({&p, p.spec.nodeName.empty() ? 0 : on_node[p.spec.nodeName], ready_since, max_restarts(p),
                      seconds_of(p.metadata.creationTimestamp, INT64_MAX)});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    const api::Pod& x = *a.pod;
    const api::Pod& y = *b.pod;
    bool xa = !x.spec.nodeName.empty(), ya = !y.spec.nodeName.empty();
    if (xa != ya) return !xa;  // unassigned first
    int xp = phase_ordinal(x.status.phase), yp = phase_ordinal(y.status.phase);
    if (xp != yp) return xp < yp;
    bool xr = pod_ready(x), yr = pod_ready(y);
    if (xr != yr) return !xr;  // not ready first
    if (a.rank != b.rank) return a.rank > b.rank;  // doubled-up pods first
    if (xr && a.ready_since != b.ready_since) return a.ready_since > b.ready_since;  // ready for less time first
    if (a.restarts != b.restarts) return a.restarts > b.restarts;
    return a.created > b.created;  // newer first (an unset time counts as newest)
  });
  std::vector<api::Pod> out;
  for (int i = 0; i < count; ++i) out.push_back(*ranked[i].pod);
  return out;
}

api::ReplicaSetStatus replica_set_status(const api::ReplicaSet& rs, const std::vector<api::Pod>& pods,
                                         int64_t now_unix, const std::string& failure_reason,
                                         const std::string& failure_message) {
  api::ReplicaSetStatus st = rs.status;
  st.replicas = static_cast<int32_t>(pods.size());
  st.fullyLabeledReplicas = 0;
  st.readyReplicas = 0;
  st.availableReplicas = 0;
  for (const auto& p : pods) {
    bool fully = std::all_of(rs.spec.template_.metadata.labels.begin(), rs.spec.template_.metadata.labels.end(),
                             [&](const auto& kv) {
                               auto it = p.metadata.labels.find(kv.first);
                               return it != p.metadata.labels.end() && it->second == kv.second;
                             });
    st.fullyLabeledReplicas += fully;
    if (pod_ready(p)) {
      ++st.readyReplicas;
      st.availableReplicas += pod_available(p, rs.spec.minReadySeconds, now_unix);
    }
  }
  st.observedGeneration = rs.metadata.generation;
  auto& conds = st.conditions;
  auto it = std::find_if(conds.begin(), conds.end(), [](const auto& c) { return c.type == "ReplicaFailure"; });
  if (!failure_reason.empty() && it == conds.end()) {
    api::WorkloadCondition c;
    c.type = "ReplicaFailure";
    c.status = "True";
    c.lastTransitionTime = common::format_rfc3339(now_unix);
    c.reason = failure_reason;
    c.message = failure_message;
    conds.push_back(c);
  } else if (failure_reason.empty() && it != conds.end()) {
    conds.erase(it);
  }
  return st;
}

}  // namespace draplane::controllers
