// Workload and PodGroup validation (scheduling.k8s.io/v1beta1, 1.37): create,
// update rules (immutable members, templates neither added nor removed, gang
// minCount mutable), PodGroup status; the Pod's spec.schedulingGroup.
#include <gtest/gtest.h>

#include <functional>

#include "api/validation.h"
#include "api/workload.h"
#include "field_error_lines.h"

namespace draplane::api {
namespace {

// An object of kind T named `name` in namespace default.
template <typename T>
T in_default(const char* name) {
  T obj;
  obj.metadata.name = name;
  obj.metadata.namespace_ = "default";
  return obj;
}

Workload workload() {
  auto w = in_default<Workload>("train");
  PodGroupTemplate t;
  t.name = "workers";
  t.schedulingPolicy.gang = GangSchedulingPolicy{8};
  w.spec.podGroupTemplates.push_back(t);
  return w;
}

PodGroup pod_group() {
  auto g = in_default<PodGroup>("train-workers-0");
  g.spec.workloadRef = WorkloadReference{"train", "workers"};
  g.spec.schedulingPolicy.gang = GangSchedulingPolicy{8};
  return g;
}

TEST(ValidateWorkload, Create) {
  struct Case {
    const char* name;
    std::function<void(Workload&)> mutate;
    Lines want;
  } cases[] = {
      {"valid", [](Workload&) {}, {}},
      {"basic policy", [](Workload& w) { w.spec.podGroupTemplates[0].schedulingPolicy = {BasicSchedulingPolicy{}, {}}; },
       {}},
      {"namespace required", [](Workload& w) { w.metadata.namespace_.clear(); },
       {"metadata.namespace: Required value"}},
      {"no templates", [](Workload& w) { w.spec.podGroupTemplates.clear(); },
       {"spec: Invalid value: \"\": must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`"}},
      {"nine templates",
       [](Workload& w) {
         for (int i = 1; i < 9; ++i) {
           w.spec.podGroupTemplates.push_back(w.spec.podGroupTemplates[0]);
           w.spec.podGroupTemplates.back().name = "t" + std::to_string(i);
         }
       },
       {"spec.podGroupTemplates: Too many: 9: must have at most 8 items"}},
      {"template name required", [](Workload& w) { w.spec.podGroupTemplates[0].name.clear(); },
       {"spec.podGroupTemplates[0].name: Required value"}},
      {"duplicate template",
       [](Workload& w) { w.spec.podGroupTemplates.push_back(w.spec.podGroupTemplates[0]); },
       {"spec.podGroupTemplates[1]: Duplicate value: \"workers\""}},
      {"no policy", [](Workload& w) { w.spec.podGroupTemplates[0].schedulingPolicy = {}; },
       {"spec.podGroupTemplates[0].schedulingPolicy: Invalid value: \"\": must specify one of: `basic`, `gang`"}},
      {"two policies",
       [](Workload& w) { w.spec.podGroupTemplates[0].schedulingPolicy.basic = BasicSchedulingPolicy{}; },
       {"spec.podGroupTemplates[0].schedulingPolicy: Invalid value: \"{`basic`, `gang`}\": must specify exactly one "
        "of: `basic`, `gang`"}},
      {"minCount 0", [](Workload& w) { w.spec.podGroupTemplates[0].schedulingPolicy.gang->minCount = 0; },
       {"spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Required value"}},
      {"minCount negative", [](Workload& w) { w.spec.podGroupTemplates[0].schedulingPolicy.gang->minCount = -1; },
       {"spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than or equal to 1"}},
      {"claim without a source",
       [](Workload& w) { w.spec.podGroupTemplates[0].resourceClaims.push_back(PodGroupResourceClaim{"gpus", {}, {}}); },
       {"spec.podGroupTemplates[0].resourceClaims[0]: Invalid value: \"\": must specify one of: `resourceClaimName`, "
        "`resourceClaimTemplateName`"}},
      {"five claims",
       [](Workload& w) {
         for (int i = 0; i < 5; ++i) {
           w.spec.podGroupTemplates[0].resourceClaims.push_back(
               PodGroupResourceClaim{"c" + std::to_string(i), "claim", {}});
         }
       },
       {"spec.podGroupTemplates[0].resourceClaims: Too many: 5: must have at most 4 items"}},
      {"priority over the user maximum", [](Workload& w) { w.spec.podGroupTemplates[0].priority = 1'000'000'001; },
       {"spec.podGroupTemplates[0].priority: Invalid value: 1000000001: must be less than or equal to 1000000000"}},
      {"controllerRef without kind and name",
       [](Workload& w) { w.spec.controllerRef = TypedLocalObjectReference{"batch", "", ""}; },
       {"spec.controllerRef.kind: Required value", "spec.controllerRef.name: Required value"}},
      {"controllerRef name with a slash",
       [](Workload& w) { w.spec.controllerRef = TypedLocalObjectReference{"batch", "Job", "a/b"}; },
       {"spec.controllerRef.name: Invalid value: \"a/b\": may not contain '/'"}},
  };
  for (const auto& c : cases) {
    Workload w = workload();
    c.mutate(w);
    EXPECT_EQ(lines(validate_workload(w)), c.want) << c.name;
  }
}

TEST(ValidateWorkload, Update) {
  Workload old = workload();
  old.metadata.resourceVersion = "1";
  Workload w = old;
  // gang.minCount may change (workload scaling).
  w.spec.podGroupTemplates[0].schedulingPolicy.gang->minCount = 4;
  EXPECT_EQ(lines(validate_workload_update(w, old)), Lines{});
  // The gang may not be cleared, nor basic set.
  w = old;
  w.spec.podGroupTemplates[0].schedulingPolicy = {BasicSchedulingPolicy{}, {}};
  EXPECT_EQ(lines(validate_workload_update(w, old)),
            (Lines{"spec.podGroupTemplates[0].schedulingPolicy.basic: Invalid value: null: field is immutable",
                   "spec.podGroupTemplates[0].schedulingPolicy.gang: Invalid value: null: field cannot be cleared once "
                   "set"}));
  // Templates may be neither added nor removed.
  w = old;
  w.spec.podGroupTemplates[0].name = "launcher";
  EXPECT_EQ(lines(validate_workload_update(w, old)),
            (Lines{"spec.podGroupTemplates[0]: Forbidden: item may not be added",
                   "spec.podGroupTemplates: Forbidden: item may not be removed"}));
  // controllerRef is immutable (set or changed).
  w = old;
  w.spec.controllerRef = TypedLocalObjectReference{"batch", "Job", "train"};
  EXPECT_EQ(lines(validate_workload_update(w, old)),
            (Lines{"spec.controllerRef: Invalid value: null: field is immutable"}));
}

TEST(ValidatePodGroup, CreateUpdateAndStatus) {
  EXPECT_EQ(lines(validate_pod_group(pod_group())), Lines{});
  PodGroup g = pod_group();
  g.spec.workloadRef->templateName = "Workers!";
  g.spec.schedulingPolicy.gang->minCount = 0;
  Lines got = lines(validate_pod_group(g));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].rfind("spec.workloadRef.templateName: Invalid value: \"Workers!\"", 0), 0u) << got[0];
  EXPECT_EQ(got[1], "spec.schedulingPolicy.gang.minCount: Required value");
  g = pod_group();
  g.spec.workloadRef->workloadName.clear();
  EXPECT_EQ(lines(validate_pod_group(g)), (Lines{"spec.workloadRef.workloadName: Required value"}));

  PodGroup old = pod_group();
  old.metadata.resourceVersion = "1";
  PodGroup up = old;
  up.spec.schedulingPolicy.gang->minCount = 2;
  EXPECT_EQ(lines(validate_pod_group_update(up, old)), Lines{});
  up.spec.workloadRef->templateName = "other";
  up.spec.priority = 5;
  EXPECT_EQ(lines(validate_pod_group_update(up, old)),
            (Lines{"spec.workloadRef: Invalid value: null: field is immutable",
                   "spec.priority: Invalid value: null: field is immutable"}));

  PodGroup st = old;
  st.status.conditions.push_back(Condition{kPodGroupInitiallyScheduled, "False", 0, "2026-12-06T10:00:00Z",
                                           kPodGroupReasonUnschedulable, "needs 8 GPUs; 7 free"});
  EXPECT_EQ(lines(validate_pod_group_status_update(st, old)), Lines{});
  st.status.conditions.push_back(st.status.conditions[0]);
  EXPECT_EQ(lines(validate_pod_group_status_update(st, old)),
            (Lines{"status.conditions[1].type: Duplicate value: \"PodGroupInitiallyScheduled\""}));

  // KEP-5729: each recorded claim names an entry of spec.resourceClaims.
  PodGroup claims = old;
  claims.spec.resourceClaims = {PodGroupResourceClaim{"domain", std::nullopt, std::string("domain-tmpl")}};
  claims.status.resourceClaimStatuses = {{"domain", std::string("train-domain-abcde")}, {"other", std::nullopt}};
  EXPECT_EQ(lines(validate_pod_group_status_update(claims, old)),
            (Lines{"status.resourceClaimStatuses[1].name: Invalid value: \"other\": must match the name of an entry "
                   "in `spec.resourceClaims`"}));
}

TEST(ValidatePod, SchedulingGroup) {
  Pod p = in_default<Pod>("w0");
  Container c;
  c.name = "c";
  c.image = "busybox";
  p.spec.containers.push_back(c);
  p.spec.schedulingGroup = PodSchedulingGroup{"train-workers-0"};
  EXPECT_EQ(lines(validate(Object{p})), Lines{});
  Pod bad = p;
  bad.spec.schedulingGroup->podGroupName = "Train";
  Lines got = lines(validate(Object{bad}));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].rfind("spec.schedulingGroup.podGroupName: Invalid value: \"Train\"", 0), 0u) << got[0];
  bad.spec.schedulingGroup->podGroupName.reset();
  EXPECT_EQ(lines(validate(Object{bad})), (Lines{"spec.schedulingGroup.podGroupName: Required value"}));
  // Immutable: the gang a pod joined does not change.
  p.metadata.resourceVersion = "1";
  Pod moved = p;
  moved.spec.schedulingGroup->podGroupName = "other";
  EXPECT_EQ(lines(validate_update(Object{p}, Object{moved})),
            (Lines{"spec.schedulingGroup: Invalid value: null: field is immutable"}));
}

}  // namespace
}  // namespace draplane::api
