// Field tables of resource.k8s.io/v1 (see field_table.h), in Go struct order.
#pragma once

#include "api/internal/fields_meta.h"

namespace draplane::api::internal {

// ---------------------------------------------------------------- classes

template <>
struct FieldTable<CELDeviceSelector> {
  static constexpr auto fields = std::tuple(always("expression", &CELDeviceSelector::expression));
};

template <>
struct FieldTable<DeviceSelector> {
  static constexpr auto fields = std::tuple(omitempty("cel", &DeviceSelector::cel));
};

template <>
struct FieldTable<OpaqueDeviceConfiguration> {
  using T = OpaqueDeviceConfiguration;
  static constexpr auto fields =
      std::tuple(always("driver", &T::driver), always("parameters", &T::parameters));
};

template <>
struct FieldTable<DeviceClassConfiguration> {
  static constexpr auto fields = std::tuple(omitempty("opaque", &DeviceClassConfiguration::opaque));
};

template <>
struct FieldTable<DeviceClassSpec> {
  using T = DeviceClassSpec;
  static constexpr auto fields =
      std::tuple(omitempty("selectors", &T::selectors), omitempty("config", &T::config),
                 omitempty("extendedResourceName", &T::extendedResourceName));
};

template <>
struct FieldTable<DeviceClass> {
  using T = DeviceClass;
  static constexpr KindName kind{"DeviceClass", kResourceV1};
  static constexpr auto fields = object_fields<T>(always("spec", &T::spec));
};

// ---------------------------------------------------------------- slices

template <>
struct FieldTable<DeviceAttribute> {
  using T = DeviceAttribute;
  static constexpr auto fields =
      std::tuple(omitempty("int", &T::int_), omitempty("bool", &T::bool_),
                 omitempty("string", &T::string_), omitempty("version", &T::version));
};

template <>
struct FieldTable<CapacityRequestPolicyRange> {
  using T = CapacityRequestPolicyRange;
  static constexpr auto fields =
      std::tuple(omitempty("min", &T::min), omitempty("max", &T::max), omitempty("step", &T::step));
};

template <>
struct FieldTable<CapacityRequestPolicy> {
  using T = CapacityRequestPolicy;
  static constexpr auto fields =
      std::tuple(omitempty("default", &T::default_), omitempty("validValues", &T::validValues),
                 omitempty("validRange", &T::validRange));
};

template <>
struct FieldTable<DeviceCapacity> {
  using T = DeviceCapacity;
  static constexpr auto fields =
      std::tuple(always("value", &T::value), omitempty("requestPolicy", &T::requestPolicy));
};

template <>
struct FieldTable<Counter> {
  static constexpr auto fields = std::tuple(always("value", &Counter::value));
};

template <>
struct FieldTable<CounterSet> {
  static constexpr auto fields =
      std::tuple(always("name", &CounterSet::name), always("counters", &CounterSet::counters));
};

template <>
struct FieldTable<DeviceCounterConsumption> {
  using T = DeviceCounterConsumption;
  static constexpr auto fields =
      std::tuple(always("counterSet", &T::counterSet), always("counters", &T::counters));
};

template <>
struct FieldTable<DeviceTaint> {
  static constexpr auto fields = taint_fields<DeviceTaint>;
};

template <>
struct FieldTable<Device> {
  using T = Device;
  static constexpr auto fields = std::tuple(
      always("name", &T::name), omitempty("attributes", &T::attributes),
      omitempty("capacity", &T::capacity), omitempty("consumesCounters", &T::consumesCounters),
      omitempty("nodeName", &T::nodeName), omitempty("nodeSelector", &T::nodeSelector),
      omitempty("allNodes", &T::allNodes), omitempty("taints", &T::taints),
      omitempty("bindsToNode", &T::bindsToNode),
      omitempty("bindingConditions", &T::bindingConditions),
      omitempty("bindingFailureConditions", &T::bindingFailureConditions),
      omitempty("allowMultipleAllocations", &T::allowMultipleAllocations));
};

template <>
struct FieldTable<ResourcePool> {
  using T = ResourcePool;
  static constexpr auto fields =
      std::tuple(always("name", &T::name), always("generation", &T::generation),
                 always("resourceSliceCount", &T::resourceSliceCount));
};

template <>
struct FieldTable<ResourceSliceSpec> {
  using T = ResourceSliceSpec;
  static constexpr auto fields =
      std::tuple(always("driver", &T::driver), always("pool", &T::pool),
                 omitempty("nodeName", &T::nodeName), omitempty("nodeSelector", &T::nodeSelector),
                 omitempty("allNodes", &T::allNodes), omitempty("devices", &T::devices),
                 omitempty("perDeviceNodeSelection", &T::perDeviceNodeSelection),
                 omitempty("sharedCounters", &T::sharedCounters));
};

template <>
struct FieldTable<ResourceSlice> {
  using T = ResourceSlice;
  static constexpr KindName kind{"ResourceSlice", kResourceV1};
  static constexpr auto fields = object_fields<T>(always("spec", &T::spec));
};

// ---------------------------------------------------------------- claims

template <>
struct FieldTable<DeviceToleration> {
  static constexpr auto fields = toleration_fields<DeviceToleration>;
};

template <>
struct FieldTable<CapacityRequirements> {
  static constexpr auto fields = std::tuple(omitempty("requests", &CapacityRequirements::requests));
};

template <>
struct FieldTable<ExactDeviceRequest> {
  using T = ExactDeviceRequest;
  static constexpr auto fields = std::tuple(
      always("deviceClassName", &T::deviceClassName), omitempty("selectors", &T::selectors),
      omitempty("allocationMode", &T::allocationMode), omitempty("count", &T::count),
      omitempty("adminAccess", &T::adminAccess), omitempty("tolerations", &T::tolerations),
      omitempty("capacity", &T::capacity));
};

template <>
struct FieldTable<DeviceSubRequest> {
  using T = DeviceSubRequest;
  static constexpr auto fields =
      std::tuple(always("name", &T::name), always("deviceClassName", &T::deviceClassName),
                 omitempty("selectors", &T::selectors),
                 omitempty("allocationMode", &T::allocationMode), omitempty("count", &T::count),
                 omitempty("tolerations", &T::tolerations), omitempty("capacity", &T::capacity));
};

template <>
struct FieldTable<DeviceRequest> {
  using T = DeviceRequest;
  static constexpr auto fields =
      std::tuple(always("name", &T::name), omitempty("exactly", &T::exactly),
                 omitempty("firstAvailable", &T::firstAvailable));
};

template <>
struct FieldTable<DeviceConstraint> {
  using T = DeviceConstraint;
  static constexpr auto fields = std::tuple(omitempty("requests", &T::requests),
                                            omitempty("matchAttribute", &T::matchAttribute),
                                            omitempty("distinctAttribute", &T::distinctAttribute));
};

template <>
struct FieldTable<DeviceClaimConfiguration> {
  using T = DeviceClaimConfiguration;
  static constexpr auto fields =
      std::tuple(omitempty("requests", &T::requests), omitempty("opaque", &T::opaque));
};

template <>
struct FieldTable<DeviceClaim> {
  using T = DeviceClaim;
  static constexpr auto fields =
      std::tuple(omitempty("requests", &T::requests), omitempty("constraints", &T::constraints),
                 omitempty("config", &T::config));
};

template <>
struct FieldTable<ResourceClaimSpec> {
  static constexpr auto fields = std::tuple(always("devices", &ResourceClaimSpec::devices));
};

template <>
struct FieldTable<DeviceRequestAllocationResult> {
  using T = DeviceRequestAllocationResult;
  static constexpr auto fields = std::tuple(
      always("request", &T::request), always("driver", &T::driver), always("pool", &T::pool),
      always("device", &T::device), omitempty("adminAccess", &T::adminAccess),
      omitempty("tolerations", &T::tolerations),
      omitempty("bindingConditions", &T::bindingConditions),
      omitempty("bindingFailureConditions", &T::bindingFailureConditions),
      omitempty("shareID", &T::shareID), omitempty("consumedCapacity", &T::consumedCapacity));
};

template <>
struct FieldTable<DeviceAllocationConfiguration> {
  using T = DeviceAllocationConfiguration;
  static constexpr auto fields =
      std::tuple(always("source", &T::source), omitempty("requests", &T::requests),
                 omitempty("opaque", &T::opaque));
};

template <>
struct FieldTable<DeviceAllocationResult> {
  using T = DeviceAllocationResult;
  static constexpr auto fields =
      std::tuple(omitempty("results", &T::results), omitempty("config", &T::config));
};

template <>
struct FieldTable<AllocationResult> {
  using T = AllocationResult;
  static constexpr auto fields =
      std::tuple(always("devices", &T::devices), omitempty("nodeSelector", &T::nodeSelector),
                 omitempty("allocationTimestamp", &T::allocationTimestamp, kTime));
};

template <>
struct FieldTable<ResourceClaimConsumerReference> {
  using T = ResourceClaimConsumerReference;
  static constexpr auto fields =
      std::tuple(omitempty("apiGroup", &T::apiGroup), always("resource", &T::resource),
                 always("name", &T::name), always("uid", &T::uid));
};

template <>
struct FieldTable<NetworkDeviceData> {
  using T = NetworkDeviceData;
  static constexpr auto fields =
      std::tuple(omitempty("interfaceName", &T::interfaceName), omitempty("ips", &T::ips),
                 omitempty("hardwareAddress", &T::hardwareAddress));
};

template <>
struct FieldTable<AllocatedDeviceStatus> {
  using T = AllocatedDeviceStatus;
  static constexpr auto fields = std::tuple(
      always("driver", &T::driver), always("pool", &T::pool), always("device", &T::device),
      omitempty("shareID", &T::shareID), omitempty("conditions", &T::conditions),
      omitempty("data", &T::data), omitempty("networkData", &T::networkData));
};

template <>
struct FieldTable<ResourceClaimStatus> {
  using T = ResourceClaimStatus;
  static constexpr auto fields =
      std::tuple(omitempty("allocation", &T::allocation), omitempty("reservedFor", &T::reservedFor),
                 omitempty("devices", &T::devices));
};

template <>
struct FieldTable<ResourceClaim> {
  using T = ResourceClaim;
  static constexpr KindName kind{"ResourceClaim", kResourceV1};
  static constexpr auto fields =
      object_fields<T>(always("spec", &T::spec), always("status", &T::status));
};

template <>
struct FieldTable<ResourceClaimTemplateSpec> {
  using T = ResourceClaimTemplateSpec;
  static constexpr auto fields =
      std::tuple(always("metadata", &T::metadata), always("spec", &T::spec));
};

template <>
struct FieldTable<ResourceClaimTemplate> {
  using T = ResourceClaimTemplate;
  static constexpr KindName kind{"ResourceClaimTemplate", kResourceV1};
  static constexpr auto fields = object_fields<T>(always("spec", &T::spec));
};

// ---------------------------------------------------------------- DeviceTaintRule

template <>
struct FieldTable<DeviceTaintSelector> {
  using T = DeviceTaintSelector;
  static constexpr auto fields =
      std::tuple(omitempty("driver", &T::driver), omitempty("pool", &T::pool), omitempty("device", &T::device));
};

template <>
struct FieldTable<DeviceTaintRuleSpec> {
  using T = DeviceTaintRuleSpec;
  // taint is `json:"taint,omitempty"` upstream, a struct: Go writes it always.
  static constexpr auto fields =
      std::tuple(omitempty("deviceSelector", &T::deviceSelector), always("taint", &T::taint));
};

template <>
struct FieldTable<DeviceTaintRuleStatus> {
  static constexpr auto fields = std::tuple(omitempty("conditions", &DeviceTaintRuleStatus::conditions));
};

template <>
struct FieldTable<DeviceTaintRule> {
  using T = DeviceTaintRule;
  static constexpr KindName kind{"DeviceTaintRule", kResourceV1};
  static constexpr auto fields = object_fields<T>(always("spec", &T::spec), always("status", &T::status));
};

}  // namespace draplane::api::internal
