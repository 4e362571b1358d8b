// The schema model of the served API types, from which both OpenAPI documents
// are rendered: /openapi/v2 (Swagger 2.0 definitions, JSON and protobuf) and
// /openapi/v3/<group-version> (components.schemas), as kube-apiserver builds
// them from the Go types: every field with its type, format and description,
// the list/map/patch markers (x-kubernetes-list-type, -list-map-keys,
// -map-type, -patch-strategy, -patch-merge-key), enum values, required fields,
// and x-kubernetes-group-version-kind on the top-level kinds.
//
// The field tables are generated (openapi_types_gen.cc, by
// scripts/gen_openapi_types.py from the Kubernetes API's Go types and field
// docs); a few apimachinery types with custom schemas (Time, Quantity, ...)
// are written here by hand.
//
// Thread-safety: immutable tables; the rendering functions are pure.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <vector>

namespace draplane::server::openapi {

// Type expressions: "string", "boolean", "int32", "int64", "integer",
// "double", "byte" (base64 string); "[]T" (array), "map[]T" (object with
// additionalProperties T); any other is the full name of a Definition
// ("io.k8s.api.resource.v1.DeviceRequest").
struct Field {
  std::string name;
  std::string type;
  std::string description;
  bool required = false;
  std::vector<std::string> enum_values;
  std::string list_type;  // atomic | set | map
  std::vector<std::string> list_map_keys;
  std::string map_type;  // atomic | granular
  std::string patch_strategy;
  std::string patch_merge_key;
};

struct Definition {
  std::string name;  // "io.k8s.api.resource.v1.ResourceClaim"
  std::string description;
  std::string map_type;  // "atomic" for +structType=atomic
  std::vector<Field> fields;
  // Set on the hand-written ones: a schema of this type instead of an object
  // with properties ("string" + "date-time" for Time, ...).
  std::string type;
  std::string format;
  std::vector<std::string> one_of_v3;  // OpenAPI v3 oneOf types (Quantity, IntOrString)
  // Quantity and RawExtension: kube-apiserver's apply schema takes them as
  // untyped scalars (kube-openapi's schemaconv), so apply owns them whole.
  bool untyped = false;
};

struct Gvk {
  std::string group, version, kind;
};

// The generated tables (openapi_types_gen.cc).
const std::vector<Definition>& generated_definitions();

// Every definition, generated and hand-written; nullptr when unknown.
const Definition* find_definition(const std::string& name);

// The definition name of a kind: "io.k8s.api.core.v1.Pod",
// "io.k8s.api.resource.v1beta1.ResourceClaim", "io.k8s.api.events.v1.Event".
std::string definition_name(const std::string& group, const std::string& version, const std::string& kind);

// The kinds a definition stands for (x-kubernetes-group-version-kind): the
// served kind and its List for API types, and for meta types (Status,
// DeleteOptions, WatchEvent) every group-version they are used in.
std::vector<Gvk> kinds_of(const std::string& definition_name, const std::vector<Gvk>& served);

enum class Dialect { kV2, kV3 };

// The names of the definitions reachable from `roots` (the roots included), sorted.
std::vector<std::string> closure(const std::vector<std::string>& roots);

// One definition rendered as a schema object ("$ref"s point to
// "#/definitions/" (v2) or "#/components/schemas/" (v3)).
void render_definition(const Definition& d, const std::vector<Gvk>& gvks, Dialect dialect, rapidjson::Value& out,
                       rapidjson::Document::AllocatorType& alloc);

// The "$ref" string of a definition name.
std::string ref_to(const std::string& name, Dialect dialect);

}  // namespace draplane::server::openapi
