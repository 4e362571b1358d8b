// Goldens of everything derived from the API's schema description, recorded
// from the code before the apply schema was derived from the OpenAPI
// definitions and the definitions became a data file:
//   - field_schema.golden: per served kind, the apply shape (struct, granular
//     map, atomic, set, associative list with its keys, atomic list) that
//     ssa::schema_for gives every object and array path of the kind's
//     OpenAPI definitions (all served versions);
//   - apply.golden: the objects and metadata.managedFields after a sequence of
//     applies and updates over representative objects of every kind;
//   - openapi.golden: SHA-256 and size of /openapi/v2 (JSON and protobuf), the
//     /openapi/v3 index and every group-version document.
// DRAPLANE_UPDATE_GOLDEN=1 rewrites the files; a change must say why.
#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/clock.h"
#include "server/api_server.h"
#include "server/field_schema.h"
#include "server/json_util.h"
#include "server/managed_fields.h"
#include "server/openapi_schema.h"
#include "server/resources.h"
#include "store/memory_store.h"

namespace draplane::server {
namespace {

std::string golden_file(const std::string& name) {
  return std::string(DRAPLANE_SOURCE_DIR) + "/tests/server/testdata/" + name;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Compares `actual` with the golden file line by line, naming the first lines
// that differ; DRAPLANE_UPDATE_GOLDEN=1 writes `actual` instead.
void expect_golden(const std::string& name, const std::string& actual) {
  std::string path = golden_file(name);
  if (const char* u = std::getenv("DRAPLANE_UPDATE_GOLDEN"); u != nullptr && std::string(u) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::string expected = read_file(path);
  if (expected == actual) return;
  std::istringstream e(expected), a(actual);
  std::string le, la;
  int line = 0, shown = 0;
  std::string report;
  for (;;) {
    bool he = static_cast<bool>(std::getline(e, le)), ha = static_cast<bool>(std::getline(a, la));
    if (!he && !ha) break;
    ++line;
    if (he && ha && le == la) continue;
    if (shown++ < 20) report += "line " + std::to_string(line) + ":\n  golden: " + (he ? le : "<end>") + "\n  actual: " + (ha ? la : "<end>") + "\n";
  }
  ADD_FAILURE() << name << " differs (" << shown << " lines):\n" << report;
}

// ---------------------------------------------------------------- field schema

std::string object_shape(const ssa::NodeType& t) {
  switch (t.kind) {
    case ssa::NodeKind::kDefault: return "struct";
    case ssa::NodeKind::kMap: return "map";
    case ssa::NodeKind::kAtomic: return "atomic";
    default: return "INVALID(list kind on an object)";
  }
}

std::string list_shape(const ssa::NodeType& t) {
  switch (t.kind) {
    case ssa::NodeKind::kDefault:
    case ssa::NodeKind::kAtomic: return "atomic-list";
    case ssa::NodeKind::kSet: return "set";
    case ssa::NodeKind::kAssociative: {
      std::string keys;
      for (const auto& k : t.keys) keys += (keys.empty() ? "" : ",") + k;
      return "associative[" + keys + "]";
    }
    default: return "INVALID(map kind on a list)";
  }
}

// Every object and array path of a type expression (openapi_schema.h) at
// schema path `sp`, with the shape `schema` gives it.
void walk(const ssa::Schema& schema, const std::string& type, const std::string& sp, std::vector<std::string>& stack,
          std::map<std::string, std::string>& out) {
  if (type.rfind("[]", 0) == 0) {
    out[sp] = list_shape(schema.at(sp));
    return walk(schema, type.substr(2), ssa::item_path(sp), stack, out);
  }
  if (type.rfind("map[]", 0) == 0) {
    out[sp] = object_shape(schema.at(sp));
    return walk(schema, type.substr(5), ssa::entry_path(sp), stack, out);
  }
  const openapi::Definition* d = openapi::find_definition(type);
  if (d == nullptr || (!d->type.empty() && d->type != "object")) return;  // scalars
  if (!sp.empty()) out[sp] = object_shape(schema.at(sp));
  if (std::find(stack.begin(), stack.end(), type) != stack.end()) return;  // recursive types
  stack.push_back(type);
  for (const auto& f : d->fields) walk(schema, f.type, ssa::field_path(sp, f.name), stack, out);
  stack.pop_back();
}

std::string field_schema_dump() {
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> kinds;  // (group, kind) -> versions
  for (const auto& r : all_resources()) kinds[{r.group, r.kind}].push_back(r.version);
  std::string out;
  for (const auto& [gk, versions] : kinds) {
    const ssa::Schema& schema = ssa::schema_for(gk.first, gk.second);
    std::map<std::string, std::string> paths;
    std::string vs;
    for (const auto& v : versions) {
      std::vector<std::string> stack;
      walk(schema, openapi::definition_name(gk.first, v, gk.second), "", stack, paths);
      vs += (vs.empty() ? "" : ",") + v;
    }
    out += "== " + (gk.first.empty() ? std::string("core") : gk.first) + " " + gk.second + " (" + vs + ")\n";
    for (const auto& [p, shape] : paths) out += p + "\t" + shape + "\n";
  }
  // A kind the server has no definition of: its metadata.
  std::map<std::string, std::string> paths;
  std::vector<std::string> stack;
  walk(ssa::schema_for("example.com", "Widget"), "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "metadata", stack,
       paths);
  out += "== example.com Widget (no definition)\n";
  for (const auto& [p, shape] : paths) out += p + "\t" + shape + "\n";
  return out;
}

TEST(SchemaGolden, FieldSchemaOfEveryServedKind) { expect_golden("field_schema.golden", field_schema_dump()); }

// ---------------------------------------------------------------- apply outcomes

struct GoldenStep {
  GoldenStep(std::string m, std::string c, bool u = false, bool f = false, ssa::Scope s = ssa::Scope::kAllButStatus,
       std::string sub = "")
      : manager(std::move(m)), config(std::move(c)), update(u), force(f), scope(s), subresource(std::move(sub)) {}
  std::string manager;
  std::string config;  // the applied configuration, or the updated object
  bool update = false;
  bool force = false;
  ssa::Scope scope = ssa::Scope::kAllButStatus;
  std::string subresource;
};

struct GoldenScenario {
  std::string name, group, kind, api_version;
  std::string live;  // "" = create
  std::vector<GoldenStep> steps;
};

std::vector<GoldenScenario> scenarios() {
  using ssa::Scope;
  const std::string claim_head = R"("apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim")";
  const std::string pod_head = R"("apiVersion":"v1","kind":"Pod")";
  const std::string node_head = R"("apiVersion":"v1","kind":"Node")";
  std::vector<GoldenScenario> s;
  s.push_back({"claim spec and metadata", "resource.k8s.io", "ResourceClaim", "resource.k8s.io/v1", "",
               {
                   {"kubectl", "{" + claim_head + R"(,"metadata":{"name":"c","namespace":"default",
                     "labels":{"a":"1","b":"2"},"annotations":{"x":"y"},"finalizers":["f1","f2"],
                     "ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"u1","controller":true}]},
                     "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com",
                     "selectors":[{"cel":{"expression":"true"}}],"count":2}}],
                     "constraints":[{"requests":["gpu"],"matchAttribute":"dra.example.com/model"}],
                     "config":[{"requests":["gpu"],"opaque":{"driver":"d","parameters":{"a":{"b":1}}}}]}}})"},
                   {"other", "{" + claim_head + R"(,"metadata":{"name":"c","namespace":"default",
                     "labels":{"c":"3"},"finalizers":["f3"],
                     "ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"q","uid":"u2"}]}})"},
                   {"kubectl", "{" + claim_head + R"(,"metadata":{"name":"c","namespace":"default",
                     "labels":{"a":"1","c":"4"},"finalizers":["f2"],
                     "ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p2","uid":"u1"}]},
                     "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}})"},
                   {"kubectl", "{" + claim_head + R"(,"metadata":{"name":"c","namespace":"default",
                     "labels":{"a":"1","c":"4"},"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p2","uid":"u1"}]},
                     "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}})",
                    false, true},
               }});
  s.push_back({"claim status", "resource.k8s.io", "ResourceClaim", "resource.k8s.io/v1",
               "{" + claim_head + R"(,"metadata":{"name":"c","namespace":"default"},"spec":{"devices":{}}})",
               {
                   {"scheduler", "{" + claim_head + R"(,"metadata":{"name":"c","namespace":"default"},"status":{
                     "allocation":{"devices":{"results":[{"request":"gpu","driver":"d","pool":"p","device":"g0"}],
                     "config":[{"source":"FromClaim","opaque":{"driver":"d","parameters":{"k":"v"}}}]},
                     "nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]}},
                     "reservedFor":[{"resource":"pods","name":"p0","uid":"u0"}]}})",
                    false, false, Scope::kStatusOnly, "status"},
                   {"driver", "{" + claim_head + R"(,"metadata":{"name":"c","namespace":"default"},"status":{
                     "devices":[{"driver":"d","pool":"p","device":"g0","conditions":[{"type":"Ready","status":"True",
                     "lastTransitionTime":"2026-01-01T00:00:00Z","reason":"R","message":"m"}],
                     "data":{"a":{"b":[1,2]},"c":"d"},"networkData":{"interfaceName":"eth0","ips":["10.0.0.1/24"],
                     "hardwareAddress":"aa"}}]}})",
                    false, false, Scope::kStatusOnly, "status"},
                   {"driver", "{" + claim_head + R"(,"metadata":{"name":"c","namespace":"default"},"status":{
                     "devices":[{"driver":"d","pool":"p","device":"g0","conditions":[{"type":"Ready","status":"False",
                     "lastTransitionTime":"2026-01-01T00:00:00Z","reason":"R","message":"m"}],
                     "data":{"a":{"b":[3]}},"networkData":{"interfaceName":"eth0","ips":["10.0.0.2/24"]}}]}})",
                    false, false, Scope::kStatusOnly, "status"},
                   {"kubelet", "{" + claim_head + R"(,"metadata":{"name":"c","namespace":"default"},"status":{
                     "reservedFor":[{"resource":"pods","name":"p1","uid":"u1"}],
                     "devices":[{"driver":"d","pool":"p","device":"g0","data":{"z":1}}]}})",
                    false, false, Scope::kStatusOnly, "status"},
               }});
  s.push_back({"template", "resource.k8s.io", "ResourceClaimTemplate", "resource.k8s.io/v1", "",
               {
                   {"kubectl", R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":{"name":"t"},
                     "spec":{"metadata":{"labels":{"a":"1"},"annotations":{"n":"v"},"finalizers":["x"]},
                     "spec":{"devices":{"requests":[{"name":"r","exactly":{"deviceClassName":"c"}}]}}}})"},
                   {"other", R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":{"name":"t"},
                     "spec":{"metadata":{"labels":{"b":"2"},"finalizers":["y"]}}})"},
               }});
  s.push_back({"slice", "resource.k8s.io", "ResourceSlice", "resource.k8s.io/v1", "",
               {
                   {"driver", R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"s"},
                     "spec":{"driver":"d","pool":{"name":"p","generation":1,"resourceSliceCount":1},"nodeName":"n1",
                     "devices":[{"name":"g0","attributes":{"model":{"string":"a"},"mem":{"int":4}},
                     "capacity":{"memory":{"value":"1Gi"}}}],
                     "sharedCounters":[{"name":"cs","counters":{"c":{"value":"1"}}}]}})"},
                   {"other", R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"s"},
                     "spec":{"devices":[{"name":"g1"}]}})", false, true},
               }});
  s.push_back({"device class", "resource.k8s.io", "DeviceClass", "resource.k8s.io/v1", "",
               {
                   {"admin", R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"gpu"},
                     "spec":{"selectors":[{"cel":{"expression":"device.driver == 'd'"}}],
                     "config":[{"opaque":{"driver":"d","parameters":{"x":1}}}],"extendedResourceName":"example.com/gpu"}})"},
                   {"other", R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"gpu"},
                     "spec":{"selectors":[{"cel":{"expression":"true"}}]}})"},
               }});
  s.push_back({"pod spec", "", "Pod", "v1", "",
               {
                   {"kubectl", "{" + pod_head + R"(,"metadata":{"name":"p","namespace":"default","labels":{"app":"x"}},
                     "spec":{"containers":[{"name":"a","image":"a:1",
                     "ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":53,"protocol":"UDP"}],
                     "env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
                     "resources":{"limits":{"cpu":"1"},"requests":{"cpu":"500m"},"claims":[{"name":"gpu"}]},
                     "volumeMounts":[{"name":"v","mountPath":"/v"}],"command":["sh","-c"],
                     "securityContext":{"capabilities":{"add":["NET_ADMIN"]}}}],
                     "initContainers":[{"name":"i","image":"i:1"}],
                     "volumes":[{"name":"v","emptyDir":{}},{"name":"cm","configMap":{"name":"cm","items":[{"key":"k","path":"p"}]}},
                     {"name":"csi","csi":{"driver":"d","volumeAttributes":{"k":"v"}}}],
                     "nodeSelector":{"zone":"a"},"tolerations":[{"key":"k","operator":"Exists"}],
                     "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
                     {"matchExpressions":[{"key":"k","operator":"In","values":["v"]}]}]}},
                     "podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,
                     "podAffinityTerm":{"topologyKey":"zone","labelSelector":{"matchLabels":{"app":"x"}}}}]}},
                     "topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",
                     "labelSelector":{"matchLabels":{"app":"x"}}}],
                     "resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"t"}],
                     "schedulingGates":[{"name":"g"}],"hostAliases":[{"ip":"1.2.3.4","hostnames":["h"]}],
                     "imagePullSecrets":[{"name":"s"}],"overhead":{"cpu":"1"},
                     "dnsConfig":{"nameservers":["1.1.1.1"],"options":[{"name":"ndots","value":"2"}]},
                     "readinessGates":[{"conditionType":"c"}],"securityContext":{"sysctls":[{"name":"a","value":"b"}]}}})"},
                   {"other", "{" + pod_head + R"(,"metadata":{"name":"p","namespace":"default"},
                     "spec":{"containers":[{"name":"a","ports":[{"containerPort":8080,"protocol":"TCP"}],
                     "env":[{"name":"C","value":"3"}],"resources":{"limits":{"memory":"1Gi"}},
                     "volumeMounts":[{"name":"w","mountPath":"/w"}]},{"name":"b","image":"b:1"}],
                     "nodeSelector":{"disk":"ssd"},"tolerations":[{"key":"other","operator":"Exists"}],
                     "affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":2,
                     "podAffinityTerm":{"topologyKey":"host","labelSelector":{"matchExpressions":[{"key":"a","operator":"Exists"}]}}}]}},
                     "topologySpreadConstraints":[{"maxSkew":2,"topologyKey":"host","whenUnsatisfiable":"ScheduleAnyway",
                     "labelSelector":{"matchLabels":{"app":"y"}}}],
                     "volumes":[{"name":"csi","csi":{"driver":"d","volumeAttributes":{"k2":"v2"}}}],
                     "dnsConfig":{"nameservers":["8.8.8.8"],"options":[{"name":"edns0"}]},
                     "readinessGates":[{"conditionType":"d"}],"securityContext":{"sysctls":[{"name":"c","value":"d"}]}}})",
                    false, true},
                   {"kubectl", "{" + pod_head + R"(,"metadata":{"name":"p","namespace":"default","labels":{"app":"x"}},
                     "spec":{"containers":[{"name":"a","image":"a:2"}]}})", false, true},
               }});
  s.push_back({"pod status", "", "Pod", "v1",
               "{" + pod_head + R"(,"metadata":{"name":"p","namespace":"default"},"spec":{"containers":[{"name":"a","image":"a"}]}})",
               {
                   {"kubelet", "{" + pod_head + R"(,"metadata":{"name":"p","namespace":"default"},"status":{"phase":"Running",
                     "conditions":[{"type":"Ready","status":"True"}],"podIPs":[{"ip":"10.0.0.1"}],"hostIPs":[{"ip":"1.1.1.1"}],
                     "containerStatuses":[{"name":"a","ready":true,"restartCount":0,"image":"a","imageID":"","state":{"running":{}}}],
                     "resourceClaimStatuses":[{"name":"gpu","resourceClaimName":"p-gpu"}]}})",
                    false, false, Scope::kStatusOnly, "status"},
                   {"scheduler", "{" + pod_head + R"(,"metadata":{"name":"p","namespace":"default"},"status":{
                     "conditions":[{"type":"PodScheduled","status":"True"}],"nominatedNodeName":"n"}})",
                    false, false, Scope::kStatusOnly, "status"},
               }});
  s.push_back({"pod update", "", "Pod", "v1",
               "{" + pod_head + R"(,"metadata":{"name":"p","namespace":"default","labels":{"a":"1"}},"spec":{"containers":[{"name":"a","image":"a"}]}})",
               {
                   {"ctl", "{" + pod_head + R"(,"metadata":{"name":"p","namespace":"default","labels":{"a":"2","b":"1"},
                     "ownerReferences":[{"apiVersion":"v1","kind":"X","name":"x","uid":"ux"}]},
                     "spec":{"containers":[{"name":"a","image":"a","ports":[{"containerPort":1,"protocol":"TCP"}]}],
                     "tolerations":[{"key":"t","operator":"Exists"}]}})",
                    true},
                   {"ctl2", "{" + pod_head + R"(,"metadata":{"name":"p","namespace":"default","labels":{"a":"2"},
                     "ownerReferences":[{"apiVersion":"v1","kind":"X","name":"x2","uid":"ux"}]},
                     "spec":{"containers":[{"name":"a","image":"b","ports":[{"containerPort":1,"protocol":"TCP","name":"n"}]}],
                     "tolerations":[{"key":"t","operator":"Exists","effect":"NoSchedule"}]}})",
                    true},
               }});
  s.push_back({"node", "", "Node", "v1", "",
               {
                   {"kubelet", "{" + node_head + R"(,"metadata":{"name":"n","labels":{"kubernetes.io/hostname":"n"}},
                     "spec":{"podCIDR":"10.0.0.0/24","podCIDRs":["10.0.0.0/24"],"taints":[{"key":"k","effect":"NoSchedule"}]},
                     "status":{"capacity":{"cpu":"4","memory":"8Gi"},"allocatable":{"cpu":"4"},
                     "conditions":[{"type":"Ready","status":"True"}],"addresses":[{"type":"InternalIP","address":"1.1.1.1"}],
                     "nodeInfo":{"kubeletVersion":"v1.36.0"},"images":[{"names":["a"],"sizeBytes":1}],
                     "volumesAttached":[{"name":"v","devicePath":"/d"}],"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}}}})",
                    false, false, ssa::Scope::kAll},
                   {"other", "{" + node_head + R"(,"metadata":{"name":"n"},"spec":{"podCIDRs":["10.0.1.0/24"],
                     "taints":[{"key":"j","effect":"NoExecute"}]},
                     "status":{"capacity":{"example.com/gpu":"2"},"conditions":[{"type":"Disk","status":"False"}],
                     "addresses":[{"type":"Hostname","address":"n"}]}})",
                    false, true, ssa::Scope::kAll},
               }});
  s.push_back({"namespace", "", "Namespace", "v1", "",
               {
                   {"kubectl", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns"},"spec":{"finalizers":["kubernetes"]}})"},
                   {"controller", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns"},
                     "status":{"phase":"Terminating","conditions":[{"type":"A","status":"True"}]}})",
                    false, false, Scope::kStatusOnly, "status"},
               }});
  s.push_back({"lease", "coordination.k8s.io", "Lease", "coordination.k8s.io/v1", "",
               {
                   {"holder", R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l","namespace":"default"},
                     "spec":{"holderIdentity":"a","leaseDurationSeconds":15}})"},
                   {"other", R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l","namespace":"default"},
                     "spec":{"holderIdentity":"b"}})"},
               }});
  s.push_back({"event", "", "Event", "v1", "",
               {
                   {"recorder", R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"e","namespace":"default"},
                     "involvedObject":{"kind":"Pod","name":"p"},"reason":"R","message":"m","count":1,
                     "series":{"count":2,"lastObservedTime":"2026-01-01T00:00:00.000000Z"}})"},
               }});
  s.push_back({"priority class", "scheduling.k8s.io", "PriorityClass", "scheduling.k8s.io/v1", "",
               {
                   {"admin", R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},
                     "value":1000,"description":"d"})"},
               }});
  s.push_back({"pod group", "scheduling.k8s.io", "PodGroup", "scheduling.k8s.io/v1beta1", "",
               {
                   {"job-controller", R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup",
                     "metadata":{"name":"g","namespace":"default"},"spec":{"workloadRef":{"workloadName":"w",
                     "templateName":"t"},"schedulingPolicy":{"gang":{"minCount":4}}}})"},
                   {"scaler", R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup",
                     "metadata":{"name":"g","namespace":"default","labels":{"a":"1"}},
                     "spec":{"schedulingPolicy":{"gang":{"minCount":2}}}})", false, true},
               }});
  s.push_back({"unknown kind", "example.com", "Widget", "example.com/v1", "",
               {
                   {"a", R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","labels":{"a":"1"},
                     "finalizers":["f"]},"spec":{"list":[1,2],"obj":{"x":1}}})"},
                   {"b", R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","labels":{"b":"1"},
                     "finalizers":["g"]},"spec":{"list":[3],"obj":{"y":1}}})", false, true},
               }});
  return s;
}

std::string apply_dump() {
  std::string out;
  for (const auto& sc : scenarios()) {
    out += "== " + sc.name + " (" + sc.api_version + " " + sc.kind + ")\n";
    const ssa::Schema& schema = ssa::schema_for(sc.group, sc.kind);
    Json live(rapidjson::kObjectType);
    if (!sc.live.empty()) live = parse_json(sc.live).value();
    ssa::Managers managers;
    int n = 0;
    for (const auto& st : sc.steps) {
      std::string now = "2026-01-0" + std::to_string(++n) + "T00:00:00Z";
      auto config = parse_json(st.config);
      if (!config.has_value()) {
        out += "bad test configuration: " + st.config + "\n";
        continue;
      }
      ssa::Writer w{st.manager, sc.api_version, st.subresource};
      out += std::to_string(n) + " " + (st.update ? "update" : "apply") + " " + st.manager + (st.force ? " force" : "") + ": ";
      if (st.update) {
        ssa::record_update(schema, live, *config, managers, w, st.scope, now);
        live.CopyFrom(*config, live.GetAllocator());
        out += "updated\n";
      } else {
        auto r = ssa::apply(schema, live, *config, managers, w, st.scope, st.force, now);
        if (!r.has_value()) {
          out += "error: " + r.error().message() + "\n";
          continue;
        }
        if (!r->conflicts.empty()) {
          out += ssa::conflict_message(r->conflicts) + "\n";
          continue;
        }
        out += std::string(r->changed ? "changed" : "unchanged") + "\n";
        live = std::move(r->object);
      }
      Json shown;
      shown.CopyFrom(live, shown.GetAllocator());
      ssa::encode_managed_fields(managers, shown);
      out += to_string(shown) + "\n";
    }
  }
  return out;
}

TEST(SchemaGolden, ApplyOutcomes) { expect_golden("apply.golden", apply_dump()); }

// ---------------------------------------------------------------- OpenAPI documents

std::string sha256_hex(const std::string& s) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), d);
  std::string out;
  char b[3];
  for (unsigned char c : d) {
    std::snprintf(b, sizeof(b), "%02x", c);
    out += b;
  }
  return out;
}

class OpenApiGolden : public ::testing::Test {
 protected:
  OpenApiGolden()
      : store_(store::new_memory_store()),
        api_(std::make_unique<ApiServer>(*store_, ApiServerOptions{.clock = std::make_shared<common::FakeClock>(),
                                                                   .new_uid = [] { return std::string("uid"); },
                                                                   .random_suffix = [] { return std::string("s"); }})) {
    EXPECT_TRUE(api_->bootstrap().ok());
  }
  Response get(const std::string& path, const std::string& accept = "application/json") {
    Request r;
    r.method = "GET";
    r.path = path;
    r.accept = accept;
    r.identity = {"admin", true, ""};
    return api_->handle(r).response;
  }
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<ApiServer> api_;
};

std::string line_of(const std::string& what, const Response& r) {
  return what + "\t" + std::to_string(r.code) + "\t" + std::to_string(r.body.size()) + "\t" + sha256_hex(r.body) + "\n";
}

TEST_F(OpenApiGolden, DocumentsByteForByte) {
  // The first request of each renders (and caches) the document: the time is
  // recorded, not asserted (run alone for a cold figure).
  auto t0 = std::chrono::steady_clock::now();
  Response v2 = get("/openapi/v2");
  auto t1 = std::chrono::steady_clock::now();
  Response v3_index = get("/openapi/v3");
  auto t2 = std::chrono::steady_clock::now();
  std::string out = line_of("/openapi/v2 json", v2);
  out += line_of("/openapi/v2 protobuf", get("/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"));
  out += line_of("/openapi/v3", v3_index);
  Json index = parse_json(v3_index.body).value();
  double v3_ms = 0;
  for (const auto& m : find(index, {"paths"})->GetObject()) {
    std::string url = get_string(m.value, {"serverRelativeURL"});
    std::string path = url.substr(0, url.find('?'));
    auto a = std::chrono::steady_clock::now();
    Response doc = get(path);
    v3_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
    out += line_of("/openapi/v3/" + std::string(m.name.GetString()), doc);
  }
  RecordProperty("v2_first_ms", std::to_string(std::chrono::duration<double, std::milli>(t1 - t0).count()));
  RecordProperty("v3_index_first_ms", std::to_string(std::chrono::duration<double, std::milli>(t2 - t1).count()));
  RecordProperty("v3_documents_ms", std::to_string(v3_ms));
  std::printf("openapi first renders: v2 %.1f ms, v3 index %.1f ms, v3 documents %.1f ms\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t2 - t1).count(), v3_ms);
  expect_golden("openapi.golden", out);
}

}  // namespace
}  // namespace draplane::server
