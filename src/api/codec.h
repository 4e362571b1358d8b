// JSON and YAML codec for the object model (types.h).
//
// Decoding is strict for resource.k8s.io kinds: an unknown or misspelled field is
// an error naming its path, e.g.
//   strict decoding error: unknown field "spec.devices.requests[0].exactly.cout"
// and a wrong type likewise, e.g.
//   spec.devices.requests[0].exactly.count: expected integer, got string "two"
// Core kinds (Pod, Node, Namespace) keep unmodelled fields in their `extra` members,
// as do the unmodelled parts of Service, PersistentVolumeClaim and Job specs.
// Input may be JSON or YAML; a stream may hold several YAML documents (`---`) and
// `kind: List` (or `*List`) objects whose items are expanded in order. apiVersions
// v1beta1 and v1beta2 of resource.k8s.io are converted to v1 on decode
// (conversion.h); v1alpha2 is rejected with a migration hint. Decoding applies no
// defaults (defaults.h) and no validation (validation.h).
//
// Encoding writes the Kubernetes JSON shape (omitempty as upstream, maps sorted),
// apiVersion and kind first. Round trip decode -> encode -> decode is lossless.
//
// Thread-safety: free functions without shared state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "common/result.h"

namespace draplane::api {

// One document of a stream: its position (0-based, counting documents after List
// expansion in source order), and the decoded object or the error for it. A
// document that fails does not stop the others.
struct DecodedDocument {
  int index = 0;
  std::string kind;  // as written, when it could be read
  std::string name;  // metadata.name, when it could be read
  Result<Object> object = Status(Code::kInvalid, "not decoded");
};

// Decodes every document of a YAML or JSON stream. Empty documents are skipped.
// A syntax error that makes the rest of the stream unreadable ends the list with
// one failed document carrying the parser's line/column message.
std::vector<DecodedDocument> decode_stream(std::string_view text);

// Decodes exactly one object (JSON or YAML). Error if the text holds zero or
// several objects.
Result<Object> decode_object(std::string_view text);

// Like decode_object, but unknown and duplicate fields are not errors (the API
// server's fieldValidation=Warn|Ignore): the object is decoded without them and
// each one is listed in `dropped`, as `unknown field "spec.x"` or
// `duplicate field "metadata.name"`. Type errors still fail.
struct LenientDecode {
  Object object;
  std::vector<std::string> dropped;
};
Result<LenientDecode> decode_object_lenient(std::string_view text);

// One YAML document as compact JSON text, scalars resolved as sigs.k8s.io/yaml's
// YAMLToJSON resolves them (the API server's reading of application/yaml bodies).
// kBadRequest with the parser's line for a syntax error, or when the text holds
// no document or several.
Result<std::string> yaml_to_json(std::string_view text);

// Decodes one object of a known type; error if `kind` differs.
template <typename T>
Result<T> decode_as(std::string_view text);
// The decoded object as T; kBadRequest naming both kinds when it is another.
template <typename T>
Result<T> object_as(Result<Object> decoded);

// Encoders. `pretty` indents JSON by 4 spaces, as kubectl -o json does.
std::string to_json(const Object& object, bool pretty = false);
std::string to_yaml(const Object& object);
// A {"kind":"List","apiVersion":"v1","items":[...]} document.
std::string to_json_list(const std::vector<Object>& objects, bool pretty = false);
// Multi-document YAML stream ("---" between objects).
std::string to_yaml_stream(const std::vector<Object>& objects);

// Kind name and metadata of any object.
std::string_view kind_of(const Object& object);
const ObjectMeta& meta_of(const Object& object);
ObjectMeta& meta_of(Object& object);

template <typename T>
Result<T> object_as(Result<Object> decoded) {
  ASSIGN_OR_RETURN(Object obj, std::move(decoded));
  if (T* typed = std::get_if<T>(&obj)) return std::move(*typed);
  return Status(Code::kBadRequest, "expected kind " + std::string(kind_of(Object(T{}))) + ", got " +
                                       std::string(kind_of(obj)));
}

}  // namespace draplane::api
