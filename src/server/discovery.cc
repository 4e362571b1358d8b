// Discovery (/api, /apis, /api/v1, /apis/<g>, /apis/<g>/<v>), /version, health
// endpoints, /openapi/v2 (openapi_v2.cc) and the OpenAPI v3 index and per
// group-version documents.
#include "server/internal/api_impl.h"

namespace draplane::server {
namespace {

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string join_quoted(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + quoted(v[i]);
  return out;
}

const char* kVerbs = R"(["create","delete","deletecollection","get","list","patch","update","watch"])";

std::string resource_list(const std::string& group, const std::string& version) {
  std::string gv = group.empty() ? version : group + "/" + version;
  std::string out = R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":")" + gv + R"(","resources":[)";
  bool first = true;
  for (const auto& r : all_resources()) {
    if (r.group != group || r.version != version) continue;
    if (!first) out += ",";
    first = false;
    out += R"({"name":")" + r.resource + R"(","singularName":")" + r.singular + R"(","namespaced":)" +
           (r.namespaced ? "true" : "false") + R"(,"kind":")" + r.kind + R"(","verbs":)" + kVerbs;
    if (!r.short_names.empty()) out += R"(,"shortNames":[)" + join_quoted(r.short_names) + "]";
    out += "}";
    for (const auto& sub : r.subresources) {
      std::string kind = sub == "binding" ? "Binding" : (sub == "log" ? "Pod" : r.kind);
      std::string verbs = sub == "binding" ? R"(["create"])" : (sub == "log" ? R"(["get"])" : R"(["get","patch","update"])");
      out += R"(,{"name":")" + r.resource + "/" + sub + R"(","singularName":"","namespaced":)" +
             (r.namespaced ? "true" : "false") + R"(,"kind":")" + kind + R"(","verbs":)" + verbs + "}";
    }
  }
  return out + "]}";
}

std::string group_json(const GroupVersions& g) {
  std::string out = R"({"name":")" + g.group + R"(","versions":[)";
  for (size_t i = 0; i < g.versions.size(); ++i) {
    out += (i ? "," : "") + std::string(R"({"groupVersion":")") + g.group + "/" + g.versions[i] +
           R"(","version":")" + g.versions[i] + "\"}";
  }
  out += R"(],"preferredVersion":{"groupVersion":")" + g.group + "/" + g.versions[0] + R"(","version":")" +
         g.versions[0] + "\"}}";
  return out;
}

// A minimal OpenAPI v3 document for one group-version: every path with its
// operations and the fieldValidation/dryRun parameters (kubectl checks those
// to choose server-side field validation), and permissive object schemas.
std::string openapi_v3(const std::string& group, const std::string& version) {
  std::string out = R"({"openapi":"3.0.0","info":{"title":"Kubernetes","version":"v1.36.0"},"paths":{)";
  std::string schemas;
  bool first = true;
  std::string root = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  for (const auto& r : all_resources()) {
    if (r.group != group || r.version != version) continue;
    std::string gvk = R"("x-kubernetes-group-version-kind":{"group":")" + r.group + R"(","version":")" + r.version +
                      R"(","kind":")" + r.kind + "\"}";
    std::string schema_name = (r.group.empty() ? "io.k8s.api.core." : "io.k8s.api." + r.group.substr(0, r.group.find('.')) + ".") +
                              r.version + "." + r.kind;
    std::string ref = R"({"$ref":"#/components/schemas/)" + schema_name + "\"}";
    std::string params =
        R"("parameters":[{"name":"dryRun","in":"query","schema":{"type":"string","uniqueItems":true}},)"
        R"({"name":"fieldManager","in":"query","schema":{"type":"string","uniqueItems":true}},)"
        R"({"name":"fieldValidation","in":"query","schema":{"type":"string","uniqueItems":true}}])";
    std::string body = R"("requestBody":{"content":{"application/json":{"schema":)" + ref + "}}}";
    std::string resp = R"("responses":{"200":{"description":"OK","content":{"application/json":{"schema":)" + ref + "}}}}";
    std::string op = "{" + gvk + "," + params + "," + body + "," + resp + R"(,"x-kubernetes-action":")";
    std::string coll = root + (r.namespaced ? "/namespaces/{namespace}/" : "/") + r.resource;
    if (!first) out += ",";
    first = false;
    out += quoted(coll) + R"(:{"get":)" + op + R"(list"},"post":)" + op + R"(post"}},)";
    out += quoted(coll + "/{name}") + R"(:{"get":)" + op + R"(get"},"put":)" + op + R"(put"},"patch":)" + op +
           R"(patch"},"delete":)" + op + R"(delete"}})";
    if (!schemas.empty()) schemas += ",";
    schemas += quoted(schema_name) + R"(:{"type":"object","x-kubernetes-preserve-unknown-fields":true,)" +
               R"("properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object",)" +
               R"("x-kubernetes-preserve-unknown-fields":true}},"x-kubernetes-group-version-kind":[{"group":")" +
               r.group + R"(","version":")" + r.version + R"(","kind":")" + r.kind + "\"}]}";
  }
  out += R"(},"components":{"schemas":{)" + schemas + "}}}";
  return out;
}

Reply text(int code, std::string body) {
  Reply r;
  r.code = code;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

}  // namespace

std::optional<Reply> discovery(const Request& req, const ApiServerOptions& opts) {
  const std::string& p = req.path;
  if (p == "/healthz" || p == "/livez" || p == "/readyz" || p.rfind("/healthz/", 0) == 0 ||
      p.rfind("/livez/", 0) == 0 || p.rfind("/readyz/", 0) == 0) {
    return text(200, "ok");
  }
  if (req.method != "GET") return std::nullopt;
  if (p == "/version") {
    std::string v = opts.server_version;  // v1.36.0-draplane
    return json_reply(200, R"({"major":"1","minor":"36","emulationMajor":"1","emulationMinor":"36","gitVersion":")" + v +
                               R"(","gitCommit":"","gitTreeState":"clean","buildDate":"1970-01-01T00:00:00Z",)"
                               R"("goVersion":"n/a","compiler":"draplane","platform":"linux/amd64"})");
  }
  if (p == "/api") {
    return json_reply(200, R"({"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":")" +
                               opts.advertise_address + "\"}]}");
  }
  if (p == "/apis") {
    std::string out = R"({"kind":"APIGroupList","apiVersion":"v1","groups":[)";
    auto groups = api_groups();
    for (size_t i = 0; i < groups.size(); ++i) out += (i ? "," : "") + group_json(groups[i]);
    return json_reply(200, out + "]}");
  }
  if (p == "/api/v1") return json_reply(200, resource_list("", "v1"));
  if (p.rfind("/apis/", 0) == 0) {
    std::string rest = p.substr(6);
    size_t slash = rest.find('/');
    std::string group = rest.substr(0, slash);
    for (const auto& g : api_groups()) {
      if (g.group != group) continue;
      if (slash == std::string::npos) {
        return json_reply(200, R"({"kind":"APIGroup","apiVersion":"v1",)" + group_json(g).substr(1));
      }
      std::string version = rest.substr(slash + 1);
      for (const auto& v : g.versions) {
        if (v == version) return json_reply(200, resource_list(group, version));
      }
    }
    return std::nullopt;
  }
  if (p == "/openapi/v2") {
    // kube-apiserver answers protobuf when asked for it (kubectl 1.27/1.28 do), JSON otherwise.
    if (req.accept.find("protobuf") != std::string::npos) {
      Reply r;
      r.code = 200;
      // A valid media type (Go's mime parser, which kubectl uses, refuses the "@" of the Accept form).
      r.content_type = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
      r.body = openapi_v2_protobuf(opts.server_version);
      return r;
    }
    return json_reply(200, openapi_v2_json(opts.server_version));
  }
  if (p == "/openapi/v3") {
    std::string out = R"({"paths":{)";
    out += R"("api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=v1"})";
    for (const auto& g : api_groups()) {
      for (const auto& v : g.versions) {
        out += R"(,"apis/)" + g.group + "/" + v + R"(":{"serverRelativeURL":"/openapi/v3/apis/)" + g.group + "/" + v +
               "?hash=" + v + "\"}";
      }
    }
    return json_reply(200, out + "}}");
  }
  if (p == "/openapi/v3/api/v1") return json_reply(200, openapi_v3("", "v1"));
  if (p.rfind("/openapi/v3/apis/", 0) == 0) {
    std::string rest = p.substr(17);
    size_t slash = rest.find('/');
    if (slash == std::string::npos) return std::nullopt;
    return json_reply(200, openapi_v3(rest.substr(0, slash), rest.substr(slash + 1)));
  }
  return std::nullopt;
}

}  // namespace draplane::server
