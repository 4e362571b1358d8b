// The paths and operations of the OpenAPI documents (v2 and v3 render the same
// model): per served resource its collection, object and status paths with
// their operations, x-kubernetes-action and x-kubernetes-group-version-kind.
#pragma once

#include <string>
#include <vector>

#include "server/resources.h"

namespace draplane::server {

struct OpenApiParam {
  std::string name, in, type, description;  // in: query, path, body
  bool required = false;
  std::string schema_ref;  // body: the definition name
};

struct OpenApiOp {
  std::string method;  // get put post delete patch
  std::string id, description, action;
  std::vector<std::string> consumes;  // patch: the patch types
  std::vector<OpenApiParam> params;
  std::string response_ref;  // definition name of the 200 response
  const ResourceInfo* r = nullptr;
};

struct OpenApiPath {
  std::string path;
  std::vector<OpenApiParam> params;  // path parameters
  std::vector<OpenApiOp> ops;
};

// The paths of the resources for which `include` is true, in all_resources() order.
template <typename Pred>
std::vector<OpenApiPath> openapi_paths(Pred include);
std::vector<OpenApiPath> openapi_paths_of(const std::vector<const ResourceInfo*>& resources);

// "io.k8s.api.resource.v1beta1.ResourceClaim" (+ suffix "List").
std::string openapi_definition_name(const ResourceInfo& r, const std::string& suffix = "");

inline constexpr const char* kOpenApiStatus = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
inline constexpr const char* kOpenApiDeleteOptions = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
inline constexpr const char* kOpenApiPatch = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";

template <typename Pred>
std::vector<OpenApiPath> openapi_paths(Pred include) {
  std::vector<const ResourceInfo*> rs;
  for (const auto& r : all_resources()) {
    if (include(r)) rs.push_back(&r);
  }
  return openapi_paths_of(rs);
}

}  // namespace draplane::server
