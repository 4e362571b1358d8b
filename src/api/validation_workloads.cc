// Validation of apps/v1 Deployment and ReplicaSet and batch/v1 Job (upstream
// pkg/apis/apps/validation ValidateDeployment, ValidateReplicaSet and
// pkg/apis/batch/validation ValidateJob, with their Update forms): the main
// rules, with upstream's paths and messages. Immutable fields name the value as
// a shortened Go rendering, as the other kinds' immutability errors do.
#include <algorithm>

#include "api/validation_core.h"
#include "api/validation_kinds.h"
#include "api/workload.h"

namespace draplane::api {
namespace {

constexpr const char* kNonNegative = "must be greater than or equal to 0";

void non_negative(std::optional<int64_t> v, const FieldPath& path, FieldErrorList& errs) {
  if (v && *v < 0) errs.push_back(field_invalid(path, *v, kNonNegative));
}

// metav1validation.ValidateLabelSelector.
void check_label_selector(const LabelSelector& s, const FieldPath& path, FieldErrorList& errs) {
  for (size_t i = 0; i < s.matchExpressions.size(); ++i) {
    const LabelSelectorRequirement& r = s.matchExpressions[i];
    FieldPath p = path.child("matchExpressions").index(i);
    if (r.operator_ == "In" || r.operator_ == "NotIn") {
      if (r.values.empty()) {
        errs.push_back(field_required(p.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"));
      }
    } else if (r.operator_ == "Exists" || r.operator_ == "DoesNotExist") {
      if (!r.values.empty()) {
        errs.push_back(
            field_forbidden(p.child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      }
    } else {
      errs.push_back(field_invalid(p.child("operator"), r.operator_, "not a valid selector operator"));
    }
    append_errors(errs, vcore::validate_label_name(r.key, p.child("key")));
  }
  append_errors(errs, vcore::validate_labels(s.matchLabels, path.child("matchLabels")));
}

}  // namespace

bool selector_matches(const LabelSelector& s, const std::map<std::string, std::string>& labels) {
  for (const auto& [k, v] : s.matchLabels) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  for (const LabelSelectorRequirement& r : s.matchExpressions) {
    auto it = labels.find(r.key);
    bool has = it != labels.end();
    bool in = has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    if ((r.operator_ == "In" && !in) || (r.operator_ == "NotIn" && in) || (r.operator_ == "Exists" && !has) ||
        (r.operator_ == "DoesNotExist" && has)) {
      return false;
    }
  }
  return true;
}

namespace {

// Go's %v of a label map: map[k:v k2:v2].
std::string render_labels(const std::map<std::string, std::string>& labels) {
  std::string out = "map[";
  for (const auto& [k, v] : labels) out += (out.size() > 4 ? " " : "") + k + ":" + v;
  return out + "]";
}

// The selector (required, non-empty, well formed) and the template it must select.
void check_selector_and_template(const std::optional<LabelSelector>& selector, const PodTemplateSpec& t,
                                 const FieldPath& spec, FieldErrorList& errs) {
  if (!selector) {
    errs.push_back(field_required(spec.child("selector")));
    return;
  }
  check_label_selector(*selector, spec.child("selector"), errs);
  if (selector->matchLabels.empty() && selector->matchExpressions.empty()) {
    errs.push_back(field_invalid(spec.child("selector"), BadValue::raw("&v1.LabelSelector{}"),
                                 "empty selector is invalid for deployment"));
  }
  if (!selector_matches(*selector, t.metadata.labels)) {
    errs.push_back(field_invalid(spec.child("template", "metadata").child("labels"),
                                 BadValue::raw(render_labels(t.metadata.labels)),
                                 "`selector` does not match template `labels`"));
  }
}

// ValidatePodTemplateSpecForReplicaSet: a template whose pods restart Always.
void check_replica_template(const PodTemplateSpec& t, const FieldPath& path, FieldErrorList& errs) {
  append_errors(errs, validate_pod_template_spec(t, path));
  if (t.spec.restartPolicy != "Always") {
    errs.push_back(field_not_supported(path.child("spec", "restartPolicy"), t.spec.restartPolicy, {"Always"}));
  }
}

// An IntOrString of a rolling update: a non-negative int or a percentage (<= 100%
// for maxUnavailable). Returns whether it is zero.
bool check_int_or_percent(const RawJson& v, const FieldPath& path, bool at_most_100, FieldErrorList& errs) {
  const std::string& t = v.text;
  if (t.empty()) return true;
  if (t.front() == '"') {
    std::string s = t.substr(1, t.size() - 2);
    bool ok = s.size() >= 2 && s.back() == '%' &&
              std::all_of(s.begin(), s.end() - 1, [](char c) { return c >= '0' && c <= '9'; });
    if (!ok) {
      errs.push_back(field_invalid(path, s, "a valid percent string must be a numeric string followed by an ending "
                                            "'%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"));
      return false;
    }
    int64_t pct = s.size() > 10 ? INT64_MAX : std::stoll(s.substr(0, s.size() - 1));
    if (at_most_100 && pct > 100) errs.push_back(field_invalid(path, s, "must not be greater than 100%"));
    return pct == 0;
  }
  int64_t n = t.size() > 18 ? INT64_MAX : std::stoll(t);
  if (n < 0) errs.push_back(field_invalid(path, n, kNonNegative));
  return n == 0;
}

void check_strategy(const DeploymentStrategy& s, const FieldPath& path, FieldErrorList& errs) {
  if (s.type == "Recreate") {
    if (s.rollingUpdate) {
      errs.push_back(field_forbidden(path.child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"));
    }
  } else if (s.type == "RollingUpdate") {
    if (!s.rollingUpdate) {
      errs.push_back(field_required(path.child("rollingUpdate"), "this should be defaulted and never be nil"));
      return;
    }
    FieldPath ru = path.child("rollingUpdate");
    bool surge_zero = check_int_or_percent(s.rollingUpdate->maxSurge, ru.child("maxSurge"), false, errs);
    bool unavailable_zero =
        check_int_or_percent(s.rollingUpdate->maxUnavailable, ru.child("maxUnavailable"), true, errs);
    if (surge_zero && unavailable_zero) {
      errs.push_back(field_invalid(ru.child("maxUnavailable"), BadValue::raw(s.rollingUpdate->maxUnavailable.text),
                                   "may not be 0 when `maxSurge` is 0"));
    }
  } else {
    errs.push_back(field_not_supported(path.child("type"), s.type, {"Recreate", "RollingUpdate"}));
  }
}

FieldErrorList meta(const ObjectMeta& m) {
  return vcore::validate_object_meta(m, /*namespaced=*/true, vcore::name_is_dns_subdomain, FieldPath("metadata"));
}

void selector_immutable(const std::optional<LabelSelector>& s, const std::optional<LabelSelector>& old,
                        FieldErrorList& errs) {
  if (s != old) {
    errs.push_back(field_invalid(FieldPath("spec").child("selector"), BadValue::raw("&v1.LabelSelector{...}"),
                                 "field is immutable"));
  }
}

// The update of a Deployment or ReplicaSet: metadata, the object revalidated,
// the selector immutable (apps/v1).
template <typename T>
FieldErrorList replicated_update(const T& obj, const T& old, FieldErrorList (*validate)(const T&)) {
  FieldErrorList errs = vcore::validate_object_meta_update(obj.metadata, old.metadata, FieldPath("metadata"));
  append_errors(errs, validate(obj));
  selector_immutable(obj.spec.selector, old.spec.selector, errs);
  return errs;
}

}  // namespace

FieldErrorList validate_deployment(const Deployment& d) {
  FieldErrorList errs = meta(d.metadata);
  FieldPath spec("spec");
  const DeploymentSpec& s = d.spec;
  if (s.replicas) non_negative(*s.replicas, spec.child("replicas"), errs);
  check_selector_and_template(s.selector, s.template_, spec, errs);
  check_replica_template(s.template_, spec.child("template"), errs);
  check_strategy(s.strategy, spec.child("strategy"), errs);
  non_negative(s.minReadySeconds, spec.child("minReadySeconds"), errs);
  if (s.revisionHistoryLimit) non_negative(*s.revisionHistoryLimit, spec.child("revisionHistoryLimit"), errs);
  if (s.progressDeadlineSeconds) {
    non_negative(*s.progressDeadlineSeconds, spec.child("progressDeadlineSeconds"), errs);
    if (*s.progressDeadlineSeconds <= s.minReadySeconds) {
      errs.push_back(field_invalid(spec.child("progressDeadlineSeconds"), *s.progressDeadlineSeconds,
                                   "must be greater than minReadySeconds"));
    }
  }
  return errs;
}

FieldErrorList validate_deployment_update(const Deployment& d, const Deployment& old) {
  return replicated_update(d, old, validate_deployment);
}

FieldErrorList validate_replica_set(const ReplicaSet& r) {
  FieldErrorList errs = meta(r.metadata);
  FieldPath spec("spec");
  if (r.spec.replicas) non_negative(*r.spec.replicas, spec.child("replicas"), errs);
  non_negative(r.spec.minReadySeconds, spec.child("minReadySeconds"), errs);
  check_selector_and_template(r.spec.selector, r.spec.template_, spec, errs);
  check_replica_template(r.spec.template_, spec.child("template"), errs);
  return errs;
}

FieldErrorList validate_replica_set_update(const ReplicaSet& r, const ReplicaSet& old) {
  return replicated_update(r, old, validate_replica_set);
}

FieldErrorList validate_job(const Job& j) {
  FieldErrorList errs = meta(j.metadata);
  FieldPath spec("spec");
  const JobSpec& s = j.spec;
  if (s.parallelism) non_negative(*s.parallelism, spec.child("parallelism"), errs);
  if (s.completions) non_negative(*s.completions, spec.child("completions"), errs);
  if (s.activeDeadlineSeconds) non_negative(*s.activeDeadlineSeconds, spec.child("activeDeadlineSeconds"), errs);
  if (s.backoffLimit) non_negative(*s.backoffLimit, spec.child("backoffLimit"), errs);
  if (s.ttlSecondsAfterFinished) non_negative(*s.ttlSecondsAfterFinished, spec.child("ttlSecondsAfterFinished"), errs);
  bool indexed = s.completionMode == "Indexed";
  if (s.completionMode && *s.completionMode != "NonIndexed" && !indexed) {
    errs.push_back(field_not_supported(spec.child("completionMode"), *s.completionMode, {"NonIndexed", "Indexed"}));
  }
  if (indexed && !s.completions) {
    errs.push_back(field_required(spec.child("completions"), "when completion mode is Indexed"));
  }
  if (s.backoffLimitPerIndex) {
    if (!indexed) {
      errs.push_back(field_forbidden(spec.child("backoffLimitPerIndex"), "requires indexed completion mode"));
    } else {
      non_negative(*s.backoffLimitPerIndex, spec.child("backoffLimitPerIndex"), errs);
    }
  }
  if (!s.selector) {
    errs.push_back(field_required(spec.child("selector")));
  } else {
    check_label_selector(*s.selector, spec.child("selector"), errs);
    if (!selector_matches(*s.selector, s.template_.metadata.labels)) {
      errs.push_back(field_invalid(spec.child("template", "metadata").child("labels"),
                                   BadValue::raw(render_labels(s.template_.metadata.labels)),
                                   "`selector` does not match template `labels`"));
    }
  }
  FieldPath tmpl = spec.child("template");
  append_errors(errs, validate_pod_template_spec(s.template_, tmpl));
  const std::string& rp = s.template_.spec.restartPolicy;
  FieldPath rp_path = tmpl.child("spec", "restartPolicy");
  if (rp != "OnFailure" && rp != "Never") {
    errs.push_back(field_not_supported(rp_path, rp, {"OnFailure", "Never"}));
  } else if (!s.podFailurePolicy.empty() && rp != "Never") {
    errs.push_back(field_invalid(rp_path, rp, "only \"Never\" is supported when podFailurePolicy is specified"));
  }
  if (s.scheduling) append_errors(errs, validate_job_scheduling(*s.scheduling, spec.child("scheduling")));
  return errs;
}

FieldErrorList validate_job_update(const Job& j, const Job& old) {
  FieldErrorList errs = vcore::validate_object_meta_update(j.metadata, old.metadata, FieldPath("metadata"));
  append_errors(errs, validate_job(j));
  FieldPath spec("spec");
  selector_immutable(j.spec.selector, old.spec.selector, errs);
  if (j.spec.completionMode != old.spec.completionMode) {
    errs.push_back(field_invalid(spec.child("completionMode"), j.spec.completionMode.value_or(""), "field is immutable"));
  }
  // Indexed Jobs may scale completions with parallelism (elastic Jobs).
  bool elastic = j.spec.completionMode == "Indexed" && j.spec.completions == j.spec.parallelism;
  if (j.spec.completions != old.spec.completions && !elastic) {
    errs.push_back(field_invalid(spec.child("completions"), BadValue::raw(j.spec.completions
                                                                              ? std::to_string(*j.spec.completions)
                                                                              : "null"),
                                 "field is immutable"));
  }
  if (!(j.spec.template_ == old.spec.template_)) {
    errs.push_back(field_invalid(spec.child("template"), BadValue::raw("core.PodTemplateSpec{...}"),
                                 "field is immutable"));
  }
  append_errors(errs, validate_job_scheduling_update(j.spec.scheduling, old.spec.scheduling, spec.child("scheduling")));
  return errs;
}

}  // namespace draplane::api
