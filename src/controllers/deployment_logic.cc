#include "controllers/deployment_logic.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>

#include "common/parse_int.h"
#include "api/codec.h"
#include "common/rfc3339.h"
#include "common/split.h"
#include "controllers/replica_set_logic.h"

namespace draplane::controllers {
namespace {

// Upstream's maxRevHistoryLengthInChars.
constexpr size_t kMaxRevisionHistoryChars = 2000;

// The annotations the controller keeps for itself (skipCopyAnnotation).
bool skip_copy_annotation(const std::string& key) {
  return key == "kubectl.kubernetes.io/last-applied-configuration" || key == kRevisionAnnotation ||
         key == kRevisionHistoryAnnotation || key == kDesiredReplicasAnnotation || key == kMaxReplicasAnnotation ||
         key == "deprecated.deployment.rollback.to";
}

std::optional<int64_t> parse_int(std::string_view s) { return common::parse_int64(s); }

std::optional<int32_t> int_annotation(const api::ReplicaSet& rs, const char* key) {
  auto it = rs.metadata.annotations.find(key);
  if (it == rs.metadata.annotations.end()) return std::nullopt;
  auto v = parse_int(it->second);
  if (!v || *v < INT32_MIN || *v > INT32_MAX) return std::nullopt;
  return static_cast<int32_t>(*v);
}

bool created_before(const api::ReplicaSet& a, const api::ReplicaSet& b) {
  int64_t ta = common::parse_rfc3339(a.metadata.creationTimestamp).value_or(0);
  int64_t tb = common::parse_rfc3339(b.metadata.creationTimestamp).value_or(0);
  if (ta != tb) return ta < tb;
  return a.metadata.name < b.metadata.name;
}

bool has_progress_deadline(const api::Deployment& d) {
  return d.spec.progressDeadlineSeconds && *d.spec.progressDeadlineSeconds != INT32_MAX;
}

// getReplicaSetFraction: this ReplicaSet's share of a resize.
int32_t replica_set_fraction(const api::ReplicaSet& rs, const api::Deployment& d) {
  if (replicas_of(d) == 0) return -replicas_of(rs);
  int64_t deployment_replicas = replicas_of(d) + max_surge(d);
  int64_t annotated = int_annotation(rs, kMaxReplicasAnnotation).value_or(d.status.replicas);
  if (annotated == 0) return 0;
  double size = static_cast<double>(replicas_of(rs) * deployment_replicas) / static_cast<double>(annotated);
  return static_cast<int32_t>(std::round(size)) - replicas_of(rs);
}

// GetProportion: bounded by what is left to add (or remove).
int32_t proportion(const api::ReplicaSet& rs, const api::Deployment& d, int32_t to_add, int32_t added) {
  if (replicas_of(rs) == 0 || to_add == 0 || to_add == added) return 0;
  int32_t fraction = replica_set_fraction(rs, d);
  int32_t allowed = to_add - added;
  return to_add > 0 ? std::min(fraction, allowed) : std::max(fraction, allowed);
}

}  // namespace

int32_t replicas_of(const api::Deployment& d) { return d.spec.replicas.value_or(1); }
int32_t replicas_of(const api::ReplicaSet& rs) { return rs.spec.replicas.value_or(1); }

int32_t scaled_value(const api::RawJson& value, int32_t total, bool round_up, int32_t fallback) {
  const std::string& t = value.text;
  if (t.empty()) return fallback;
  if (t.front() != '"') return static_cast<int32_t>(parse_int(t).value_or(fallback));
  std::string s = t.substr(1, t.size() >= 2 ? t.size() - 2 : 0);
  if (s.empty() || s.back() != '%') return fallback;  // validation accepts only percents as strings
  auto pct = parse_int(s.substr(0, s.size() - 1));
  if (!pct) return fallback;
  double v = static_cast<double>(*pct) * total / 100.0;
  return static_cast<int32_t>(round_up ? std::ceil(v) : std::floor(v));
}

bool is_rolling_update(const api::Deployment& d) {
  return d.spec.strategy.type.empty() || d.spec.strategy.type == "RollingUpdate";
}

std::pair<int32_t, int32_t> resolve_fenceposts(const api::Deployment& d) {
  const int32_t n = replicas_of(d);
  api::RollingUpdateDeployment ru = d.spec.strategy.rollingUpdate.value_or(api::RollingUpdateDeployment{});
  const api::RawJson quarter{"\"25%\""};
  int32_t surge = scaled_value(ru.maxSurge.empty() ? quarter : ru.maxSurge, n, true, 0);
  int32_t unavailable = scaled_value(ru.maxUnavailable.empty() ? quarter : ru.maxUnavailable, n, false, 0);
  // Both 0 would block the rollout: upstream lets one pod be unavailable.
  if (surge == 0 && unavailable == 0) unavailable = 1;
  return {surge, unavailable};
}

int32_t max_surge(const api::Deployment& d) { return is_rolling_update(d) ? resolve_fenceposts(d).first : 0; }

int32_t max_unavailable(const api::Deployment& d) {
  if (!is_rolling_update(d) || replicas_of(d) == 0) return 0;
  return std::min(resolve_fenceposts(d).second, replicas_of(d));
}

std::string pod_template_hash(const api::PodTemplateSpec& t, std::optional<int32_t> collision_count) {
  api::Pod canonical;
  canonical.metadata = t.metadata;
  canonical.spec = t.spec;
  std::string text = api::to_json(api::Object(canonical));
  uint32_t h = 2166136261u;
  auto mix = [&](unsigned char c) {
    h ^= c;
    h *= 16777619u;
  };
  for (unsigned char c : text) mix(c);
  if (collision_count) {
    // Eight bytes, the count little-endian in the first four (as upstream).
    uint32_t n = static_cast<uint32_t>(*collision_count);
    for (int i = 0; i < 8; ++i) mix(i < 4 ? static_cast<unsigned char>(n >> (8 * i)) : 0);
  }
  // rand.SafeEncodeString of the decimal text: no vowels, no confusable characters.
  static constexpr std::string_view kAlphanums = "bcdfghjklmnpqrstvwxz2456789";
  std::string out = std::to_string(h);
  for (char& c : out) c = kAlphanums[static_cast<unsigned char>(c) % kAlphanums.size()];
  return out;
}

bool equal_ignore_hash(const api::PodTemplateSpec& a, const api::PodTemplateSpec& b) {
  api::PodTemplateSpec x = a, y = b;
  x.metadata.labels.erase(kPodTemplateHashLabel);
  y.metadata.labels.erase(kPodTemplateHashLabel);
  return x == y;
}

int64_t revision_of(const api::ObjectMeta& meta) {
  auto it = meta.annotations.find(kRevisionAnnotation);
  return it == meta.annotations.end() ? 0 : parse_int(it->second).value_or(0);
}

void sort_by_creation(std::vector<api::ReplicaSet>& sets) { std::stable_sort(sets.begin(), sets.end(), created_before); }

int find_new_replica_set(const api::Deployment& d, const std::vector<api::ReplicaSet>& sets) {
  for (size_t i = 0; i < sets.size(); ++i) {
    // The oldest of several equal ones, as upstream.
    if (equal_ignore_hash(sets[i].spec.template_, d.spec.template_)) return static_cast<int>(i);
  }
  return -1;
}

api::ReplicaSet new_replica_set(const api::Deployment& d) {
  api::ReplicaSet rs;
  rs.typeMeta = {"apps/v1", "ReplicaSet"};
  std::string hash = pod_template_hash(d.spec.template_, d.status.collisionCount);
  rs.spec.template_ = d.spec.template_;
  rs.spec.template_.metadata.labels[kPodTemplateHashLabel] = hash;
  rs.spec.selector = d.spec.selector.value_or(api::LabelSelector{});
  rs.spec.selector->matchLabels[kPodTemplateHashLabel] = hash;
  rs.metadata.name = d.metadata.name + "-" + hash;
  rs.metadata.namespace_ = d.metadata.namespace_;
  rs.metadata.ownerReferences.push_back(controller_ref("apps/v1", "Deployment", d.metadata));
  rs.metadata.labels = rs.spec.template_.metadata.labels;
  rs.spec.replicas = 0;
  rs.spec.minReadySeconds = d.spec.minReadySeconds;
  return rs;
}

bool set_replicas_annotations(api::ReplicaSet& rs, int32_t desired, int32_t max) {
  auto& a = rs.metadata.annotations;
  bool changed = false;
  for (const auto& [k, v] : {std::pair{kDesiredReplicasAnnotation, desired}, std::pair{kMaxReplicasAnnotation, max}}) {
    std::string text = std::to_string(v);
    auto it = a.find(k);
    if (it != a.end() && it->second == text) continue;
    a[k] = text;
    changed = true;
  }
  return changed;
}

bool set_new_replica_set_annotations(const api::Deployment& d, api::ReplicaSet& rs, int64_t new_revision,
                                     bool exists) {
  auto& a = rs.metadata.annotations;
  bool changed = false;
  for (const auto& [k, v] : d.metadata.annotations) {
    if (skip_copy_annotation(k)) continue;
    auto it = a.find(k);
    if (it != a.end() && it->second == v) continue;
    a[k] = v;
    changed = true;
  }
  auto old_it = a.find(kRevisionAnnotation);
  const bool had = old_it != a.end();
  const std::string old_text = had ? old_it->second : "";
  auto old = parse_int(old_text);
  if (!old && !old_text.empty()) return changed;  // unreadable: left alone, as upstream
  if (old.value_or(0) < new_revision) {
    a[kRevisionAnnotation] = std::to_string(new_revision);
    changed = true;
    if (had) {
      // A rollback to this ReplicaSet: keep the revisions it had.
      std::string history = a[kRevisionHistoryAnnotation];
      if (history.empty()) {
        a[kRevisionHistoryAnnotation] = old_text;
      } else {
        std::vector<std::string_view> parts = common::split(history, ',');
        size_t total = history.size() + old_text.size() + 1;
        size_t start = 0;
        while (total > kMaxRevisionHistoryChars && start < parts.size()) total -= parts[start++].size() + 1;
        if (total <= kMaxRevisionHistoryChars) {
          std::string joined;
          for (size_t i = start; i < parts.size(); ++i) joined += std::string(parts[i]) + ",";
          a[kRevisionHistoryAnnotation] = joined + old_text;
        }
      }
    }
  }
  if (!exists && set_replicas_annotations(rs, replicas_of(d), replicas_of(d) + max_surge(d))) changed = true;
  return changed;
}

int32_t new_rs_new_replicas(const api::Deployment& d, const std::vector<api::ReplicaSet>& all,
                            const api::ReplicaSet& new_rs) {
  if (!is_rolling_update(d)) return replicas_of(d);
  int64_t current = 0;
  for (const auto& rs : all) current += replicas_of(rs);
  int64_t max_total = replicas_of(d) + max_surge(d);
  if (current >= max_total) return replicas_of(new_rs);  // cannot scale up
  int64_t up = std::min<int64_t>(max_total - current, replicas_of(d) - replicas_of(new_rs));
  return static_cast<int32_t>(replicas_of(new_rs) + up);
}

int32_t spec_replicas(const std::vector<const api::ReplicaSet*>& sets) {
  int32_t n = 0;
  for (const auto* rs : sets) n += rs ? replicas_of(*rs) : 0;
  return n;
}
int32_t actual_replicas(const std::vector<const api::ReplicaSet*>& sets) {
  int32_t n = 0;
  for (const auto* rs : sets) n += rs ? rs->status.replicas : 0;
  return n;
}
int32_t available_replicas(const std::vector<const api::ReplicaSet*>& sets) {
  int32_t n = 0;
  for (const auto* rs : sets) n += rs ? rs->status.availableReplicas : 0;
  return n;
}

std::map<std::string, int32_t> proportional_sizes(const api::Deployment& d, std::vector<api::ReplicaSet> active) {
  std::map<std::string, int32_t> sizes;
  int64_t total = 0;
  for (const auto& rs : active) total += replicas_of(rs);
  int32_t allowed = replicas_of(d);
  if (allowed > 0) allowed += max_surge(d);
  const int32_t to_add = static_cast<int32_t>(allowed - total);
  // Adding: the largest (then newest) first; removing: the largest (then oldest) first.
  std::stable_sort(active.begin(), active.end(), [&](const api::ReplicaSet& a, const api::ReplicaSet& b) {
    if (replicas_of(a) != replicas_of(b)) return replicas_of(a) > replicas_of(b);
    return to_add > 0 ? created_before(b, a) : created_before(a, b);
  });
  int32_t added = 0;
  for (const auto& rs : active) {
    int32_t p = to_add != 0 ? proportion(rs, d, to_add, added) : 0;
    sizes[rs.metadata.name] = replicas_of(rs) + p;
    added += p;
  }
  if (to_add != 0 && !active.empty()) {
    int32_t& first = sizes[active.front().metadata.name];
    first = std::max(0, first + to_add - added);  // the leftover goes to the largest
  }
  return sizes;
}

const api::WorkloadCondition* find_condition(const api::DeploymentStatus& st, const std::string& type) {
  for (const auto& c : st.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

void remove_condition(api::DeploymentStatus& st, const std::string& type) {
  auto& c = st.conditions;
  c.erase(std::remove_if(c.begin(), c.end(), [&](const auto& x) { return x.type == type; }), c.end());
}

void set_condition(api::DeploymentStatus& st, api::WorkloadCondition c) {
  if (const auto* cur = find_condition(st, c.type)) {
    if (cur->status == c.status && cur->reason == c.reason) return;
    if (cur->status == c.status) c.lastTransitionTime = cur->lastTransitionTime;
  }
  remove_condition(st, c.type);
  st.conditions.push_back(std::move(c));
}

api::WorkloadCondition new_condition(const std::string& type, const std::string& status, const std::string& reason,
                                     const std::string& message, int64_t now_unix) {
  std::string now = common::format_rfc3339(now_unix);
  return {type, status, now, now, reason, message};
}

api::DeploymentStatus calculate_status(const api::Deployment& d, const std::vector<const api::ReplicaSet*>& all,
                                       const api::ReplicaSet* new_rs, int64_t now_unix) {
  api::DeploymentStatus st;
  const int32_t available = available_replicas(all);
  st.observedGeneration = d.metadata.generation;
  st.replicas = actual_replicas(all);
  st.updatedReplicas = actual_replicas({new_rs});
  for (const auto* rs : all) st.readyReplicas += rs ? rs->status.readyReplicas : 0;
  st.availableReplicas = available;
  st.unavailableReplicas = std::max(0, spec_replicas(all) - available);
  st.collisionCount = d.status.collisionCount;
  st.conditions = d.status.conditions;
  if (available >= replicas_of(d) - max_unavailable(d)) {
    set_condition(st, new_condition("Available", "True", kMinimumReplicasAvailable, "Deployment has minimum availability.",
                                    now_unix));
  } else {
    set_condition(st, new_condition("Available", "False", kMinimumReplicasUnavailable,
                                    "Deployment does not have minimum availability.", now_unix));
  }
  return st;
}

bool deployment_complete(const api::Deployment& d, const api::DeploymentStatus& st) {
  const int32_t n = replicas_of(d);
  return st.updatedReplicas == n && st.replicas == n && st.availableReplicas == n &&
         st.observedGeneration >= d.metadata.generation;
}

bool deployment_progressing(const api::Deployment& d, const api::DeploymentStatus& st) {
  const auto& old = d.status;
  return st.updatedReplicas > old.updatedReplicas ||
         st.replicas - st.updatedReplicas < old.replicas - old.updatedReplicas ||
         st.readyReplicas > old.readyReplicas || st.availableReplicas > old.availableReplicas;
}

bool deployment_timed_out(const api::Deployment& d, const api::DeploymentStatus& st, int64_t now_unix) {
  if (!has_progress_deadline(d)) return false;
  const auto* c = find_condition(st, "Progressing");
  if (c == nullptr || c->reason == kNewRSAvailableReason) return false;
  if (c->reason == kTimedOutReason) return true;
  auto from = common::parse_rfc3339(c->lastUpdateTime);
  return from && *from + *d.spec.progressDeadlineSeconds < now_unix;
}

api::DeploymentStatus rollout_status(const api::Deployment& d, const std::vector<const api::ReplicaSet*>& all,
                                     const api::ReplicaSet* new_rs, int64_t now_unix) {
  api::DeploymentStatus st = calculate_status(d, all, new_rs, now_unix);
  if (!has_progress_deadline(d)) remove_condition(st, "Progressing");
  const auto* cur = find_condition(st, "Progressing");
  const bool complete = st.replicas == st.updatedReplicas && cur != nullptr && cur->reason == kNewRSAvailableReason;
  const std::string subject = new_rs ? "ReplicaSet \"" + new_rs->metadata.name + "\"" : "Deployment \"" + d.metadata.name + "\"";
  if (has_progress_deadline(d) && !complete) {
    if (deployment_complete(d, st)) {
      set_condition(st, new_condition("Progressing", "True", kNewRSAvailableReason, subject + " has successfully progressed.",
                                      now_unix));
    } else if (deployment_progressing(d, st)) {
      auto c = new_condition("Progressing", "True", kRSUpdatedReason, subject + " is progressing.", now_unix);
      if (cur != nullptr) {
        if (cur->status == "True") c.lastTransitionTime = cur->lastTransitionTime;
        remove_condition(st, "Progressing");
      }
      set_condition(st, c);
    } else if (deployment_timed_out(d, st, now_unix)) {
      set_condition(st, new_condition("Progressing", "False", kTimedOutReason, subject + " has timed out progressing.",
                                      now_unix));
    }
  }
  remove_condition(st, "ReplicaFailure");
  return st;
}

}  // namespace draplane::controllers
