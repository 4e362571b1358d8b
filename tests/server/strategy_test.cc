// The kinds' strategies (server/strategy.h): every served resource is
// registered with one, the default applies to the others, and strategies
// behave as kube-apiserver's in isolation (status reset, PrepareForCreate,
// field selectors, table columns).
#include "server/strategy.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "server/json_util.h"
#include "server/resources.h"
#include "server/selectors.h"
#include "server/strategies.h"

namespace draplane::server {
namespace {

Json json(const std::string& text) {
  auto j = parse_json(text);
  EXPECT_TRUE(j.has_value()) << text;
  return j.has_value() ? std::move(j).value() : Json();
}

const ResourceInfo& resource(const std::string& group, const std::string& version, const std::string& plural) {
  const ResourceInfo* r = find_resource(group, version, plural);
  EXPECT_NE(r, nullptr) << group << "/" << version << "/" << plural;
  return *r;
}

// Whether ?fieldSelector=`text` on `r` parses and selects `object`.
bool selects(const ResourceInfo& r, const std::string& text, const std::string& object) {
  auto sel = Selector::parse_fields(text, r);
  EXPECT_TRUE(sel.has_value()) << text;
  return sel.has_value() && sel->matches_fields(json(object));
}

StrategyContext context(const ResourceInfo& r, FieldValidation fv = FieldValidation::kStrict) {
  return StrategyContext{r, "2026-01-02T03:04:05Z", nullptr, fv};
}

TEST(StrategyRegistry, EveryServedResourceHasItsKindsStrategy) {
  std::set<std::string> kinds;
  for (const ResourceInfo& r : all_resources()) {
    ASSERT_NE(r.strategy, nullptr) << r.group_version() << " " << r.resource;
    EXPECT_EQ(&strategy_of(r), r.strategy);
    kinds.insert(r.kind);
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"Namespace", "Node", "Pod", "Event", "DeviceClass", "ResourceClaim",
                                          "ResourceClaimTemplate", "ResourceSlice", "DeviceTaintRule", "Lease",
                                          "PriorityClass", "ConfigMap", "Secret", "ServiceAccount", "Service",
                                          "PersistentVolumeClaim", "Deployment", "ReplicaSet", "Job", "StatefulSet",
                                          "DaemonSet", "Queue", "Workload", "PodGroup"}));
}

// to_table writes one cell per column: a strategy whose two lists drift apart
// would serve a malformed Table.
TEST(StrategyRegistry, EveryStrategyGivesACellPerColumn) {
  Json minimal = json(R"({"metadata":{"name":"x","creationTimestamp":"2026-01-01T00:00:00Z"}})");
  for (const ResourceInfo& r : all_resources()) {
    const Strategy& s = strategy_of(r);
    EXPECT_EQ(s.table_cells(minimal, 1767225600).size(), s.table_columns().size())
        << r.group_version() << " " << r.resource;
  }
}

TEST(StrategyRegistry, VersionsServedByConversionShareTheStorageVersionsStrategy) {
  for (const ResourceInfo& r : all_resources()) {
    if (!r.converted) continue;
    const ResourceInfo* storage = find_kind(r.group == "events.k8s.io" ? "" : r.group, r.kind);
    ASSERT_NE(storage, nullptr) << r.kind;
    EXPECT_EQ(r.strategy, storage->strategy) << r.group_version() << " " << r.resource;
  }
  EXPECT_EQ(&strategy_of(resource("resource.k8s.io", "v1beta1", "resourceclaims")), &resource_claim_strategy());
}

// PriorityClass is typed: defaulted (preemptionPolicy) and validated on create.
TEST(StrategyRegistry, PriorityClassIsTyped) {
  const ResourceInfo& r = resource("scheduling.k8s.io", "v1", "priorityclasses");
  std::vector<std::string> warnings;
  Json pc = json(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"batch"},"value":5})");
  EXPECT_EQ(r.strategy->validate_create(context(r), pc, warnings), std::nullopt);
  EXPECT_EQ(get_string(pc, {"preemptionPolicy"}), "PreemptLowerPriority");
  Json bad = json(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"b"},"value":5,)"
                  R"("preemptionPolicy":"Sometimes"})");
  auto e = r.strategy->validate_create(context(r), bad, warnings);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->http, 422);
}

TEST(StrategyRegistry, KindsWithoutAStrategyGetTheDefault) {
  ResourceInfo custom;
  custom.group = "example.com";
  custom.version = "v1";
  custom.resource = "widgets";
  custom.kind = "Widget";
  custom.subresources = {"status"};
  const Strategy& s = strategy_of(custom);
  EXPECT_EQ(&s, &default_strategy());
  // Untyped: nothing is validated or changed on create.
  Json obj = json(R"({"metadata":{"name":"w"},"spec":{"anything":1},"status":{"x":1}})");
  std::string before = to_string(obj);
  std::vector<std::string> warnings;
  EXPECT_FALSE(s.prepare_for_create(context(custom), obj, warnings).has_value());
  EXPECT_FALSE(s.validate_create(context(custom), obj, warnings).has_value());
  EXPECT_EQ(to_string(obj), before);
  EXPECT_TRUE(warnings.empty());
  // metadata.name and metadata.namespace only; runtime's default message.
  EXPECT_TRUE(s.selectable_field("metadata.name"));
  EXPECT_TRUE(s.selectable_field("metadata.namespace"));
  EXPECT_FALSE(s.selectable_field("spec.anything"));
  EXPECT_EQ(s.unsupported_field(custom, "spec.anything"),
            R"("spec.anything" is not a known field selector: only "metadata.name", "metadata.namespace")");
  auto columns = s.table_columns();
  ASSERT_EQ(columns.size(), 2u);
  EXPECT_STREQ(columns[0].name, "Name");
  EXPECT_STREQ(columns[1].name, "Age");
  EXPECT_TRUE(s.deletes_collections());
  EXPECT_TRUE(s.categories().empty());
}

TEST(ResourceClaimStrategy, SpecUpdatesKeepTheOldStatus) {
  const ResourceInfo& r = resource("resource.k8s.io", "v1", "resourceclaims");
  const Strategy& s = strategy_of(r);
  EXPECT_TRUE(s.main_resource_resets_status(r));
  Json old = json(R"({"spec":{"devices":{}},"status":{"reservedFor":[{"resource":"pods","name":"p","uid":"u"}]}})");
  Json updated = json(R"({"spec":{"devices":{}},"status":{"reservedFor":[]}})");
  s.prepare_for_update(r, old, updated);
  EXPECT_EQ(to_string(*find(updated, {"status"})), to_string(*find(old, {"status"})));
  // No old status: the request's goes.
  Json fresh = json(R"({"spec":{"devices":{}}})");
  s.prepare_for_update(r, fresh, updated);
  EXPECT_EQ(find(updated, {"status"}), nullptr);
}

TEST(ResourceClaimStrategy, CreateDropsStatusAndReportsItsUnknownFieldsAfterValidation) {
  const ResourceInfo& r = resource("resource.k8s.io", "v1", "resourceclaims");
  const Strategy& s = strategy_of(r);
  Json obj = json(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c"},)"
                  R"("spec":{"devices":{}},"status":{"bogus":1}})");
  std::vector<std::string> late;
  EXPECT_FALSE(s.prepare_for_create(context(r, FieldValidation::kWarn), obj, late).has_value());
  EXPECT_EQ(find(obj, {"status"}), nullptr);
  ASSERT_EQ(late.size(), 1u);
  EXPECT_NE(late[0].find("status.bogus"), std::string::npos) << late[0];
  // Strict: the whole object's decoding error.
  Json strict = json(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c"},)"
                     R"("spec":{"devices":{}},"status":{"bogus":1}})");
  late.clear();
  auto e = s.prepare_for_create(context(r, FieldValidation::kStrict), strict, late);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->http, 400);
  EXPECT_NE(e->message.find("ResourceClaim in version \"v1\" cannot be handled as a ResourceClaim"), std::string::npos)
      << e->message;
}

const char* kTaintRule = R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceTaintRule",
  "metadata":{"name":"gpu-0-maintenance","resourceVersion":"7","creationTimestamp":"2026-01-01T00:00:00Z","generation":1},
  "spec":{"deviceSelector":{"driver":"gpu.nvidia.com","pool":"node-1","device":"gpu-0"},
          "taint":{"key":"example.com/maintenance","effect":"NoSchedule","timeAdded":"2026-01-01T00:00:00Z"}},
  "status":{}})";

TEST(DeviceTaintRuleStrategy, CreateDropsStatusAndStampsTheTaint) {
  const ResourceInfo& r = resource("resource.k8s.io", "v1", "devicetaintrules");
  const Strategy& s = strategy_of(r);
  EXPECT_EQ(&s, &device_taint_rule_strategy());
  Json obj = json(R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceTaintRule",
    "metadata":{"name":"all-gpus","creationTimestamp":"2026-01-02T03:04:05Z"},
    "spec":{"deviceSelector":{},"taint":{"key":"example.com/retired","effect":"NoExecute"}},
    "status":{"conditions":[{"type":"EvictionInProgress","status":"True"}]}})");
  std::vector<std::string> warnings;
  ASSERT_FALSE(s.prepare_for_create(context(r), obj, warnings).has_value());
  ASSERT_FALSE(s.validate_create(context(r), obj, warnings).has_value());
  EXPECT_EQ(get_string(obj, {"spec", "taint", "timeAdded"}), "2026-01-02T03:04:05Z");
  EXPECT_EQ(to_string(*find(obj, {"status"})), "{}");
  EXPECT_TRUE(warnings.empty());
}

TEST(DeviceTaintRuleStrategy, AnEffectChangeRestampsTheTaintUnlessTheClientSetANewTime) {
  const ResourceInfo& r = resource("resource.k8s.io", "v1", "devicetaintrules");
  const Strategy& s = strategy_of(r);
  Json old = json(kTaintRule);
  std::vector<std::string> warnings;
  auto update = [&](const std::string& effect, const std::string& time) {
    Json obj = json(kTaintRule);
    JsonValue* taint = find(obj, {"spec", "taint"});
    set_string(*taint, "effect", effect, obj.GetAllocator());
    set_string(*taint, "timeAdded", time, obj.GetAllocator());
    EXPECT_FALSE(s.validate_update(context(r), old, obj, "", warnings).has_value());
    return get_string(obj, {"spec", "taint", "timeAdded"});
  };
  EXPECT_EQ(update("NoExecute", "2026-01-01T00:00:00Z"), "2026-01-02T03:04:05Z");  // the context's now
  EXPECT_EQ(update("NoExecute", "2026-01-01T12:00:00Z"), "2026-01-01T12:00:00Z");  // the client's own
  EXPECT_EQ(update("NoSchedule", "2026-01-01T00:00:00Z"), "2026-01-01T00:00:00Z");  // effect unchanged
}

TEST(DeviceTaintRuleStrategy, StatusWritesAreValidatedAsConditions) {
  const ResourceInfo& r = resource("resource.k8s.io", "v1", "devicetaintrules");
  const Strategy& s = strategy_of(r);
  Json old = json(kTaintRule);
  Json obj = json(kTaintRule);
  Json status = json(R"({"conditions":[{"type":"EvictionInProgress","status":"Maybe",
    "lastTransitionTime":"2026-01-02T03:04:05Z","reason":"Evicting","message":"1 pod"}]})");
  set_member(obj, "status", JsonValue(status, obj.GetAllocator()), obj.GetAllocator());
  std::vector<std::string> warnings;
  auto err = s.validate_update(context(r), old, obj, "status", warnings);
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->message.find("status.conditions[0].status: Unsupported value: \"Maybe\""), std::string::npos)
      << err->message;
}

TEST(NamespaceStrategy, MainResourceWritesStatusAndCreateLabelsTheName) {
  const ResourceInfo& r = resource("", "v1", "namespaces");
  const Strategy& s = strategy_of(r);
  EXPECT_FALSE(s.main_resource_resets_status(r));
  Json old = json(R"({"status":{"phase":"Active"}})");
  Json updated = json(R"({"status":{"phase":"Terminating"}})");
  s.prepare_for_update(r, old, updated);
  EXPECT_EQ(get_string(updated, {"status", "phase"}), "Terminating");
  Json obj = json(R"({"metadata":{"name":"team-a"}})");
  std::vector<std::string> late;
  EXPECT_FALSE(s.prepare_for_create(context(r), obj, late).has_value());
  EXPECT_EQ(get_string(obj, {"metadata", "labels", "kubernetes.io/metadata.name"}), "team-a");
  EXPECT_EQ(get_string(obj, {"status", "phase"}), "Active");
  EXPECT_FALSE(s.deletes_collections());
}

TEST(PodStrategy, CreateIsPendingWhateverTheClientSent) {
  const ResourceInfo& r = resource("", "v1", "pods");
  Json obj = json(R"({"metadata":{"name":"p"},"status":{"phase":"Running","podIP":"10.0.0.1"}})");
  std::vector<std::string> late;
  EXPECT_FALSE(strategy_of(r).prepare_for_create(context(r), obj, late).has_value());
  EXPECT_EQ(to_string(*find(obj, {"status"})), R"({"phase":"Pending"})");
  EXPECT_EQ(strategy_of(r).categories(), std::vector<std::string>{"all"});
}

TEST(PodStrategy, FieldSelectorsOnNodeNameAndPhase) {
  const ResourceInfo& r = resource("", "v1", "pods");
  const Strategy& s = strategy_of(r);
  EXPECT_TRUE(s.selectable_field("spec.nodeName"));
  EXPECT_TRUE(s.selectable_field("status.phase"));
  EXPECT_TRUE(s.selectable_field("metadata.namespace"));
  EXPECT_FALSE(s.selectable_field("spec.driver"));
  EXPECT_EQ(s.unsupported_field(r, "spec.driver"), "field label not supported: spec.driver");
  Json pod = json(R"({"metadata":{"name":"p"},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}})");
  EXPECT_EQ(s.field_value(pod, "spec.nodeName"), "n1");
  EXPECT_EQ(s.field_value(pod, "status.phase"), "Running");
  Json unbound = json(R"({"metadata":{"name":"q"},"spec":{}})");
  EXPECT_EQ(s.field_value(unbound, "spec.nodeName"), "");

  EXPECT_TRUE(selects(r, "spec.nodeName=n1,status.phase!=Failed", to_string(pod)));
  EXPECT_FALSE(selects(r, "spec.nodeName=n1,status.phase!=Failed", to_string(unbound)));
  auto bad = Selector::parse_fields("spec.driver=x", r);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(), "field label not supported: spec.driver");
}

TEST(NodeStrategy, UnschedulableReadsAsABoolean) {
  const ResourceInfo& r = resource("", "v1", "nodes");
  const Strategy& s = strategy_of(r);
  EXPECT_EQ(s.field_value(json(R"({"spec":{}})"), "spec.unschedulable"), "false");
  EXPECT_EQ(s.field_value(json(R"({"spec":{"unschedulable":true}})"), "spec.unschedulable"), "true");
  EXPECT_TRUE(selects(r, "spec.unschedulable=false", R"({"metadata":{"name":"n"}})"));
}

TEST(ResourceSliceStrategy, SelectsOnNodeAndDriverButNotNamespace) {
  const ResourceInfo& r = resource("resource.k8s.io", "v1beta2", "resourceslices");
  const Strategy& s = strategy_of(r);
  EXPECT_TRUE(s.selectable_field("spec.driver"));
  EXPECT_FALSE(s.selectable_field("metadata.namespace"));
  EXPECT_EQ(s.unsupported_field(r, "metadata.namespace"),
            "field label not supported for resource.k8s.io/v1beta2, Kind=ResourceSlice: metadata.namespace");
}

TEST(EventStrategy, EventsV1LabelsMapOntoTheStoredCoreForm) {
  const ResourceInfo& v1 = resource("events.k8s.io", "v1", "events");
  const Strategy& s = strategy_of(v1);
  auto label = s.field_label(v1, "regarding.name");
  ASSERT_TRUE(label.has_value());
  EXPECT_EQ(*label, "involvedObject.name");
  auto unknown = s.field_label(v1, "involvedObject.name");  // the core name is not the v1 one
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().message(), "field label not supported: involvedObject.name");
  // source falls back to the reporting controller of events written through events.k8s.io.
  EXPECT_EQ(s.field_value(json(R"({"reportingComponent":"kubelet"})"), "source"), "kubelet");
  EXPECT_TRUE(selects(v1, "regarding.name=p", R"({"involvedObject":{"name":"p"}})"));
}

TEST(LeaseStrategy, HolderColumn) {
  const ResourceInfo& r = resource("coordination.k8s.io", "v1", "leases");
  const Strategy& s = strategy_of(r);
  auto columns = s.table_columns();
  ASSERT_EQ(columns.size(), 3u);
  EXPECT_STREQ(columns[1].name, "Holder");
  auto cells = s.table_cells(json(R"({"metadata":{"name":"l"},"spec":{}})"), 0);
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_EQ(std::get<std::string>(cells[1]), "<none>");
}

}  // namespace
}  // namespace draplane::server
