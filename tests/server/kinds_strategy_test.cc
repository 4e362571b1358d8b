// The strategies of the kinds users' manifests carry beside DRA objects:
// ConfigMap, Secret, Service, PersistentVolumeClaim (config_strategies.cc) and
// Deployment, ReplicaSet, Job (workload_strategies.cc): create through the
// strategy (status reset, defaults, the Job's generated selector) and columns.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/json_util.h"
#include "server/resources.h"
#include "server/strategies.h"
#include "server/strategy.h"

namespace draplane::server {
namespace {

Json json(const std::string& text) {
  auto j = parse_json(text);
  EXPECT_TRUE(j.has_value()) << text;
  return j.has_value() ? std::move(j).value() : Json();
}

const ResourceInfo& resource(const std::string& group, const std::string& plural) {
  const ResourceInfo* r = find_resource(group, "v1", plural);
  EXPECT_NE(r, nullptr) << group << "/" << plural;
  return *r;
}

// Create through the resource's strategy; the error's message, "" when created.
std::string create(const ResourceInfo& r, Json& obj) {
  StrategyContext c{r, "2026-01-02T03:04:05Z", nullptr, FieldValidation::kStrict};
  std::vector<std::string> warnings;
  const Strategy& s = strategy_of(r);
  if (auto e = s.prepare_for_create(c, obj, warnings)) return e->message;
  if (auto e = s.validate_create(c, obj, warnings)) return e->message;
  return "";
}

std::vector<std::string> text_cells(const ResourceInfo& r, const std::string& object) {
  std::vector<std::string> out;
  for (const TableCell& cell : strategy_of(r).table_cells(json(object), 0)) {
    out.push_back(std::holds_alternative<std::string>(cell) ? std::get<std::string>(cell)
                                                            : std::to_string(std::get<int64_t>(cell)));
  }
  return out;
}

TEST(KindsStrategy, SecretStringDataIsMergedAndNotStored) {
  const ResourceInfo& r = resource("", "secrets");
  Json obj = json(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"default"},
    "stringData":{"token":"abc"}})");
  ASSERT_EQ(create(r, obj), "");
  EXPECT_EQ(get_string(obj, {"data", "token"}), "YWJj");
  EXPECT_EQ(find(obj, {"stringData"}), nullptr);
  EXPECT_EQ(get_string(obj, {"type"}), "Opaque");
  EXPECT_EQ(text_cells(r, to_string(obj))[1], "Opaque");
}

TEST(KindsStrategy, ServiceColumnsAndCategory) {
  const ResourceInfo& r = resource("", "services");
  EXPECT_EQ(strategy_of(r).categories(), std::vector<std::string>{"all"});
  Json obj = json(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default"},
    "spec":{"selector":{"app":"web"},"ports":[{"port":80},{"name":"b","port":443,"nodePort":30443}]}})");
  std::string err = create(r, obj);
  EXPECT_NE(err.find("spec.ports[0].name: Required value"), std::string::npos) << err;
  obj = json(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default"},
    "spec":{"selector":{"app":"web"},"ports":[{"name":"a","port":80},{"name":"b","port":443,"nodePort":30443}]}})");
  ASSERT_EQ(create(r, obj), "");
  auto cells = text_cells(r, to_string(obj));
  EXPECT_EQ(cells, (std::vector<std::string>{"web", "ClusterIP", "<none>", "<none>", "80/TCP,443:30443/TCP",
                                             "<unknown>", "app=web"}));
}

TEST(KindsStrategy, ClaimIsPendingAndConfigMapCountsBothMaps) {
  const ResourceInfo& pvc = resource("", "persistentvolumeclaims");
  Json obj = json(R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"d","namespace":"default"},
    "spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}},"status":{"phase":"Bound"}})");
  ASSERT_EQ(create(pvc, obj), "");
  EXPECT_EQ(text_cells(pvc, to_string(obj))[1], "Pending");
  const ResourceInfo& cm = resource("", "configmaps");
  EXPECT_EQ(text_cells(cm, R"({"metadata":{"name":"c"},"data":{"a":"1"},"binaryData":{"b":"aGk="}})")[1], "2");
}

TEST(KindsStrategy, DeploymentStatusIsResetAndDefaultsApply) {
  const ResourceInfo& r = resource("apps", "deployments");
  Json obj = json(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},
    "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},
            "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx"}]}}},
    "status":{"readyReplicas":9}})");
  ASSERT_EQ(create(r, obj), "");
  EXPECT_EQ(find(obj, {"status", "readyReplicas"}), nullptr) << to_string(obj);
  EXPECT_EQ(get_string(obj, {"spec", "strategy", "type"}), "RollingUpdate");
  auto cells = text_cells(r, R"({"metadata":{"name":"web"},"spec":{"replicas":3,
    "template":{"spec":{"containers":[{"name":"a","image":"nginx"}]}},"selector":{"matchLabels":{"app":"web"}}},
    "status":{"readyReplicas":1,"updatedReplicas":2,"availableReplicas":1}})");
  EXPECT_EQ(cells, (std::vector<std::string>{"web", "1/3", "2", "1", "<unknown>", "a", "nginx", "app=web"}));
}

TEST(KindsStrategy, JobSelectorIsGeneratedUnlessManual) {
  const ResourceInfo& r = resource("batch", "jobs");
  Json obj = json(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"default","uid":"u-1"},
    "spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}})");
  ASSERT_EQ(create(r, obj), "");
  EXPECT_EQ(get_string(obj, {"spec", "selector", "matchLabels", "batch.kubernetes.io/controller-uid"}), "u-1");
  EXPECT_EQ(get_string(obj, {"spec", "template", "metadata", "labels", "controller-uid"}), "u-1");
  EXPECT_EQ(get_string(obj, {"spec", "template", "metadata", "labels", "batch.kubernetes.io/job-name"}), "j");
  EXPECT_EQ(get_string(obj, {"spec", "template", "metadata", "labels", "job-name"}), "j");

  Json manual = json(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"m","namespace":"default","uid":"u-2"},
    "spec":{"manualSelector":true,
            "template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}})");
  EXPECT_NE(create(r, manual).find("spec.selector: Required value"), std::string::npos);

  auto cells = text_cells(r, R"({"metadata":{"name":"j"},"spec":{"completions":4},
    "status":{"succeeded":4,"startTime":"2026-01-01T00:00:00Z","completionTime":"2026-01-01T00:00:42Z",
              "conditions":[{"type":"Complete","status":"True"}]}})");
  EXPECT_EQ(cells[1], "Complete");
  EXPECT_EQ(cells[2], "4/4");
  EXPECT_EQ(cells[3], "42s");
}

TEST(KindsStrategy, StatefulSetAndDaemonSetColumns) {
  EXPECT_EQ(text_cells(resource("apps", "statefulsets"),
                       R"({"metadata":{"name":"db"},"spec":{"replicas":3},"status":{"readyReplicas":2}})"),
            (std::vector<std::string>{"db", "2/3", "<unknown>", "", ""}));
  auto ds = text_cells(resource("apps", "daemonsets"), R"({"metadata":{"name":"agent"},
    "spec":{"selector":{"matchLabels":{"app":"agent"}},"template":{"spec":{"nodeSelector":{"gpu":"true"},
            "containers":[{"name":"a","image":"agent:1"}]}}},
    "status":{"desiredNumberScheduled":4,"currentNumberScheduled":4,"numberReady":3,"updatedNumberScheduled":4,
              "numberAvailable":3}})");
  EXPECT_EQ(ds, (std::vector<std::string>{"agent", "4", "4", "3", "4", "3", "gpu=true", "<unknown>", "a", "agent:1",
                                          "app=agent"}));
  EXPECT_EQ(strategy_of(resource("apps", "daemonsets")).categories(), std::vector<std::string>{"all"});
}

}  // namespace
}  // namespace draplane::server
