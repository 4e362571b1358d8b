// The bridge from the server's generic JSON objects to the typed object model.
#include "server/typed_strategy.h"

#include "api/codec_tree.h"
#include "api/defaults.h"
#include "cel/cel.h"
#include "server/internal/api_impl.h"

namespace draplane::server {
namespace {

Status cannot_handle(const ResourceInfo& r, const Status& why) {
  return Status(Code::kBadRequest,
                r.kind + " in version \"" + r.version + "\" cannot be handled as a " + r.kind + ": " + why.message());
}

// Stored objects: strict (they were written canonically).
Result<api::Object> decode_stored(const ResourceInfo& r, const JsonValue& object) {
  auto obj = api::decode_tree(object);
  if (!obj.has_value()) return cannot_handle(r, obj.error());
  return obj;
}

}  // namespace

api::ValidationOptions TypedStrategy::validation_options(const StrategyContext& c) {
  // Checking a selector compiles it (a tenth of a claim create); writes repeat
  // the same few expressions, so the server keeps the programs.
  api::ValidationOptions o;
  cel::ProgramCache* programs = c.programs;
  o.selector_checker = [programs](std::string_view expr) { return cel::check_selector(expr, programs); };
  return o;
}

Result<api::Object> TypedStrategy::decode_body(const StrategyContext& c, const JsonValue& object,
                                               std::vector<std::string>& warnings) {
  if (c.field_validation == FieldValidation::kStrict) return decode_stored(c.resource, object);
  auto lenient = api::decode_tree_lenient(object);
  if (!lenient.has_value()) return cannot_handle(c.resource, lenient.error());
  if (c.field_validation == FieldValidation::kWarn) {
    warnings.insert(warnings.end(), lenient->dropped.begin(), lenient->dropped.end());
  }
  return std::move(lenient->object);
}

std::optional<ApiError> TypedStrategy::validate_create(const StrategyContext& c, Json& object,
                                                       std::vector<std::string>& warnings) const {
  auto obj = decode_body(c, object, warnings);
  if (!obj.has_value()) return from_code(obj.error().code(), obj.error().message());
  api::apply_defaults(*obj, api::DefaultOptions{get_string(object, {"metadata", "creationTimestamp"})});
  api::FieldErrorList errs = api::validate(*obj, validation_options(c));
  if (!errs.empty()) return invalid(c.resource, get_string(object, {"metadata", "name"}), std::move(errs));
  api::encode_tree(*obj, object);
  return std::nullopt;
}

std::optional<ApiError> TypedStrategy::validate_update(const StrategyContext& c, const JsonValue& old_object,
                                                       Json& object, const std::string& subresource,
                                                       std::vector<std::string>& warnings) const {
  auto old_obj = decode_stored(c.resource, old_object);
  if (!old_obj.has_value()) return from_code(Code::kInternal, "stored object: " + old_obj.error().message());
  auto obj = decode_body(c, object, warnings);
  if (!obj.has_value()) return from_code(obj.error().code(), obj.error().message());
  api::apply_defaults(*obj, api::DefaultOptions{c.now});
  prepare_typed_update(c, *old_obj, *obj, subresource);
  api::FieldErrorList errs = validate_typed_update(c, *old_obj, *obj, subresource);
  if (!errs.empty()) return invalid(c.resource, get_string(object, {"metadata", "name"}), std::move(errs));
  api::encode_tree(*obj, object);
  return std::nullopt;
}

api::FieldErrorList TypedStrategy::validate_typed_update(const StrategyContext& c, const api::Object& old,
                                                         const api::Object& object, const std::string&) const {
  return api::validate_update(old, object, validation_options(c));
}

void TypedStrategy::apply_defaults(const StrategyContext& c, Json& object) const {
  if (!object.IsObject()) return;
  const ResourceInfo& r = c.resource;
  Json copy;
  copy.CopyFrom(object, copy.GetAllocator());
  if (to_storage_version(r, copy)) return;
  auto lenient = api::decode_tree_lenient(copy);
  if (!lenient.has_value()) return;
  api::apply_defaults(lenient->object, api::DefaultOptions{c.now});
  api::encode_tree(lenient->object, copy);
  to_served_version(r, copy);
  object.Swap(copy);
}

}  // namespace draplane::server
