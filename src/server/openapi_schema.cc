// Rendering of the schema model (openapi_schema.h) as kube-openapi renders the
// Go types: a field naming a definition is a "$ref" (v2: with its description
// beside it; v3: wrapped in allOf, since a v3 "$ref" ignores its siblings),
// lists and maps carry their items' schema, and the kinds carry
// x-kubernetes-group-version-kind.
#include "server/openapi_schema.h"

#include <algorithm>
#include <map>
#include <set>

namespace draplane::server::openapi {
namespace {

using Alloc = rapidjson::Document::AllocatorType;
using rapidjson::Value;

const char* kMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.";

// apimachinery's types with schemas of their own (their OpenAPISchemaType /
// OpenAPIV3OneOfTypes methods upstream); descriptions shortened.
std::vector<Definition> hand_written() {
  auto d = [](std::string name, std::string description, std::string type, std::string format,
              std::vector<std::string> one_of = {}) {
    Definition x;
    x.name = std::move(name);
    x.description = std::move(description);
    x.type = std::move(type);
    x.format = std::move(format);
    x.one_of_v3 = std::move(one_of);
    return x;
  };
  auto untyped = [](Definition x) {
    x.untyped = true;
    return x;
  };
  return {
      d(std::string(kMeta) + "Time",
        "Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON. Wrappers are provided "
        "for many of the factory methods that the time package offers.",
        "string", "date-time"),
      d(std::string(kMeta) + "MicroTime", "MicroTime is version of Time with microsecond level precision.", "string",
        "date-time"),
      d(std::string(kMeta) + "FieldsV1",
        "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.\n\nEach key is either a '.' "
        "representing the field itself, and will always map to an empty set, or a string representing a sub-field "
        "or item. The string will follow one of these four formats: 'f:<name>', where <name> is the name of a field "
        "in a struct, or key in a map 'v:<value>', where <value> is the exact json formatted value of a list item "
        "'i:<index>', where <index> is position of a item in a list 'k:<keys>', where <keys> is a map of  a list "
        "item's key fields to their unique values If a key maps to an empty Fields value, the field that key "
        "represents is part of the set.\n\nThe exact format is defined in sigs.k8s.io/structured-merge-diff",
        "object", ""),
      untyped(d("io.k8s.apimachinery.pkg.api.resource.Quantity",
        "Quantity is a fixed-point representation of a number. It provides convenient marshaling/unmarshaling in "
        "JSON and YAML, in addition to String() and AsInt64() accessors.\n\nThe serialization format is:\n\n"
        "``` <quantity>        ::= <signedNumber><suffix>\n\n\t(Note that <suffix> may be empty, from the \"\" case "
        "in <decimalSI>.)\n\n<digit>           ::= 0 | 1 | ... | 9 <digits>          ::= <digit> | <digit><digits> "
        "<number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits> <sign>            ::= \"+\" | "
        "\"-\" <signedNumber>    ::= <number> | <sign><number> <suffix>          ::= <binarySI> | <decimalExponent> "
        "| <decimalSI> <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei\n\n\t(International System of units; See: "
        "http://physics.nist.gov/cuu/Units/binary.html)\n\n<decimalSI>       ::= m | \"\" | k | M | G | T | P | E\n\n"
        "\t(Note that 1024 = 1Ki but 1000 = 1k; I didn't choose the capitalization.)\n\n<decimalExponent> ::= \"e\" "
        "<signedNumber> | \"E\" <signedNumber> ```\n\nNo matter which of the three exponent forms is used, no "
        "quantity may represent a number greater than 2^63-1 in magnitude, nor may it have more than 3 decimal "
        "places. Numbers larger or more precise will be capped or rounded up. (E.g.: 0.1m will rounded up to 1m.) "
        "This may be extended in the future if we require larger or smaller quantities.\n\nWhen a Quantity is "
        "parsed from a string, it will remember the type of suffix it had, and will use the same type again when "
        "it is serialized.",
        "string", "", {"string", "number"})),
      d("io.k8s.apimachinery.pkg.util.intstr.IntOrString",
        "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and "
        "unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON field "
        "that can accept a name or number.",
        "string", "int-or-string", {"integer", "string"}),
      untyped(d("io.k8s.apimachinery.pkg.runtime.RawExtension",
        "RawExtension is used to hold extensions in external versions. It holds any JSON object: an embedded "
        "object of some kind (with its apiVersion and kind), or a driver's opaque parameters.",
        "object", "")),
  };
}

const std::map<std::string, const Definition*>& index() {
  static const std::vector<Definition> kHand = hand_written();
  static const std::map<std::string, const Definition*> kIndex = [] {
    std::map<std::string, const Definition*> m;
    for (const auto& d : generated_definitions()) m[d.name] = &d;
    for (const auto& d : kHand) m[d.name] = &d;
    return m;
  }();
  return kIndex;
}

bool is_primitive(const std::string& t) {
  return t == "string" || t == "boolean" || t == "int32" || t == "int64" || t == "integer" || t == "double" ||
         t == "byte";
}

Value str(const std::string& s, Alloc& a) { return Value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), a); }

void add(Value& obj, const char* key, Value v, Alloc& a) { obj.AddMember(Value(key, a), v, a); }

Value string_array(const std::vector<std::string>& v, Alloc& a) {
  Value arr(rapidjson::kArrayType);
  for (const auto& s : v) arr.PushBack(str(s, a), a);
  return arr;
}

Value primitive(const std::string& t, Alloc& a) {
  Value v(rapidjson::kObjectType);
  if (t == "int32" || t == "int64") {
    add(v, "type", Value("integer"), a);
    add(v, "format", str(t, a), a);
  } else if (t == "double") {
    add(v, "type", Value("number"), a);
    add(v, "format", Value("double"), a);
  } else if (t == "byte") {
    add(v, "type", Value("string"), a);
    add(v, "format", Value("byte"), a);
  } else {
    add(v, "type", str(t, a), a);
  }
  return v;
}

// The schema of a type expression (no description).
Value type_schema(const std::string& t, Dialect dialect, Alloc& a) {
  if (is_primitive(t)) return primitive(t, a);
  if (t.rfind("[]", 0) == 0) {
    Value v(rapidjson::kObjectType);
    add(v, "type", Value("array"), a);
    add(v, "items", type_schema(t.substr(2), dialect, a), a);
    return v;
  }
  if (t.rfind("map[]", 0) == 0) {
    Value v(rapidjson::kObjectType);
    add(v, "type", Value("object"), a);
    add(v, "additionalProperties", type_schema(t.substr(5), dialect, a), a);
    return v;
  }
  Value v(rapidjson::kObjectType);
  add(v, "$ref", str(ref_to(t, dialect), a), a);
  return v;
}

Value field_schema(const Field& f, Dialect dialect, Alloc& a) {
  Value v(rapidjson::kObjectType);
  bool ref = !is_primitive(f.type) && f.type.rfind("[]", 0) != 0 && f.type.rfind("map[]", 0) != 0;
  if (ref && dialect == Dialect::kV3) {
    // kube-openapi's v3: {"allOf": [{"$ref": ...}], "description": ...}.
    Value all_of(rapidjson::kArrayType);
    all_of.PushBack(type_schema(f.type, dialect, a), a);
    add(v, "allOf", std::move(all_of), a);
  } else {
    Value t = type_schema(f.type, dialect, a);
    for (auto& m : t.GetObject()) v.AddMember(m.name, m.value, a);
  }
  add(v, "description", str(f.description, a), a);
  if (dialect == Dialect::kV3 && !f.enum_values.empty()) add(v, "enum", string_array(f.enum_values, a), a);
  if (!f.list_type.empty()) add(v, "x-kubernetes-list-type", str(f.list_type, a), a);
  if (!f.list_map_keys.empty()) add(v, "x-kubernetes-list-map-keys", string_array(f.list_map_keys, a), a);
  if (!f.map_type.empty()) add(v, "x-kubernetes-map-type", str(f.map_type, a), a);
  if (!f.patch_merge_key.empty()) add(v, "x-kubernetes-patch-merge-key", str(f.patch_merge_key, a), a);
  if (!f.patch_strategy.empty()) add(v, "x-kubernetes-patch-strategy", str(f.patch_strategy, a), a);
  return v;
}

void collect(const std::string& t, std::set<std::string>& seen, std::vector<std::string>& todo) {
  if (is_primitive(t)) return;
  if (t.rfind("[]", 0) == 0) return collect(t.substr(2), seen, todo);
  if (t.rfind("map[]", 0) == 0) return collect(t.substr(5), seen, todo);
  if (seen.insert(t).second) todo.push_back(t);
}

}  // namespace

const Definition* find_definition(const std::string& name) {
  auto it = index().find(name);
  return it == index().end() ? nullptr : it->second;
}

std::string definition_name(const std::string& group, const std::string& version, const std::string& kind) {
  std::string pkg = group.empty() ? "core" : group.substr(0, group.find('.'));
  return "io.k8s.api." + pkg + "." + version + "." + kind;
}

std::vector<Gvk> kinds_of(const std::string& name, const std::vector<Gvk>& served) {
  std::vector<Gvk> out;
  // Status, DeleteOptions and WatchEvent are kinds of every group-version
  // (kube-apiserver lists each one they are registered in).
  for (const char* meta : {"Status", "DeleteOptions", "WatchEvent"}) {
    if (name != std::string(kMeta) + meta) continue;
    std::set<std::pair<std::string, std::string>> gvs;
    for (const auto& g : served) {
      if (gvs.insert({g.group, g.version}).second) out.push_back({g.group, g.version, meta});
    }
    std::sort(out.begin(), out.end(), [](const Gvk& a, const Gvk& b) {
      return a.group != b.group ? a.group < b.group : a.version < b.version;
    });
    return out;
  }
  for (const auto& g : served) {
    if (definition_name(g.group, g.version, g.kind) == name) out.push_back(g);
    if (definition_name(g.group, g.version, g.kind + "List") == name) out.push_back({g.group, g.version, g.kind + "List"});
  }
  return out;
}

std::string ref_to(const std::string& name, Dialect dialect) {
  return (dialect == Dialect::kV2 ? "#/definitions/" : "#/components/schemas/") + name;
}

std::vector<std::string> closure(const std::vector<std::string>& roots) {
  std::set<std::string> seen;
  std::vector<std::string> todo;
  for (const auto& r : roots) collect(r, seen, todo);
  while (!todo.empty()) {
    std::string n = todo.back();
    todo.pop_back();
    if (const Definition* d = find_definition(n)) {
      for (const auto& f : d->fields) collect(f.type, seen, todo);
    }
  }
  return {seen.begin(), seen.end()};
}

void render_definition(const Definition& d, const std::vector<Gvk>& gvks, Dialect dialect, Value& out, Alloc& a) {
  out.SetObject();
  add(out, "description", str(d.description, a), a);
  if (!d.one_of_v3.empty() && dialect == Dialect::kV3) {
    Value one_of(rapidjson::kArrayType);
    for (const auto& t : d.one_of_v3) one_of.PushBack(primitive(t, a), a);
    add(out, "oneOf", std::move(one_of), a);
  } else if (!d.type.empty()) {
    add(out, "type", str(d.type, a), a);
    if (!d.format.empty()) add(out, "format", str(d.format, a), a);
  } else {
    add(out, "type", Value("object"), a);
  }
  if (!d.fields.empty()) {
    Value props(rapidjson::kObjectType);
    std::vector<std::string> required;
    for (const auto& f : d.fields) {
      props.AddMember(str(f.name, a), field_schema(f, dialect, a), a);
      if (f.required) required.push_back(f.name);
    }
    add(out, "properties", std::move(props), a);
    if (!required.empty()) add(out, "required", string_array(required, a), a);
  }
  if (!gvks.empty()) {
    Value list(rapidjson::kArrayType);
    for (const auto& g : gvks) {
      Value o(rapidjson::kObjectType);
      add(o, "group", str(g.group, a), a);
      add(o, "kind", str(g.kind, a), a);
      add(o, "version", str(g.version, a), a);
      list.PushBack(std::move(o), a);
    }
    add(out, "x-kubernetes-group-version-kind", std::move(list), a);
  }
  if (!d.map_type.empty()) add(out, "x-kubernetes-map-type", str(d.map_type, a), a);
}

}  // namespace draplane::server::openapi
