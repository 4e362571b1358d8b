// Internals of ApiServer shared by its .cc files (routing, CRUD, watch,
// discovery, tables, strategies). Not part of the server's API.
#pragma once

#include <optional>
#include <string>

#include "common/rfc3339.h"
#include "server/api_error.h"
#include "server/api_server.h"
#include "server/json_util.h"
#include "server/resources.h"
#include "server/selectors.h"
#include "server/strategy.h"

namespace draplane::server {

// A request resolved to a resource: /api/v1/namespaces/ns/pods/name/status.
struct Target {
  const ResourceInfo* resource = nullptr;
  std::string namespace_;
  std::string name;
  std::string subresource;
  std::string key() const;  // store key of the named object
  std::string prefix() const;  // store prefix of the collection (namespace-scoped when set)
};

// Either an HTTP response or a typed error.
using Reply = Response;
Reply json_reply(int code, std::string body);
Reply error_reply(const ApiError& e);

// Go's duration.HumanDuration ("5s", "3m", "2d1h"... as kubectl prints AGE).
std::string human_duration(int64_t seconds);

// The JSON object as stored, plus the revision fields.
struct Stored {
  Json object;
  int64_t mod_revision = 0;
};
// Sets metadata.resourceVersion to `rev`.
void set_resource_version(Json& object, int64_t rev);

// ?fieldValidation= (FieldValidation, strategy.h) of create, update and patch.
// Any other value is a 422 as kube-apiserver answers it:
//   CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "x": supported values: ...
// (`options_kind` CreateOptions, UpdateOptions or PatchOptions).
std::optional<ApiError> parse_field_validation(const Request& req, std::string_view options_kind,
                                               FieldValidation& out);

// Versions served by conversion (ResourceInfo::converted; identity otherwise):
// the request body of r's version as the storage version v1 (400 naming the
// problem when it does not convert), and a stored v1 object as r's version.
std::optional<ApiError> to_storage_version(const ResourceInfo& r, Json& object);
void to_served_version(const ResourceInfo& r, Json& object);
std::string served_text(const ResourceInfo& r, std::string stored_json);

// /openapi/v2 (openapi_v2.cc): Swagger 2.0 as JSON, or as gnostic's protobuf
// openapi.v2.Document (what kubectl 1.27/1.28 ask for). `server_version` goes
// into info.version.
std::string openapi_v2_json(const std::string& server_version);
std::string openapi_v2_protobuf(const std::string& server_version);

// /openapi/v3 (openapi_v3.cc): the OpenAPI 3.0 document of one served
// group-version ("" for core), "" when none is served; and the replies to
// /openapi/v3 (the index) and /openapi/v3/<api/v1|apis/g/v>[?hash=...],
// nullopt for other paths.
std::string openapi_v3_json(const std::string& group, const std::string& version, const std::string& server_version);
std::optional<Reply> openapi_v3(const Request& req, const ApiServerOptions& opts);

// The apidiscovery.k8s.io version ("v2" or "v2beta1") of the aggregated
// discovery document when the Accept header prefers one of
// `application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList` (or
// v2beta1) to plain JSON (q-values, then order, as kube-apiserver negotiates);
// nullopt for the legacy APIVersions / APIGroupList.
std::optional<std::string> negotiate_aggregated_discovery(const std::string& accept);

// SHA-512 of `text` in upper-case hex (discovery ETags, OpenAPI v3 hashes, as
// kube-apiserver and kube-openapi write them).
std::string sha512_hex(const std::string& text);

// Discovery and OpenAPI documents; nullopt when `path` is not a discovery path.
std::optional<Reply> discovery(const Request& req, const ApiServerOptions& opts);

// The Table (meta.k8s.io/v1) rendering of objects of resource `r`.
std::string to_table(const ResourceInfo& r, const std::vector<const JsonValue*>& objects, const std::string& rv,
                     const std::string& continue_token, int64_t now, bool include_object);

// True when the Accept header asks for a Table.
bool wants_table(const std::string& accept);

}  // namespace draplane::server
