// ResourceSlice validation: node selection, pool, devices, attributes, capacity
// request policies, counters, taints, binding conditions, and update immutability.
#include <gtest/gtest.h>

#include <functional>

#include "api/validation.h"
#include "field_error_lines.h"

namespace draplane::api {
namespace {

Quantity q(const char* s) { return *Quantity::parse(s); }

Device gpu(const std::string& name) {
  Device d;
  d.name = name;
  d.attributes["type"].string_ = "gpu";
  d.attributes["cudaComputeCapability"].version = "9.0.0";
  d.capacity["memory"].value = q("80Gi");
  return d;
}

ResourceSlice base_slice() {
  ResourceSlice s;
  s.metadata.name = "node-1-gpu.nvidia.com";
  s.spec.driver = "gpu.nvidia.com";
  s.spec.pool = {"node-1", 1, 1};
  s.spec.nodeName = "node-1";
  s.spec.devices = {gpu("gpu-0"), gpu("gpu-1")};
  return s;
}

constexpr const char* kCIdentMsg =
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is "
    "'[A-Za-z_][A-Za-z0-9_]*')";

struct Case {
  const char* name;
  std::function<void(ResourceSlice&)> mutate;
  std::vector<std::string> want;
};

TEST(ValidateSlice, Rules) {
  const std::string D0 = "spec.devices[0]";
  auto policy_device = [](ResourceSlice& s) -> DeviceCapacity& {
    s.spec.devices[0].allowMultipleAllocations = true;
    auto& cap = s.spec.devices[0].capacity["memory"];
    cap.requestPolicy = CapacityRequestPolicy{};
    return cap;
  };
  Case cases[] = {
      {"valid", [](ResourceSlice&) {}, {}},
      {"no node selection", [](ResourceSlice& s) { s.spec.nodeName.reset(); },
       {"spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is "
        "required"}},
      {"two node selections", [](ResourceSlice& s) { s.spec.allNodes = true; },
       {"spec: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
        "`perDeviceNodeSelection` is required, but multiple fields are set"}},
      {"allNodes false", [](ResourceSlice& s) { s.spec.nodeName.reset(); s.spec.allNodes = false; },
       {"spec.allNodes: Invalid value: false: must be either unset or set to true",
        "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is "
        "required"}},
      {"node selector two terms",
       [](ResourceSlice& s) {
         s.spec.nodeName.reset();
         NodeSelectorTerm t{{NodeSelectorRequirement{"zone", "In", {"a"}}}, {}};
         s.spec.nodeSelector = NodeSelector{{t, t}};
       },
       {"spec.nodeSelector.nodeSelectorTerms: Invalid value: []core.NodeSelectorTerm{...}: must have exactly one "
        "node selector term"}},
      {"node selector bad operator",
       [](ResourceSlice& s) {
         s.spec.nodeName.reset();
         s.spec.nodeSelector = NodeSelector{{NodeSelectorTerm{{NodeSelectorRequirement{"zone", "Like", {}}}, {}}}};
       },
       {"spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: \"Like\": not a valid "
        "selector operator"}},
      {"driver required", [](ResourceSlice& s) { s.spec.driver = ""; }, {"spec.driver: Required value"}},
      {"driver too long", [](ResourceSlice& s) { s.spec.driver = std::string(60, 'a') + ".com"; },
       {"spec.driver: Too long: must have at most 63 bytes"}},
      {"pool count zero", [](ResourceSlice& s) { s.spec.pool.resourceSliceCount = 0; },
       {"spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero"}},
      {"pool generation negative", [](ResourceSlice& s) { s.spec.pool.generation = -1; },
       {"spec.pool.generation: Invalid value: -1: must be greater than or equal to zero"}},
      {"pool name required", [](ResourceSlice& s) { s.spec.pool.name = ""; }, {"spec.pool.name: Required value"}},
      {"duplicate device", [](ResourceSlice& s) { s.spec.devices[1].name = "gpu-0"; },
       {"spec.devices[1]: Duplicate value: \"gpu-0\""}},
      {"too many devices", [](ResourceSlice& s) { s.spec.devices.resize(129, gpu("x")); },
       {"spec.devices: Too many: 129: must have at most 128 items"}},
      {"64 with taints",
       [](ResourceSlice& s) {
         s.spec.devices.clear();
         for (int i = 0; i < 65; ++i) s.spec.devices.push_back(gpu("gpu-" + std::to_string(i)));
         s.spec.devices[3].taints = {DeviceTaint{"maintenance", "", "NoSchedule", ""}};
       },
       {"spec.devices: Too many: 65: must have at most 64 items"}},
      {"attribute two values", [](ResourceSlice& s) { s.spec.devices[0].attributes["type"].int_ = 1; },
       {D0 + ".attributes[type]: Invalid value: resource.DeviceAttribute{IntValue:(*int64)(1), BoolValue:(*bool)(nil), "
             "StringValue:(*string)(\"gpu\"), VersionValue:(*string)(nil)}: exactly one value must be specified"}},
      {"attribute no value", [](ResourceSlice& s) { s.spec.devices[0].attributes["empty"] = DeviceAttribute{}; },
       {D0 + ".attributes[empty]: Invalid value: \"\": exactly one value must be specified"}},
      {"version not semver", [](ResourceSlice& s) { s.spec.devices[0].attributes["cudaComputeCapability"].version = "9.0"; },
       {D0 + ".attributes[cudaComputeCapability].version: Invalid value: \"9.0\": must be a string compatible with "
             "semver.org spec 2.0.0"}},
      {"string too long", [](ResourceSlice& s) { s.spec.devices[0].attributes["type"].string_ = std::string(65, 'x'); },
       {D0 + ".attributes[type].string: Too long: must have at most 64 bytes"}},
      {"attribute name not identifier",
       [](ResourceSlice& s) { s.spec.devices[0].attributes["gpu.nvidia.com/pci-bus"].string_ = "x"; },
       {D0 + ".attributes: Invalid value: \"pci-bus\": " + kCIdentMsg}},
      {"attribute name too long",
       [](ResourceSlice& s) { s.spec.devices[0].attributes[std::string(33, 'a')].bool_ = true; },
       {D0 + ".attributes: Too long: must have at most 32 bytes"}},
      {"attribute two slashes", [](ResourceSlice& s) { s.spec.devices[0].attributes["a/b/c"].bool_ = true; },
       {D0 + ".attributes: Invalid value: \"a/b/c\": must not contain more than one slash"}},
      {"too many attributes",
       [](ResourceSlice& s) {
         for (int i = 0; i < 31; ++i) s.spec.devices[0].attributes["a" + std::to_string(i)].int_ = i;
       },
       {D0 + ": Invalid value: 34: the total number of attributes and capacities must not exceed 32"}},
      {"requestPolicy without multiple allocations",
       [](ResourceSlice& s) { s.spec.devices[0].capacity["memory"].requestPolicy = CapacityRequestPolicy{}; },
       {D0 + ".capacity[memory].requestPolicy: Forbidden: allowMultipleAllocations must be true"}},
      {"validValues without default",
       [&](ResourceSlice& s) { policy_device(s).requestPolicy->validValues = {q("10Gi")}; },
       {D0 + ".capacity[memory].requestPolicy.default: Required value: required when validValues is defined"}},
      {"validValues unsorted, over capacity, default missing",
       [&](ResourceSlice& s) {
         auto& p = *policy_device(s).requestPolicy;
         p.default_ = q("1Gi");
         p.validValues = {q("20Gi"), q("10Gi"), q("100Gi")};
       },
       {D0 + ".capacity[memory].requestPolicy.validValues[1]: Invalid value: \"10Gi\": values must be sorted in "
             "ascending order",
        D0 + ".capacity[memory].requestPolicy.validValues[2]: Invalid value: \"100Gi\": option is larger than "
             "capacity value: 80Gi",
        D0 + ".capacity[memory].requestPolicy.validValues: Invalid value: \"1Gi\": default value is not valid "
             "according to the requestPolicy"}},
      {"validValues and validRange",
       [&](ResourceSlice& s) {
         auto& p = *policy_device(s).requestPolicy;
         p.validValues = {q("1Gi")};
         p.validRange = CapacityRequestPolicyRange{q("1Gi"), std::nullopt, std::nullopt};
       },
       {D0 + ".capacity[memory].requestPolicy: Forbidden: exactly one policy can be specified, cannot specify "
             "\"validValues\" and \"validRange\" at the same time"}},
      {"validRange step not multiple",
       [&](ResourceSlice& s) {
         auto& p = *policy_device(s).requestPolicy;
         p.default_ = q("3Gi");
         p.validRange = CapacityRequestPolicyRange{q("1Gi"), q("8Gi"), q("2Gi")};
       },
       {D0 + ".capacity[memory].requestPolicy.validRange.step: Invalid value: \"8Gi\": value is not a multiple of a "
             "given step (2Gi) from (1Gi)"}},
      {"validRange default below min",
       [&](ResourceSlice& s) {
         auto& p = *policy_device(s).requestPolicy;
         p.default_ = q("1Gi");
         p.validRange = CapacityRequestPolicyRange{q("2Gi"), std::nullopt, q("0")};
       },
       {D0 + ".capacity[memory].requestPolicy.validRange.default: Invalid value: \"1Gi\": default is less than "
             "min: 2Gi",
        D0 + ".capacity[memory].requestPolicy.validRange.step: Invalid value: \"0\": must be greater than zero"}},
      {"validRange without min",
       [&](ResourceSlice& s) {
         auto& p = *policy_device(s).requestPolicy;
         p.default_ = q("1Gi");
         p.validRange = CapacityRequestPolicyRange{};
       },
       {D0 + ".capacity[memory].requestPolicy.validRange.min: Required value: required when validRange is defined"}},
      {"taint bad effect",
       [](ResourceSlice& s) { s.spec.devices[0].taints = {DeviceTaint{"maintenance", "", "PreferNoSchedule", ""}}; },
       {D0 + ".taints[0].effect: Unsupported value: \"PreferNoSchedule\": supported values: \"NoExecute\", "
             "\"NoSchedule\", \"None\""}},
      {"taint effect required",
       [](ResourceSlice& s) { s.spec.devices[0].taints = {DeviceTaint{"maintenance", "", "", ""}}; },
       {D0 + ".taints[0].effect: Required value"}},
      {"too many taints",
       [](ResourceSlice& s) { s.spec.devices[0].taints.resize(17, DeviceTaint{"k", "", "None", ""}); },
       {D0 + ".taints: Too many: 17: must have at most 16 items"}},
      {"too many counter consumptions",
       [](ResourceSlice& s) {
         DeviceCounterConsumption c{"set", {{"memory", Counter{q("1Gi")}}}};
         s.spec.devices[0].consumesCounters = {c, c, c};
       },
       {D0 + ".consumesCounters: Too many: 3: must have at most 2 items"}},
      {"duplicate counter consumption",
       [](ResourceSlice& s) {
         DeviceCounterConsumption c{"set", {{"memory", Counter{q("1Gi")}}}};
         s.spec.devices[0].consumesCounters = {c, c};
       },
       {D0 + ".consumesCounters[1]: Duplicate value: \"set\""}},
      {"consumption without counters",
       [](ResourceSlice& s) { s.spec.devices[0].consumesCounters = {DeviceCounterConsumption{"set", {}}}; },
       {D0 + ".consumesCounters[0].counters: Required value"}},
      {"devices and sharedCounters",
       [](ResourceSlice& s) { s.spec.sharedCounters = {CounterSet{"gpu-0-counter-set", {{"memory", Counter{q("80Gi")}}}}}; },
       {"spec: Invalid value: \"\": only one of `sharedCounters` or `devices` is allowed"}},
      {"too many counter sets",
       [](ResourceSlice& s) {
         s.spec.devices.clear();
         for (int i = 0; i < 9; ++i) {
           s.spec.sharedCounters.push_back(CounterSet{"s" + std::to_string(i), {{"m", Counter{q("1")}}}});
         }
       },
       {"spec.sharedCounters: Too many: 9: must have at most 8 items"}},
      {"duplicate counter set",
       [](ResourceSlice& s) {
         s.spec.devices.clear();
         s.spec.sharedCounters = {CounterSet{"a", {{"m", Counter{q("1")}}}}, CounterSet{"a", {{"m", Counter{q("1")}}}}};
       },
       {"spec.sharedCounters[1]: Duplicate value: \"a\""}},
      {"too many counters in a set",
       [](ResourceSlice& s) {
         s.spec.devices.clear();
         CounterSet set{"a", {}};
         for (int i = 0; i < 33; ++i) set.counters["c" + std::to_string(i)] = Counter{q("1")};
         s.spec.sharedCounters = {set};
       },
       {"spec.sharedCounters[0].counters: Too many: 33: must have at most 32 items"}},
      {"per-device field without perDeviceNodeSelection",
       [](ResourceSlice& s) { s.spec.devices[0].nodeName = "node-1"; },
       {D0 + ": Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
             "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"}},
      {"perDeviceNodeSelection device without choice",
       [](ResourceSlice& s) {
         s.spec.nodeName.reset();
         s.spec.perDeviceNodeSelection = true;
         s.spec.devices[1].allNodes = true;
       },
       {D0 + ": Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
             "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"}},
      {"binding failure without binding conditions",
       [](ResourceSlice& s) { s.spec.devices[0].bindingFailureConditions = {"failed"}; },
       {D0 + ".bindingConditions: Invalid value: []string(nil): bindingConditions are required to use "
             "bindingFailureConditions"}},
      {"too many binding conditions",
       [](ResourceSlice& s) {
         s.spec.devices[0].bindingConditions = {"a", "b", "c", "d", "e"};
         s.spec.devices[0].bindingFailureConditions = {"f"};
       },
       {D0 + ".bindingConditions: Too many: 5: must have at most 4 items"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ResourceSlice s = base_slice();
    c.mutate(s);
    EXPECT_EQ(lines(validate(Object(s))), c.want);
  }
}

TEST(ValidateSlice, UpdateImmutability) {
  ResourceSlice old_slice = base_slice();
  old_slice.metadata.resourceVersion = "5";
  ResourceSlice n = old_slice;
  n.spec.pool.generation = 2;  // allowed
  EXPECT_TRUE(validate_update(Object(old_slice), Object(n)).empty());
  n.spec.driver = "other.example.com";
  n.spec.pool.name = "node-2";
  n.spec.nodeName = "node-2";
  EXPECT_EQ(lines(validate_update(Object(old_slice), Object(n))),
            (std::vector<std::string>{
                "spec.pool.name: Invalid value: \"node-2\": field is immutable",
                "spec.driver: Invalid value: \"other.example.com\": field is immutable",
                "spec.nodeName: Invalid value: \"node-2\": field is immutable",
            }));
}

}  // namespace
}  // namespace draplane::api
