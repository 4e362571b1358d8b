// Paths and operations of the OpenAPI documents (internal/openapi_paths.h), as
// kube-apiserver names them: operation ids "listResourceV1NamespacedResourceClaim",
// the query parameters each verb reads (fieldValidation among them: kubectl
// checks the PATCH operation for it to choose server-side field validation).
#include "server/internal/openapi_paths.h"

#include <cctype>

#include "server/openapi_schema.h"

namespace draplane::server {
namespace {

const std::vector<std::string> kPatchTypes = {"application/apply-patch+yaml", "application/json-patch+json",
                                              "application/merge-patch+json",
                                              "application/strategic-merge-patch+json"};

std::string pascal(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

OpenApiParam query(std::string name, std::string type, std::string description) {
  return OpenApiParam{std::move(name), "query", std::move(type), std::move(description), false, ""};
}
OpenApiParam body(std::string ref) { return OpenApiParam{"body", "body", "", "", true, std::move(ref)}; }

// Short forms of kube-apiserver's parameter descriptions.
OpenApiParam dry_run() {
  return query("dryRun", "string",
               "When present, indicates that modifications should not be persisted. An invalid or unrecognized "
               "dryRun directive will result in an error response and no further processing of the request. Valid "
               "values are: - All: all dry run stages will be processed");
}
OpenApiParam field_manager() {
  return query("fieldManager", "string",
               "fieldManager is a name associated with the actor or entity that is making these changes. The value "
               "must be less than or 128 characters long, and only contain printable characters, as defined by "
               "https://golang.org/pkg/unicode/#IsPrint.");
}
OpenApiParam field_validation() {
  return query("fieldValidation", "string",
               "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) "
               "containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown "
               "fields that are silently dropped from the object, and will ignore all but the last duplicate field "
               "that the decoder encounters. - Warn: This will send a warning via the standard warning response "
               "header for each unknown field that is dropped from the object, and for each duplicate field that is "
               "encountered. - Strict: This will fail the request with a BadRequest error if any unknown fields "
               "would be dropped from the object, or if any duplicate fields are present. The error returned from "
               "the server will contain all unknown and duplicate fields encountered.");
}

std::vector<OpenApiParam> list_params() {
  return {query("allowWatchBookmarks", "boolean",
                "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers that do not implement "
                "bookmarks may ignore this flag."),
          query("continue", "string", "The continue option should be set when retrieving more results from the server."),
          query("fieldSelector", "string",
                "A selector to restrict the list of returned objects by their fields. Defaults to everything."),
          query("labelSelector", "string",
                "A selector to restrict the list of returned objects by their labels. Defaults to everything."),
          query("limit", "integer", "limit is a maximum number of responses to return for a list call."),
          query("resourceVersion", "string",
                "resourceVersion sets a constraint on what resource versions a request may be served from."),
          query("resourceVersionMatch", "string",
                "resourceVersionMatch determines how resourceVersion is applied to list calls."),
          query("sendInitialEvents", "boolean",
                "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will "
                "begin with synthetic events to produce the current state of objects in the collection."),
          query("timeoutSeconds", "integer",
                "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity "
                "or inactivity."),
          query("watch", "boolean",
                "Watch for changes to the described resources and return them as a stream of add, update, and remove "
                "notifications. Specify resourceVersion.")};
}

}  // namespace

std::string openapi_definition_name(const ResourceInfo& r, const std::string& suffix) {
  return openapi::definition_name(r.group, r.version, r.kind + suffix);
}

std::vector<OpenApiPath> openapi_paths_of(const std::vector<const ResourceInfo*>& resources) {
  std::vector<OpenApiPath> out;
  std::vector<OpenApiParam> write = {dry_run(), field_manager(), field_validation()};
  std::vector<OpenApiParam> patch = write;
  patch.push_back(query("force", "boolean",
                        "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting "
                        "fields owned by other people. Force flag must be unset for non-apply patch requests."));
  OpenApiParam pretty = query("pretty", "string", "If 'true', then the output is pretty printed.");
  OpenApiParam ns_param{"namespace", "path", "string", "object name and auth scope, such as for teams and projects", true, ""};
  for (const ResourceInfo* rp : resources) {
    const ResourceInfo& r = *rp;
    OpenApiParam name_param{"name", "path", "string", "name of the " + r.kind, true, ""};
    std::string root = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
    std::string gv = r.group.empty() ? "CoreV" + r.version.substr(1)
                                     : pascal(r.group.substr(0, r.group.find('.'))) + pascal(r.version);
    std::string scope = r.namespaced ? "Namespaced" : "";
    std::string coll = root + (r.namespaced ? "/namespaces/{namespace}/" : "/") + r.resource;
    std::string obj = openapi_definition_name(r);
    auto op = [&](std::string method, std::string verb, std::string action, std::string what,
                  std::vector<OpenApiParam> params, std::string response, std::string suffix = "") {
      OpenApiOp o;
      o.method = std::move(method);
      o.id = verb + gv + scope + r.kind + suffix;
      o.description = std::move(what);
      o.action = std::move(action);
      o.params = std::move(params);
      o.response_ref = std::move(response);
      o.r = &r;
      return o;
    };
    auto with_body = [](std::vector<OpenApiParam> p, std::string ref) {
      p.insert(p.begin(), body(std::move(ref)));
      return p;
    };
    auto path_params = [&](bool named) {
      std::vector<OpenApiParam> p;
      if (named) p.push_back(name_param);
      if (r.namespaced) p.push_back(ns_param);
      p.push_back(pretty);
      return p;
    };
    OpenApiPath c{coll, path_params(false), {}};
    c.ops.push_back(op("get", "list", "list", "list or watch objects of kind " + r.kind, list_params(),
                       openapi_definition_name(r, "List")));
    c.ops.push_back(op("post", "create", "post", "create a " + r.kind, with_body(write, obj), obj));
    std::vector<OpenApiParam> delete_collection = list_params();
    delete_collection.insert(delete_collection.begin(), dry_run());
    c.ops.push_back(op("delete", "deleteCollection", "deletecollection", "delete collection of " + r.kind,
                       with_body(delete_collection, kOpenApiDeleteOptions), kOpenApiStatus));
    out.push_back(std::move(c));
    OpenApiPath item{coll + "/{name}", path_params(true), {}};
    item.ops.push_back(op("get", "read", "get", "read the specified " + r.kind, {}, obj));
    item.ops.push_back(op("put", "replace", "put", "replace the specified " + r.kind, with_body(write, obj), obj));
    item.ops.push_back(op("delete", "delete", "delete", "delete a " + r.kind,
                          with_body({dry_run()}, kOpenApiDeleteOptions), obj));
    OpenApiOp p = op("patch", "patch", "patch", "partially update the specified " + r.kind,
                     with_body(patch, kOpenApiPatch), obj);
    p.consumes = kPatchTypes;
    item.ops.push_back(std::move(p));
    out.push_back(std::move(item));
    if (r.has_subresource("status")) {
      OpenApiPath s{coll + "/{name}/status", path_params(true), {}};
      s.ops.push_back(op("get", "read", "get", "read status of the specified " + r.kind, {}, obj, "Status"));
      s.ops.push_back(op("put", "replace", "put", "replace status of the specified " + r.kind, with_body(write, obj),
                         obj, "Status"));
      OpenApiOp ps = op("patch", "patch", "patch", "partially update status of the specified " + r.kind,
                        with_body(patch, kOpenApiPatch), obj, "Status");
      ps.consumes = kPatchTypes;
      s.ops.push_back(std::move(ps));
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace draplane::server
