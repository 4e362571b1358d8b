// Discovery (/api, /apis, /api/v1, /apis/<g>, /apis/<g>/<v>), /version, health
// endpoints, /openapi/v2 (openapi_v2.cc) and /openapi/v3 (openapi_v3.cc).
#include <openssl/sha.h>

#include <algorithm>
#include <map>

#include "common/hex.h"
#include "server/internal/api_impl.h"

namespace draplane::server {
namespace {

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string join_quoted(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + quoted(v[i]);
  return out;
}

// The verbs of a top-level resource (deletecollection unless its strategy has
// none, as namespaces in kube-apiserver), and the kind and verbs of a subresource.
std::string verbs_of(const ResourceInfo& r) {
  if (!strategy_of(r).deletes_collections()) return R"(["create","delete","get","list","patch","update","watch"])";
  return R"(["create","delete","deletecollection","get","list","patch","update","watch"])";
}
std::string sub_kind(const ResourceInfo& r, const std::string& sub) {
  if (sub == "binding") return "Binding";
  return sub == "scale" ? "Scale" : r.kind;
}
// The group and version of a subresource's kind when they differ from its
// resource's: /scale answers autoscaling/v1 Scale.
std::pair<std::string, std::string> sub_group_version(const std::string& sub) {
  if (sub == "scale") return {"autoscaling", "v1"};
  return {"", ""};
}
std::string sub_verbs(const std::string& sub) {
  if (sub == "binding") return R"(["create"])";
  if (sub == "log") return R"(["get"])";
  return R"(["get","patch","update"])";
}
// Categories as kube-apiserver publishes them (`kubectl get all`).
std::vector<std::string> categories_of(const ResourceInfo& r) { return strategy_of(r).categories(); }

// The resources of one group-version in kube-apiserver's order (sorted by
// name: the installer registers storage paths sorted), subresources sorted too.
std::vector<const ResourceInfo*> sorted_resources(const std::string& group, const std::string& version) {
  std::vector<const ResourceInfo*> out;
  for (const auto& r : all_resources()) {
    if (r.group == group && r.version == version) out.push_back(&r);
  }
  std::sort(out.begin(), out.end(), [](const ResourceInfo* a, const ResourceInfo* b) { return a->resource < b->resource; });
  return out;
}
std::vector<std::string> sorted_subresources(const ResourceInfo& r) {
  std::vector<std::string> subs = r.subresources;
  std::sort(subs.begin(), subs.end());
  return subs;
}

std::string resource_list(const std::string& group, const std::string& version) {
  std::string gv = group.empty() ? version : group + "/" + version;
  std::string out = R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":")" + gv + R"(","resources":[)";
  bool first = true;
  for (const ResourceInfo* rp : sorted_resources(group, version)) {
    const ResourceInfo& r = *rp;
    if (!first) out += ",";
    first = false;
    out += R"({"name":")" + r.resource + R"(","singularName":")" + r.singular + R"(","namespaced":)" +
           (r.namespaced ? "true" : "false") + R"(,"kind":")" + r.kind + R"(","verbs":)" + verbs_of(r);
    if (!r.short_names.empty()) out += R"(,"shortNames":[)" + join_quoted(r.short_names) + "]";
    if (auto c = categories_of(r); !c.empty()) out += R"(,"categories":[)" + join_quoted(c) + "]";
    out += "}";
    for (const auto& sub : sorted_subresources(r)) {
      auto [g, v] = sub_group_version(sub);
      std::string gv = g.empty() ? "" : R"(,"group":")" + g + R"(","version":")" + v + "\"";
      out += R"(,{"name":")" + r.resource + "/" + sub + R"(","singularName":"","namespaced":)" +
             (r.namespaced ? "true" : "false") + gv + R"(,"kind":")" + sub_kind(r, sub) + R"(","verbs":)" +
             sub_verbs(sub) + "}";
    }
  }
  return out + "]}";
}

// Groups in kube-apiserver's discovery order: by the APIService group priority
// (cmd/kube-apiserver's apiVersionPriorities: apps 17800, events.k8s.io 17750, batch 17400,
// scheduling.k8s.io 16600, coordination.k8s.io 16500, resource.k8s.io 16200),
// higher first, then name.
int group_priority(const std::string& group) {
  if (group == "apps") return 17800;
  if (group == "events.k8s.io") return 17750;
  if (group == "batch") return 17400;
  if (group == "scheduling.k8s.io") return 16600;
  if (group == "coordination.k8s.io") return 16500;
  if (group == "resource.k8s.io") return 16200;
  return 1000;
}
std::vector<GroupVersions> ordered_groups() {
  std::vector<GroupVersions> groups = api_groups();
  std::stable_sort(groups.begin(), groups.end(), [](const GroupVersions& a, const GroupVersions& b) {
    int pa = group_priority(a.group), pb = group_priority(b.group);
    return pa != pb ? pa > pb : a.group < b.group;
  });
  return groups;
}

// One APIVersionDiscovery (apidiscovery.k8s.io/v2 and v2beta1 have the same shape).
std::string version_discovery(const std::string& group, const std::string& version) {
  std::string out = R"({"version":")" + version + R"(","resources":[)";
  bool first = true;
  for (const ResourceInfo* rp : sorted_resources(group, version)) {
    const ResourceInfo& r = *rp;
    if (!first) out += ",";
    first = false;
    // responseKind's group and version are empty: those of the group-version
    // itself (kube-apiserver copies APIResource.group/version, set only when they differ).
    out += R"({"resource":")" + r.resource + R"(","responseKind":{"group":"","version":"","kind":")" + r.kind +
           R"("},"scope":")" + (r.namespaced ? "Namespaced" : "Cluster") + R"(","singularResource":")" + r.singular +
           R"(","verbs":)" + verbs_of(r);
    if (!r.short_names.empty()) out += R"(,"shortNames":[)" + join_quoted(r.short_names) + "]";
    if (auto c = categories_of(r); !c.empty()) out += R"(,"categories":[)" + join_quoted(c) + "]";
    auto subs = sorted_subresources(r);
    if (!subs.empty()) {
      out += R"(,"subresources":[)";
      for (size_t i = 0; i < subs.size(); ++i) {
        auto [g, v] = sub_group_version(subs[i]);
        out += (i ? "," : "") + std::string(R"({"subresource":")") + subs[i] + R"(","responseKind":{"group":")" + g +
               R"(","version":")" + v + R"(","kind":")" + sub_kind(r, subs[i]) + R"("},"verbs":)" +
               sub_verbs(subs[i]) + "}";
      }
      out += "]";
    }
    out += "}";
  }
  return out + R"(],"freshness":"Current"})";
}

// APIGroupDiscoveryList of /api (core only) or /apis (every named group).
std::string aggregated_discovery(bool core, const std::string& discovery_version) {
  std::string out = R"({"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/)" + discovery_version +
                    R"(","metadata":{},"items":[)";
  if (core) {
    out += R"({"metadata":{"creationTimestamp":null},"versions":[)" + version_discovery("", "v1") + "]}";
  } else {
    auto groups = ordered_groups();
    for (size_t i = 0; i < groups.size(); ++i) {
      out += (i ? "," : "") + std::string(R"({"metadata":{"name":")") + groups[i].group +
             R"(","creationTimestamp":null},"versions":[)";
      for (size_t j = 0; j < groups[i].versions.size(); ++j) {
        out += (j ? "," : "") + version_discovery(groups[i].group, groups[i].versions[j]);
      }
      out += "]}";
    }
  }
  return out + "]}";
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string sha512_hex(const std::string& text) {
  unsigned char md[SHA512_DIGEST_LENGTH];
  SHA512(reinterpret_cast<const unsigned char*>(text.data()), text.size(), md);
  return common::hex_encode(std::string_view(reinterpret_cast<const char*>(md), sizeof md), /*upper=*/true);
}

std::optional<std::string> negotiate_aggregated_discovery(const std::string& accept) {
  struct Option {
    double q = 1;
    size_t index = 0;
    std::optional<std::string> aggregated;  // "v2" / "v2beta1" for an aggregated JSON type
    bool plain = false;                     // application/json, application/*, */*
  };
  std::vector<Option> options;
  size_t start = 0, index = 0;
  while (start <= accept.size()) {
    size_t comma = accept.find(',', start);
    std::string_view item = std::string_view(accept).substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? accept.size() + 1 : comma + 1;
    std::vector<std::string> parts;
    size_t p = 0;
    while (p <= item.size()) {
      size_t semi = item.find(';', p);
      parts.push_back(trim(item.substr(p, semi == std::string_view::npos ? std::string_view::npos : semi - p)));
      p = semi == std::string_view::npos ? item.size() + 1 : semi + 1;
    }
    std::string type = lower(parts[0]);
    if (type.empty()) continue;
    Option o;
    o.index = index++;
    std::map<std::string, std::string> params;
    bool unknown_param = false;
    for (size_t i = 1; i < parts.size(); ++i) {
      size_t eq = parts[i].find('=');
      if (eq == std::string::npos) continue;
      std::string k = lower(trim(std::string_view(parts[i]).substr(0, eq)));
      std::string v = trim(std::string_view(parts[i]).substr(eq + 1));
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      if (k == "q") {
        o.q = std::strtod(v.c_str(), nullptr);
      } else if (k == "g" || k == "v" || k == "as") {
        params[k] = v;
      } else if (k != "pretty" && k != "profile") {
        unknown_param = true;
      }
    }
    if (o.q <= 0 || unknown_param) continue;
    bool json_type = type == "application/json" || type == "application/*" || type == "*/*";
    if (!json_type) continue;
    if (params.count("as") || params.count("g") || params.count("v")) {
      if (params["g"] == "apidiscovery.k8s.io" && params["as"] == "APIGroupDiscoveryList" &&
          (params["v"] == "v2" || params["v"] == "v2beta1")) {
        o.aggregated = params["v"];
        options.push_back(o);
      }
      continue;  // some other transformation (Table, ...): not offered here
    }
    o.plain = true;
    options.push_back(o);
  }
  std::stable_sort(options.begin(), options.end(), [](const Option& a, const Option& b) { return a.q > b.q; });
  for (const auto& o : options) {
    if (o.aggregated) return o.aggregated;
    if (o.plain) return std::nullopt;
  }
  return std::nullopt;
}

namespace {

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
  if (p == "/api" || p == "/apis") {
    // Aggregated discovery (apidiscovery.k8s.io v2 / v2beta1), when the Accept
    // header prefers it: what kubectl 1.26+ asks for first.
    if (auto v = negotiate_aggregated_discovery(req.accept)) {
      Reply r = json_reply(200, aggregated_discovery(p == "/api", *v));
      r.content_type = "application/json;g=apidiscovery.k8s.io;v=" + *v + ";as=APIGroupDiscoveryList";
      // The ETag is of the document (as upstream: the same for every version asked for).
      std::string etag = "\"" + sha512_hex(aggregated_discovery(p == "/api", "v2")) + "\"";
      r.headers = {{"ETag", etag}, {"Vary", "Accept"}, {"Cache-Control", "public"}};
      if (req.if_none_match == etag) {
        r.code = 304;
        r.body.clear();
      }
      return r;
    }
  }
  if (p == "/api") {
    return json_reply(200, R"({"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":")" +
                               opts.advertise_address + "\"}]}");
  }
  if (p == "/apis") {
    std::string out = R"({"kind":"APIGroupList","apiVersion":"v1","groups":[)";
    auto groups = ordered_groups();
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
  if (p == "/openapi/v3" || p.rfind("/openapi/v3/", 0) == 0) return openapi_v3(req, opts);
  return std::nullopt;
}

}  // namespace draplane::server
