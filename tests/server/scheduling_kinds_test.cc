// scheduling.k8s.io PriorityClass with priority admission (the pure decisions,
// then through the ApiServer: built-in classes at bootstrap, pods resolved on
// create, one default, typed validation), KAI Scheduler's Queue, and the
// v1beta1 Workload and PodGroup (typed, validated, PodGroup status only through
// /status, its table; the Pod's immutable spec.schedulingGroup).
#include "server/priority_admission.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "server/api_server.h"
#include "store/memory_store.h"

namespace draplane::server {
namespace {

Json pod_json(const std::string& spec_members) {
  auto j = parse_json(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{)" + spec_members +
                      R"("containers":[{"name":"main","image":"busybox"}]}})");
  EXPECT_TRUE(j.has_value());
  return std::move(j).value();
}

const std::vector<PriorityClassInfo> kClasses = {
    {"high", 1000, false, "PreemptLowerPriority"},
    {"polite", 500, false, "Never"},
    {"low-default", -10, true, ""},  // stored before defaulting: PreemptLowerPriority
};

TEST(PriorityAdmission, NamedClassSetsPriorityAndPolicy) {
  Json p = pod_json(R"("priorityClassName":"polite",)");
  EXPECT_EQ(admit_pod_priority(kClasses, p), std::nullopt);
  EXPECT_EQ(find(p, {"spec", "priority"})->GetInt(), 500);
  EXPECT_EQ(get_string(p, {"spec", "preemptionPolicy"}), "Never");
  EXPECT_EQ(get_string(p, {"spec", "priorityClassName"}), "polite");
}

TEST(PriorityAdmission, DefaultClassWhenNoneIsNamed) {
  Json p = pod_json("");
  EXPECT_EQ(admit_pod_priority(kClasses, p), std::nullopt);
  EXPECT_EQ(get_string(p, {"spec", "priorityClassName"}), "low-default");
  EXPECT_EQ(find(p, {"spec", "priority"})->GetInt(), -10);
  EXPECT_EQ(get_string(p, {"spec", "preemptionPolicy"}), "PreemptLowerPriority");
}

TEST(PriorityAdmission, ZeroWithoutADefault) {
  Json p = pod_json("");
  EXPECT_EQ(admit_pod_priority({kClasses[0]}, p), std::nullopt);
  EXPECT_EQ(find(p, {"spec", "priorityClassName"}), nullptr);
  EXPECT_EQ(find(p, {"spec", "priority"})->GetInt(), 0);
  EXPECT_EQ(get_string(p, {"spec", "preemptionPolicy"}), "PreemptLowerPriority");
}

TEST(PriorityAdmission, LowestDefaultWinsARace) {
  std::vector<PriorityClassInfo> classes = kClasses;
  classes.push_back({"other-default", -20, true, "Never"});
  Json p = pod_json("");
  EXPECT_EQ(admit_pod_priority(classes, p), std::nullopt);
  EXPECT_EQ(get_string(p, {"spec", "priorityClassName"}), "other-default");
}

TEST(PriorityAdmission, Refusals) {
  Json p = pod_json(R"("priorityClassName":"missing",)");
  EXPECT_EQ(admit_pod_priority(kClasses, p), "no PriorityClass with name missing was found");
  p = pod_json(R"("priorityClassName":"high","priority":7,)");
  EXPECT_EQ(admit_pod_priority(kClasses, p),
            "the integer value of priority (7) must not be provided in pod spec; priority admission controller "
            "computed 1000 from the given PriorityClass name");
  p = pod_json(R"("priorityClassName":"high","priority":1000,"preemptionPolicy":"Never",)");
  EXPECT_EQ(admit_pod_priority(kClasses, p),
            "the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission "
            "controller computed PreemptLowerPriority from the given PriorityClass name");
  p = pod_json(R"("priorityClassName":"high","priority":1000,"preemptionPolicy":"PreemptLowerPriority",)");
  EXPECT_EQ(admit_pod_priority(kClasses, p), std::nullopt);
}

TEST(PriorityAdmission, OnlyOneDefault) {
  auto pc = parse_json(R"({"metadata":{"name":"second"},"value":1,"globalDefault":true})");
  ASSERT_TRUE(pc.has_value());
  EXPECT_EQ(admit_priority_class(kClasses, *pc, false),
            "PriorityClass low-default is already marked as default. Only one default can exist");
  EXPECT_EQ(admit_priority_class({kClasses[0]}, *pc, false), std::nullopt);
  auto same = parse_json(R"({"metadata":{"name":"low-default"},"value":-10,"globalDefault":true})");
  EXPECT_EQ(admit_priority_class(kClasses, *same, true), std::nullopt);  // the default updating itself
}

class SchedulingKindsTest : public ::testing::Test {
 protected:
  SchedulingKindsTest() {
    store_ = store::new_memory_store();
    ApiServerOptions o;
    o.clock = std::make_shared<common::FakeClock>();
    o.new_uid = [this] { return "uid-" + std::to_string(++uids_); };
    api_ = std::make_unique<ApiServer>(*store_, o);
    EXPECT_TRUE(api_->bootstrap().ok());
  }
  Response call(const std::string& method, const std::string& path, const std::string& body = "",
                const std::string& accept = "application/json") {
    Request r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.content_type = method == "PATCH" ? "application/merge-patch+json" : "application/json";
    r.accept = accept;
    r.identity = {"admin", true, ""};
    return api_->handle(r).response;
  }
  static constexpr const char* kClassesPath = "/apis/scheduling.k8s.io/v1/priorityclasses";
  static constexpr const char* kPods = "/api/v1/namespaces/default/pods";
  int uids_ = 0;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<ApiServer> api_;
};

TEST_F(SchedulingKindsTest, BuiltInClassesExistAfterBootstrap) {
  Response r = call("GET", std::string(kClassesPath) + "/system-node-critical");
  ASSERT_EQ(r.code, 200) << r.body;
  auto o = parse_json(r.body);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(find(*o, {"value"})->GetInt(), 2000001000);
  EXPECT_EQ(get_string(*o, {"preemptionPolicy"}), "PreemptLowerPriority");
  EXPECT_EQ(call("GET", std::string(kClassesPath) + "/system-cluster-critical").code, 200);
  EXPECT_TRUE(api_->bootstrap().ok());  // a restart keeps them
}

TEST_F(SchedulingKindsTest, PodsGetTheirClassPriority) {
  ASSERT_EQ(call("POST", kClassesPath,
                 R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"inference"},)"
                 R"("value":100000})")
                .code,
            201);
  Response r = call("POST", kPods,
                    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"serve"},"spec":{"priorityClassName":)"
                    R"("inference","containers":[{"name":"main","image":"busybox"}]}})");
  ASSERT_EQ(r.code, 201) << r.body;
  auto o = parse_json(r.body);
  EXPECT_EQ(find(*o, {"spec", "priority"})->GetInt(), 100000);
  EXPECT_EQ(get_string(*o, {"spec", "preemptionPolicy"}), "PreemptLowerPriority");

  r = call("POST", kPods,
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"lost"},"spec":{"priorityClassName":"nope",)"
           R"("containers":[{"name":"main","image":"busybox"}]}})");
  EXPECT_EQ(r.code, 403);
  EXPECT_NE(r.body.find(R"(pods \"lost\" is forbidden: no PriorityClass with name nope was found)"), std::string::npos)
      << r.body;
}

// Pods read the classes from the server's watch-fed cache: a default class
// created or deleted reaches the pods created after the watch delivered it.
TEST_F(SchedulingKindsTest, ADefaultClassComesAndGoesThroughTheCache) {
  int n = 0;
  auto priority_of_new_pod = [&]() -> int {
    Response r = call("POST", kPods,
                      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p)" + std::to_string(++n) +
                          R"("},"spec":{"containers":[{"name":"main","image":"busybox"}]}})");
    EXPECT_EQ(r.code, 201) << r.body;
    auto o = parse_json(r.body);
    const JsonValue* p = o.has_value() ? find(*o, {"spec", "priority"}) : nullptr;
    return p != nullptr && p->IsInt() ? p->GetInt() : -1;
  };
  auto eventually = [&](int want) {
    for (int i = 0; i < 500; ++i) {
      if (priority_of_new_pod() == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  EXPECT_EQ(priority_of_new_pod(), 0);
  ASSERT_EQ(call("POST", kClassesPath,
                 R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"batch"},)"
                 R"("value":7,"globalDefault":true})")
                .code,
            201);
  EXPECT_TRUE(eventually(7));
  ASSERT_EQ(call("DELETE", std::string(kClassesPath) + "/batch").code, 200);
  EXPECT_TRUE(eventually(0));
}

TEST_F(SchedulingKindsTest, ValidationAndOneDefault) {
  Response r = call("POST", kClassesPath,
                    R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"system-x"},)"
                    R"("value":1})");
  EXPECT_EQ(r.code, 422);
  EXPECT_NE(r.body.find("reserved for system use only"), std::string::npos) << r.body;
  ASSERT_EQ(call("POST", kClassesPath,
                 R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"d1"},)"
                 R"("value":1,"globalDefault":true})")
                .code,
            201);
  r = call("POST", kClassesPath,
           R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"d2"},)"
           R"("value":2,"globalDefault":true})");
  EXPECT_EQ(r.code, 403);
  EXPECT_NE(r.body.find("PriorityClass d1 is already marked as default. Only one default can exist"),
            std::string::npos)
      << r.body;
  r = call("PATCH", std::string(kClassesPath) + "/d1", R"({"value":5})");
  EXPECT_EQ(r.code, 422);
  EXPECT_NE(r.body.find("value: Forbidden: may not be changed in an update."), std::string::npos) << r.body;
}

// KAI's own example manifests (docs/queues) are accepted as they are.
constexpr const char* kResearchTeam = R"({"apiVersion":"scheduling.run.ai/v2","kind":"Queue",
  "metadata":{"name":"research-team"},"spec":{"displayName":"Research Team",
  "resources":{"cpu":{"quota":1000,"limit":2000},"gpu":{"quota":1,"limit":2}}}})";
constexpr const char* kMlTeam = R"({"apiVersion":"scheduling.run.ai/v2","kind":"Queue",
  "metadata":{"name":"ml-team"},"spec":{"displayName":"ML Team","parentQueue":"research-team","priority":200,
  "resources":{"cpu":{"quota":500,"overQuotaWeight":2},"gpu":{"quota":1,"overQuotaWeight":1}}}})";
constexpr const char* kQueues = "/apis/scheduling.run.ai/v2/queues";

TEST_F(SchedulingKindsTest, QueuesAreServedAsKaiServesThem) {
  ASSERT_EQ(call("POST", kQueues, kResearchTeam).code, 201);
  Response r = call("POST", kQueues, kMlTeam);
  ASSERT_EQ(r.code, 201) << r.body;
  auto o = parse_json(r.body);
  EXPECT_EQ(find(*o, {"spec", "resources", "cpu", "overQuotaWeight"})->GetInt(), 2);
  EXPECT_EQ(find(*o, {"metadata", "namespace"}), nullptr);  // cluster-scoped

  // Status only through /status: the queue controller's counts.
  r = call("PUT", std::string(kQueues) + "/research-team/status",
           R"({"apiVersion":"scheduling.run.ai/v2","kind":"Queue","metadata":{"name":"research-team"},)"
           R"("spec":{"resources":{"gpu":{"quota":1}}},)"
           R"("status":{"childQueues":["ml-team"],"allocated":{"nvidia.com/gpu":"1500m","cpu":"500m"}}})");
  ASSERT_EQ(r.code, 200) << r.body;
  o = parse_json(r.body);
  EXPECT_EQ(get_string(*o, {"spec", "displayName"}), "Research Team");  // /status leaves the spec
  EXPECT_EQ(get_string(*o, {"status", "allocated", "nvidia.com/gpu"}), "1500m");

  r = call("GET", kQueues, "", "application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_EQ(r.code, 200) << r.body;
  auto t = parse_json(r.body);
  std::vector<std::string> cols;
  for (const auto& c : find(*t, {"columnDefinitions"})->GetArray()) cols.push_back(get_string(c, {"name"}));
  EXPECT_EQ(cols, (std::vector<std::string>{"Name", "Priority", "Parent", "Children", "DisplayName", "GPU Allocated",
                                            "GPU Fair Share", "GPU Requested"}));
  const JsonValue& ml = (*find(*t, {"rows"}))[0]["cells"];
  EXPECT_EQ(std::string(ml[0].GetString()), "ml-team");
  EXPECT_EQ(std::string(ml[1].GetString()), "200");
  EXPECT_EQ(std::string(ml[2].GetString()), "research-team");
  EXPECT_EQ(std::string(ml[3].GetString()), "<none>");
  const JsonValue& research = (*find(*t, {"rows"}))[1]["cells"];
  EXPECT_EQ(std::string(research[1].GetString()), "<none>");
  EXPECT_EQ(std::string(research[3].GetString()), R"(["ml-team"])");
  EXPECT_EQ(std::string(research[4].GetString()), "Research Team");
  EXPECT_EQ(std::string(research[5].GetString()), "1500m");
  EXPECT_EQ(std::string(research[6].GetString()), "<none>");
}

TEST_F(SchedulingKindsTest, QueueValidation) {
  Response r = call("POST", kQueues, R"({"apiVersion":"scheduling.run.ai/v2","kind":"Queue","metadata":{"name":"q"},)"
                                     R"("spec":{"displayName":"no resources"}})");
  EXPECT_EQ(r.code, 403);
  EXPECT_NE(r.body.find(R"(admission webhook \"queue-validation.kai.scheduler\" denied the request: resources must be specified)"),
            std::string::npos)
      << r.body;
  r = call("POST", kQueues,
           R"({"apiVersion":"scheduling.run.ai/v2","kind":"Queue","metadata":{"name":"q"},)"
           R"("spec":{"priority":"high","resources":{"gpu":{"quota":"2"}}}})");
  EXPECT_EQ(r.code, 422);
  EXPECT_NE(r.body.find(R"(spec.priority: Invalid value: \"string\": spec.priority in body must be of type integer: \"string\")"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find(R"(spec.resources.gpu.quota in body must be of type number: \"string\")"), std::string::npos)
      << r.body;
  // Fractions of a GPU are numbers.
  EXPECT_EQ(call("POST", kQueues,
                 R"({"apiVersion":"scheduling.run.ai/v2","kind":"Queue","metadata":{"name":"q"},)"
                 R"("spec":{"resources":{"gpu":{"quota":0.5,"limit":-1,"overQuotaWeight":1}}}})")
                .code,
            201);
}

// ---------------------------------------------------------------- Workload, PodGroup

constexpr const char* kWorkloads = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/workloads";
constexpr const char* kPodGroups = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups";

constexpr const char* kWorkload =
    R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"Workload","metadata":{"name":"train"},)"
    R"("spec":{"controllerRef":{"apiGroup":"batch","kind":"Job","name":"train"},)"
    R"("podGroupTemplates":[{"name":"workers","schedulingPolicy":{"gang":{"minCount":8}}}]}})";
constexpr const char* kPodGroup =
    R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"train-workers"},)"
    R"("spec":{"workloadRef":{"workloadName":"train","templateName":"workers"},)"
    R"("schedulingPolicy":{"gang":{"minCount":8}}},)"
    R"("status":{"conditions":[{"type":"PodGroupInitiallyScheduled","status":"True","reason":"Scheduled",)"
    R"("message":"set by a client","lastTransitionTime":"2026-12-07T00:00:00Z"}]}})";

TEST_F(SchedulingKindsTest, WorkloadAndPodGroupAreServed) {
  Response r = call("POST", kWorkloads, kWorkload);
  ASSERT_EQ(r.code, 201) << r.body;
  r = call("POST", kPodGroups, kPodGroup);
  ASSERT_EQ(r.code, 201) << r.body;
  auto o = parse_json(r.body);
  EXPECT_EQ(find(*o, {"status", "conditions"}), nullptr) << "status is dropped on create: " << r.body;
  EXPECT_NE(find(*o, {"spec", "disruptionMode", "single"}), nullptr) << "disruptionMode defaults to single";

  // The scheduler's condition, through /status; the spec stays.
  r = call("PUT", std::string(kPodGroups) + "/train-workers/status",
           R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"train-workers"},)"
           R"("spec":{"schedulingPolicy":{"basic":{}}},)"
           R"("status":{"conditions":[{"type":"PodGroupInitiallyScheduled","status":"False","reason":"Unschedulable",)"
           R"("message":"needs 8 devices of class gpu.nvidia.com; 7 free","lastTransitionTime":"2026-12-07T00:00:00Z"}]}})");
  ASSERT_EQ(r.code, 200) << r.body;
  o = parse_json(r.body);
  EXPECT_NE(find(*o, {"spec", "schedulingPolicy", "gang"}), nullptr) << r.body;

  r = call("GET", kPodGroups, "", "application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_EQ(r.code, 200) << r.body;
  auto t = parse_json(r.body);
  std::vector<std::string> cols;
  for (const auto& c : find(*t, {"columnDefinitions"})->GetArray()) cols.push_back(get_string(c, {"name"}));
  EXPECT_EQ(cols, (std::vector<std::string>{"Name", "Policy", "Min-Count", "Scheduled", "Age", "Reason", "Message"}));
  const JsonValue& row = (*find(*t, {"rows"}))[0]["cells"];
  EXPECT_EQ(std::string(row[1].GetString()), "Gang");
  EXPECT_EQ(std::string(row[2].GetString()), "8");
  EXPECT_EQ(std::string(row[3].GetString()), "False");
  EXPECT_EQ(std::string(row[5].GetString()), "Unschedulable");
}

TEST_F(SchedulingKindsTest, ValidationWithFieldPaths) {
  Response r = call("POST", kPodGroups,
                    R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"g"},)"
                    R"("spec":{"schedulingPolicy":{"basic":{},"gang":{"minCount":0}}}})");
  EXPECT_EQ(r.code, 422);
  EXPECT_NE(r.body.find("spec.schedulingPolicy: Invalid value: \\\"{`basic`, `gang`}\\\": must specify exactly one of: "
                        "`basic`, `gang`"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("spec.schedulingPolicy.gang.minCount: Required value"), std::string::npos) << r.body;
  // Immutable on update: workloadRef; minCount may change.
  ASSERT_EQ(call("POST", kPodGroups, kPodGroup).code, 201);
  r = call("PATCH", std::string(kPodGroups) + "/train-workers", R"({"spec":{"schedulingPolicy":{"gang":{"minCount":4}}}})");
  EXPECT_EQ(r.code, 200) << r.body;
  r = call("PATCH", std::string(kPodGroups) + "/train-workers", R"({"spec":{"workloadRef":{"templateName":"other"}}})");
  EXPECT_EQ(r.code, 422);
  EXPECT_NE(r.body.find("spec.workloadRef: Invalid value: null: field is immutable"), std::string::npos) << r.body;
}

TEST_F(SchedulingKindsTest, PodSchedulingGroupIsImmutable) {
  Response r = call("POST", kPods,
                    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"w0"},"spec":{)"
                    R"("schedulingGroup":{"podGroupName":"train-workers"},)"
                    R"("containers":[{"name":"main","image":"busybox"}]}})");
  ASSERT_EQ(r.code, 201) << r.body;
  auto o = parse_json(r.body);
  EXPECT_EQ(get_string(*o, {"spec", "schedulingGroup", "podGroupName"}), "train-workers");
  r = call("PATCH", std::string(kPods) + "/w0", R"({"spec":{"schedulingGroup":{"podGroupName":"other"}}})");
  EXPECT_EQ(r.code, 422);
  EXPECT_NE(r.body.find("spec.schedulingGroup: Invalid value: null: field is immutable"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace draplane::server
