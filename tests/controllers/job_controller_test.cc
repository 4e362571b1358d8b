#include "controllers/job_controller.h"

#include <gtest/gtest.h>

#include "api/codec.h"
#include "api/validation.h"
#include "controllers/job_logic.h"
#include "fake_api.h"

namespace draplane::controllers {
namespace {

using testing::FakeApi;
const std::string kKey = "default/j";

std::string job_json(const std::string& spec, const std::string& annotations = "{}") {
  return R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"default","annotations":)" +
         annotations + R"(},"spec":{"template":{"metadata":{"labels":{"app":"t"}},"spec":{"restartPolicy":"Never",
         "containers":[{"name":"main","image":"busybox","command":["true"]}]}},)" + spec + "}}";
}

// A controller without workers: the test drives sync_job (with a fake clock).
struct Harness {
  FakeApi api;
  std::shared_ptr<common::FakeClock> clock = std::make_shared<common::FakeClock>();
  std::unique_ptr<JobController> c;

  explicit Harness(std::chrono::milliseconds backoff = std::chrono::milliseconds(0)) {
    JobControllerOptions o;
    o.workers = 0;
    o.clock = clock;
    o.pod_failure_backoff = backoff;
    c = std::make_unique<JobController>(api, o);
  }
  void start() {
    c->start();
    ASSERT_TRUE(c->wait_synced(10000));
  }
  // Syncs until pred() holds (the caches catch up with the controller's writes).
  template <typename Pred>
  bool sync_until(Pred pred) {
    for (int i = 0; i < 500; ++i) {
      auto r = c->sync_job(kKey);
      if (pred()) return true;
      api.wait_for([] { return false; }, 10);
    }
    return false;
  }
  api::Job job() { return *api::decode_as<api::Job>(api.object("jobs", "default", "j").value_or("{}")); }
  std::vector<api::Pod> pods() {
    std::vector<api::Pod> out;
    for (const auto& j : api.objects("pods")) out.push_back(*api::decode_as<api::Pod>(j));
    return out;
  }
  std::vector<api::Pod> active_pods() {
    std::vector<api::Pod> out;
    for (auto& p : pods()) {
      if (p.status.phase != "Succeeded" && p.status.phase != "Failed" && p.metadata.deletionTimestamp.empty()) {
        out.push_back(p);
      }
    }
    return out;
  }
  // The node agent's report of a finished pod: phase and the main container's exit code.
  void finish_pod(const api::Pod& p, int exit_code) {
    api::Pod pod = *api::decode_as<api::Pod>(*api.object("pods", "default", p.metadata.name));
    pod.status.phase = exit_code == 0 ? "Succeeded" : "Failed";
    pod.status.containerStatuses.text = R"([{"name":"main","state":{"terminated":{"exitCode":)" +
                                        std::to_string(exit_code) + "}}}]";
    auto r = api.request("PUT", "/api/v1/namespaces/default/pods/" + p.metadata.name + "/status",
                         api::to_json(api::Object(pod)), "application/json");
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 200) << r->body;
  }
  std::string condition(const std::string& type) {
    for (const auto& c : job().status.conditions) {
      if (c.type == type && c.status == "True") return c.reason;
    }
    return "";
  }
};

TEST(JobLogic, IndexSetsRoundTrip) {
  EXPECT_EQ(parse_indexes("0-2,5,7-8", 8), (std::set<int>{0, 1, 2, 5, 7}));
  EXPECT_EQ(format_indexes({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(format_indexes({}), "");
  EXPECT_EQ(parse_indexes("x,3", 5), (std::set<int>{3}));
}

TEST(JobLogic, BackoffDoublesUpToTheCap) {
  using ms = std::chrono::milliseconds;
  EXPECT_EQ(pod_failure_backoff(0, ms(10000), ms(360000)), ms(0));
  EXPECT_EQ(pod_failure_backoff(1, ms(10000), ms(360000)), ms(10000));
  EXPECT_EQ(pod_failure_backoff(3, ms(10000), ms(360000)), ms(40000));
  EXPECT_EQ(pod_failure_backoff(20, ms(10000), ms(360000)), ms(360000));
}

TEST(JobController, IndexedJobRunsEachIndexOnceAndCompletes) {
  Harness h;
  h.api.put_object("jobs", job_json(R"("completions":3,"parallelism":2,"completionMode":"Indexed")",
                                    R"({"draplane.io/gang":"g1","draplane.io/gang-min-member":"2"})"));
  h.start();
  ASSERT_TRUE(h.sync_until([&] { return h.pods().size() == 2; }));
  std::set<std::string> indexes;
  for (const auto& p : h.pods()) {
    std::string i = p.metadata.annotations.at(kJobCompletionIndex);
    indexes.insert(i);
    EXPECT_EQ(p.metadata.labels.at(kJobCompletionIndex), i);
    EXPECT_EQ(p.metadata.generateName, "j-" + i + "-");
    EXPECT_EQ(FakeApi::field(api::to_json(api::Object(p)), {"spec", "hostname"}), "j-" + i);
    EXPECT_EQ(p.metadata.labels.at(kJobName), "j");
    EXPECT_EQ(p.metadata.annotations.at(kGangAnnotation), "g1");
    EXPECT_EQ(p.metadata.annotations.at(kGangMinMemberAnnotation), "2");
    EXPECT_EQ(p.metadata.finalizers, std::vector<std::string>{kJobTrackingFinalizer});
    ASSERT_EQ(p.metadata.ownerReferences.size(), 1u);
    EXPECT_EQ(p.metadata.ownerReferences[0].kind, "Job");
    ASSERT_EQ(p.spec.containers[0].env.size(), 1u);
    EXPECT_EQ(p.spec.containers[0].env[0].name, "JOB_COMPLETION_INDEX");
    EXPECT_NE(p.spec.containers[0].env[0].valueFrom.text.find("job-completion-index"), std::string::npos);
  }
  EXPECT_EQ(indexes, (std::set<std::string>{"0", "1"}));
  EXPECT_TRUE(h.sync_until([&] { return h.job().status.active == 2 && !h.job().status.startTime.empty(); }));
  for (const auto& p : h.pods()) h.finish_pod(p, 0);
  // The finished pods are counted in steps (uncounted, finalizer removed, counted):
  // wait for the status, not only for the replacement pod.
  ASSERT_TRUE(h.sync_until([&] {
    api::Job j = h.job();
    return h.active_pods().size() == 1 && j.status.succeeded == 2 && j.status.completedIndexes == "0-1";
  }));
  EXPECT_EQ(h.active_pods()[0].metadata.annotations.at(kJobCompletionIndex), "2");
  EXPECT_EQ(h.job().status.completedIndexes, "0-1");
  EXPECT_EQ(h.job().status.succeeded, 2);
  h.finish_pod(h.active_pods()[0], 0);
  ASSERT_TRUE(h.sync_until([&] { return h.condition("Complete") == "CompletionsReached"; }));
  api::Job j = h.job();
  EXPECT_EQ(h.condition("SuccessCriteriaMet"), "CompletionsReached");
  EXPECT_EQ(j.status.completedIndexes, "0-2");
  EXPECT_EQ(j.status.succeeded, 3);
  EXPECT_EQ(j.status.active, 0);
  EXPECT_FALSE(j.status.completionTime.empty());
  EXPECT_EQ(h.pods().size(), 3u);
  for (const auto& p : h.pods()) EXPECT_TRUE(p.metadata.finalizers.empty()) << p.metadata.name;
}

TEST(JobController, SchedulingGangMakesWorkloadAndPodGroupBeforeThePods) {
  Harness h;
  h.api.put_object("jobs", job_json(R"("completions":3,"parallelism":3,"completionMode":"Indexed",
                                       "scheduling":{"schedulingPolicy":{"gang":{}}})"));
  h.start();
  ASSERT_TRUE(h.sync_until([&] { return h.pods().size() == 3; }));
  auto w = api::decode_as<api::Workload>(h.api.object("workloads", "default", "j").value_or("{}"));
  ASSERT_TRUE(w.has_value()) << w.error().message();
  EXPECT_EQ(w->spec.controllerRef, (api::TypedLocalObjectReference{"batch", "Job", "j"}));
  ASSERT_EQ(w->spec.podGroupTemplates.size(), 1u);
  EXPECT_EQ(w->spec.podGroupTemplates[0].schedulingPolicy.gang, api::GangSchedulingPolicy{3}) << "parallelism";
  auto g = api::decode_as<api::PodGroup>(h.api.object("podgroups", "default", "j").value_or("{}"));
  ASSERT_TRUE(g.has_value()) << g.error().message();
  EXPECT_EQ(g->spec.workloadRef, (api::WorkloadReference{"j", kJobPodGroupTemplate}));
  EXPECT_EQ(g->spec.schedulingPolicy.gang, api::GangSchedulingPolicy{3});
  ASSERT_EQ(g->metadata.ownerReferences.size(), 1u);
  EXPECT_EQ(g->metadata.ownerReferences[0].kind, "Job");
  EXPECT_TRUE(api::validate(api::Object(*w)).empty());
  EXPECT_TRUE(api::validate(api::Object(*g)).empty());
  for (const auto& p : h.pods()) {
    ASSERT_TRUE(p.spec.schedulingGroup) << p.metadata.name;
    EXPECT_EQ(p.spec.schedulingGroup->podGroupName, "j");
  }
  // Workload, then PodGroup, then the pods.
  std::vector<std::string> posts;
  for (const auto& r : h.api.requests()) {
    if (r.rfind("POST ", 0) == 0) posts.push_back(r);
  }
  ASSERT_GE(posts.size(), 3u);
  EXPECT_NE(posts[0].find("/workloads"), std::string::npos) << posts[0];
  EXPECT_NE(posts[1].find("/podgroups"), std::string::npos) << posts[1];
}

TEST(JobController, PodGroupOfAnotherOwnerIsNotAdopted) {
  Harness h;
  // A PodGroup named like the Job but not controlled by it (a user's, or the
  // one of a deleted Job of that name): its pods must not join that gang.
  h.api.put_object("podgroups", R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup",
      "metadata":{"name":"j","namespace":"default"},
      "spec":{"schedulingPolicy":{"gang":{"minCount":2}}}})");
  h.api.put_object("jobs", job_json(R"("completions":2,"parallelism":2,
                                       "scheduling":{"schedulingPolicy":{"gang":{}}})"));
  h.start();
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(h.c->sync_job(kKey).has_value());
  EXPECT_TRUE(h.pods().empty());
  // Events are recorded in the background.
  EXPECT_TRUE(h.api.wait_for([&] {
    for (const auto& e : h.api.objects("events")) {
      if (e.find("FailedCreate") != std::string::npos && e.find("not controlled by this Job") != std::string::npos) {
        return true;
      }
    }
    return false;
  }));
}

TEST(JobController, ParallelismChangeFollowsIntoTheGangMinCount) {
  Harness h;
  h.api.put_object("jobs", job_json(R"("completions":4,"parallelism":2,
                                       "scheduling":{"schedulingPolicy":{"gang":{}}})"));
  h.start();
  ASSERT_TRUE(h.sync_until([&] { return h.pods().size() == 2; }));
  api::Job j = h.job();
  j.spec.parallelism = 4;
  auto r = h.api.request("PUT", "/apis/batch/v1/namespaces/default/jobs/j", api::to_json(api::Object(j)), "application/json");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  auto min_count = [&](const std::string& resource) -> int32_t {
    auto body = h.api.object(resource, "default", "j").value_or("{}");
    if (resource == "podgroups") {
      auto g = api::decode_as<api::PodGroup>(body);
      return g && g->spec.schedulingPolicy.gang ? g->spec.schedulingPolicy.gang->minCount : -1;
    }
    auto w = api::decode_as<api::Workload>(body);
    return w && !w->spec.podGroupTemplates.empty() && w->spec.podGroupTemplates[0].schedulingPolicy.gang
               ? w->spec.podGroupTemplates[0].schedulingPolicy.gang->minCount
               : -1;
  };
  ASSERT_TRUE(h.sync_until([&] { return min_count("podgroups") == 4; }));
  EXPECT_EQ(min_count("workloads"), 4);
}

TEST(JobController, JobWithoutSchedulingMakesNoPodGroup) {
  Harness h;
  h.api.put_object("jobs", job_json(R"("completions":1,"parallelism":1)"));
  h.start();
  ASSERT_TRUE(h.sync_until([&] { return h.pods().size() == 1; }));
  EXPECT_FALSE(h.pods()[0].spec.schedulingGroup);
  EXPECT_TRUE(h.api.objects("podgroups").empty());
}

TEST(JobController, BackoffLimitFailsTheJobAfterLimitPlusOneFailures) {
  Harness h;
  h.api.put_object("jobs", job_json(R"("completions":1,"parallelism":1,"backoffLimit":1)"));
  h.start();
  ASSERT_TRUE(h.sync_until([&] { return h.pods().size() == 1; }));
  h.finish_pod(h.pods()[0], 1);
  // The replacement may be created before the failure is counted (in steps).
  ASSERT_TRUE(h.sync_until([&] { return h.active_pods().size() == 1 && h.job().status.failed == 1; }));
  EXPECT_EQ(h.condition("Failed"), "");
  h.finish_pod(h.active_pods()[0], 1);
  ASSERT_TRUE(h.sync_until([&] { return h.condition("Failed") == "BackoffLimitExceeded"; }));
  EXPECT_EQ(h.condition("FailureTarget"), "BackoffLimitExceeded");
  EXPECT_EQ(h.job().status.failed, 2);
  EXPECT_EQ(h.pods().size(), 2u);  // no third attempt
}

TEST(JobController, FailedPodIsReplacedOnlyAfterTheBackoff) {
  Harness h(std::chrono::hours(1));
  h.api.put_object("jobs", job_json(R"("completions":1,"parallelism":1,"backoffLimit":3)"));
  h.start();
  ASSERT_TRUE(h.sync_until([&] { return h.pods().size() == 1; }));
  h.finish_pod(h.pods()[0], 1);
  ASSERT_TRUE(h.sync_until([&] { return h.job().status.failed == 1; }));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(h.c->sync_job(kKey).has_value());
  EXPECT_EQ(h.pods().size(), 1u);
  h.clock->advance(std::chrono::hours(1));
  EXPECT_TRUE(h.sync_until([&] { return h.active_pods().size() == 1; }));
}

TEST(JobController, PodFailurePolicyFailJobOnExitCode) {
  Harness h;
  h.api.put_object("jobs", job_json(R"("completions":1,"backoffLimit":6,"podFailurePolicy":{"rules":[
      {"action":"Ignore","onExitCodes":{"operator":"In","values":[3]}},
      {"action":"FailJob","onExitCodes":{"containerName":"main","operator":"In","values":[42]}}]})"));
  h.start();
  ASSERT_TRUE(h.sync_until([&] { return h.pods().size() == 1; }));
  h.finish_pod(h.pods()[0], 3);  // ignored: replaced, not counted
  ASSERT_TRUE(h.sync_until([&] { return h.active_pods().size() == 1; }));
  EXPECT_EQ(h.job().status.failed, 0);
  std::string name = h.active_pods()[0].metadata.name;
  h.finish_pod(h.active_pods()[0], 42);
  ASSERT_TRUE(h.sync_until([&] { return h.condition("Failed") == "PodFailurePolicy"; }));
  for (const auto& c : h.job().status.conditions) {
    if (c.type == "Failed") {
      EXPECT_EQ(c.message, "Container main for pod default/" + name +
                               " failed with exit code 42 matching FailJob rule at index 1");
    }
  }
  EXPECT_EQ(h.job().status.failed, 1);
}

TEST(JobController, PodFailurePolicyNotInCountsOtherCodes) {
  api::Job job = *api::decode_as<api::Job>(job_json(R"("podFailurePolicy":{"rules":[
      {"action":"FailJob","onExitCodes":{"operator":"NotIn","values":[1,2]}},
      {"action":"Ignore","onPodConditions":[{"type":"DisruptionTarget"}]}]})"));
  api::Pod pod;
  pod.metadata.namespace_ = "default";
  pod.metadata.name = "p";
  pod.status.containerStatuses.text = R"([{"name":"main","state":{"terminated":{"exitCode":2}}}])";
  EXPECT_EQ(match_pod_failure_policy(job, pod).action, FailureAction::kCount);
  pod.status.containerStatuses.text = R"([{"name":"main","state":{"terminated":{"exitCode":7}}}])";
  EXPECT_EQ(match_pod_failure_policy(job, pod).action, FailureAction::kFailJob);
  pod.status.containerStatuses.text = R"([{"name":"main","state":{"terminated":{"exitCode":0}}}])";
  pod.status.conditions.push_back({"DisruptionTarget", "True", "", "", "", ""});
  EXPECT_EQ(match_pod_failure_policy(job, pod).action, FailureAction::kIgnore);
}

TEST(JobController, SuspendDeletesActivePodsWithoutCountingThem) {
  Harness h;
  h.api.put_object("jobs", job_json(R"("completions":4,"parallelism":2)"));
  h.start();
  ASSERT_TRUE(h.sync_until([&] { return h.pods().size() == 2; }));
  api::Job j = h.job();
  j.spec.suspend = true;
  auto r = h.api.request("PUT", "/apis/batch/v1/namespaces/default/jobs/j", api::to_json(api::Object(j)), "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  ASSERT_TRUE(h.sync_until([&] { return h.pods().empty() && h.condition("Suspended") == "JobSuspended"; }));
  EXPECT_EQ(h.job().status.failed, 0);
  EXPECT_EQ(h.job().status.active, 0);
  j = h.job();
  j.spec.suspend = false;
  r = h.api.request("PUT", "/apis/batch/v1/namespaces/default/jobs/j", api::to_json(api::Object(j)), "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  ASSERT_TRUE(h.sync_until([&] { return h.pods().size() == 2; }));
  for (const auto& c : h.job().status.conditions) {
    if (c.type == "Suspended") {
      EXPECT_EQ(c.reason, "JobResumed");
    }
  }
}

TEST(JobController, ActiveDeadlineFailsTheJob) {
  Harness h;
  h.api.put_object("jobs", job_json(R"("completions":1,"activeDeadlineSeconds":10)"));
  h.start();
  ASSERT_TRUE(h.sync_until([&] { return h.pods().size() == 1 && !h.job().status.startTime.empty(); }));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(h.c->sync_job(kKey).has_value());
  EXPECT_EQ(h.condition("FailureTarget"), "");
  h.clock->advance(std::chrono::seconds(11));
  // The pod is deleted and its tracking finalizer removed (in later syncs; the
  // fake API keeps a deleted object whose finalizers were removed after the delete).
  ASSERT_TRUE(h.sync_until([&] {
    if (h.condition("Failed") != "DeadlineExceeded") return false;
    for (const auto& p : h.pods()) {
      if (p.metadata.deletionTimestamp.empty() || !p.metadata.finalizers.empty()) return false;
    }
    return true;
  })) << [&] {
    std::string all = h.api.object("jobs", "default", "j").value_or("");
    for (const auto& p : h.api.objects("pods")) all += "\n" + p;
    for (const auto& r : h.api.requests()) all += "\n" + r;
    return all;
  }();
  EXPECT_EQ(h.job().status.failed, 0);
}

TEST(JobController, TtlAfterFinishedDeletesTheJob) {
  Harness h;
  h.api.put_object("jobs", job_json(R"("completions":1,"ttlSecondsAfterFinished":5)"));
  h.start();
  ASSERT_TRUE(h.sync_until([&] { return h.pods().size() == 1; }));
  h.finish_pod(h.pods()[0], 0);
  ASSERT_TRUE(h.sync_until([&] { return h.condition("Complete") == "CompletionsReached"; }));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(h.c->sync_job(kKey).has_value());
  EXPECT_TRUE(h.api.object("jobs", "default", "j").has_value());
  h.clock->advance(std::chrono::seconds(6));
  EXPECT_TRUE(h.sync_until([&] { return !h.api.object("jobs", "default", "j").has_value(); }));
}

TEST(JobController, BackoffLimitPerIndexFailsOnlyThatIndex) {
  Harness h;
  h.api.put_object("jobs", job_json(R"("completions":2,"parallelism":2,"completionMode":"Indexed","backoffLimitPerIndex":0)"));
  h.start();
  ASSERT_TRUE(h.sync_until([&] { return h.pods().size() == 2; }));
  for (const auto& p : h.pods()) {
    EXPECT_EQ(p.metadata.annotations.at(kJobIndexFailureCount), "0");
    h.finish_pod(p, p.metadata.annotations.at(kJobCompletionIndex) == "0" ? 1 : 0);
  }
  ASSERT_TRUE(h.sync_until([&] { return h.condition("Failed") == "FailedIndexes"; }));
  api::Job j = h.job();
  EXPECT_EQ(j.status.failedIndexes, std::optional<std::string>("0"));
  EXPECT_EQ(j.status.completedIndexes, "1");
  EXPECT_EQ(h.pods().size(), 2u);  // index 0 not retried
}

}  // namespace
}  // namespace draplane::controllers
