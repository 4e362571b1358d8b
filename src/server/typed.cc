// The bridge from the server's generic JSON objects to the typed object model:
// decode (strict for resource.k8s.io), validate like the Kubernetes API server
// (CEL selectors compiled by the cel module), and re-encode canonically.
#include "api/codec.h"
#include "api/codec_tree.h"
#include "api/defaults.h"
#include "api/validation.h"
#include "cel/cel.h"
#include "server/internal/api_impl.h"
#include "server/internal/event_conversion.h"

namespace draplane::server {
namespace {

api::ValidationOptions validation_options() {
  // Checking a selector compiles it (a tenth of a claim create); writes repeat
  // the same few expressions, so the programs are kept.
  static cel::ProgramCache* programs = new cel::ProgramCache();  // shared by all servers; never destroyed
  api::ValidationOptions o;
  o.selector_checker = [](std::string_view expr) { return cel::check_selector(expr, programs); };
  return o;
}

Status cannot_handle(const ResourceInfo& r, const Status& why) {
  return Status(Code::kBadRequest,
                r.kind + " in version \"" + r.version + "\" cannot be handled as a " + r.kind + ": " + why.message());
}

// Stored objects: strict (they were written canonically).
Result<api::Object> decode(const ResourceInfo& r, const Json& object) {
  auto obj = api::decode_tree(object);
  if (!obj.has_value()) return cannot_handle(r, obj.error());
  return obj;
}

// Request bodies, under the request's field validation.
Result<api::Object> decode_body(const ResourceInfo& r, const Json& object, FieldValidation fv,
                                std::vector<std::string>& warnings) {
  if (fv == FieldValidation::kStrict) return decode(r, object);
  auto lenient = api::decode_tree_lenient(object);
  if (!lenient.has_value()) return cannot_handle(r, lenient.error());
  if (fv == FieldValidation::kWarn) {
    warnings.insert(warnings.end(), lenient->dropped.begin(), lenient->dropped.end());
  }
  return std::move(lenient->object);
}

}  // namespace

std::optional<ApiError> parse_field_validation(const Request& req, std::string_view options_kind,
                                               FieldValidation& out) {
  auto it = req.query.find("fieldValidation");
  std::string v = it == req.query.end() ? std::string() : it->second;
  if (v.empty() || v == "Warn") {
    out = FieldValidation::kWarn;
  } else if (v == "Strict") {
    out = FieldValidation::kStrict;
  } else if (v == "Ignore") {
    out = FieldValidation::kIgnore;
  } else {
    ResourceInfo options{"meta.k8s.io", "v1", "", "", std::string(options_kind), false, {}, {}, false};
    return invalid(options, "",
                   {api::field_not_supported(api::FieldPath("fieldValidation"), v, {"Ignore", "Strict", "Warn"})});
  }
  return std::nullopt;
}

std::optional<ApiError> typed_create(const ResourceInfo& r, Json& object, FieldValidation fv,
                                     std::vector<std::string>& warnings) {
  if (r.resource == "events") {
    api::FieldErrorList errs = validate_event_create(r, object);
    if (!errs.empty()) return invalid(r, get_string(object, {"metadata", "name"}), std::move(errs));
    return std::nullopt;
  }
  if (!r.typed) return std::nullopt;
  auto obj = decode_body(r, object, fv, warnings);
  if (!obj.has_value()) return from_code(obj.error().code(), obj.error().message());
  api::apply_defaults(*obj, api::DefaultOptions{get_string(object, {"metadata", "creationTimestamp"})});
  api::FieldErrorList errs = api::validate(*obj, validation_options());
  if (!errs.empty()) return invalid(r, get_string(object, {"metadata", "name"}), std::move(errs));
  api::encode_tree(*obj, object);
  return std::nullopt;
}

std::optional<ApiError> typed_update(const ResourceInfo& r, const Json& old_object, Json& object,
                                     const std::string& subresource, const std::string& now, FieldValidation fv,
                                     std::vector<std::string>& warnings) {
  if (r.resource == "events") {
    api::FieldErrorList errs = validate_event_update(r, old_object, object);
    if (!errs.empty()) return invalid(r, get_string(object, {"metadata", "name"}), std::move(errs));
    return std::nullopt;
  }
  if (!r.typed) return std::nullopt;
  auto old_obj = decode(r, old_object);
  if (!old_obj.has_value()) return from_code(Code::kInternal, "stored object: " + old_obj.error().message());
  auto obj = decode_body(r, object, fv, warnings);
  if (!obj.has_value()) return from_code(obj.error().code(), obj.error().message());
  api::apply_defaults(*obj, api::DefaultOptions{now});
  api::FieldErrorList errs;
  if (subresource == "status" && r.kind == "ResourceClaim") {
    errs = api::validate_claim_status_update(std::get<api::ResourceClaim>(*obj), std::get<api::ResourceClaim>(*old_obj));
  } else {
    errs = api::validate_update(*old_obj, *obj, validation_options());
  }
  if (!errs.empty()) return invalid(r, get_string(object, {"metadata", "name"}), std::move(errs));
  api::encode_tree(*obj, object);
  return std::nullopt;
}

void typed_default(const ResourceInfo& r, Json& object, const std::string& now) {
  if (!r.typed || !object.IsObject()) return;
  Json copy;
  copy.CopyFrom(object, copy.GetAllocator());
  if (to_storage_version(r, copy)) return;
  auto lenient = api::decode_tree_lenient(copy);
  if (!lenient.has_value()) return;
  api::apply_defaults(lenient->object, api::DefaultOptions{now});
  api::encode_tree(lenient->object, copy);
  to_served_version(r, copy);
  object.Swap(copy);
}

}  // namespace draplane::server
