// Field sets of server-side apply, after sigs.k8s.io/structured-merge-diff's
// fieldpath package: a path element names a struct or map field (`f:name`), an
// item of an associative list by its key fields (`k:{"name":"gpu"}`), an item of
// a set by its value (`v:"x"`), or a list index (`i:0`); a FieldSet is a trie of
// such paths, each node possibly a member itself. FieldSets serialize to and
// from the `FieldsV1` JSON of `metadata.managedFields` exactly as
// kube-apiserver writes it (children in path-element order, `".": {}` first when
// a node is both a member and a parent).
//
// Thread-safety: plain values.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "server/json_util.h"

namespace draplane::server::ssa {

struct PathElement {
  enum class Kind { kField = 0, kKey = 1, kValue = 2, kIndex = 3 };  // the order of comparison
  Kind kind = Kind::kField;
  std::string name;                                       // kField
  std::vector<std::pair<std::string, std::string>> key;  // kKey: (field, JSON text), sorted by field
  std::string value;                                      // kValue: JSON text
  int index = 0;                                          // kIndex

  static PathElement field(std::string name);
  static PathElement value_of(const JsonValue& v);
  // The key element of an associative-list item: the listed key fields present in `item`.
  static PathElement key_of(const JsonValue& item, const std::vector<std::string>& keys);
  static PathElement index_of(int i);

  int compare(const PathElement& o) const;
  bool operator<(const PathElement& o) const { return compare(o) < 0; }
  bool operator==(const PathElement& o) const { return compare(o) == 0; }
  // As conflicts print it: `.name`, `[name="gpu"]`, `[="x"]`, `[0]`.
  std::string to_string() const;
  // As FieldsV1 keys: `f:name`, `k:{"name":"gpu"}`, `v:"x"`, `i:0`.
  std::string serialize() const;
  static std::optional<PathElement> deserialize(std::string_view text);
};

using Path = std::vector<PathElement>;
// `.spec.devices.requests`, `.status.reservedFor[uid="u1"].name`.
std::string path_string(const Path& path);

class FieldSet {
 public:
  bool empty() const { return members_.empty() && children_.empty(); }
  void insert(const Path& path);
  bool has(const Path& path) const;
  bool has_member(const PathElement& pe) const { return members_.count(pe) != 0; }
  // The subset under `pe` (nullptr when none).
  const FieldSet* child(const PathElement& pe) const;

  void merge(const FieldSet& other);  // union, in place
  FieldSet union_with(const FieldSet& other) const;
  FieldSet intersection(const FieldSet& other) const;
  // Members of this set that are not members of `other` (a parent in `other`
  // does not remove its children here).
  FieldSet difference(const FieldSet& other) const;
  // Like difference, but a member of `other` also removes everything under it.
  FieldSet recursive_difference(const FieldSet& other) const;
  bool operator==(const FieldSet& o) const { return members_ == o.members_ && children_ == o.children_; }

  // Every member path: a node's members first, then its children, each in order.
  void iterate(const std::function<void(const Path&)>& f) const;

  // FieldsV1 JSON text, e.g. {"f:metadata":{"f:labels":{".":{},"f:app":{}}}}.
  std::string to_fields_v1() const;
  static Result<FieldSet> from_fields_v1(const JsonValue& fields);

 private:
  // difference, or with `recursive` recursive_difference.
  FieldSet subtract(const FieldSet& other, bool recursive) const;
  void iterate_prefix(Path& prefix, const std::function<void(const Path&)>& f) const;
  std::set<PathElement> members_;
  std::map<PathElement, FieldSet> children_;  // never holds empty sets
};

}  // namespace draplane::server::ssa
