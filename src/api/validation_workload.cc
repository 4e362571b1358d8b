// Workload and PodGroup validation (upstream pkg/apis/scheduling/validation,
// with the 1.37 field names: podGroupTemplates, schedulingPolicy).
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

// A DNS label (k8s-short-name); "" is Required, as the declarative validation says.
void short_name(std::string_view v, const FieldPath& path, FieldErrorList& errs) {
  if (v.empty()) {
    errs.push_back(field_required(path));
    return;
  }
  for (const auto& msg : vcore::dns1123_label_errors(v)) errs.push_back(field_invalid(path, v, msg));
}

FieldErrorList validate_controller_ref(const TypedLocalObjectReference& ref, const FieldPath& path) {
  FieldErrorList errs;
  if (!ref.apiGroup.empty()) {
    for (const auto& msg : vcore::dns1123_subdomain_errors(ref.apiGroup)) {
      errs.push_back(field_invalid(path.child("apiGroup"), ref.apiGroup, msg));
    }
  }
  path_segment(ref.kind, path.child("kind"), errs);
  path_segment(ref.name, path.child("name"), errs);
  return errs;
}

FieldErrorList validate_policy(const PodGroupSchedulingPolicy& p, const FieldPath& path) {
  FieldErrorList errs;
  if (!p.basic && !p.gang) {
    errs.push_back(field_invalid(path, "", "must specify one of: `basic`, `gang`"));
  } else if (p.basic && p.gang) {
    errs.push_back(field_invalid(path, "{`basic`, `gang`}",
                                 "exactly one of `basic`, `gang` is required, but multiple fields are set"));
  } else if (p.gang) {
    const FieldPath min = path.child("gang").child("minCount");
    if (p.gang->minCount == 0) errs.push_back(field_required(min));
    else if (p.gang->minCount < 0) errs.push_back(field_invalid(min, p.gang->minCount, "must be greater than zero"));
  }
  return errs;
}

FieldErrorList validate_templates(const std::vector<PodGroupTemplate>& templates, const FieldPath& path) {
  FieldErrorList errs;
  if (templates.empty()) {
    errs.push_back(field_required(path, "must have at least one item"));
    return errs;
  }
  if (templates.size() > static_cast<size_t>(kWorkloadMaxPodGroupTemplates)) {
    errs.push_back(field_too_many(path, static_cast<int64_t>(templates.size()), kWorkloadMaxPodGroupTemplates));
    return errs;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < templates.size(); ++i) {
    const FieldPath item = path.index(i);
    short_name(templates[i].name, item.child("name"), errs);
    // A repeated list-map key is reported at the item (1.37).
    if (!seen.insert(templates[i].name).second) errs.push_back(field_duplicate(item, templates[i].name));
    append_errors(errs, validate_policy(templates[i].schedulingPolicy, item.child("schedulingPolicy")));
  }
  return errs;
}

FieldErrorList validate_pod_group_spec(const PodGroupSpec& spec, const FieldPath& path) {
  FieldErrorList errs;
  if (spec.podGroupTemplateRef) {
    const FieldPath ref = path.child("podGroupTemplateRef");
    if (!spec.podGroupTemplateRef->workload) {
      errs.push_back(field_invalid(ref, "", "must specify one of: `workload`"));
    } else {
      const auto& w = *spec.podGroupTemplateRef->workload;
      short_name(w.workloadName, ref.child("workload").child("workloadName"), errs);
      short_name(w.podGroupTemplateName, ref.child("workload").child("podGroupTemplateName"), errs);
    }
  }
  append_errors(errs, validate_policy(spec.schedulingPolicy, path.child("schedulingPolicy")));
  return errs;
}

}  // namespace

FieldErrorList validate_workload(const Workload& w) {
  FieldErrorList errs =
      vcore::validate_object_meta(w.metadata, /*namespaced=*/true, vcore::name_is_dns_subdomain, FieldPath("metadata"));
  const FieldPath spec("spec");
  if (w.spec.controllerRef) append_errors(errs, validate_controller_ref(*w.spec.controllerRef, spec.child("controllerRef")));
  append_errors(errs, validate_templates(w.spec.podGroupTemplates, spec.child("podGroupTemplates")));
  return errs;
}

FieldErrorList validate_workload_update(const Workload& w, const Workload& old) {
  FieldErrorList errs = vcore::validate_object_meta_update(w.metadata, old.metadata, FieldPath("metadata"));
  const FieldPath spec("spec");
  if (old.spec.controllerRef) {
    if (w.spec.controllerRef != old.spec.controllerRef) {
      errs.push_back(field_invalid(spec.child("controllerRef"), BadValue::raw("scheduling.TypedLocalObjectReference{...}"),
                                   "field is immutable"));
    }
  } else if (w.spec.controllerRef) {
    append_errors(errs, validate_controller_ref(*w.spec.controllerRef, spec.child("controllerRef")));
  }
  if (w.spec.podGroupTemplates != old.spec.podGroupTemplates) {
    errs.push_back(field_invalid(spec.child("podGroupTemplates"), BadValue::raw("[]scheduling.PodGroupTemplate{...}"),
                                 "field is immutable"));
  }
  return errs;
}

FieldErrorList validate_pod_group(const PodGroup& g) {
  FieldErrorList errs =
      vcore::validate_object_meta(g.metadata, /*namespaced=*/true, vcore::name_is_dns_subdomain, FieldPath("metadata"));
  append_errors(errs, validate_pod_group_spec(g.spec, FieldPath("spec")));
  return errs;
}

FieldErrorList validate_pod_group_update(const PodGroup& g, const PodGroup& old) {
  FieldErrorList errs = vcore::validate_object_meta_update(g.metadata, old.metadata, FieldPath("metadata"));
  const FieldPath spec("spec");
  if (g.spec.podGroupTemplateRef != old.spec.podGroupTemplateRef) {
    errs.push_back(field_invalid(spec.child("podGroupTemplateRef"),
                                 BadValue::raw("scheduling.PodGroupTemplateReference{...}"), "field is immutable"));
  }
  if (g.spec.schedulingPolicy != old.spec.schedulingPolicy) {
    errs.push_back(field_invalid(spec.child("schedulingPolicy"),
                                 BadValue::raw("scheduling.PodGroupSchedulingPolicy{...}"), "field is immutable"));
  }
  return errs;
}

FieldErrorList validate_pod_group_status_update(const PodGroup& g, const PodGroup& old) {
  FieldErrorList errs = vcore::validate_object_meta_update(g.metadata, old.metadata, FieldPath("metadata"));
  append_errors(errs, vcore::validate_conditions(g.status.conditions, FieldPath("status").child("conditions")));
  return errs;
}

}  // namespace draplane::api
