// Kubernetes `Status` error objects (meta/v1 Status) and the one place that maps
// draplane error codes to HTTP status codes and reasons.
//
// Thread-safety: free functions.
#pragma once

#include <string>
#include <vector>

#include "api/field_error.h"
#include "common/result.h"
#include "server/resources.h"

namespace draplane::server {

struct ApiError {
  int http = 500;
  std::string reason;   // NotFound, AlreadyExists, Conflict, Invalid, ...
  std::string message;
  // details
  std::string name, group, kind;
  std::vector<api::FieldError> causes;
  // Causes that are not field validation errors (FieldManagerConflict).
  struct Cause {
    std::string reason, message, field;
  };
  std::vector<Cause> other_causes;
  int retry_after = 0;
};

// Status code and reason for a draplane code (kNotFound -> 404 NotFound, ...).
ApiError from_code(Code code, std::string message);
// The Status JSON document for `e`.
std::string status_json(const ApiError& e);
// {"kind":"Status",...,"status":"Success"} for deletes that return a Status.
std::string success_status_json(const std::string& name, const ResourceInfo& r);

// Errors phrased like the Kubernetes API server:
//   resourceclaims.resource.k8s.io "x" not found
ApiError not_found(const ResourceInfo& r, const std::string& name);
ApiError already_exists(const ResourceInfo& r, const std::string& name);
ApiError conflict(const ResourceInfo& r, const std::string& name, const std::string& why);
// ResourceClaim.resource.k8s.io "x" is invalid: [...], causes per field.
ApiError invalid(const ResourceInfo& r, const std::string& name, api::FieldErrorList errors);
ApiError forbidden(const ResourceInfo& r, const std::string& name, const std::string& why);
ApiError bad_request(std::string message);
// 405 MethodNotAllowed: a verb the resource does not serve.
ApiError method_not_allowed();
// "resource.group" or "resource" for core.
std::string qualified_resource(const ResourceInfo& r);

}  // namespace draplane::server
