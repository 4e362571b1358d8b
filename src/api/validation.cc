// Dispatch of validate() over the object kinds, and update validation.
#include "api/validation.h"

#include "api/validation_core.h"
#include "api/validation_kinds.h"
#include "api/workload.h"

namespace draplane::api {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

FieldErrorList meta_update(const ObjectMeta& n, const ObjectMeta& o) {
  return vcore::validate_object_meta_update(n, o, FieldPath("metadata"));
}

}  // namespace

FieldErrorList validate(const Object& object, const ValidationOptions& options) {
  return std::visit(Overloaded{
                        [&](const DeviceClass& o) { return validate_device_class(o, options); },
                        [&](const ResourceSlice& o) { return validate_resource_slice(o, options); },
                        [&](const ResourceClaim& o) { return validate_resource_claim(o, options); },
                        [&](const ResourceClaimTemplate& o) { return validate_resource_claim_template(o, options); },
                        [&](const Pod& o) { return validate_pod(o, options); },
                        [&](const Node& o) { return validate_node(o, options); },
                        [&](const Namespace& o) { return validate_namespace(o, options); },
                        [&](const DeviceTaintRule& o) { return validate_device_taint_rule(o); },
                        [&](const ConfigMap& o) { return validate_config_map(o); },
                        [&](const Secret& o) { return validate_secret(o); },
                        [&](const ServiceAccount& o) { return validate_service_account(o); },
                        [&](const Service& o) { return validate_service(o); },
                        [&](const PersistentVolumeClaim& o) { return validate_persistent_volume_claim(o); },
                        [&](const Deployment& o) { return validate_deployment(o); },
                        [&](const ReplicaSet& o) { return validate_replica_set(o); },
                        [&](const Job& o) { return validate_job(o); },
                        [&](const PriorityClass& o) { return validate_priority_class(o); },
                        [&](const Workload& o) { return validate_workload(o); },
                        [&](const PodGroup& o) { return validate_pod_group(o); },
                    },
                    object);
}

FieldErrorList validate_update(const Object& old_object, const Object& new_object, const ValidationOptions& options) {
  if (old_object.index() != new_object.index()) {
    return {field_internal(FieldPath(), "update changes the kind of the object")};
  }
  FieldErrorList errs;
  if (const auto* n = std::get_if<DeviceClass>(&new_object)) {
    return validate_device_class_update(*n, std::get<DeviceClass>(old_object), options);
  }
  if (const auto* n = std::get_if<ResourceSlice>(&new_object)) {
    const auto& o = std::get<ResourceSlice>(old_object);
    errs = meta_update(n->metadata, o.metadata);
    append_errors(errs, validate_resource_slice_spec(n->spec, &o.spec, FieldPath("spec")));
    return errs;
  }
  if (const auto* n = std::get_if<ResourceClaim>(&new_object)) {
    const auto& o = std::get<ResourceClaim>(old_object);
    // The spec is immutable; it is not revalidated (the only actionable error is the change).
    errs = vcore::validate_object_meta(n->metadata, true, vcore::name_is_dns_subdomain, FieldPath("metadata"));
    append_errors(errs, meta_update(n->metadata, o.metadata));
    if (!(n->spec == o.spec)) {
      errs.push_back(field_invalid(FieldPath("spec"), BadValue::raw("resource.ResourceClaimSpec{...}"), "field is immutable"));
    }
    return errs;
  }
  if (const auto* n = std::get_if<ResourceClaimTemplate>(&new_object)) {
    const auto& o = std::get<ResourceClaimTemplate>(old_object);
    errs = meta_update(n->metadata, o.metadata);
    if (!(n->spec == o.spec)) {
      errs.push_back(field_invalid(FieldPath("spec"), BadValue::raw("resource.ResourceClaimTemplateSpec{...}"),
                                   "field is immutable"));
    }
    return errs;
  }
  if (const auto* n = std::get_if<DeviceTaintRule>(&new_object)) {
    return validate_device_taint_rule_update(*n, std::get<DeviceTaintRule>(old_object));
  }
  if (const auto* n = std::get_if<ConfigMap>(&new_object)) {
    return validate_config_map_update(*n, std::get<ConfigMap>(old_object));
  }
  if (const auto* n = std::get_if<Secret>(&new_object)) return validate_secret_update(*n, std::get<Secret>(old_object));
  if (const auto* n = std::get_if<PersistentVolumeClaim>(&new_object)) {
    return validate_persistent_volume_claim_update(*n, std::get<PersistentVolumeClaim>(old_object));
  }
  if (const auto* n = std::get_if<Deployment>(&new_object)) {
    return validate_deployment_update(*n, std::get<Deployment>(old_object));
  }
  if (const auto* n = std::get_if<ReplicaSet>(&new_object)) {
    return validate_replica_set_update(*n, std::get<ReplicaSet>(old_object));
  }
  if (const auto* n = std::get_if<Job>(&new_object)) return validate_job_update(*n, std::get<Job>(old_object));
  if (const auto* n = std::get_if<PriorityClass>(&new_object)) {
    return validate_priority_class_update(*n, std::get<PriorityClass>(old_object));
  }
  if (const auto* n = std::get_if<Workload>(&new_object)) {
    return validate_workload_update(*n, std::get<Workload>(old_object));
  }
  if (const auto* n = std::get_if<PodGroup>(&new_object)) {
    return validate_pod_group_update(*n, std::get<PodGroup>(old_object));
  }
  // Core kinds: metadata rules plus the create-time checks of the new object.
  errs = validate(new_object, options);
  if (const auto* n = std::get_if<Pod>(&new_object)) {
    // spec.schedulingGroup is immutable (the gang a pod joined does not change).
    if (n->spec.schedulingGroup != std::get<Pod>(old_object).spec.schedulingGroup) {
      errs.push_back(field_invalid(FieldPath("spec").child("schedulingGroup"), BadValue::null(), "field is immutable"));
    }
  }
  const ObjectMeta& nm = std::visit([](const auto& o) -> const ObjectMeta& { return o.metadata; }, new_object);
  const ObjectMeta& om = std::visit([](const auto& o) -> const ObjectMeta& { return o.metadata; }, old_object);
  append_errors(errs, meta_update(nm, om));
  return errs;
}

}  // namespace draplane::api
