// /openapi/v2: a Swagger 2.0 document of the served resources, as JSON or as
// the protobuf form (gnostic's openapi.v2.Document) that kubectl 1.27/1.28
// fetch before apply and validation. Every path carries its operations with
// x-kubernetes-action, x-kubernetes-group-version-kind and the query
// parameters (fieldValidation among them: kubectl checks the PATCH operation
// for it to choose server-side field validation). Definitions are open
// objects without x-kubernetes-group-version-kind, so kubectl finds no model
// to validate against on the client and computes patches from its built-in
// types, as it does without a document; the server validates.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "server/internal/api_impl.h"
#include "server/protobuf_wire.h"

namespace draplane::server {
namespace {

struct Param {
  std::string name, in, type, description;  // in: query, path, body
  bool required = false;
  std::string schema_ref;  // body
};

struct Op {
  std::string method;  // get put post delete patch
  std::string id, description, action;
  std::vector<std::string> consumes;
  std::vector<Param> params;
  std::string response_ref;
  const ResourceInfo* r = nullptr;
};

struct Path {
  std::string path;
  std::vector<Param> params;  // path parameters
  std::vector<Op> ops;
};

struct Definition {
  std::string name, description;
};

const std::vector<std::string> kProduces = {"application/json", "application/yaml"};
const std::vector<std::string> kPatchTypes = {"application/json-patch+json", "application/merge-patch+json",
                                              "application/strategic-merge-patch+json",
                                              "application/apply-patch+yaml"};

std::string pascal(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

// "io.k8s.api.resource.v1beta1.ResourceClaim", "io.k8s.api.core.v1.Pod".
std::string definition_name(const ResourceInfo& r, const std::string& suffix = "") {
  std::string group = r.group.empty() ? "core" : r.group.substr(0, r.group.find('.'));
  return "io.k8s.api." + group + "." + r.version + "." + r.kind + suffix;
}
const char* kStatus = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const char* kDeleteOptions = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
const char* kPatch = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";

Param query(std::string name, std::string type = "string") { return Param{std::move(name), "query", std::move(type), "", false, ""}; }
Param body(std::string ref) { return Param{"body", "body", "", "", true, std::move(ref)}; }

std::vector<Path> document_paths() {
  std::vector<Path> out;
  std::vector<Param> write = {query("dryRun"), query("fieldManager"), query("fieldValidation")};
  std::vector<Param> patch = write;
  patch.push_back(query("force", "boolean"));
  std::vector<Param> list = {query("labelSelector"), query("fieldSelector"), query("limit", "integer"),
                             query("continue"), query("resourceVersion"), query("resourceVersionMatch"),
                             query("timeoutSeconds", "integer"), query("watch", "boolean"),
                             query("allowWatchBookmarks", "boolean"), query("sendInitialEvents", "boolean")};
  Param name_param{"name", "path", "string", "name of the " + std::string("object"), true, ""};
  Param ns_param{"namespace", "path", "string", "object name and auth scope, such as for teams and projects", true, ""};
  for (const auto& r : all_resources()) {
    std::string root = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
    std::string gv = r.group.empty() ? "CoreV" + r.version.substr(1)
                                     : pascal(r.group.substr(0, r.group.find('.'))) + pascal(r.version);
    std::string scope = r.namespaced ? "Namespaced" : "";
    std::string coll = root + (r.namespaced ? "/namespaces/{namespace}/" : "/") + r.resource;
    std::string obj = definition_name(r);
    auto op = [&](std::string method, std::string verb, std::string action, std::string what, std::vector<Param> params,
                  std::string response, std::string suffix = "") {
      Op o;
      o.method = std::move(method);
      o.id = verb + gv + scope + r.kind + suffix;
      o.description = what;
      o.action = std::move(action);
      o.params = std::move(params);
      o.response_ref = std::move(response);
      o.r = &r;
      return o;
    };
    auto with_body = [](std::vector<Param> p, std::string ref) {
      p.insert(p.begin(), body(std::move(ref)));
      return p;
    };
    Path c{coll, {}, {}};
    if (r.namespaced) c.params.push_back(ns_param);
    c.ops.push_back(op("get", "list", "list", "list or watch objects of kind " + r.kind, list, definition_name(r, "List")));
    c.ops.push_back(op("post", "create", "post", "create a " + r.kind, with_body(write, obj), obj));
    c.ops.push_back(op("delete", "deleteCollection", "deletecollection", "delete collection of " + r.kind,
                       with_body(list, kDeleteOptions), kStatus));
    out.push_back(std::move(c));
    Path item{coll + "/{name}", {name_param}, {}};
    if (r.namespaced) item.params.push_back(ns_param);
    item.ops.push_back(op("get", "read", "get", "read the specified " + r.kind, {}, obj));
    item.ops.push_back(op("put", "replace", "put", "replace the specified " + r.kind, with_body(write, obj), obj));
    item.ops.push_back(op("delete", "delete", "delete", "delete a " + r.kind, with_body({query("dryRun")}, kDeleteOptions),
                          obj));
    Op p = op("patch", "patch", "patch", "partially update the specified " + r.kind, with_body(patch, kPatch), obj);
    p.consumes = kPatchTypes;
    item.ops.push_back(std::move(p));
    out.push_back(std::move(item));
    for (const auto& sub : r.subresources) {
      if (sub != "status") continue;
      Path s{coll + "/{name}/status", {name_param}, {}};
      if (r.namespaced) s.params.push_back(ns_param);
      s.ops.push_back(op("get", "read", "get", "read status of the specified " + r.kind, {}, obj, "Status"));
      s.ops.push_back(op("put", "replace", "put", "replace status of the specified " + r.kind, with_body(write, obj), obj,
                         "Status"));
      Op ps = op("patch", "patch", "patch", "partially update status of the specified " + r.kind, with_body(patch, kPatch),
                 obj, "Status");
      ps.consumes = kPatchTypes;
      s.ops.push_back(std::move(ps));
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::vector<Definition> document_definitions() {
  std::vector<Definition> out;
  for (const auto& r : all_resources()) {
    out.push_back({definition_name(r), r.kind + " (" + r.group_version() + ")"});
    out.push_back({definition_name(r, "List"), r.kind + "List is a list of " + r.kind + " objects"});
  }
  out.push_back({kStatus, "Status is a return value for calls that don't return other objects."});
  out.push_back({kDeleteOptions, "DeleteOptions may be provided when deleting an API object."});
  out.push_back({kPatch, "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body."});
  return out;
}

std::string gvk_yaml(const ResourceInfo& r) {
  return "group: " + (r.group.empty() ? std::string("\"\"") : r.group) + "\nkind: " + r.kind + "\nversion: " +
         r.version + "\n";
}

// ---------------------------------------------------------------- JSON

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void json_strings(JsonWriter& w, const char* key, const std::vector<std::string>& v) {
  if (v.empty()) return;
  w.Key(key);
  w.StartArray();
  for (const auto& s : v) w.String(s.c_str());
  w.EndArray();
}

void json_param(JsonWriter& w, const Param& p) {
  w.StartObject();
  if (!p.description.empty()) {
    w.Key("description");
    w.String(p.description.c_str());
  }
  w.Key("name");
  w.String(p.name.c_str());
  w.Key("in");
  w.String(p.in.c_str());
  if (p.required) {
    w.Key("required");
    w.Bool(true);
  }
  if (p.in == "body") {
    w.Key("schema");
    w.StartObject();
    w.Key("$ref");
    w.String(("#/definitions/" + p.schema_ref).c_str());
    w.EndObject();
  } else {
    w.Key("type");
    w.String(p.type.c_str());
    if (p.in == "query") {
      w.Key("uniqueItems");
      w.Bool(true);
    }
  }
  w.EndObject();
}

void json_op(JsonWriter& w, const Op& o) {
  w.Key(o.method.c_str());
  w.StartObject();
  w.Key("description");
  w.String(o.description.c_str());
  json_strings(w, "consumes", o.consumes.empty() ? std::vector<std::string>{"*/*"} : o.consumes);
  json_strings(w, "produces", kProduces);
  w.Key("operationId");
  w.String(o.id.c_str());
  if (!o.params.empty()) {
    w.Key("parameters");
    w.StartArray();
    for (const auto& p : o.params) json_param(w, p);
    w.EndArray();
  }
  w.Key("responses");
  w.StartObject();
  w.Key("200");
  w.StartObject();
  w.Key("description");
  w.String("OK");
  w.Key("schema");
  w.StartObject();
  w.Key("$ref");
  w.String(("#/definitions/" + o.response_ref).c_str());
  w.EndObject();
  w.EndObject();
  w.Key("401");
  w.StartObject();
  w.Key("description");
  w.String("Unauthorized");
  w.EndObject();
  w.EndObject();
  w.Key("x-kubernetes-action");
  w.String(o.action.c_str());
  w.Key("x-kubernetes-group-version-kind");
  w.StartObject();
  w.Key("group");
  w.String(o.r->group.c_str());
  w.Key("kind");
  w.String(o.r->kind.c_str());
  w.Key("version");
  w.String(o.r->version.c_str());
  w.EndObject();
  w.EndObject();
}

// ---------------------------------------------------------------- protobuf
// Field numbers of gnostic's openapiv2/OpenAPIv2.proto.

pb::Writer pb_any_yaml(const std::string& yaml) { return std::move(pb::Writer().bytes(2, yaml)); }  // Any.yaml

pb::Writer pb_named_any(const std::string& name, const std::string& yaml) {
  pb::Writer w;
  w.bytes(1, name).message(2, pb_any_yaml(yaml));  // NamedAny{name, value}
  return w;
}

pb::Writer pb_ref_schema(const std::string& ref) {
  pb::Writer w;
  w.bytes(1, "#/definitions/" + ref);  // Schema._ref
  return w;
}

pb::Writer pb_param(const Param& p) {
  pb::Writer parameter;  // Parameter (oneof body_parameter=1, non_body_parameter=2)
  if (p.in == "body") {
    pb::Writer b;  // BodyParameter{description=1,name=2,in=3,required=4,schema=5}
    b.bytes(2, p.name).bytes(3, p.in).boolean(4, p.required).message(5, pb_ref_schema(p.schema_ref));
    parameter.message(1, b);
  } else {
    // QueryParameterSubSchema / PathParameterSubSchema: required=1, in=2,
    // description=3, name=4; type is 6 (query, after allow_empty_value) or 5 (path).
    pb::Writer s;
    if (p.required) s.boolean(1, true);
    s.bytes(2, p.in);
    if (!p.description.empty()) s.bytes(3, p.description);
    s.bytes(4, p.name);
    pb::Writer non_body;  // NonBodyParameter{header=1, form=2, query=3, path=4}
    if (p.in == "query") {
      s.bytes(6, p.type).boolean(20, true);  // unique_items=20
      non_body.message(3, s);
    } else {
      s.bytes(5, p.type);
      non_body.message(4, s);
    }
    parameter.message(2, non_body);
  }
  pb::Writer item;  // ParametersItem{parameter=1}
  item.message(1, parameter);
  return item;
}

pb::Writer pb_response(const std::string& description, const std::string& ref) {
  pb::Writer resp;  // Response{description=1, schema=2 (SchemaItem{schema=1})}
  resp.bytes(1, description);
  if (!ref.empty()) resp.message(2, std::move(pb::Writer().message(1, pb_ref_schema(ref))));
  pb::Writer value;  // ResponseValue{response=1}
  value.message(1, resp);
  return value;
}

pb::Writer pb_op(const Op& o) {
  pb::Writer w;  // Operation
  w.bytes(3, o.description);
  w.bytes(5, o.id);
  for (const auto& p : kProduces) w.bytes(6, p);
  for (const auto& c : o.consumes.empty() ? std::vector<std::string>{"*/*"} : o.consumes) w.bytes(7, c);
  for (const auto& p : o.params) w.message(8, pb_param(p));
  pb::Writer responses;  // Responses{response_code=1: NamedResponseValue{name, value}}
  responses.message(1, std::move(pb::Writer().bytes(1, "200").message(2, pb_response("OK", o.response_ref))));
  responses.message(1, std::move(pb::Writer().bytes(1, "401").message(2, pb_response("Unauthorized", ""))));
  w.message(9, responses);
  w.message(13, pb_named_any("x-kubernetes-action", o.action + "\n"));
  w.message(13, pb_named_any("x-kubernetes-group-version-kind", gvk_yaml(*o.r)));
  return w;
}

}  // namespace

std::string openapi_v2_json(const std::string& server_version) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("swagger");
  w.String("2.0");
  w.Key("info");
  w.StartObject();
  w.Key("title");
  w.String("Kubernetes");
  w.Key("version");
  w.String(server_version.c_str());
  w.EndObject();
  w.Key("paths");
  w.StartObject();
  for (const auto& p : document_paths()) {
    w.Key(p.path.c_str());
    w.StartObject();
    for (const auto& o : p.ops) json_op(w, o);
    w.Key("parameters");
    w.StartArray();
    for (const auto& param : p.params) json_param(w, param);
    w.EndArray();
    w.EndObject();
  }
  w.EndObject();
  w.Key("definitions");
  w.StartObject();
  for (const auto& d : document_definitions()) {
    w.Key(d.name.c_str());
    w.StartObject();
    w.Key("description");
    w.String(d.description.c_str());
    w.Key("type");
    w.String("object");
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

std::string openapi_v2_protobuf(const std::string& server_version) {
  pb::Writer doc;  // Document
  doc.bytes(1, "2.0");
  doc.message(2, std::move(pb::Writer().bytes(1, "Kubernetes").bytes(2, server_version)));  // Info{title, version}
  pb::Writer paths;  // Paths{path=2: NamedPathItem{name=1, value=2: PathItem}}
  for (const auto& p : document_paths()) {
    pb::Writer item;  // PathItem{get=2, put=3, post=4, delete=5, patch=8, parameters=9}
    for (const auto& o : p.ops) {
      uint32_t field = o.method == "get" ? 2 : o.method == "put" ? 3 : o.method == "post" ? 4 : o.method == "delete" ? 5 : 8;
      item.message(field, pb_op(o));
    }
    for (const auto& param : p.params) item.message(9, pb_param(param));
    paths.message(2, std::move(pb::Writer().bytes(1, p.path).message(2, item)));
  }
  doc.message(8, paths);
  pb::Writer defs;  // Definitions{additional_properties=1: NamedSchema{name, value: Schema}}
  for (const auto& d : document_definitions()) {
    pb::Writer schema;  // Schema{description=4, type=22 (TypeItem{value=1})}
    schema.bytes(4, d.description).message(22, std::move(pb::Writer().bytes(1, "object")));
    defs.message(1, std::move(pb::Writer().bytes(1, d.name).message(2, schema)));
  }
  doc.message(9, defs);
  return doc.data();
}

}  // namespace draplane::server
