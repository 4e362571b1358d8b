// /openapi/v2: a Swagger 2.0 document of the served resources, as JSON or as
// the protobuf form (gnostic's openapi.v2.Document) that kubectl 1.27/1.28
// fetch before apply and validation. Paths and operations come from
// openapi_paths.cc, definitions from the schema model (openapi_schema.h):
// every served kind with its full schema and x-kubernetes-group-version-kind,
// as kube-apiserver publishes it; /openapi/v3 renders the same model.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <map>
#include <mutex>

#include "server/internal/api_impl.h"
#include "server/internal/openapi_paths.h"
#include "server/openapi_schema.h"
#include "server/protobuf_wire.h"

namespace draplane::server {
namespace {

using Param = OpenApiParam;
using Op = OpenApiOp;
using Path = OpenApiPath;

const std::vector<std::string> kProduces = {"application/json", "application/yaml"};

std::vector<Path> document_paths() {
  return openapi_paths([](const ResourceInfo&) { return true; });
}

// The served kinds, their Lists and what the operations name, with everything they refer to.
std::vector<std::string> document_definitions(std::vector<openapi::Gvk>& served) {
  std::vector<std::string> roots = {kOpenApiStatus, kOpenApiDeleteOptions, kOpenApiPatch};
  for (const auto& r : all_resources()) {
    served.push_back({r.group, r.version, r.kind});
    roots.push_back(openapi_definition_name(r));
    roots.push_back(openapi_definition_name(r, "List"));
  }
  return openapi::closure(roots);
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

std::string json_text(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

// A rendered v2 schema (openapi_schema.h) as gnostic's Schema message. Vendor
// extensions carry their value as YAML, which JSON text is.
pb::Writer pb_schema(const rapidjson::Value& v) {
  pb::Writer w;
  for (const auto& m : v.GetObject()) {
    std::string key = m.name.GetString();
    const rapidjson::Value& val = m.value;
    if (key == "$ref") {
      w.bytes(1, val.GetString());
    } else if (key == "format") {
      w.bytes(2, val.GetString());
    } else if (key == "description") {
      w.bytes(4, val.GetString());
    } else if (key == "required") {
      for (const auto& r : val.GetArray()) w.bytes(19, r.GetString());
    } else if (key == "enum") {
      for (const auto& e : val.GetArray()) w.message(20, pb_any_yaml(json_text(e) + "\n"));
    } else if (key == "additionalProperties") {
      w.message(21, std::move(pb::Writer().message(1, pb_schema(val))));  // AdditionalPropertiesItem{schema=1}
    } else if (key == "type") {
      w.message(22, std::move(pb::Writer().bytes(1, val.GetString())));  // TypeItem{value=1}
    } else if (key == "items") {
      w.message(23, std::move(pb::Writer().message(1, pb_schema(val))));  // ItemsItem{schema=1}
    } else if (key == "allOf") {
      for (const auto& s : val.GetArray()) w.message(24, pb_schema(s));
    } else if (key == "properties") {
      pb::Writer props;  // Properties{additional_properties=1: NamedSchema{name=1, value=2}}
      for (const auto& p : val.GetObject()) {
        props.message(1, std::move(pb::Writer().bytes(1, p.name.GetString()).message(2, pb_schema(p.value))));
      }
      w.message(25, props);
    } else if (key.rfind("x-", 0) == 0) {
      w.message(31, pb_named_any(key, json_text(val) + "\n"));
    }
  }
  return w;
}

}  // namespace

namespace {

std::string render_v2_json(const std::string& server_version) {
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
  std::vector<openapi::Gvk> served;
  for (const auto& name : document_definitions(served)) {
    const openapi::Definition* d = openapi::find_definition(name);
    if (d == nullptr) continue;
    rapidjson::Document doc;
    openapi::render_definition(*d, openapi::kinds_of(name, served), openapi::Dialect::kV2, doc, doc.GetAllocator());
    w.Key(name.c_str());
    doc.Accept(w);
  }
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

std::string render_v2_protobuf(const std::string& server_version) {
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
  std::vector<openapi::Gvk> served;
  for (const auto& name : document_definitions(served)) {
    const openapi::Definition* d = openapi::find_definition(name);
    if (d == nullptr) continue;
    rapidjson::Document schema;
    openapi::render_definition(*d, openapi::kinds_of(name, served), openapi::Dialect::kV2, schema,
                               schema.GetAllocator());
    defs.message(1, std::move(pb::Writer().bytes(1, name).message(2, pb_schema(schema))));
  }
  doc.message(9, defs);
  return doc.data();
}

}  // namespace

// The document is the same for the server's life (the served resources are
// fixed): rendered once per form, as kube-apiserver caches it.
const std::string& cached(const std::string& server_version, bool protobuf) {
  static std::mutex mu;
  static std::map<std::pair<std::string, bool>, std::string> docs;
  std::lock_guard lock(mu);
  auto key = std::make_pair(server_version, protobuf);
  auto it = docs.find(key);
  if (it == docs.end()) {
    it = docs.emplace(key, protobuf ? render_v2_protobuf(server_version) : render_v2_json(server_version)).first;
  }
  return it->second;
}

std::string openapi_v2_json(const std::string& server_version) { return cached(server_version, false); }
std::string openapi_v2_protobuf(const std::string& server_version) { return cached(server_version, true); }

}  // namespace draplane::server
