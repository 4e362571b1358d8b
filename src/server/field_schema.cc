// The apply schema of a kind, derived from its OpenAPI definition as
// kube-apiserver derives its structured-merge-diff type converter from the
// OpenAPI document (kube-openapi's schemaconv):
//   - an array is an atomic list unless x-kubernetes-list-type says "set" or
//     "map" (an associative list keyed by x-kubernetes-list-map-keys);
//   - an object with additionalProperties is a granular map, one with
//     properties a struct, unless x-kubernetes-map-type (on the field or on
//     the referenced type) says "atomic";
//   - RawExtension and Quantity are untyped scalars there: atomic.
// Objects without properties (FieldsV1) are deduced as our default does.
#include "server/field_schema.h"

#include <vector>

#include "server/openapi_schema.h"
#include "server/resources.h"

namespace draplane::server::ssa {
namespace {

using Nodes = std::unordered_map<std::string, NodeType>;

const char* kObjectMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

NodeType list_node(const openapi::Field& f) {
  if (f.list_type == "set") return {NodeKind::kSet, {}};
  if (f.list_type == "map") return {NodeKind::kAssociative, f.list_map_keys};
  return {NodeKind::kAtomic, {}};
}

class Walker {
 public:
  explicit Walker(Nodes& nodes) : nodes_(nodes) {}

  // The value of type expression `type` (openapi_schema.h) at schema path
  // `sp`; `field` is the property it is the value of (its markers), if any.
  void walk(const std::string& type, const std::string& sp, const openapi::Field* field) {
    if (type.rfind("[]", 0) == 0) {
      NodeType t = field ? list_node(*field) : NodeType{NodeKind::kAtomic, {}};
      bool granular = t.kind != NodeKind::kAtomic;
      nodes_[sp] = std::move(t);
      if (granular) walk(type.substr(2), item_path(sp), nullptr);
      return;
    }
    if (type.rfind("map[]", 0) == 0) {
      if (field && field->map_type == "atomic") {
        nodes_[sp] = {NodeKind::kAtomic, {}};
        return;
      }
      nodes_[sp] = {NodeKind::kMap, {}};
      return walk(type.substr(5), entry_path(sp), nullptr);
    }
    const openapi::Definition* d = openapi::find_definition(type);
    if (d == nullptr) return;  // a primitive
    if (d->untyped || d->map_type == "atomic" || (field && field->map_type == "atomic")) {
      nodes_[sp] = {NodeKind::kAtomic, {}};
      return;
    }
    if (!d->type.empty() && d->type != "object") return;  // a scalar (Time, IntOrString)
    // A struct: the default. A type nested in itself is not walked again: the
    // inner occurrence gets the defaults (a struct, atomic lists).
    for (const auto& open : stack_) {
      if (open == type) return;
    }
    stack_.push_back(type);
    for (const auto& f : d->fields) walk(f.type, field_path(sp, f.name), &f);
    stack_.pop_back();
  }

 private:
  Nodes& nodes_;
  std::vector<std::string> stack_;
};

// The served resource of a kind: its storage version, or (events.k8s.io, whose
// objects are stored as core Events) the first version discovery lists.
const ResourceInfo* resource_of(std::string_view group, std::string_view kind) {
  if (const ResourceInfo* r = find_kind(group, kind)) return r;
  for (const auto& r : all_resources()) {
    if (r.group == group && r.kind == kind) return &r;
  }
  return nullptr;
}

// The walk from the kind's definition; a kind without one gets its metadata's schema.
Nodes derive(std::string_view group, std::string_view kind) {
  Nodes nodes;
  Walker w(nodes);
  const ResourceInfo* r = resource_of(group, kind);
  std::string root = r ? openapi::definition_name(r->group, r->version, r->kind) : "";
  if (r && openapi::find_definition(root)) {
    w.walk(root, "", nullptr);
  } else {
    w.walk(kObjectMeta, "metadata", nullptr);
  }
  return nodes;
}

}  // namespace

const NodeType& Schema::at(const std::string& schema_path) const {
  static const NodeType kDefault;
  auto it = nodes_.find(schema_path);
  return it == nodes_.end() ? kDefault : it->second;
}

const Schema& schema_for(std::string_view group, std::string_view kind) {
  // Every served kind's schema, derived once on first use (a thread-safe static):
  // creates and updates look theirs up with no lock. A dozen kinds: a scan.
  struct Entry {
    std::string_view group, kind;
    Schema schema;
  };
  static const std::vector<Entry>* kSchemas = [] {
    auto* out = new std::vector<Entry>();  // never destroyed: schemas live as long as the process
    for (const ResourceInfo& r : all_resources()) {
      bool seen = false;
      for (const Entry& e : *out) seen = seen || (e.group == r.group && e.kind == r.kind);
      if (!seen) out->push_back(Entry{r.group, r.kind, Schema(derive(r.group, r.kind))});
    }
    return out;
  }();
  for (const Entry& e : *kSchemas) {
    if (e.group == group && e.kind == kind) return e.schema;
  }
  static const Schema kMetadataOnly(derive("", ""));  // kinds the server does not serve
  return kMetadataOnly;
}

}  // namespace draplane::server::ssa
