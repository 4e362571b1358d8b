// /openapi/v3: the index of group-versions (each with its serverRelativeURL
// and the hash of its document) and one OpenAPI 3.0 document per served
// group-version, as kube-openapi's handler3 serves them: paths with their
// operations (openapi_paths.cc) and components.schemas with every kind's full
// schema (openapi_schema.h), which `kubectl explain` walks and `kubectl apply`
// reads for strategic merge patches.
//
// Caching as upstream: the hash is the SHA-512 of the JSON document (upper-case
// hex), also its ETag; a URL with the current hash is immutable
// (Cache-Control: public, immutable; Expires a year ahead), one with another
// hash is redirected (301) to the current one.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <ctime>
#include <map>
#include <mutex>

#include "server/internal/api_impl.h"
#include "server/internal/openapi_paths.h"
#include "server/openapi_schema.h"

namespace draplane::server {
namespace {

using Alloc = rapidjson::Document::AllocatorType;
using rapidjson::Value;
namespace oa = openapi;

const std::vector<std::string> kResponseTypes = {"application/json", "application/yaml",
                                                 "application/vnd.kubernetes.protobuf"};

Value str(const std::string& s, Alloc& a) { return Value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), a); }
void add(Value& obj, const char* key, Value v, Alloc& a) { obj.AddMember(Value(key, a), v, a); }

Value ref_schema(const std::string& name, Alloc& a) {
  Value v(rapidjson::kObjectType);
  add(v, "$ref", str(oa::ref_to(name, oa::Dialect::kV3), a), a);
  return v;
}

Value content(const std::vector<std::string>& types, const std::string& ref, Alloc& a) {
  Value c(rapidjson::kObjectType);
  for (const auto& t : types) {
    Value media(rapidjson::kObjectType);
    add(media, "schema", ref_schema(ref, a), a);
    c.AddMember(str(t, a), media, a);
  }
  return c;
}

Value param(const OpenApiParam& p, Alloc& a) {
  Value v(rapidjson::kObjectType);
  add(v, "name", str(p.name, a), a);
  add(v, "in", str(p.in, a), a);
  if (!p.description.empty()) add(v, "description", str(p.description, a), a);
  if (p.required) add(v, "required", Value(true), a);
  Value schema(rapidjson::kObjectType);
  add(schema, "type", str(p.type, a), a);
  add(schema, "uniqueItems", Value(true), a);
  add(v, "schema", std::move(schema), a);
  return v;
}

Value operation(const OpenApiOp& o, Alloc& a) {
  const ResourceInfo& r = *o.r;
  Value v(rapidjson::kObjectType);
  Value tags(rapidjson::kArrayType);
  std::string tag = (r.group.empty() ? "core" : r.group.substr(0, r.group.find('.'))) + "_" + r.version;
  tags.PushBack(str(tag, a), a);
  add(v, "tags", std::move(tags), a);
  add(v, "description", str(o.description, a), a);
  add(v, "operationId", str(o.id, a), a);
  Value params(rapidjson::kArrayType);
  const OpenApiParam* body = nullptr;
  for (const auto& p : o.params) {
    if (p.in == "body") {
      body = &p;
    } else {
      params.PushBack(param(p, a), a);
    }
  }
  if (!params.Empty()) add(v, "parameters", std::move(params), a);
  if (body != nullptr) {
    Value rb(rapidjson::kObjectType);
    add(rb, "content", content(o.consumes.empty() ? std::vector<std::string>{"*/*"} : o.consumes, body->schema_ref, a),
        a);
    if (o.method != "delete") add(rb, "required", Value(true), a);
    add(v, "requestBody", std::move(rb), a);
  }
  Value responses(rapidjson::kObjectType);
  auto response = [&](const char* code, const char* description) {
    Value resp(rapidjson::kObjectType);
    add(resp, "description", Value(description, a), a);
    add(resp, "content", content(kResponseTypes, o.response_ref, a), a);
    responses.AddMember(Value(code, a), resp, a);
  };
  response("200", "OK");
  if (o.method == "post") {
    response("201", "Created");
    response("202", "Accepted");
  } else if (o.method == "put" || o.method == "patch") {
    response("201", "Created");
  } else if (o.method == "delete" && o.action == "delete") {
    response("202", "Accepted");
  }
  Value unauthorized(rapidjson::kObjectType);
  add(unauthorized, "description", Value("Unauthorized"), a);
  add(responses, "401", std::move(unauthorized), a);
  add(v, "responses", std::move(responses), a);
  add(v, "x-kubernetes-action", str(o.action, a), a);
  Value gvk(rapidjson::kObjectType);
  add(gvk, "group", str(r.group, a), a);
  add(gvk, "kind", str(r.kind, a), a);
  add(gvk, "version", str(r.version, a), a);
  add(v, "x-kubernetes-group-version-kind", std::move(gvk), a);
  return v;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string to_json(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

// "api/v1", "apis/resource.k8s.io/v1".
std::string gv_path(const std::string& group, const std::string& version) {
  return group.empty() ? "api/" + version : "apis/" + group + "/" + version;
}

struct Served {
  std::string path;  // gv_path
  std::string json;
  std::string etag;  // without quotes
};

// The documents of all served group-versions, in discovery order (built once:
// the served resources are fixed).
const std::vector<Served>& documents(const std::string& server_version) {
  static std::mutex mu;
  static std::map<std::string, std::vector<Served>> cache;
  std::lock_guard lock(mu);
  auto it = cache.find(server_version);
  if (it != cache.end()) return it->second;
  std::vector<std::pair<std::string, std::string>> gvs = {{"", "v1"}};
  for (const auto& g : api_groups()) {
    for (const auto& v : g.versions) gvs.push_back({g.group, v});
  }
  std::vector<Served> out;
  for (const auto& [group, version] : gvs) {
    std::string json = openapi_v3_json(group, version, server_version);
    if (json.empty()) continue;
    out.push_back({gv_path(group, version), json, sha512_hex(json)});
  }
  return cache.emplace(server_version, std::move(out)).first->second;
}

std::string http_date(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

// Go's url.Values.Encode of {"hash": etag}: the hash is hex, nothing to escape.
std::string relative_url(const Served& d) { return "/openapi/v3/" + d.path + "?hash=" + d.etag; }

// JSON is what handler3 serves (and protobuf, which draplane does not): an
// Accept that allows neither is a 406.
bool accepts_json(const std::string& accept) {
  if (accept.empty()) return true;
  size_t start = 0;
  while (start <= accept.size()) {
    size_t comma = accept.find(',', start);
    std::string item = accept.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? accept.size() + 1 : comma + 1;
    item = item.substr(0, item.find(';'));
    size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    if (b == std::string::npos) continue;
    item = item.substr(b, e - b + 1);
    if (item == "*/*" || item == "application/*" || item == "application/json") return true;
  }
  return false;
}

}  // namespace

std::string openapi_v3_json(const std::string& group, const std::string& version, const std::string& server_version) {
  std::vector<const ResourceInfo*> resources;
  std::vector<oa::Gvk> served;
  std::vector<std::string> roots = {kOpenApiStatus, kOpenApiDeleteOptions, kOpenApiPatch};
  for (const auto& r : all_resources()) {
    if (r.group != group || r.version != version) continue;
    resources.push_back(&r);
    served.push_back({r.group, r.version, r.kind});
    roots.push_back(openapi_definition_name(r));
    roots.push_back(openapi_definition_name(r, "List"));
  }
  if (resources.empty()) return "";
  rapidjson::Document doc;
  doc.SetObject();
  Alloc& a = doc.GetAllocator();
  add(doc, "openapi", Value("3.0.0"), a);
  Value info(rapidjson::kObjectType);
  add(info, "title", Value("Kubernetes"), a);
  add(info, "version", str(server_version, a), a);
  add(doc, "info", std::move(info), a);
  Value paths(rapidjson::kObjectType);
  for (const auto& p : openapi_paths_of(resources)) {
    Value item(rapidjson::kObjectType);
    for (const auto& o : p.ops) item.AddMember(str(o.method, a), operation(o, a), a);
    Value params(rapidjson::kArrayType);
    for (const auto& pp : p.params) params.PushBack(param(pp, a), a);
    add(item, "parameters", std::move(params), a);
    paths.AddMember(str(p.path, a), item, a);
  }
  add(doc, "paths", std::move(paths), a);
  Value schemas(rapidjson::kObjectType);
  for (const auto& name : oa::closure(roots)) {
    const oa::Definition* d = oa::find_definition(name);
    if (d == nullptr) continue;
    Value s;
    oa::render_definition(*d, oa::kinds_of(name, served), oa::Dialect::kV3, s, a);
    schemas.AddMember(str(name, a), s, a);
  }
  Value components(rapidjson::kObjectType);
  add(components, "schemas", std::move(schemas), a);
  Value bearer(rapidjson::kObjectType);
  add(bearer, "type", Value("apiKey"), a);
  add(bearer, "description", Value("Bearer Token authentication"), a);
  add(bearer, "name", Value("authorization"), a);
  add(bearer, "in", Value("header"), a);
  Value security_schemes(rapidjson::kObjectType);
  add(security_schemes, "BearerToken", std::move(bearer), a);
  add(components, "securitySchemes", std::move(security_schemes), a);
  add(doc, "components", std::move(components), a);
  return to_json(doc);
}

std::optional<Reply> openapi_v3(const Request& req, const ApiServerOptions& opts) {
  const std::string& p = req.path;
  const auto& docs = documents(opts.server_version);
  if (p == "/openapi/v3") {
    std::string out = R"({"paths":{)";
    for (size_t i = 0; i < docs.size(); ++i) {
      out += (i ? "," : "") + quoted(docs[i].path) + R"(:{"serverRelativeURL":)" + quoted(relative_url(docs[i])) + "}";
    }
    out += "}}";
    Reply r = json_reply(200, out);
    std::string etag = "\"" + sha512_hex(out) + "\"";
    r.headers = {{"Etag", etag}};
    if (req.if_none_match == etag) {
      r.code = 304;
      r.body.clear();
    }
    return r;
  }
  if (p.rfind("/openapi/v3/", 0) != 0) return std::nullopt;
  std::string path = p.substr(12);
  const Served* doc = nullptr;
  for (const auto& d : docs) {
    if (d.path == path) doc = &d;
  }
  if (doc == nullptr) return std::nullopt;  // 404 as any unknown path
  Reply r;
  r.headers = {{"Vary", "Accept"}};
  if (!accepts_json(req.accept)) {
    r.code = 406;
    r.content_type = "text/plain; charset=utf-8";
    return r;
  }
  std::string etag = "\"" + doc->etag + "\"";
  auto hash = req.query.find("hash");
  if (hash != req.query.end() && !hash->second.empty()) {
    if (hash->second != doc->etag) {
      r.code = 301;
      r.content_type = "text/html; charset=utf-8";
      r.headers.push_back({"Location", relative_url(*doc)});
      r.body = "<a href=\"" + relative_url(*doc) + "\">Moved Permanently</a>.\n\n";
      return r;
    }
    r.headers.push_back({"Cache-Control", "public, immutable"});
    r.headers.push_back({"Expires", http_date(opts.clock->unix_seconds() + 365 * 24 * 3600)});
  }
  r.headers.push_back({"Etag", etag});
  r.code = 200;
  r.content_type = "application/json";
  if (req.if_none_match == etag) {
    r.code = 304;
    return r;
  }
  r.body = doc->json;
  return r;
}

}  // namespace draplane::server
