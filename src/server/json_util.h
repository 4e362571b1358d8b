// JSON helpers for the API server, on RapidJSON documents: parse/print, path
// access, and the three JSON patch formats Kubernetes accepts (RFC 7386 merge
// patch, RFC 6902 JSON patch, and strategic merge patch for core kinds).
//
// The server handles objects generically as JSON trees (metadata, selectors,
// patches, tables), and uses the typed codec (api/codec.h) only to default and
// validate the kinds draplane models.
//
// Thread-safety: free functions; a Document must not be shared between threads.
#pragma once

#include <rapidjson/document.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "common/result.h"

namespace draplane::server {

using Json = rapidjson::Document;
using JsonValue = rapidjson::Value;
using JsonAlloc = rapidjson::Document::AllocatorType;

// kBadRequest with the parser's offset and message when `text` is not JSON.
Result<Json> parse_json(std::string_view text);
std::string to_string(const JsonValue& v);

// The member at `path` (object keys) or nullptr.
const JsonValue* find(const JsonValue& v, std::initializer_list<std::string_view> path);
JsonValue* find(JsonValue& v, std::initializer_list<std::string_view> path);
// The string at `path`, "" when absent or not a string.
std::string get_string(const JsonValue& v, std::initializer_list<std::string_view> path);
// Object member `key` of `obj` (created as an empty object when missing).
JsonValue& ensure_object(JsonValue& obj, std::string_view key, JsonAlloc& a);
// Sets obj[key] (replacing any previous value).
void set_member(JsonValue& obj, std::string_view key, JsonValue value, JsonAlloc& a);
void set_string(JsonValue& obj, std::string_view key, std::string_view s, JsonAlloc& a);
void remove_member(JsonValue& obj, std::string_view key);

// RFC 7386 JSON merge patch, applied in place.
void merge_patch(JsonValue& target, const JsonValue& patch, JsonAlloc& a);
// RFC 6902 JSON patch (add, remove, replace, move, copy, test). kInvalid naming
// the failing operation when a path does not exist or a test fails.
Status json_patch(JsonValue& target, const JsonValue& ops, JsonAlloc& a);
// Strategic merge patch (a subset: lists of objects are merged by their `name`
// key, or `type`/`uid` where Kubernetes uses those merge keys; `$patch: delete`
// and `$patch: replace` directives; other `$` directives are ignored). With
// `atomic_lists` every list outside metadata is replaced whole, as for types
// whose lists are all `listType=atomic` (resource.k8s.io, and the other
// non-core groups draplane serves).
void strategic_merge_patch(JsonValue& target, const JsonValue& patch, JsonAlloc& a, bool atomic_lists = false);

}  // namespace draplane::server
