#include "api/validation_manifest.h"

#include "api/codec.h"
#include "api/defaults.h"

namespace draplane::api {

FieldErrorList validate_manifest_object(Object& object, const ValidationOptions& options,
                                        const NamespaceLabels& namespaces) {
  bool namespaced = std::holds_alternative<ResourceClaim>(object) ||
                    std::holds_alternative<ResourceClaimTemplate>(object) || std::holds_alternative<Pod>(object);
  ObjectMeta& meta = meta_of(object);
  if (namespaced && meta.namespace_.empty()) meta.namespace_ = "default";
  apply_defaults(object);
  FieldErrorList errors = validate(object, options);
  const std::vector<DeviceRequest>* requests = nullptr;
  if (const auto* c = std::get_if<ResourceClaim>(&object)) requests = &c->spec.devices.requests;
  if (const auto* t = std::get_if<ResourceClaimTemplate>(&object)) requests = &t->spec.spec.devices.requests;
  auto ns = namespaces.find(meta.namespace_);
  if (requests != nullptr && ns != namespaces.end()) {
    append_errors(errors, validate_admin_access(*requests, ns->second));
  }
  return errors;
}

std::string object_label(const Object& object) {
  const ObjectMeta& meta = meta_of(object);
  std::string name = meta.name.empty() && !meta.generateName.empty() ? meta.generateName + "*" : meta.name;
  return std::string(kind_of(object)) + "/" + name;
}

}  // namespace draplane::api
