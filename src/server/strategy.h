// A kind's strategy: everything the generic registry (api_crud.cc) and the
// list, watch and table code ask of one kind, after k8s.io/apiserver's
// rest.RESTCreateStrategy / RESTUpdateStrategy (PrepareForCreate,
// PrepareForUpdate, Validate, ValidateUpdate, Canonicalize, WarningsOnCreate,
// status reset), its field-label conversion and selectable fields (GetAttrs),
// its TableConvertor and its registry hooks (BeforeDelete, AfterDelete).
//
// Each served kind registers its strategy with its ResourceInfo in one place
// (resources.cc); strategy_of() gives a kind's strategy, the default one
// (untyped JSON objects, name and namespace selectable, Name and Age columns)
// for kinds that register none. Strategies are stateless: what they need of
// the server (the clock's time, the CEL program cache it owns) comes in a
// StrategyContext with each call.
//
// Objects handed to a strategy are JSON in the storage version (apiVersion set),
// except table rows and field_label, which see the served version.
//
// Thread-safety: strategies are immutable; all methods may be called concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/result.h"
#include "server/api_error.h"
#include "server/json_util.h"
#include "server/resources.h"

namespace draplane::cel {
class ProgramCache;
}

namespace draplane::server {

// ?fieldValidation= of create, update and patch: what unknown and duplicate
// fields in the body do. Strict: 400 naming them; Warn (the default, as in
// kube-apiserver): dropped, each one a warning; Ignore: dropped silently.
enum class FieldValidation { kStrict, kWarn, kIgnore };

// What the server gives a strategy with each call.
struct StrategyContext {
  const ResourceInfo& resource;  // the version the request names
  std::string now;               // RFC 3339: fields defaulted to the current time
  cel::ProgramCache* programs = nullptr;  // owned by the ApiServer; compiled CEL selectors
  FieldValidation field_validation = FieldValidation::kStrict;
};

// What a strategy's registry hooks may ask of the server.
class RegistryHooks {
 public:
  virtual ~RegistryHooks() = default;
  // Deletes every object in namespace `ns` (the namespace goes away).
  virtual void delete_namespace_contents(const std::string& ns) = 0;
  // Namespace `name` was written at `revision` (the namespace cache re-reads it).
  virtual void namespace_changed(const std::string& name, int64_t revision) = 0;
};

// One column of a Table (meta.k8s.io/v1 TableColumnDefinition).
struct TableColumn {
  const char* name;
  const char* type;  // string | integer
  int priority;      // 1: only with -o wide
  const char* format = "";
};
using TableCell = std::variant<std::string, int64_t>;

class Strategy {
 public:
  virtual ~Strategy() = default;

  // ---- create
  // PrepareForCreate: clears and sets what clients do not set (status). Problems
  // of dropped fields go to `late_warnings`, which follow validation's warnings;
  // an error fails the create.
  virtual std::optional<ApiError> prepare_for_create(const StrategyContext& c, Json& object,
                                                     std::vector<std::string>& late_warnings) const;
  // Validate and Canonicalize of a create: decodes the body under the
  // context's field validation, defaults, validates and re-encodes `object`
  // canonically (dropped fields appended to `warnings` under kWarn).
  // Errors: 400 for documents that do not decode, 422 with causes when invalid.
  virtual std::optional<ApiError> validate_create(const StrategyContext& c, Json& object,
                                                  std::vector<std::string>& warnings) const;

  // ---- update
  // Whether writes of the main resource keep the old status (it then changes
  // only through /status): true for kinds with a status subresource.
  virtual bool main_resource_resets_status(const ResourceInfo& r) const;
  // PrepareForUpdate of the main resource: the server-owned parts of `object`
  // taken from `old` (status, when main_resource_resets_status).
  virtual void prepare_for_update(const ResourceInfo& r, const JsonValue& old, Json& object) const;
  // ValidateUpdate and Canonicalize, as validate_create; `subresource` is
  // "status" for /status writes.
  virtual std::optional<ApiError> validate_update(const StrategyContext& c, const JsonValue& old, Json& object,
                                                  const std::string& subresource,
                                                  std::vector<std::string>& warnings) const;
  // `object` (of the context's version) with the defaults the server would give
  // it; unchanged when it does not decode. Server-side apply compares with it.
  virtual void apply_defaults(const StrategyContext& c, Json& object) const;
  // The structs a new object of the kind serializes as present and empty (a
  // create's managedFields compare against them), e.g. {{"spec", "devices"}}.
  virtual std::vector<std::vector<const char*>> empty_structs() const { return {}; }

  // ---- delete (registry hooks)
  // Before the object is removed from the store (not when finalizers only mark it).
  virtual void before_remove(RegistryHooks& hooks, const std::string& name) const;
  // After the object was removed or marked for deletion at `revision`.
  virtual void after_delete(RegistryHooks& hooks, const std::string& name, int64_t revision) const;

  // ---- field selectors
  // The field label conversion: the stored form's label for `label` as the
  // version `r` names it; a 400 naming the label when it has none.
  virtual Result<std::string> field_label(const ResourceInfo& r, const std::string& label) const;
  // Whether ?fieldSelector= may name `path` (a stored form's label).
  virtual bool selectable_field(const std::string& path) const;
  // GetAttrs: the value of selectable `path` in a stored object ("" when unset).
  virtual std::string field_value(const JsonValue& object, const std::string& path) const;
  // The 400's message for a label the kind does not select on.
  virtual std::string unsupported_field(const ResourceInfo& r, const std::string& label) const;

  // ---- tables (TableConvertor) and discovery
  virtual std::vector<TableColumn> table_columns() const;
  // One row of a served-version object; a cell per column.
  virtual std::vector<TableCell> table_cells(const JsonValue& object, int64_t now) const;
  // Whether the kind serves deletecollection.
  virtual bool deletes_collections() const { return true; }
  // The categories discovery publishes (`kubectl get all`).
  virtual std::vector<std::string> categories() const { return {}; }

 protected:
  // What the field label conversion of the core kinds answers for an unsupported label.
  static std::string core_unsupported_field(const std::string& label) { return "field label not supported: " + label; }
};

// The one instance of strategy class S (strategies are stateless).
template <class S>
const Strategy& the_strategy() {
  static const S kStrategy;
  return kStrategy;
}

// The strategy of untyped kinds (Leases, ...), and the fallback of strategy_of.
const Strategy& default_strategy();
// The strategy `r` was registered with, or the default one.
const Strategy& strategy_of(const ResourceInfo& r);

// Helpers of table cells (table.cc): the object's age as kubectl prints AGE,
// "<none>" for empty text, the length of an array (0 when absent).
std::string table_age(const JsonValue& object, int64_t now);
std::string or_none(std::string s);
int64_t array_size(const JsonValue& object, std::initializer_list<std::string_view> path);

}  // namespace draplane::server
