// apps/v1 Deployment, ReplicaSet and batch/v1 Job: defaults and validation
// (create and update) with upstream's paths and messages, and a decode of a
// Deployment manifest with a claim template in its pod template.
#include <gtest/gtest.h>

#include "api/codec.h"
#include "api/defaults.h"
#include "api/validation.h"
#include "field_error_lines.h"

namespace draplane::api {
namespace {

PodTemplateSpec pod_template(std::string restart_policy) {
  PodTemplateSpec t;
  t.metadata.labels = {{"app", "web"}};
  Container c;
  c.name = "web";
  c.image = "nginx";
  t.spec.containers = {c};
  t.spec.restartPolicy = std::move(restart_policy);
  return t;
}

Deployment deployment() {
  Deployment d;
  d.metadata.name = "web";
  d.metadata.namespace_ = "default";
  d.spec.selector = LabelSelector{{{"app", "web"}}, {}};
  d.spec.template_ = pod_template("");
  Object o = d;
  apply_defaults(o);
  return std::get<Deployment>(o);
}

TEST(Deployment, Defaults) {
  Deployment d = deployment();
  EXPECT_EQ(d.spec.replicas, 1);
  EXPECT_EQ(d.spec.strategy.type, "RollingUpdate");
  ASSERT_TRUE(d.spec.strategy.rollingUpdate.has_value());
  EXPECT_EQ(d.spec.strategy.rollingUpdate->maxSurge.text, "\"25%\"");
  EXPECT_EQ(d.spec.strategy.rollingUpdate->maxUnavailable.text, "\"25%\"");
  EXPECT_EQ(d.spec.revisionHistoryLimit, 10);
  EXPECT_EQ(d.spec.progressDeadlineSeconds, 600);
  EXPECT_EQ(d.spec.template_.spec.restartPolicy, "Always");
  EXPECT_EQ(lines(validate_deployment(d)), Lines{});
}

TEST(ValidateDeployment, SelectorTemplateAndStrategy) {
  Deployment d = deployment();
  d.spec.replicas = -1;
  d.spec.selector = LabelSelector{{{"app", "api"}}, {}};
  d.spec.template_.spec.restartPolicy = "Never";
  d.spec.strategy.rollingUpdate->maxSurge.text = "0";
  d.spec.strategy.rollingUpdate->maxUnavailable.text = "\"0%\"";
  d.spec.progressDeadlineSeconds = 5;
  d.spec.minReadySeconds = 10;
  EXPECT_EQ(lines(validate_deployment(d)),
            (Lines{"spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                   "spec.template.metadata.labels: Invalid value: map[app:web]: `selector` does not match template "
                   "`labels`",
                   "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
                   "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"0%\": may not be 0 when `maxSurge` "
                   "is 0",
                   "spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds"}));

  Deployment r = deployment();
  r.spec.strategy.type = "Recreate";
  EXPECT_EQ(lines(validate_deployment(r)),
            (Lines{"spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"}));
  r.spec.selector.reset();
  r.spec.strategy.rollingUpdate.reset();
  EXPECT_EQ(lines(validate_deployment(r)), (Lines{"spec.selector: Required value"}));
}

TEST(ValidateDeployment, SelectorImmutable) {
  Deployment old = deployment();
  old.metadata.resourceVersion = "1";
  Deployment next = old;
  next.spec.replicas = 3;
  EXPECT_EQ(lines(validate_deployment_update(next, old)), Lines{});
  next.spec.selector->matchLabels["tier"] = "front";
  next.spec.template_.metadata.labels["tier"] = "front";
  EXPECT_EQ(lines(validate_deployment_update(next, old)),
            (Lines{"spec.selector: Invalid value: &v1.LabelSelector{...}: field is immutable"}));
}

TEST(ValidateReplicaSet, EmptySelectorAndExpressions) {
  ReplicaSet r;
  r.metadata.name = "web-1";
  r.metadata.namespace_ = "default";
  r.spec.selector = LabelSelector{};
  r.spec.template_ = pod_template("Always");
  EXPECT_EQ(lines(validate_replica_set(r)),
            (Lines{"spec.selector: Invalid value: &v1.LabelSelector{}: empty selector is invalid for deployment"}));
  r.spec.selector->matchExpressions = {{"app", "In", {}}, {"tier", "Exists", {"x"}}, {"app", "Near", {}}};
  EXPECT_EQ(lines(validate_replica_set(r)),
            (Lines{"spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is "
                   "'In' or 'NotIn'",
                   "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is "
                   "'Exists' or 'DoesNotExist'",
                   "spec.selector.matchExpressions[2].operator: Invalid value: \"Near\": not a valid selector operator",
                   "spec.template.metadata.labels: Invalid value: map[app:web]: `selector` does not match template "
                   "`labels`"}));
  r.spec.selector->matchExpressions = {{"app", "In", {"web", "api"}}, {"tier", "DoesNotExist", {}}};
  EXPECT_EQ(lines(validate_replica_set(r)), Lines{});
}

Job job() {
  Job j;
  j.metadata.name = "train";
  j.metadata.namespace_ = "default";
  j.spec.selector = LabelSelector{{{"app", "web"}}, {}};
  j.spec.template_ = pod_template("Never");
  Object o = j;
  apply_defaults(o);
  return std::get<Job>(o);
}

TEST(Job, Defaults) {
  Job j = job();
  EXPECT_EQ(j.spec.completions, 1);
  EXPECT_EQ(j.spec.parallelism, 1);
  EXPECT_EQ(j.spec.backoffLimit, 6);
  EXPECT_EQ(j.spec.completionMode, "NonIndexed");
  EXPECT_EQ(j.spec.suspend, false);
  EXPECT_EQ(j.spec.extra.text, R"({"podReplacementPolicy":"TerminatingOrFailed"})");
  EXPECT_EQ(lines(validate_job(j)), Lines{});

  Object o = Job{};
  std::get<Job>(o).spec.completions = 4;
  std::get<Job>(o).spec.backoffLimitPerIndex = 1;
  std::get<Job>(o).spec.completionMode = "Indexed";
  apply_defaults(o);
  EXPECT_EQ(std::get<Job>(o).spec.parallelism, 1);
  EXPECT_EQ(std::get<Job>(o).spec.backoffLimit, INT32_MAX);
}

TEST(ValidateJob, RestartPolicyModesAndLimits) {
  Job j = job();
  j.spec.template_.spec.restartPolicy = "Always";
  j.spec.backoffLimit = -1;
  j.spec.backoffLimitPerIndex = 2;
  EXPECT_EQ(lines(validate_job(j)),
            (Lines{"spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0",
                   "spec.backoffLimitPerIndex: Forbidden: requires indexed completion mode",
                   "spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \"OnFailure\", "
                   "\"Never\""}));
  Job k = job();
  k.spec.completionMode = "Indexed";
  k.spec.completions.reset();
  k.spec.template_.spec.restartPolicy = "OnFailure";
  k.spec.podFailurePolicy.text = R"({"rules":[]})";
  EXPECT_EQ(lines(validate_job(k)),
            (Lines{"spec.completions: Required value: when completion mode is Indexed",
                   "spec.template.spec.restartPolicy: Invalid value: \"OnFailure\": only \"Never\" is supported when "
                   "podFailurePolicy is specified"}));
}

TEST(ValidateJob, ImmutableFields) {
  Job old = job();
  old.metadata.resourceVersion = "2";
  Job next = old;
  next.spec.parallelism = 3;
  next.spec.suspend = true;
  EXPECT_EQ(lines(validate_job_update(next, old)), Lines{});
  next.spec.completions = 5;
  next.spec.template_.spec.containers[0].image = "busybox";
  EXPECT_EQ(lines(validate_job_update(next, old)),
            (Lines{"spec.completions: Invalid value: 5: field is immutable",
                   "spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable"}));
  // Elastic Indexed Jobs scale completions with parallelism.
  Job indexed = job();
  indexed.metadata.resourceVersion = "2";
  indexed.spec.completionMode = "Indexed";
  Job scaled = indexed;
  scaled.spec.completions = 4;
  scaled.spec.parallelism = 4;
  EXPECT_EQ(lines(validate_job_update(scaled, indexed)), Lines{});
}

TEST(Workloads, DecodeDeploymentWithClaimTemplate) {
  auto obj = decode_object(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: inference}
spec:
  replicas: 3
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
      containers:
      - name: server
        image: vllm/vllm-openai
        resources: {claims: [{name: gpu}]}
)");
  ASSERT_TRUE(obj.has_value()) << obj.error().message();
  Deployment& d = std::get<Deployment>(*obj);
  EXPECT_EQ(d.spec.replicas, 3);
  EXPECT_EQ(d.spec.template_.spec.resourceClaims[0].resourceClaimTemplateName, "one-gpu");
  apply_defaults(*obj);
  EXPECT_EQ(lines(validate(*obj)), Lines{});
  std::string text = to_json(*obj);
  EXPECT_EQ(text.substr(0, 44), R"({"kind":"Deployment","apiVersion":"apps/v1",)");
  // int32 members with omitempty are left out at zero, as Go writes them.
  EXPECT_EQ(text.find(R"("minReadySeconds")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("status":{})"), std::string::npos) << text;

  auto wrong = decode_object("apiVersion: v1\nkind: Deployment\nmetadata: {name: x}\n");
  ASSERT_FALSE(wrong.has_value());
  EXPECT_NE(wrong.error().message().find("use apiVersion apps/v1"), std::string::npos);
}

}  // namespace
}  // namespace draplane::api
