// Encoding of the object model into the Kubernetes JSON shape: members in Go
// struct order, omitempty where upstream has it, maps sorted (std::map), core
// `extra` members appended after the modelled ones.
#include <type_traits>

#include "api/codec.h"
#include "api/internal/encoder.h"
#include "api/internal/json_value.h"

namespace draplane::api::internal {
namespace {

using J = JsonValue;

#define DRAPLANE_DECLARE_ENC(T) J enc(const T& v);
DRAPLANE_DECLARE_ENC(OwnerReference)
DRAPLANE_DECLARE_ENC(ObjectMeta)
DRAPLANE_DECLARE_ENC(Condition)
DRAPLANE_DECLARE_ENC(NodeSelectorRequirement)
DRAPLANE_DECLARE_ENC(NodeSelectorTerm)
DRAPLANE_DECLARE_ENC(NodeSelector)
DRAPLANE_DECLARE_ENC(Taint)
DRAPLANE_DECLARE_ENC(Toleration)
DRAPLANE_DECLARE_ENC(CELDeviceSelector)
DRAPLANE_DECLARE_ENC(DeviceSelector)
DRAPLANE_DECLARE_ENC(OpaqueDeviceConfiguration)
DRAPLANE_DECLARE_ENC(DeviceClassConfiguration)
DRAPLANE_DECLARE_ENC(DeviceAttribute)
DRAPLANE_DECLARE_ENC(CapacityRequestPolicyRange)
DRAPLANE_DECLARE_ENC(CapacityRequestPolicy)
DRAPLANE_DECLARE_ENC(DeviceCapacity)
DRAPLANE_DECLARE_ENC(Counter)
DRAPLANE_DECLARE_ENC(CounterSet)
DRAPLANE_DECLARE_ENC(DeviceCounterConsumption)
DRAPLANE_DECLARE_ENC(DeviceTaint)
DRAPLANE_DECLARE_ENC(Device)
DRAPLANE_DECLARE_ENC(DeviceToleration)
DRAPLANE_DECLARE_ENC(CapacityRequirements)
DRAPLANE_DECLARE_ENC(ExactDeviceRequest)
DRAPLANE_DECLARE_ENC(DeviceSubRequest)
DRAPLANE_DECLARE_ENC(DeviceRequest)
DRAPLANE_DECLARE_ENC(DeviceConstraint)
DRAPLANE_DECLARE_ENC(DeviceClaimConfiguration)
DRAPLANE_DECLARE_ENC(DeviceClaim)
DRAPLANE_DECLARE_ENC(ResourceClaimSpec)
DRAPLANE_DECLARE_ENC(DeviceRequestAllocationResult)
DRAPLANE_DECLARE_ENC(DeviceAllocationConfiguration)
DRAPLANE_DECLARE_ENC(AllocationResult)
DRAPLANE_DECLARE_ENC(ResourceClaimConsumerReference)
DRAPLANE_DECLARE_ENC(NetworkDeviceData)
DRAPLANE_DECLARE_ENC(AllocatedDeviceStatus)
DRAPLANE_DECLARE_ENC(ResourceClaimStatus)
DRAPLANE_DECLARE_ENC(ResourceClaimRef)
DRAPLANE_DECLARE_ENC(ResourceRequirements)
DRAPLANE_DECLARE_ENC(EnvVar)
DRAPLANE_DECLARE_ENC(Container)
DRAPLANE_DECLARE_ENC(PodResourceClaim)
DRAPLANE_DECLARE_ENC(NodeAffinity)
DRAPLANE_DECLARE_ENC(Affinity)
DRAPLANE_DECLARE_ENC(PodCondition)
DRAPLANE_DECLARE_ENC(PodResourceClaimStatus)
DRAPLANE_DECLARE_ENC(ContainerExtendedResourceRequest)
DRAPLANE_DECLARE_ENC(PodExtendedResourceClaimStatus)
#undef DRAPLANE_DECLARE_ENC

J enc(const std::string& s) { return J::string(s); }
J enc(const Quantity& q) { return J::string(q.to_string()); }
J enc(int64_t i) { return J::number(std::to_string(i)); }
J enc(int32_t i) { return J::number(std::to_string(i)); }
J enc(bool b) { return J::from_bool(b); }
J enc(const RawJson& raw) {
  if (raw.empty()) return J::null();
  Result<J> v = parse_json(raw.text);
  return v.has_value() ? std::move(v).value() : J::string(raw.text);
}

template <typename T>
J enc(const std::vector<T>& list) {
  J a = J::array();
  for (const T& item : list) a.items.push_back(enc(item));
  return a;
}

template <typename T>
J enc(const std::map<std::string, T>& map) {
  J o = J::object();
  for (const auto& [k, item] : map) o.add(k, enc(item));
  return o;
}

// omitempty semantics of Go's encoding/json.
void put(J& o, const char* key, const std::string& s) {
  if (!s.empty()) o.add(key, J::string(s));
}
void put(J& o, const char* key, int64_t i) {
  if (i != 0) o.add(key, enc(i));
}
void put(J& o, const char* key, bool b) {
  if (b) o.add(key, J::from_bool(b));
}
void put(J& o, const char* key, const RawJson& raw) {
  if (!raw.empty()) o.add(key, enc(raw));
}
template <typename T>
void put(J& o, const char* key, const std::optional<T>& v) {
  if (v.has_value()) o.add(key, enc(*v));
}
template <typename T>
void put(J& o, const char* key, const std::vector<T>& v) {
  if (!v.empty()) o.add(key, enc(v));
}
template <typename T>
void put(J& o, const char* key, const std::map<std::string, T>& v) {
  if (!v.empty()) o.add(key, enc(v));
}
// Without omitempty.
template <typename T>
void always(J& o, const char* key, const T& v) {
  o.add(key, enc(v));
}
// Appends the members of an `extra` JSON object.
void merge_extra(J& o, const RawJson& extra) {
  if (extra.empty()) return;
  J e = enc(extra);
  if (!e.is_object()) return;
  for (auto& [k, v] : e.members) {
    if (o.find(k) == nullptr) o.add(k, std::move(v));
  }
}

J enc(const OwnerReference& v) {
  J o = J::object();
  always(o, "apiVersion", v.apiVersion);
  always(o, "kind", v.kind);
  always(o, "name", v.name);
  always(o, "uid", v.uid);
  put(o, "controller", v.controller);
  put(o, "blockOwnerDeletion", v.blockOwnerDeletion);
  return o;
}

J enc(const ObjectMeta& v) {
  J o = J::object();
  put(o, "name", v.name);
  put(o, "generateName", v.generateName);
  put(o, "namespace", v.namespace_);
  put(o, "uid", v.uid);
  put(o, "resourceVersion", v.resourceVersion);
  put(o, "generation", v.generation);
  put(o, "creationTimestamp", v.creationTimestamp);
  put(o, "deletionTimestamp", v.deletionTimestamp);
  put(o, "deletionGracePeriodSeconds", v.deletionGracePeriodSeconds);
  put(o, "labels", v.labels);
  put(o, "annotations", v.annotations);
  put(o, "ownerReferences", v.ownerReferences);
  put(o, "finalizers", v.finalizers);
  put(o, "managedFields", v.managedFields);
  return o;
}

J enc(const Condition& v) {
  J o = J::object();
  always(o, "type", v.type);
  always(o, "status", v.status);
  put(o, "observedGeneration", v.observedGeneration);
  always(o, "lastTransitionTime", v.lastTransitionTime);
  always(o, "reason", v.reason);
  always(o, "message", v.message);
  return o;
}

J enc(const NodeSelectorRequirement& v) {
  J o = J::object();
  always(o, "key", v.key);
  always(o, "operator", v.operator_);
  put(o, "values", v.values);
  return o;
}

J enc(const NodeSelectorTerm& v) {
  J o = J::object();
  put(o, "matchExpressions", v.matchExpressions);
  put(o, "matchFields", v.matchFields);
  return o;
}

J enc(const NodeSelector& v) {
  J o = J::object();
  always(o, "nodeSelectorTerms", v.nodeSelectorTerms);
  return o;
}

J enc(const Taint& v) {
  J o = J::object();
  always(o, "key", v.key);
  put(o, "value", v.value);
  always(o, "effect", v.effect);
  put(o, "timeAdded", v.timeAdded);
  return o;
}

J enc(const Toleration& v) {
  J o = J::object();
  put(o, "key", v.key);
  put(o, "operator", v.operator_);
  put(o, "value", v.value);
  put(o, "effect", v.effect);
  put(o, "tolerationSeconds", v.tolerationSeconds);
  return o;
}

J enc(const CELDeviceSelector& v) {
  J o = J::object();
  always(o, "expression", v.expression);
  return o;
}

J enc(const DeviceSelector& v) {
  J o = J::object();
  put(o, "cel", v.cel);
  return o;
}

J enc(const OpaqueDeviceConfiguration& v) {
  J o = J::object();
  always(o, "driver", v.driver);
  always(o, "parameters", v.parameters);
  return o;
}

J enc(const DeviceClassConfiguration& v) {
  J o = J::object();
  put(o, "opaque", v.opaque);
  return o;
}

J enc(const DeviceAttribute& v) {
  J o = J::object();
  put(o, "int", v.int_);
  put(o, "bool", v.bool_);
  put(o, "string", v.string_);
  put(o, "version", v.version);
  return o;
}

J enc(const CapacityRequestPolicyRange& v) {
  J o = J::object();
  put(o, "min", v.min);
  put(o, "max", v.max);
  put(o, "step", v.step);
  return o;
}

J enc(const CapacityRequestPolicy& v) {
  J o = J::object();
  put(o, "default", v.default_);
  put(o, "validValues", v.validValues);
  put(o, "validRange", v.validRange);
  return o;
}

J enc(const DeviceCapacity& v) {
  J o = J::object();
  always(o, "value", v.value);
  put(o, "requestPolicy", v.requestPolicy);
  return o;
}

J enc(const Counter& v) {
  J o = J::object();
  always(o, "value", v.value);
  return o;
}

J enc(const CounterSet& v) {
  J o = J::object();
  always(o, "name", v.name);
  always(o, "counters", v.counters);
  return o;
}

J enc(const DeviceCounterConsumption& v) {
  J o = J::object();
  always(o, "counterSet", v.counterSet);
  always(o, "counters", v.counters);
  return o;
}

J enc(const DeviceTaint& v) {
  J o = J::object();
  always(o, "key", v.key);
  put(o, "value", v.value);
  always(o, "effect", v.effect);
  put(o, "timeAdded", v.timeAdded);
  return o;
}

J enc(const Device& v) {
  J o = J::object();
  always(o, "name", v.name);
  put(o, "attributes", v.attributes);
  put(o, "capacity", v.capacity);
  put(o, "consumesCounters", v.consumesCounters);
  put(o, "nodeName", v.nodeName);
  put(o, "nodeSelector", v.nodeSelector);
  put(o, "allNodes", v.allNodes);
  put(o, "taints", v.taints);
  put(o, "bindsToNode", v.bindsToNode);
  put(o, "bindingConditions", v.bindingConditions);
  put(o, "bindingFailureConditions", v.bindingFailureConditions);
  put(o, "allowMultipleAllocations", v.allowMultipleAllocations);
  return o;
}

J enc(const DeviceToleration& v) {
  J o = J::object();
  put(o, "key", v.key);
  put(o, "operator", v.operator_);
  put(o, "value", v.value);
  put(o, "effect", v.effect);
  put(o, "tolerationSeconds", v.tolerationSeconds);
  return o;
}

J enc(const CapacityRequirements& v) {
  J o = J::object();
  put(o, "requests", v.requests);
  return o;
}

J enc(const ExactDeviceRequest& v) {
  J o = J::object();
  always(o, "deviceClassName", v.deviceClassName);
  put(o, "selectors", v.selectors);
  put(o, "allocationMode", v.allocationMode);
  put(o, "count", v.count);
  put(o, "adminAccess", v.adminAccess);
  put(o, "tolerations", v.tolerations);
  put(o, "capacity", v.capacity);
  return o;
}

J enc(const DeviceSubRequest& v) {
  J o = J::object();
  always(o, "name", v.name);
  always(o, "deviceClassName", v.deviceClassName);
  put(o, "selectors", v.selectors);
  put(o, "allocationMode", v.allocationMode);
  put(o, "count", v.count);
  put(o, "tolerations", v.tolerations);
  put(o, "capacity", v.capacity);
  return o;
}

J enc(const DeviceRequest& v) {
  J o = J::object();
  always(o, "name", v.name);
  put(o, "exactly", v.exactly);
  put(o, "firstAvailable", v.firstAvailable);
  return o;
}

J enc(const DeviceConstraint& v) {
  J o = J::object();
  put(o, "requests", v.requests);
  put(o, "matchAttribute", v.matchAttribute);
  put(o, "distinctAttribute", v.distinctAttribute);
  return o;
}

J enc(const DeviceClaimConfiguration& v) {
  J o = J::object();
  put(o, "requests", v.requests);
  put(o, "opaque", v.opaque);
  return o;
}

J enc(const DeviceClaim& v) {
  J o = J::object();
  put(o, "requests", v.requests);
  put(o, "constraints", v.constraints);
  put(o, "config", v.config);
  return o;
}

J enc(const ResourceClaimSpec& v) {
  J o = J::object();
  always(o, "devices", v.devices);
  return o;
}

J enc(const DeviceRequestAllocationResult& v) {
  J o = J::object();
  always(o, "request", v.request);
  always(o, "driver", v.driver);
  always(o, "pool", v.pool);
  always(o, "device", v.device);
  put(o, "adminAccess", v.adminAccess);
  put(o, "tolerations", v.tolerations);
  put(o, "bindingConditions", v.bindingConditions);
  put(o, "bindingFailureConditions", v.bindingFailureConditions);
  put(o, "shareID", v.shareID);
  put(o, "consumedCapacity", v.consumedCapacity);
  return o;
}

J enc(const DeviceAllocationConfiguration& v) {
  J o = J::object();
  always(o, "source", v.source);
  put(o, "requests", v.requests);
  put(o, "opaque", v.opaque);
  return o;
}

J enc(const AllocationResult& v) {
  J o = J::object();
  J devices = J::object();
  put(devices, "results", v.devices.results);
  put(devices, "config", v.devices.config);
  o.add("devices", std::move(devices));
  put(o, "nodeSelector", v.nodeSelector);
  put(o, "allocationTimestamp", v.allocationTimestamp);
  return o;
}

J enc(const ResourceClaimConsumerReference& v) {
  J o = J::object();
  put(o, "apiGroup", v.apiGroup);
  always(o, "resource", v.resource);
  always(o, "name", v.name);
  always(o, "uid", v.uid);
  return o;
}

J enc(const NetworkDeviceData& v) {
  J o = J::object();
  put(o, "interfaceName", v.interfaceName);
  put(o, "ips", v.ips);
  put(o, "hardwareAddress", v.hardwareAddress);
  return o;
}

J enc(const AllocatedDeviceStatus& v) {
  J o = J::object();
  always(o, "driver", v.driver);
  always(o, "pool", v.pool);
  always(o, "device", v.device);
  put(o, "shareID", v.shareID);
  put(o, "conditions", v.conditions);
  put(o, "data", v.data);
  put(o, "networkData", v.networkData);
  return o;
}

J enc(const ResourceClaimStatus& v) {
  J o = J::object();
  put(o, "allocation", v.allocation);
  put(o, "reservedFor", v.reservedFor);
  put(o, "devices", v.devices);
  return o;
}

J enc(const ResourceClaimRef& v) {
  J o = J::object();
  always(o, "name", v.name);
  put(o, "request", v.request);
  return o;
}

J enc(const ResourceRequirements& v) {
  J o = J::object();
  put(o, "limits", v.limits);
  put(o, "requests", v.requests);
  put(o, "claims", v.claims);
  return o;
}

J enc(const EnvVar& v) {
  J o = J::object();
  always(o, "name", v.name);
  put(o, "value", v.value);
  put(o, "valueFrom", v.valueFrom);
  return o;
}

J enc(const Container& v) {
  J o = J::object();
  always(o, "name", v.name);
  put(o, "image", v.image);
  put(o, "command", v.command);
  put(o, "args", v.args);
  put(o, "workingDir", v.workingDir);
  put(o, "env", v.env);
  always(o, "resources", v.resources);
  merge_extra(o, v.extra);
  return o;
}

J enc(const PodResourceClaim& v) {
  J o = J::object();
  always(o, "name", v.name);
  put(o, "resourceClaimName", v.resourceClaimName);
  put(o, "resourceClaimTemplateName", v.resourceClaimTemplateName);
  return o;
}

J enc(const NodeAffinity& v) {
  J o = J::object();
  put(o, "requiredDuringSchedulingIgnoredDuringExecution",
      v.requiredDuringSchedulingIgnoredDuringExecution);
  put(o, "preferredDuringSchedulingIgnoredDuringExecution",
      v.preferredDuringSchedulingIgnoredDuringExecution);
  return o;
}

J enc(const Affinity& v) {
  J o = J::object();
  put(o, "nodeAffinity", v.nodeAffinity);
  merge_extra(o, v.extra);
  return o;
}

J enc(const PodCondition& v) {
  J o = J::object();
  always(o, "type", v.type);
  always(o, "status", v.status);
  put(o, "lastProbeTime", v.lastProbeTime);
  put(o, "lastTransitionTime", v.lastTransitionTime);
  put(o, "reason", v.reason);
  put(o, "message", v.message);
  return o;
}

J enc(const PodResourceClaimStatus& v) {
  J o = J::object();
  always(o, "name", v.name);
  put(o, "resourceClaimName", v.resourceClaimName);
  return o;
}

J enc(const ContainerExtendedResourceRequest& v) {
  J o = J::object();
  always(o, "containerName", v.containerName);
  always(o, "resourceName", v.resourceName);
  always(o, "requestName", v.requestName);
  return o;
}

J enc(const PodExtendedResourceClaimStatus& v) {
  J o = J::object();
  always(o, "requestMappings", v.requestMappings);
  always(o, "resourceClaimName", v.resourceClaimName);
  return o;
}

J pod_spec(const PodSpec& v) {
  J o = J::object();
  put(o, "initContainers", v.initContainers);
  always(o, "containers", v.containers);
  put(o, "restartPolicy", v.restartPolicy);
  put(o, "terminationGracePeriodSeconds", v.terminationGracePeriodSeconds);
  put(o, "nodeSelector", v.nodeSelector);
  put(o, "nodeName", v.nodeName);
  put(o, "affinity", v.affinity);
  put(o, "schedulerName", v.schedulerName);
  put(o, "tolerations", v.tolerations);
  put(o, "priorityClassName", v.priorityClassName);
  put(o, "priority", v.priority);
  put(o, "resourceClaims", v.resourceClaims);
  merge_extra(o, v.extra);
  return o;
}

J pod_status(const PodStatus& v) {
  J o = J::object();
  put(o, "phase", v.phase);
  put(o, "conditions", v.conditions);
  put(o, "message", v.message);
  put(o, "reason", v.reason);
  put(o, "nominatedNodeName", v.nominatedNodeName);
  put(o, "hostIP", v.hostIP);
  put(o, "podIP", v.podIP);
  put(o, "startTime", v.startTime);
  put(o, "containerStatuses", v.containerStatuses);
  put(o, "resourceClaimStatuses", v.resourceClaimStatuses);
  put(o, "extendedResourceClaimStatus", v.extendedResourceClaimStatus);
  merge_extra(o, v.extra);
  return o;
}

J head(const TypeMeta& tm, std::string_view default_api_version, std::string_view kind) {
  J o = J::object();
  o.add("kind", J::string(std::string(kind)));
  // The structs are the v1 shape whatever typeMeta says, so the version is fixed.
  (void)tm;
  o.add("apiVersion", J::string(std::string(default_api_version)));
  return o;
}

}  // namespace

JsonValue encode_object(const Object& object) {
  return std::visit(
      [](const auto& obj) -> J {
        using T = std::decay_t<decltype(obj)>;
        if constexpr (std::is_same_v<T, DeviceClass>) {
          J o = head(obj.typeMeta, kResourceV1, "DeviceClass");
          o.add("metadata", enc(obj.metadata));
          J spec = J::object();
          put(spec, "selectors", obj.spec.selectors);
          put(spec, "config", obj.spec.config);
          put(spec, "extendedResourceName", obj.spec.extendedResourceName);
          o.add("spec", std::move(spec));
          return o;
        } else if constexpr (std::is_same_v<T, ResourceSlice>) {
          J o = head(obj.typeMeta, kResourceV1, "ResourceSlice");
          o.add("metadata", enc(obj.metadata));
          const ResourceSliceSpec& s = obj.spec;
          J spec = J::object();
          always(spec, "driver", s.driver);
          J pool = J::object();
          always(pool, "name", s.pool.name);
          always(pool, "generation", s.pool.generation);
          always(pool, "resourceSliceCount", s.pool.resourceSliceCount);
          spec.add("pool", std::move(pool));
          put(spec, "nodeName", s.nodeName);
          put(spec, "nodeSelector", s.nodeSelector);
          put(spec, "allNodes", s.allNodes);
          put(spec, "devices", s.devices);
          put(spec, "perDeviceNodeSelection", s.perDeviceNodeSelection);
          put(spec, "sharedCounters", s.sharedCounters);
          o.add("spec", std::move(spec));
          return o;
        } else if constexpr (std::is_same_v<T, ResourceClaim>) {
          J o = head(obj.typeMeta, kResourceV1, "ResourceClaim");
          o.add("metadata", enc(obj.metadata));
          o.add("spec", enc(obj.spec));
          o.add("status", enc(obj.status));
          return o;
        } else if constexpr (std::is_same_v<T, ResourceClaimTemplate>) {
          J o = head(obj.typeMeta, kResourceV1, "ResourceClaimTemplate");
          o.add("metadata", enc(obj.metadata));
          J spec = J::object();
          spec.add("metadata", enc(obj.spec.metadata));
          spec.add("spec", enc(obj.spec.spec));
          o.add("spec", std::move(spec));
          return o;
        } else if constexpr (std::is_same_v<T, Pod>) {
          J o = head(obj.typeMeta, "v1", "Pod");
          o.add("metadata", enc(obj.metadata));
          o.add("spec", pod_spec(obj.spec));
          o.add("status", pod_status(obj.status));
          return o;
        } else if constexpr (std::is_same_v<T, Node>) {
          J o = head(obj.typeMeta, "v1", "Node");
          o.add("metadata", enc(obj.metadata));
          J spec = J::object();
          put(spec, "providerID", obj.spec.providerID);
          put(spec, "unschedulable", obj.spec.unschedulable);
          put(spec, "taints", obj.spec.taints);
          merge_extra(spec, obj.spec.extra);
          o.add("spec", std::move(spec));
          J status = J::object();
          put(status, "capacity", obj.status.capacity);
          put(status, "allocatable", obj.status.allocatable);
          put(status, "conditions", obj.status.conditions);
          put(status, "addresses", obj.status.addresses);
          put(status, "nodeInfo", obj.status.nodeInfo);
          merge_extra(status, obj.status.extra);
          o.add("status", std::move(status));
          return o;
        } else {
          static_assert(std::is_same_v<T, Namespace>);
          J o = head(obj.typeMeta, "v1", "Namespace");
          o.add("metadata", enc(obj.metadata));
          J spec = J::object();
          put(spec, "finalizers", obj.specFinalizers);
          o.add("spec", std::move(spec));
          J status = J::object();
          put(status, "phase", obj.phase);
          o.add("status", std::move(status));
          return o;
        }
      },
      object);
}

}  // namespace draplane::api::internal
