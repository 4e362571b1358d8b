// core/v1 kinds, the parts DRA relies on: Pod (metadata, container names, resource
// claims and container claim references), Node (name, taints) and Namespace (name).
// The rest of upstream's Pod validation (probes, volumes, security) is out of scope.
#include <set>

#include "api/validation_core.h"
#include "api/validation_kinds.h"

namespace draplane::api {
namespace {

// Go's %#v of a *string field of an internal core type. Set pointers are shown by
// value, not by address (an address would make messages non-deterministic).
std::string go_string_ptr(const std::optional<std::string>& v) {
  return v ? "(*string)(" + go_quote(*v) + ")" : "(*string)(nil)";
}

std::string render_pod_resource_claim(const PodResourceClaim& c) {
  return "core.PodResourceClaim{Name:" + go_quote(c.name) + ", ResourceClaimName:" + go_string_ptr(c.resourceClaimName) +
         ", ResourceClaimTemplateName:" + go_string_ptr(c.resourceClaimTemplateName) + "}";
}

// `pod_name`: null for a template (its pods' names are not known yet).
FieldErrorList validate_pod_resource_claims(const PodSpec& spec, const std::string* pod_name, const FieldPath& path,
                                            std::set<std::string>& names) {
  FieldErrorList errs;
  for (size_t i = 0; i < spec.resourceClaims.size(); ++i) {
    const auto& claim = spec.resourceClaims[i];
    FieldPath p = path.index(i);
    if (claim.name.empty()) {
      errs.push_back(field_required(p.child("name")));
    } else if (names.count(claim.name)) {
      errs.push_back(field_duplicate(p.child("name"), claim.name));
    } else {
      FieldErrorList name_errs = vcore::validate_dns_label(claim.name, p.child("name"));
      if (!name_errs.empty()) {
        append_errors(errs, std::move(name_errs));
      } else if (claim.resourceClaimTemplateName && pod_name != nullptr) {
        std::string generated = *pod_name + "-" + claim.name;
        for (const auto& m : vcore::name_is_dns_subdomain(generated)) {
          errs.push_back(field_invalid(p.child("name"), generated, "final ResourceClaim name: " + m));
        }
      }
      names.insert(claim.name);
    }
    if (claim.resourceClaimName && claim.resourceClaimTemplateName) {
      errs.push_back(field_invalid(p, BadValue::raw(render_pod_resource_claim(claim)),
                                   "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"));
    }
    if (!claim.resourceClaimName && !claim.resourceClaimTemplateName) {
      errs.push_back(field_invalid(p, BadValue::raw(render_pod_resource_claim(claim)),
                                   "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"));
    }
    if (claim.resourceClaimName) {
      append_errors(errs, vcore::validate_dns_subdomain(*claim.resourceClaimName, p.child("resourceClaimName")));
    }
    if (claim.resourceClaimTemplateName) {
      append_errors(errs, vcore::validate_dns_subdomain(*claim.resourceClaimTemplateName,
                                                        p.child("resourceClaimTemplateName")));
    }
  }
  return errs;
}

FieldErrorList validate_container_claims(const std::vector<ResourceClaimRef>& claims,
                                         const std::set<std::string>& pod_claims, const FieldPath& path) {
  FieldErrorList errs;
  std::set<std::string> seen;
  for (size_t i = 0; i < claims.size(); ++i) {
    const auto& c = claims[i];
    if (c.name.empty()) {
      errs.push_back(field_required(path.index(i)));
      continue;
    }
    std::string key = c.name;
    if (!c.request.empty()) {
      append_errors(errs, vcore::validate_dns_label(c.request, path.index(i).child("request")));
      key += "/" + c.request;
    }
    if (!seen.insert(key).second) errs.push_back(field_duplicate(path.index(i), key));
    if (!pod_claims.count(c.name)) {
      std::string detail = "must be one of the names in pod.spec.resourceClaims";
      if (pod_claims.empty()) {
        detail += " which is empty";
      } else {
        detail += ": ";
        bool first = true;
        for (const auto& n : pod_claims) {
          if (!first) detail += ", ";
          first = false;
          detail += n;
        }
      }
      errs.push_back(field_not_found(path.index(i), c.name, detail));
    }
  }
  return errs;
}

FieldErrorList validate_containers(const std::vector<Container>& containers, const FieldPath& path,
                                   const std::set<std::string>& pod_claims, std::set<std::string>& all_names) {
  FieldErrorList errs;
  for (size_t i = 0; i < containers.size(); ++i) {
    const auto& c = containers[i];
    FieldPath p = path.index(i);
    if (c.name.empty()) {
      errs.push_back(field_required(p.child("name")));
    } else {
      append_errors(errs, vcore::validate_dns_label(c.name, p.child("name")));
      if (!all_names.insert(c.name).second) errs.push_back(field_duplicate(p.child("name"), c.name));
    }
    if (c.image.empty()) errs.push_back(field_required(p.child("image")));
    append_errors(errs, validate_container_claims(c.resources.claims, pod_claims, p.child("resources").child("claims")));
  }
  return errs;
}

FieldErrorList validate_pod_spec(const PodSpec& spec, const std::string* pod_name, const FieldPath& sp) {
  FieldErrorList errs;
  std::set<std::string> pod_claims;
  append_errors(errs, validate_pod_resource_claims(spec, pod_name, sp.child("resourceClaims"), pod_claims));
  std::set<std::string> container_names;
  if (spec.containers.empty()) errs.push_back(field_required(sp.child("containers")));
  append_errors(errs, validate_containers(spec.containers, sp.child("containers"), pod_claims, container_names));
  append_errors(errs, validate_containers(spec.initContainers, sp.child("initContainers"), pod_claims, container_names));
  if (spec.preemptionPolicy) {
    append_errors(errs, validate_preemption_policy(*spec.preemptionPolicy, sp.child("preemptionPolicy")));
  }
  if (spec.schedulingGroup) {
    // The PodGroup's name (a DNS subdomain); it need not exist yet.
    const FieldPath name = sp.child("schedulingGroup").child("podGroupName");
    if (!spec.schedulingGroup->podGroupName || spec.schedulingGroup->podGroupName->empty()) {
      errs.push_back(field_required(name));
    } else {
      for (const auto& msg : vcore::dns1123_subdomain_errors(*spec.schedulingGroup->podGroupName)) {
        errs.push_back(field_invalid(name, *spec.schedulingGroup->podGroupName, msg));
      }
    }
  }
  return errs;
}

}  // namespace

FieldErrorList validate_pod(const Pod& p, const ValidationOptions& options) {
  (void)options;
  FieldErrorList errs = vcore::validate_object_meta(p.metadata, /*namespaced=*/true, vcore::name_is_dns_subdomain,
                                                    FieldPath("metadata"));
  append_errors(errs, validate_pod_spec(p.spec, &p.metadata.name, FieldPath("spec")));
  return errs;
}

FieldErrorList validate_pod_template_spec(const PodTemplateSpec& t, const FieldPath& path) {
  FieldErrorList errs = vcore::validate_template_object_meta(t.metadata, path.child("metadata"));
  append_errors(errs, validate_pod_spec(t.spec, nullptr, path.child("spec")));
  return errs;
}

FieldErrorList validate_node(const Node& n, const ValidationOptions& options) {
  (void)options;
  FieldErrorList errs = vcore::validate_object_meta(n.metadata, /*namespaced=*/false, vcore::name_is_dns_subdomain,
                                                    FieldPath("metadata"));
  FieldPath tp = FieldPath("spec").child("taints");
  std::set<std::pair<std::string, std::string>> unique;
  for (size_t i = 0; i < n.spec.taints.size(); ++i) {
    const auto& t = n.spec.taints[i];
    FieldPath p = tp.index(i);
    append_errors(errs, vcore::validate_label_name(t.key, p.child("key")));
    auto value_errs = vcore::label_value_errors(t.value);
    if (!value_errs.empty()) {
      std::string joined;
      for (size_t k = 0; k < value_errs.size(); ++k) joined += (k ? ";" : "") + value_errs[k];
      errs.push_back(field_invalid(p.child("value"), t.value, joined));
    }
    if (t.effect.empty()) {
      errs.push_back(field_required(p.child("effect")));
    } else if (t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" && t.effect != "NoExecute") {
      errs.push_back(field_not_supported(p.child("effect"), t.effect, {"NoSchedule", "PreferNoSchedule", "NoExecute"}));
    }
    if (!unique.insert({t.effect, t.key}).second) {
      FieldError dup = field_duplicate(
          p, BadValue::raw("core.Taint{Key:" + go_quote(t.key) + ", Value:" + go_quote(t.value) +
                           ", Effect:" + go_quote(t.effect) + ", TimeAdded:<nil>}"));
      dup.detail = "taints must be unique by key and effect pair";
      errs.push_back(std::move(dup));
    }
  }
  return errs;
}

FieldErrorList validate_namespace(const Namespace& n, const ValidationOptions& options) {
  (void)options;
  return vcore::validate_object_meta(n.metadata, /*namespaced=*/false, vcore::name_is_dns_label, FieldPath("metadata"));
}

}  // namespace draplane::api
