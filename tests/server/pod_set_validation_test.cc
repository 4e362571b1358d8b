// StatefulSet and DaemonSet, stored untyped: defaults and validation of their
// main members with upstream's field paths (server/pod_set_validation.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/json_util.h"
#include "server/resources.h"
#include "server/strategies.h"
#include "server/strategy.h"

namespace draplane::server {
namespace {

// Create through the kind's strategy: the error's message, "" when valid.
std::string create(const std::string& plural, Json& obj) {
  const ResourceInfo* r = find_resource("apps", "v1", plural);
  EXPECT_NE(r, nullptr);
  StrategyContext c{*r, "2026-01-02T03:04:05Z", nullptr, FieldValidation::kStrict};
  std::vector<std::string> warnings;
  const Strategy& s = strategy_of(*r);
  if (auto e = s.prepare_for_create(c, obj, warnings)) return e->message;
  if (auto e = s.validate_create(c, obj, warnings)) return e->message;
  return "";
}

Json object(const std::string& kind, const std::string& spec) {
  auto j = parse_json(R"({"apiVersion":"apps/v1","kind":")" + kind +
                      R"(","metadata":{"name":"s","namespace":"default"},"spec":)" + spec + "}");
  EXPECT_TRUE(j.has_value()) << spec;
  return j.has_value() ? std::move(j).value() : Json();
}

const char* kTemplate = R"("template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"c","image":"i"}]}})";

TEST(PodSetValidation, ValidStatefulSetIsDefaulted) {
  Json obj = object("StatefulSet", std::string(R"({"selector":{"matchLabels":{"app":"db"}},)") + kTemplate + "}");
  ASSERT_EQ(create("statefulsets", obj), "");
  EXPECT_EQ(find(obj, {"spec", "replicas"})->GetInt(), 1);
  EXPECT_EQ(get_string(obj, {"spec", "podManagementPolicy"}), "OrderedReady");
  EXPECT_EQ(get_string(obj, {"spec", "updateStrategy", "type"}), "RollingUpdate");
  EXPECT_EQ(find(obj, {"spec", "updateStrategy", "rollingUpdate", "partition"})->GetInt(), 0);
}

TEST(PodSetValidation, StatefulSetErrorsNameTheirFields) {
  Json obj = object("StatefulSet", std::string(R"({"replicas":-1,"selector":{"matchLabels":{"app":"other"}},
    "podManagementPolicy":"Random","updateStrategy":{"type":"Sometimes"},)") + kTemplate + "}");
  std::string m = create("statefulsets", obj);
  EXPECT_NE(m.find("StatefulSet.apps \"s\" is invalid"), std::string::npos) << m;
  EXPECT_NE(m.find("spec.replicas: Invalid value: -1: must be greater than or equal to 0"), std::string::npos) << m;
  EXPECT_NE(m.find("spec.template.metadata.labels: Invalid value: map[app:db]: `selector` does not match template `labels`"),
            std::string::npos) << m;
  EXPECT_NE(m.find("spec.podManagementPolicy: Unsupported value: \"Random\""), std::string::npos) << m;
  EXPECT_NE(m.find("spec.updateStrategy.type: Unsupported value: \"Sometimes\""), std::string::npos) << m;
}

TEST(PodSetValidation, DaemonSetNeedsSelectorAndAlwaysRestart) {
  Json obj = object("DaemonSet", std::string(R"({"template":{"metadata":{"labels":{"app":"a"}},
    "spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"i"}]}}})"));
  std::string m = create("daemonsets", obj);
  EXPECT_NE(m.find("spec.selector: Required value"), std::string::npos) << m;
  EXPECT_NE(m.find("spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\""),
            std::string::npos) << m;
  Json empty = object("DaemonSet", std::string(R"({"selector":{},)") + kTemplate + "}");
  EXPECT_NE(create("daemonsets", empty).find("empty selector is invalid for daemonset"), std::string::npos);
  Json ok = object("DaemonSet", std::string(R"({"selector":{"matchLabels":{"app":"db"}},)") + kTemplate + "}");
  ASSERT_EQ(create("daemonsets", ok), "");
  EXPECT_EQ(find(ok, {"spec", "updateStrategy", "rollingUpdate", "maxUnavailable"})->GetInt(), 1);
  Json no_template = object("DaemonSet", R"({"selector":{"matchLabels":{"app":"db"}}})");
  EXPECT_NE(create("daemonsets", no_template).find("spec.template"), std::string::npos);
}

}  // namespace
}  // namespace draplane::server
