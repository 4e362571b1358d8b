// PriorityClass validation (upstream's ValidatePriorityClass and its Update
// form) and the pod's preemptionPolicy.
#include <gtest/gtest.h>

#include <functional>

#include "api/codec.h"
#include "api/defaults.h"
#include "api/validation.h"
#include "field_error_lines.h"

namespace draplane::api {
namespace {

PriorityClass priority_class() {
  PriorityClass pc;
  pc.metadata.name = "high";
  pc.value = 1000;
  pc.preemptionPolicy = kPreemptLowerPriority;
  return pc;
}

TEST(ValidatePriorityClass, Create) {
  struct Case {
    const char* name;
    std::function<void(PriorityClass&)> mutate;
    Lines want;
  } cases[] = {
      {"valid", [](PriorityClass&) {}, {}},
      {"negative value", [](PriorityClass& pc) { pc.value = -5; }, {}},
      {"highest user value", [](PriorityClass& pc) { pc.value = 1000000000; }, {}},
      {"above the highest user value", [](PriorityClass& pc) { pc.value = 1000000001; },
       {"value: Forbidden: maximum allowed value of a user defined priority is 1000000000"}},
      {"Never", [](PriorityClass& pc) { pc.preemptionPolicy = "Never"; }, {}},
      {"unset policy (before defaulting)", [](PriorityClass& pc) { pc.preemptionPolicy.reset(); }, {}},
      {"empty policy", [](PriorityClass& pc) { pc.preemptionPolicy = ""; }, {"preemptionPolicy: Required value"}},
      {"unknown policy", [](PriorityClass& pc) { pc.preemptionPolicy = "Sometimes"; },
       {"preemptionPolicy: Unsupported value: \"Sometimes\": supported values: \"PreemptLowerPriority\", \"Never\""}},
      {"namespace forbidden", [](PriorityClass& pc) { pc.metadata.namespace_ = "default"; },
       {"metadata.namespace: Forbidden: not allowed on this type"}},
      {"system- name of no built-in class", [](PriorityClass& pc) { pc.metadata.name = "system-mine"; },
       {"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
        "error: system-mine is not a known system priority class"}},
      {"built-in class with another value",
       [](PriorityClass& pc) { pc.metadata.name = "system-cluster-critical"; },
       {"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
        "error: value of system-cluster-critical PriorityClass must be 2000000000"}},
      {"built-in class as default",
       [](PriorityClass& pc) {
         pc.metadata.name = "system-node-critical";
         pc.value = 2000001000;
         pc.globalDefault = true;
       },
       {"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
        "error: globalDefault of system-node-critical PriorityClass must be false"}},
  };
  for (const auto& c : cases) {
    PriorityClass pc = priority_class();
    c.mutate(pc);
    EXPECT_EQ(lines(validate_priority_class(pc)), c.want) << c.name;
  }
}

TEST(ValidatePriorityClass, BuiltInClassesAreValid) {
  ASSERT_EQ(system_priority_classes().size(), 2u);
  EXPECT_EQ(system_priority_classes()[0].metadata.name, "system-node-critical");
  EXPECT_EQ(system_priority_classes()[0].value, 2000001000);
  EXPECT_EQ(system_priority_classes()[1].metadata.name, "system-cluster-critical");
  EXPECT_EQ(system_priority_classes()[1].value, 2000000000);
  for (const PriorityClass& pc : system_priority_classes()) EXPECT_EQ(lines(validate_priority_class(pc)), Lines{});
}

TEST(ValidatePriorityClass, ValueAndPolicyAreImmutable) {
  PriorityClass old = priority_class();
  old.metadata.resourceVersion = "3";
  PriorityClass now = old;
  now.description = "may change";
  now.globalDefault = true;
  EXPECT_EQ(lines(validate_priority_class_update(now, old)), Lines{});
  now.value = 7;
  now.preemptionPolicy = "Never";
  EXPECT_EQ(lines(validate_priority_class_update(now, old)),
            (Lines{"value: Forbidden: may not be changed in an update.",
                   "preemptionPolicy: Invalid value: \"Never\": field is immutable"}));
}

TEST(ValidatePriorityClass, DecodedDefaultedAndEncoded) {
  auto obj = decode_object(
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"batch"},"value":-10,)"
      R"("description":"batch jobs"})");
  ASSERT_TRUE(obj.has_value()) << obj.error().message();
  apply_defaults(*obj, DefaultOptions{});
  const auto& pc = std::get<PriorityClass>(*obj);
  EXPECT_EQ(pc.value, -10);
  EXPECT_EQ(pc.preemptionPolicy, std::optional<std::string>(kPreemptLowerPriority));
  EXPECT_EQ(to_json(*obj),
            R"({"kind":"PriorityClass","apiVersion":"scheduling.k8s.io/v1","metadata":{"name":"batch"},"value":-10,)"
            R"("description":"batch jobs","preemptionPolicy":"PreemptLowerPriority"})");
}

TEST(ValidatePod, PreemptionPolicy) {
  Pod p;
  p.metadata.name = "p";
  p.metadata.namespace_ = "default";
  p.spec.containers.push_back(Container{});
  p.spec.containers[0].name = "main";
  p.spec.containers[0].image = "busybox";
  p.spec.preemptionPolicy = "Always";
  EXPECT_EQ(lines(validate(Object(p))),
            (Lines{"spec.preemptionPolicy: Unsupported value: \"Always\": supported values: \"PreemptLowerPriority\", "
                   "\"Never\""}));
}

}  // namespace
}  // namespace draplane::api
