// What server-side apply needs to know of a kind's schema: which objects are
// granular maps (labels, capacity) rather than structs, which are atomic, and
// which lists are sets or associative lists with merge keys (containers by
// name, reservedFor by uid) rather than atomic lists - the
// x-kubernetes-map-type / list-type / list-map-keys markers of the upstream
// OpenAPI. The schema is derived from the kind's OpenAPI definition
// (openapi_schema.h, generated from the Kubernetes API's Go types and their
// markers) as kube-apiserver derives its structured-merge-diff type converter
// from its OpenAPI document; there is no table per kind.
//
// Nodes are named by schema paths: fields joined by '.', `[]` for a list item,
// `*` for a map entry ("spec.containers[].ports", "metadata.labels.*").
// Anything the definition does not give is a struct when it is a JSON object
// and an atomic list when it is an array.
//
// Thread-safety: schema_for derives every served kind's schema once, on first
// use; schemas are immutable and live as long as the process.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace draplane::server::ssa {

enum class NodeKind {
  kDefault,      // struct for objects, atomic for lists
  kMap,          // granular map: every key is an entry of its own
  kAtomic,       // owned and replaced as a whole
  kSet,          // list of scalars, items by value
  kAssociative,  // list of objects, items by their key fields
};

struct NodeType {
  NodeKind kind = NodeKind::kDefault;
  std::vector<std::string> keys;  // kAssociative
};

class Schema {
 public:
  explicit Schema(std::unordered_map<std::string, NodeType> nodes) : nodes_(std::move(nodes)) {}
  const NodeType& at(const std::string& schema_path) const;

 private:
  std::unordered_map<std::string, NodeType> nodes_;
};

// The schema of a kind (group "" for core), from its definition in the version
// its objects are stored in; a kind without a definition gets its metadata's.
const Schema& schema_for(std::string_view group, std::string_view kind);

// Schema paths of children.
inline std::string field_path(const std::string& parent, std::string_view name) {
  return parent.empty() ? std::string(name) : parent + "." + std::string(name);
}
inline std::string item_path(const std::string& parent) { return parent + "[]"; }
inline std::string entry_path(const std::string& parent) { return parent + ".*"; }

}  // namespace draplane::server::ssa
