// Field management of server-side apply on JSON objects: `metadata.managedFields`
// decoding and encoding, the Update operation (create, update and non-apply
// patches: the writer takes the fields it changed), and the Apply operation
// (merge the applied configuration into the live object, conflicts with other
// managers, force, and removal of fields the applier no longer applies), after
// k8s.io/apimachinery/pkg/util/managedfields and
// sigs.k8s.io/structured-merge-diff (merge.Updater; typed Compare, Merge,
// ToFieldSet, RemoveItems), including kubectl's client-side to server-side
// upgrade through the last-applied-configuration annotation.
//
// Objects are compared in the version the request names; metadata.managedFields
// itself is never part of a field set.
//
// Thread-safety: free functions on caller-owned values.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "server/field_schema.h"
#include "server/field_set.h"
#include "server/json_util.h"

namespace draplane::server::ssa {

// One metadata.managedFields entry.
struct Manager {
  std::string manager;
  std::string operation;    // "Apply" or "Update"
  std::string api_version;  // of the request that wrote the fields
  std::string subresource;  // "" or "status"
  std::string time;         // RFC 3339; "" when none
  FieldSet fields;
  // kube-apiserver's manager identifier (BuildManagerIdentifier): the JSON of
  // manager, operation, apiVersion (Update only) and subresource.
  std::string id() const;
};
using Managers = std::map<std::string, Manager>;  // by id()

// metadata.managedFields as managers (absent or null: none). kBadRequest when
// an entry is malformed (operation, apiVersion, fieldsType, FieldsV1).
Result<Managers> decode_managed_fields(const JsonValue* managed_fields);
// Sets metadata.managedFields of `object` to `managers`, sorted as
// kube-apiserver sorts them (operation, time, manager, apiVersion,
// subresource); removes it when there are none.
void encode_managed_fields(const Managers& managers, Json& object);
// A request's managedFields that ask for a reset: [] or [{}].
bool is_reset(const JsonValue* managed_fields);

// Who writes.
struct Writer {
  std::string manager;  // fieldManager, or the User-Agent's product; "" = "unknown"
  std::string api_version;
  std::string subresource;
};

// Which top-level fields a write may own (the reset fields of kube-apiserver's
// strategies): a main resource with a status subresource does not own status,
// the status subresource owns status only.
enum class Scope { kAll, kAllButStatus, kStatusOnly };

// An Update: `writer` takes the fields that `updated` adds or changes against
// `live` (from every other manager), fields removed are dropped from every
// manager. `now` stamps the writer's entry when it took anything.
void record_update(const Schema& schema, const JsonValue& live, const JsonValue& updated, Managers& managers,
                   const Writer& writer, Scope scope, const std::string& now);

struct Conflict {
  std::string manager_id;
  Path path;
};

struct ApplyResult {
  Json object;                      // the live object with the configuration applied
  std::vector<Conflict> conflicts;  // set: nothing was applied
  bool changed = false;             // object differs from live
};

// An Apply of `config` by `writer` to `live` (an empty object for a create).
// Without `force`, fields that the configuration changes and other managers
// own are conflicts; with it, the writer takes them. The writer's entry
// becomes exactly the configuration's fields; fields it applied before and no
// longer applies are removed from the object when no other manager owns them.
// kBadRequest when the configuration has duplicate keys in an associative list.
//
// `default_object`, when given, fills in server defaults of the last-applied
// configuration before it is compared with the live object (see docs/compat.md).
Result<ApplyResult> apply(const Schema& schema, const JsonValue& live, const JsonValue& config, Managers& managers,
                          const Writer& writer, Scope scope, bool force, const std::string& now,
                          const std::function<void(Json&)>& default_object = nullptr);

// The Status message of an apply conflict, as kube-apiserver words it:
//   Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .spec.x
std::string conflict_message(const std::vector<Conflict>& conflicts);
// `"name"`, `"name" with subresource "status"`, `... using resource.k8s.io/v1` for Update managers.
std::string print_manager(const std::string& manager_id);

// The manager name kube-apiserver derives from a User-Agent when no
// fieldManager is given: the text before the first '/', printable, ≤128 bytes.
std::string manager_from_user_agent(const std::string& user_agent);

}  // namespace draplane::server::ssa
