// Workload and PodGroup validation (scheduling.k8s.io/v1beta1): create, spec
// immutability, PodGroup status.
#include <gtest/gtest.h>

#include <functional>

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
  g.spec.podGroupTemplateRef = PodGroupTemplateReference{WorkloadPodGroupTemplateReference{"train", "workers"}};
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
       {"spec.podGroupTemplates: Required value: must have at least one item"}},
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
       {"spec.podGroupTemplates[0].schedulingPolicy: Invalid value: \"{`basic`, `gang`}\": exactly one of `basic`, "
        "`gang` is required, but multiple fields are set"}},
      {"minCount 0", [](Workload& w) { w.spec.podGroupTemplates[0].schedulingPolicy.gang->minCount = 0; },
       {"spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Required value"}},
      {"minCount negative", [](Workload& w) { w.spec.podGroupTemplates[0].schedulingPolicy.gang->minCount = -1; },
       {"spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than zero"}},
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

TEST(ValidateWorkload, SpecIsImmutable) {
  Workload old = workload();
  old.metadata.resourceVersion = "1";
  Workload w = old;
  w.spec.podGroupTemplates[0].schedulingPolicy.gang->minCount = 4;
  EXPECT_EQ(lines(validate_workload_update(w, old)),
            (Lines{"spec.podGroupTemplates: Invalid value: []scheduling.PodGroupTemplate{...}: field is immutable"}));
  // A controllerRef may be set once.
  w = old;
  w.spec.controllerRef = TypedLocalObjectReference{"batch", "Job", "train"};
  EXPECT_EQ(lines(validate_workload_update(w, old)), Lines{});
  Workload changed = w;
  changed.spec.controllerRef->name = "other";
  EXPECT_EQ(lines(validate_workload_update(changed, w)),
            (Lines{"spec.controllerRef: Invalid value: scheduling.TypedLocalObjectReference{...}: field is immutable"}));
}

TEST(ValidatePodGroup, CreateUpdateAndStatus) {
  EXPECT_EQ(lines(validate_pod_group(pod_group())), Lines{});
  PodGroup g = pod_group();
  g.spec.podGroupTemplateRef->workload->podGroupTemplateName = "Workers!";
  g.spec.schedulingPolicy.gang->minCount = 0;
  Lines got = lines(validate_pod_group(g));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].rfind("spec.podGroupTemplateRef.workload.podGroupTemplateName: Invalid value: \"Workers!\"", 0), 0u)
      << got[0];
  EXPECT_EQ(got[1], "spec.schedulingPolicy.gang.minCount: Required value");

  PodGroup old = pod_group();
  old.metadata.resourceVersion = "1";
  PodGroup up = old;
  up.spec.schedulingPolicy.gang->minCount = 2;
  EXPECT_EQ(lines(validate_pod_group_update(up, old)),
            (Lines{"spec.schedulingPolicy: Invalid value: scheduling.PodGroupSchedulingPolicy{...}: field is immutable"}));

  PodGroup st = old;
  st.status.conditions.push_back(Condition{kPodGroupInitiallyScheduled, "False", 0, "2026-12-06T10:00:00Z",
                                           kPodGroupReasonUnschedulable, "needs 8 GPUs; 7 free"});
  EXPECT_EQ(lines(validate_pod_group_status_update(st, old)), Lines{});
  st.status.conditions.push_back(st.status.conditions[0]);
  EXPECT_EQ(lines(validate_pod_group_status_update(st, old)),
            (Lines{"status.conditions[1].type: Duplicate value: \"PodGroupInitiallyScheduled\""}));
}

}  // namespace
}  // namespace draplane::api
