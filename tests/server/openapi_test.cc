// The OpenAPI v3 documents (/openapi/v3 and per group-version) and the v2
// definitions rendered from the same schema model: every served kind resolves
// from its operations' GVK to a schema, every $ref resolves, every field has a
// type and a description; the index's hashes and caching as kube-openapi's.
#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <algorithm>
#include <functional>
#include <set>

#include "server/api_server.h"
#include "server/json_util.h"
#include "server/openapi_schema.h"
#include "server/resources.h"
#include "store/memory_store.h"

namespace draplane::server {
namespace {

class OpenApiTest : public ::testing::Test {
 protected:
  OpenApiTest() {
    store_ = store::new_memory_store();
    ApiServerOptions o;
    o.clock = std::make_shared<common::FakeClock>();
    o.new_uid = [this] { return "uid-" + std::to_string(++uids_); };
    o.random_suffix = [] { return "xyz12"; };
    api_ = std::make_unique<ApiServer>(*store_, o);
    EXPECT_TRUE(api_->bootstrap().ok());
  }
  Response get(const std::string& target, const std::string& if_none_match = "",
               const std::string& accept = "application/json") {
    Request r;
    r.method = "GET";
    size_t qm = target.find('?');
    r.path = target.substr(0, qm);
    if (qm != std::string::npos) {
      std::string kv = target.substr(qm + 1);
      size_t eq = kv.find('=');
      r.query[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    r.accept = accept;
    r.if_none_match = if_none_match;
    r.identity = {"admin", true, ""};
    return api_->handle(r).response;
  }
  static Json json(const Response& r) {
    auto j = parse_json(r.body);
    EXPECT_TRUE(j.has_value()) << r.body.substr(0, 200);
    return j.has_value() ? std::move(j).value() : Json();
  }
  static std::string header(const Response& r, const std::string& name) {
    for (const auto& [k, v] : r.headers) {
      if (k == name) return v;
    }
    return "";
  }
  // The document of a group-version, fetched through the index's URL.
  Json document(const std::string& gv_path) {
    Json index = json(get("/openapi/v3"));
    std::string url = get_string(index, {"paths", gv_path, "serverRelativeURL"});
    EXPECT_FALSE(url.empty()) << gv_path;
    Response r = get(url);
    EXPECT_EQ(r.code, 200) << url;
    return json(r);
  }
  int uids_ = 0;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<ApiServer> api_;
};

std::string gv_path(const ResourceInfo& r) {
  return r.group.empty() ? "api/" + r.version : "apis/" + r.group + "/" + r.version;
}

// kubectl explain's lookup: the GVK of the resource's operations, then the
// schema whose x-kubernetes-group-version-kind lists it.
const JsonValue* kind_schema(const JsonValue& doc, const ResourceInfo& r) {
  std::string prefix = r.group.empty() ? "/api/" : "/apis/" + r.group + "/";
  std::string path = prefix + r.version + (r.namespaced ? "/namespaces/{namespace}/" : "/") + r.resource;
  const JsonValue* gvk = find(doc, {"paths", path, "get", "x-kubernetes-group-version-kind"});
  if (gvk == nullptr) return nullptr;
  for (const auto& s : find(doc, {"components", "schemas"})->GetObject()) {
    auto it = s.value.FindMember("x-kubernetes-group-version-kind");
    if (it == s.value.MemberEnd()) continue;
    for (const auto& g : it->value.GetArray()) {
      if (g == *gvk) return &s.value;
    }
  }
  return nullptr;
}

// The schema a "$ref" / allOf[$ref] / items / additionalProperties leads to.
const JsonValue* resolve(const JsonValue& doc, const JsonValue& s) {
  const JsonValue* cur = &s;
  for (;;) {
    if (auto it = cur->FindMember("items"); it != cur->MemberEnd()) {
      cur = &it->value;
    } else if (auto ap = cur->FindMember("additionalProperties"); ap != cur->MemberEnd() && ap->value.IsObject()) {
      cur = &ap->value;
    } else if (auto all = cur->FindMember("allOf"); all != cur->MemberEnd()) {
      cur = &all->value[0];
    } else if (auto ref = cur->FindMember("$ref"); ref != cur->MemberEnd()) {
      std::string name = std::string(ref->value.GetString()).substr(std::string("#/components/schemas/").size());
      cur = find(doc, {"components", "schemas", name});
      if (cur == nullptr) return nullptr;
    } else {
      return cur;
    }
  }
}

// Follows a field path as `kubectl explain kind.a.b` does.
const JsonValue* field(const JsonValue& doc, const JsonValue& kind, const std::vector<std::string>& path) {
  const JsonValue* cur = &kind;
  for (const auto& f : path) {
    const JsonValue* props = find(*cur, {"properties"});
    if (props == nullptr || !props->HasMember(f.c_str())) return nullptr;
    cur = resolve(doc, (*props)[f.c_str()]);
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

std::set<std::string> property_names(const JsonValue& s) {
  std::set<std::string> out;
  if (const JsonValue* p = find(s, {"properties"})) {
    for (const auto& m : p->GetObject()) out.insert(m.name.GetString());
  }
  return out;
}

TEST_F(OpenApiTest, IndexNamesEveryServedGroupVersionWithItsHash) {
  Response r = get("/openapi/v3");
  ASSERT_EQ(r.code, 200);
  Json index = json(r);
  std::set<std::string> want;
  for (const auto& res : all_resources()) want.insert(gv_path(res));
  std::set<std::string> got;
  for (const auto& m : find(index, {"paths"})->GetObject()) {
    got.insert(m.name.GetString());
    std::string url = get_string(m.value, {"serverRelativeURL"});
    EXPECT_EQ(url.rfind("/openapi/v3/" + std::string(m.name.GetString()) + "?hash=", 0), 0u) << url;
    // The hash is the SHA-512 of the document (upper-case hex), as kube-openapi's.
    Response d = get(url);
    ASSERT_EQ(d.code, 200) << url;
    unsigned char md[SHA512_DIGEST_LENGTH];
    SHA512(reinterpret_cast<const unsigned char*>(d.body.data()), d.body.size(), md);
    std::string hex;
    for (unsigned char c : md) {
      hex += "0123456789ABCDEF"[c >> 4];
      hex += "0123456789ABCDEF"[c & 15];
    }
    EXPECT_EQ(url.substr(url.find("hash=") + 5), hex);
    EXPECT_EQ(header(d, "Etag"), "\"" + hex + "\"");
  }
  EXPECT_EQ(got, want);
}

TEST_F(OpenApiTest, HashedUrlsAreImmutableOthersRedirected) {
  Json index = json(get("/openapi/v3"));
  std::string url = get_string(index, {"paths", "apis/resource.k8s.io/v1", "serverRelativeURL"});
  Response hashed = get(url);
  ASSERT_EQ(hashed.code, 200);
  EXPECT_EQ(header(hashed, "Cache-Control"), "public, immutable");
  EXPECT_EQ(header(hashed, "Expires"), "Fri, 01 Jan 2027 00:00:00 GMT");  // a year after the server clock
  Response stale = get("/openapi/v3/apis/resource.k8s.io/v1?hash=0123");
  EXPECT_EQ(stale.code, 301);
  EXPECT_EQ(header(stale, "Location"), url);
  Response plain = get("/openapi/v3/apis/resource.k8s.io/v1");
  EXPECT_EQ(plain.code, 200);
  EXPECT_EQ(header(plain, "Cache-Control"), "");  // the server's default: no-cache, private
  EXPECT_EQ(plain.body, hashed.body);
  EXPECT_EQ(get("/openapi/v3/apis/resource.k8s.io/v1", header(plain, "Etag")).code, 304);
  EXPECT_EQ(get("/openapi/v3/apis/resource.k8s.io/v1", "", "application/xml").code, 406);
  EXPECT_EQ(get("/openapi/v3/apis/resource.k8s.io/v9").code, 404);
}

TEST_F(OpenApiTest, EveryServedKindResolvesWithItsFields) {
  for (const auto& r : all_resources()) {
    SCOPED_TRACE(r.group_version() + " " + r.kind);
    Json doc = document(gv_path(r));
    const JsonValue* kind = kind_schema(doc, r);
    ASSERT_NE(kind, nullptr);
    EXPECT_FALSE(get_string(*kind, {"description"}).empty());
    std::set<std::string> props = property_names(*kind);
    for (const char* f : {"apiVersion", "kind", "metadata"}) EXPECT_TRUE(props.count(f)) << f;
    const JsonValue* meta = field(doc, *kind, {"metadata"});
    ASSERT_NE(meta, nullptr);
    EXPECT_TRUE(property_names(*meta).count("labels"));
    // The List kind too.
    std::string list = openapi::definition_name(r.group, r.version, r.kind + "List");
    const JsonValue* l = find(doc, {"components", "schemas", list});
    ASSERT_NE(l, nullptr) << list;
    EXPECT_EQ(get_string((*find(*l, {"x-kubernetes-group-version-kind"}))[0], {"kind"}), r.kind + "List");
  }
}

TEST_F(OpenApiTest, ClaimRequestsExplainAsKubectlWalksThem) {
  const ResourceInfo* v1 = find_resource("resource.k8s.io", "v1", "resourceclaims");
  Json doc = document("apis/resource.k8s.io/v1");
  const JsonValue* claim = kind_schema(doc, *v1);
  ASSERT_NE(claim, nullptr);
  const JsonValue* requests = field(doc, *claim, {"spec", "devices", "requests"});
  ASSERT_NE(requests, nullptr);
  EXPECT_EQ(property_names(*requests), (std::set<std::string>{"exactly", "firstAvailable", "name"}));
  EXPECT_EQ(get_string(*find(*requests, {"properties", "name"}), {"type"}), "string");
  EXPECT_NE(get_string(*find(*requests, {"properties", "name"}), {"description"}).find("Name can be used"),
            std::string::npos);
  // allOf-wrapped refs with the field's own description, as upstream v3.
  const JsonValue* exactly = find(*requests, {"properties", "exactly"});
  EXPECT_EQ(get_string((*find(*exactly, {"allOf"}))[0], {"$ref"}),
            "#/components/schemas/io.k8s.api.resource.v1.ExactDeviceRequest");
  EXPECT_FALSE(get_string(*exactly, {"description"}).empty());
  const JsonValue* list = find(*claim, {"properties", "spec"});
  ASSERT_NE(list, nullptr);
  const JsonValue* spec = field(doc, *claim, {"spec", "devices"});
  EXPECT_EQ(get_string(*find(*spec, {"properties", "requests"}), {"x-kubernetes-list-type"}), "atomic");
  const JsonValue* count = field(doc, *claim, {"spec", "devices", "requests", "exactly", "count"});
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(get_string(*count, {"format"}), "int64");
  const JsonValue* reserved = find(*field(doc, *claim, {"status"}), {"properties", "reservedFor"});
  EXPECT_EQ(get_string(*reserved, {"x-kubernetes-list-type"}), "map");
  EXPECT_EQ(std::string((*find(*reserved, {"x-kubernetes-list-map-keys"}))[0].GetString()), "uid");

  // v1beta1 requests are flat.
  const ResourceInfo* b1 = find_resource("resource.k8s.io", "v1beta1", "resourceclaims");
  Json beta = document("apis/resource.k8s.io/v1beta1");
  const JsonValue* beta_requests = field(beta, *kind_schema(beta, *b1), {"spec", "devices", "requests"});
  ASSERT_NE(beta_requests, nullptr);
  EXPECT_TRUE(property_names(*beta_requests).count("deviceClassName"));
  // Slices' devices, classes' CEL selectors, pods.
  const JsonValue* devices =
      field(doc, *kind_schema(doc, *find_resource("resource.k8s.io", "v1", "resourceslices")), {"spec", "devices"});
  ASSERT_NE(devices, nullptr);
  EXPECT_TRUE(property_names(*devices).count("attributes"));
  const JsonValue* cel = field(doc, *kind_schema(doc, *find_resource("resource.k8s.io", "v1", "deviceclasses")),
                               {"spec", "selectors", "cel"});
  ASSERT_NE(cel, nullptr);
  EXPECT_EQ(property_names(*cel), (std::set<std::string>{"expression"}));
  Json core = document("api/v1");
  const JsonValue* containers = field(core, *kind_schema(core, *find_resource("", "v1", "pods")), {"spec", "containers"});
  ASSERT_NE(containers, nullptr);
  EXPECT_TRUE(property_names(*containers).count("resources"));
  const JsonValue* c = find(*field(core, *kind_schema(core, *find_resource("", "v1", "pods")), {"spec"}),
                            {"properties", "containers"});
  EXPECT_EQ(get_string(*c, {"x-kubernetes-patch-merge-key"}), "name");
  EXPECT_EQ(get_string(*c, {"x-kubernetes-patch-strategy"}), "merge");
}

// Every $ref resolves; every property has a type (or a ref) and a description.
TEST_F(OpenApiTest, RefsResolveAndEveryFieldHasTypeAndDescription) {
  Json index = json(get("/openapi/v3"));
  for (const auto& m : find(index, {"paths"})->GetObject()) {
    SCOPED_TRACE(m.name.GetString());
    Json doc = document(m.name.GetString());
    const JsonValue* schemas = find(doc, {"components", "schemas"});
    std::function<void(const JsonValue&, const std::string&)> walk = [&](const JsonValue& v, const std::string& at) {
      if (v.IsObject()) {
        for (const auto& mm : v.GetObject()) {
          std::string key = mm.name.GetString();
          if (key == "$ref") {
            std::string ref = mm.value.GetString();
            ASSERT_EQ(ref.rfind("#/components/schemas/", 0), 0u) << at;
            EXPECT_TRUE(schemas->HasMember(ref.substr(21).c_str())) << at << ": " << ref;
          }
          walk(mm.value, at + "/" + key);
        }
      } else if (v.IsArray()) {
        for (const auto& e : v.GetArray()) walk(e, at);
      }
    };
    walk(doc, "");
    for (const auto& s : schemas->GetObject()) {
      EXPECT_FALSE(get_string(s.value, {"description"}).empty()) << s.name.GetString();
      if (const JsonValue* props = find(s.value, {"properties"})) {
        for (const auto& p : props->GetObject()) {
          std::string at = std::string(s.name.GetString()) + "." + p.name.GetString();
          EXPECT_TRUE(p.value.HasMember("type") || p.value.HasMember("allOf") || p.value.HasMember("$ref")) << at;
          EXPECT_FALSE(get_string(p.value, {"description"}).empty()) << at;
        }
      }
    }
  }
}

TEST_F(OpenApiTest, OperationsCarryTheirGvkParametersAndBodies) {
  Json doc = document("apis/resource.k8s.io/v1");
  const JsonValue* patch =
      find(doc, {"paths", "/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/{name}", "patch"});
  ASSERT_NE(patch, nullptr);
  EXPECT_EQ(get_string(*patch, {"x-kubernetes-action"}), "patch");
  EXPECT_EQ(get_string(*patch, {"operationId"}), "patchResourceV1NamespacedResourceClaim");
  EXPECT_NE(find(*patch, {"requestBody", "content", "application/strategic-merge-patch+json"}), nullptr);
  EXPECT_NE(find(*patch, {"requestBody", "content", "application/apply-patch+yaml"}), nullptr);
  std::set<std::string> params;
  for (const auto& p : find(*patch, {"parameters"})->GetArray()) params.insert(get_string(p, {"name"}));
  EXPECT_TRUE(params.count("fieldValidation"));  // kubectl's check for server-side field validation
  EXPECT_TRUE(params.count("force"));
  EXPECT_NE(find(doc, {"paths", "/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/{name}/status", "put"}),
            nullptr);
  EXPECT_EQ(get_string(*find(doc, {"paths", "/apis/resource.k8s.io/v1/deviceclasses", "get"}),
                       {"responses", "200", "content", "application/json", "schema", "$ref"}),
            "#/components/schemas/io.k8s.api.resource.v1.DeviceClassList");
}

// events.k8s.io/v1 Event is described, keyed by its group-version, whether or
// not this server serves it yet; it explains once it is a served resource.
TEST(OpenApiSchema, EventsAreDescribedForBothGroups) {
  for (const char* name : {"io.k8s.api.events.v1.Event", "io.k8s.api.core.v1.Event", "io.k8s.api.events.v1.EventList"}) {
    const openapi::Definition* d = openapi::find_definition(name);
    ASSERT_NE(d, nullptr) << name;
    EXPECT_FALSE(d->fields.empty());
  }
  EXPECT_EQ(openapi::definition_name("events.k8s.io", "v1", "Event"), "io.k8s.api.events.v1.Event");
  auto kinds = openapi::kinds_of("io.k8s.api.events.v1.Event", {{"events.k8s.io", "v1", "Event"}});
  ASSERT_EQ(kinds.size(), 1u);
  EXPECT_EQ(kinds[0].kind, "Event");
  auto closure = openapi::closure({"io.k8s.api.events.v1.Event"});
  EXPECT_TRUE(std::count(closure.begin(), closure.end(), "io.k8s.api.events.v1.EventSeries"));
}

TEST_F(OpenApiTest, V2DefinitionsComeFromTheSameModel) {
  Json doc = json(get("/openapi/v2"));
  const JsonValue* claim = find(doc, {"definitions", "io.k8s.api.resource.v1.DeviceRequest"});
  ASSERT_NE(claim, nullptr);
  // v2 refs carry their description beside them (no allOf).
  EXPECT_EQ(get_string(*claim, {"properties", "exactly", "$ref"}),
            "#/definitions/io.k8s.api.resource.v1.ExactDeviceRequest");
  const JsonValue* pod = find(doc, {"definitions", "io.k8s.api.core.v1.Pod"});
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(get_string((*find(*pod, {"x-kubernetes-group-version-kind"}))[0], {"kind"}), "Pod");
  EXPECT_EQ(get_string(*find(doc, {"definitions", "io.k8s.apimachinery.pkg.api.resource.Quantity"}), {"type"}),
            "string");
}

}  // namespace
}  // namespace draplane::server
