// Workload and PodGroup validation: upstream's declarative rules for
// scheduling.k8s.io/v1beta1 (1.37: podGroupTemplates, schedulingPolicy,
// workloadRef, resourceClaims, disruptionMode) with their messages (union,
// immutable, NoSet/NoUnset, NoAddItem/NoRemoveItem).
#include <algorithm>
#include <set>

#include "api/validation_core.h"
#include "api/workload.h"

namespace draplane::api {
namespace {


// content.IsPathSegmentName: not "." or "..", no '/' or '%'.
void path_segment(std::string_view v, const FieldPath& path, FieldErrorList& errs) {
  if (v.empty()) {
    errs.push_back(field_required(path));
    return;
  }
  if (v == "." || v == "..") errs.push_back(field_invalid(path, v, "may not be '" + std::string(v) + "'"));
  for (const char* bad : {"/", "%"}) {
    if (v.find(bad) != std::string_view::npos) {
      errs.push_back(field_invalid(path, v, std::string("may not contain '") + bad + "'"));
    }
  }
}

// +k8s:format=k8s-short-name (a DNS label); "" is Required when `required`.
void short_name(std::string_view v, const FieldPath& path, FieldErrorList& errs, bool required = true) {
  if (v.empty()) {
    if (required) errs.push_back(field_required(path));
    return;
  }
  for (const auto& msg : vcore::dns1123_label_errors(v)) errs.push_back(field_invalid(path, v, msg));
}

// +k8s:format=k8s-long-name (a DNS subdomain).
void long_name(std::string_view v, const FieldPath& path, FieldErrorList& errs, bool required = true) {
  if (v.empty()) {
    if (required) errs.push_back(field_required(path));
    return;
  }
  for (const auto& msg : vcore::dns1123_subdomain_errors(v)) errs.push_back(field_invalid(path, v, msg));
}

// validate.Union: none set, or more than one.
void union_of(const FieldPath& path, std::initializer_list<std::pair<const char*, bool>> members, FieldErrorList& errs) {
  std::string all, set;
  for (const auto& [name, is_set] : members) {
    std::string quoted = std::string("`") + name + "`";
    all += (all.empty() ? "" : ", ") + quoted;
    if (is_set) set += (set.empty() ? "" : ", ") + quoted;
  }
  int n = 0;
  for (const auto& m : members) n += m.second ? 1 : 0;
  if (n == 0) errs.push_back(field_invalid(path, "", "must specify one of: " + all));
  if (n > 1) errs.push_back(field_invalid(path, "{" + set + "}", "must specify exactly one of: " + all));
}

FieldError immutable(const FieldPath& path) { return field_invalid(path, BadValue::null(), "field is immutable"); }

template <typename T>
void keep(const T& now, const T& old, const FieldPath& path, FieldErrorList& errs) {
  if (!(now == old)) errs.push_back(immutable(path));
}

void validate_controller_ref(const TypedLocalObjectReference& ref, const FieldPath& path, FieldErrorList& errs) {
  long_name(ref.apiGroup, path.child("apiGroup"), errs, /*required=*/false);
  path_segment(ref.kind, path.child("kind"), errs);
  path_segment(ref.name, path.child("name"), errs);
}

void validate_policy(const PodGroupSchedulingPolicy& p, const FieldPath& path, FieldErrorList& errs) {
  union_of(path, {{"basic", p.basic.has_value()}, {"gang", p.gang.has_value()}}, errs);
  if (!p.gang) return;
  const FieldPath min = path.child("gang").child("minCount");
  if (p.gang->minCount == 0) errs.push_back(field_required(min));
  else if (p.gang->minCount < 1) errs.push_back(field_invalid(min, p.gang->minCount, "must be greater than or equal to 1"));
}

// basic is immutable; gang may not be set or cleared (its minCount may change).
void validate_policy_update(const PodGroupSchedulingPolicy& p, const PodGroupSchedulingPolicy& old,
                            const FieldPath& path, FieldErrorList& errs) {
  keep(p.basic, old.basic, path.child("basic"), errs);
  if (!old.gang && p.gang) errs.push_back(field_invalid(path.child("gang"), BadValue::null(), "field cannot be set once created"));
  if (old.gang && !p.gang) errs.push_back(field_invalid(path.child("gang"), BadValue::null(), "field cannot be cleared once set"));
}

void validate_claims(const std::vector<PodGroupResourceClaim>& claims, const FieldPath& path, FieldErrorList& errs) {
  if (claims.size() > static_cast<size_t>(kMaxPodGroupResourceClaims)) {
    errs.push_back(field_too_many(path, static_cast<int64_t>(claims.size()), kMaxPodGroupResourceClaims));
    return;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < claims.size(); ++i) {
    const FieldPath item = path.index(i);
    const PodGroupResourceClaim& c = claims[i];
    short_name(c.name, item.child("name"), errs);
    if (!seen.insert(c.name).second) errs.push_back(field_duplicate(item, c.name));
    union_of(item, {{"resourceClaimName", c.resourceClaimName.has_value()},
                    {"resourceClaimTemplateName", c.resourceClaimTemplateName.has_value()}},
             errs);
    if (c.resourceClaimName) long_name(*c.resourceClaimName, item.child("resourceClaimName"), errs);
    if (c.resourceClaimTemplateName) long_name(*c.resourceClaimTemplateName, item.child("resourceClaimTemplateName"), errs);
  }
}

// The members a template and a PodGroup share.
void validate_group_fields(const PodGroupSchedulingPolicy& policy, const std::vector<PodGroupResourceClaim>& claims,
                           const std::optional<DisruptionMode>& mode, const std::string& priority_class,
                           const std::optional<int32_t>& priority, const FieldPath& path, FieldErrorList& errs) {
  validate_policy(policy, path.child("schedulingPolicy"), errs);
  validate_claims(claims, path.child("resourceClaims"), errs);
  if (mode) union_of(path.child("disruptionMode"), {{"single", mode->single.has_value()}, {"all", mode->all.has_value()}}, errs);
  long_name(priority_class, path.child("priorityClassName"), errs, /*required=*/false);
  if (priority && *priority > kHighestUserDefinablePriority) {
    errs.push_back(field_invalid(path.child("priority"), *priority, "must be less than or equal to 1000000000"));
  }
}

template <typename G>
void validate_group_update(const G& now, const G& old, const FieldPath& path, FieldErrorList& errs) {
  validate_policy_update(now.schedulingPolicy, old.schedulingPolicy, path.child("schedulingPolicy"), errs);
  keep(now.resourceClaims, old.resourceClaims, path.child("resourceClaims"), errs);
  keep(now.disruptionMode, old.disruptionMode, path.child("disruptionMode"), errs);
  keep(now.priorityClassName, old.priorityClassName, path.child("priorityClassName"), errs);
  keep(now.priority, old.priority, path.child("priority"), errs);
}

void validate_templates(const std::vector<PodGroupTemplate>& templates, const FieldPath& spec, FieldErrorList& errs) {
  const FieldPath path = spec.child("podGroupTemplates");
  // The union with compositePodGroupTemplates (feature-gated, forbidden here).
  union_of(spec, {{"podGroupTemplates", !templates.empty()}, {"compositePodGroupTemplates", false}}, errs);
  if (templates.size() > static_cast<size_t>(kWorkloadMaxPodGroupTemplates)) {
    errs.push_back(field_too_many(path, static_cast<int64_t>(templates.size()), kWorkloadMaxPodGroupTemplates));
    return;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < templates.size(); ++i) {
    const FieldPath item = path.index(i);
    const PodGroupTemplate& t = templates[i];
    short_name(t.name, item.child("name"), errs);
    // A repeated list-map key is reported at the item (1.37).
    if (!seen.insert(t.name).second) errs.push_back(field_duplicate(item, t.name));
    validate_group_fields(t.schedulingPolicy, t.resourceClaims, t.disruptionMode, t.priorityClassName, t.priority, item,
                          errs);
  }
}

const PodGroupTemplate* find_template(const std::vector<PodGroupTemplate>& list, const std::string& name) {
  for (const auto& t : list) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace

FieldErrorList validate_workload(const Workload& w) {
  FieldErrorList errs =
      vcore::validate_object_meta(w.metadata, /*namespaced=*/true, vcore::name_is_dns_subdomain, FieldPath("metadata"));
  const FieldPath spec("spec");
  if (w.spec.controllerRef) validate_controller_ref(*w.spec.controllerRef, spec.child("controllerRef"), errs);
  validate_templates(w.spec.podGroupTemplates, spec, errs);
  return errs;
}

FieldErrorList validate_workload_update(const Workload& w, const Workload& old) {
  FieldErrorList errs = validate_workload(w);
  append_errors(errs, vcore::validate_object_meta_update(w.metadata, old.metadata, FieldPath("metadata")));
  const FieldPath spec("spec");
  keep(w.spec.controllerRef, old.spec.controllerRef, spec.child("controllerRef"), errs);
  const FieldPath path = spec.child("podGroupTemplates");
  for (size_t i = 0; i < w.spec.podGroupTemplates.size(); ++i) {
    const PodGroupTemplate& t = w.spec.podGroupTemplates[i];
    const PodGroupTemplate* was = find_template(old.spec.podGroupTemplates, t.name);
    if (was == nullptr) errs.push_back(field_forbidden(path.index(i), "item may not be added"));
    else validate_group_update(t, *was, path.index(i), errs);
  }
  for (const PodGroupTemplate& t : old.spec.podGroupTemplates) {
    if (find_template(w.spec.podGroupTemplates, t.name) == nullptr) {
      errs.push_back(field_forbidden(path, "item may not be removed"));
    }
  }
  return errs;
}

FieldErrorList validate_pod_group(const PodGroup& g) {
  FieldErrorList errs =
      vcore::validate_object_meta(g.metadata, /*namespaced=*/true, vcore::name_is_dns_subdomain, FieldPath("metadata"));
  const FieldPath spec("spec");
  if (g.spec.workloadRef) {
    const FieldPath ref = spec.child("workloadRef");
    long_name(g.spec.workloadRef->workloadName, ref.child("workloadName"), errs);
    short_name(g.spec.workloadRef->templateName, ref.child("templateName"), errs);
  }
  validate_group_fields(g.spec.schedulingPolicy, g.spec.resourceClaims, g.spec.disruptionMode,
                        g.spec.priorityClassName, g.spec.priority, spec, errs);
  return errs;
}

FieldErrorList validate_pod_group_update(const PodGroup& g, const PodGroup& old) {
  FieldErrorList errs = validate_pod_group(g);
  append_errors(errs, vcore::validate_object_meta_update(g.metadata, old.metadata, FieldPath("metadata")));
  const FieldPath spec("spec");
  keep(g.spec.workloadRef, old.spec.workloadRef, spec.child("workloadRef"), errs);
  validate_group_update(g.spec, old.spec, spec, errs);
  return errs;
}

FieldErrorList validate_job_scheduling(const JobSchedulingConfiguration& s, const FieldPath& path) {
  FieldErrorList errs;
  if (s.schedulingPolicy) {
    const FieldPath p = path.child("schedulingPolicy");
    union_of(p, {{"basic", s.schedulingPolicy->basic.has_value()}, {"gang", s.schedulingPolicy->gang.has_value()}},
             errs);
    if (s.schedulingPolicy->gang && s.schedulingPolicy->gang->minCount && *s.schedulingPolicy->gang->minCount < 1) {
      errs.push_back(field_invalid(p.child("gang").child("minCount"), *s.schedulingPolicy->gang->minCount,
                                   "must be greater than or equal to 1"));
    }
  }
  if (s.disruptionMode) {
    union_of(path.child("disruptionMode"),
             {{"single", s.disruptionMode->single.has_value()}, {"all", s.disruptionMode->all.has_value()}}, errs);
  }
  validate_claims(s.resourceClaims, path.child("resourceClaims"), errs);
  return errs;
}

FieldErrorList validate_job_scheduling_update(const std::optional<JobSchedulingConfiguration>& now,
                                              const std::optional<JobSchedulingConfiguration>& old,
                                              const FieldPath& path) {
  FieldErrorList errs;
  if (!old && now) errs.push_back(field_invalid(path, BadValue::null(), "field cannot be set once created"));
  if (old && !now) errs.push_back(field_invalid(path, BadValue::null(), "field cannot be cleared once set"));
  if (!old || !now) return errs;
  // Only gang.minCount may change: compare the rest with it taken out.
  auto without_min = [](JobSchedulingConfiguration s) {
    if (s.schedulingPolicy && s.schedulingPolicy->gang) s.schedulingPolicy->gang->minCount.reset();
    return s;
  };
  const JobSchedulingConfiguration a = without_min(*now), b = without_min(*old);
  keep(a.schedulingPolicy, b.schedulingPolicy, path.child("schedulingPolicy"), errs);
  keep(a.disruptionMode, b.disruptionMode, path.child("disruptionMode"), errs);
  keep(a.resourceClaims, b.resourceClaims, path.child("resourceClaims"), errs);
  return errs;
}

FieldErrorList validate_pod_group_status_update(const PodGroup& g, const PodGroup& old) {
  FieldErrorList errs = vcore::validate_object_meta_update(g.metadata, old.metadata, FieldPath("metadata"));
  const FieldPath status("status");
  append_errors(errs, vcore::validate_conditions(g.status.conditions, status.child("conditions")));
  const FieldPath claims = status.child("resourceClaimStatuses");
  if (g.status.resourceClaimStatuses.size() > static_cast<size_t>(kMaxPodGroupResourceClaims)) {
    errs.push_back(field_too_many(claims, static_cast<int64_t>(g.status.resourceClaimStatuses.size()),
                                  kMaxPodGroupResourceClaims));
    return errs;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < g.status.resourceClaimStatuses.size(); ++i) {
    const auto& c = g.status.resourceClaimStatuses[i];
    short_name(c.name, claims.index(i).child("name"), errs);
    if (!seen.insert(c.name).second) errs.push_back(field_duplicate(claims.index(i), c.name));
    const auto& spec = g.spec.resourceClaims;
    if (!c.name.empty() && std::none_of(spec.begin(), spec.end(), [&](const auto& e) { return e.name == c.name; })) {
      errs.push_back(field_invalid(claims.index(i).child("name"), c.name,
                                   "must match the name of an entry in `spec.resourceClaims`"));
    }
    if (c.resourceClaimName) long_name(*c.resourceClaimName, claims.index(i).child("resourceClaimName"), errs);
  }
  return errs;
}

}  // namespace draplane::api
