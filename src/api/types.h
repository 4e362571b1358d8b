// The object model: resource.k8s.io/v1 (DeviceClass, ResourceSlice, ResourceClaim,
// ResourceClaimTemplate, DeviceTaintRule), the subset of core/v1 that DRA uses (Pod,
// Node, Namespace), the kinds workload manifests carry (core/v1 ConfigMap, Secret,
// ServiceAccount, Service, PersistentVolumeClaim; apps/v1 Deployment, ReplicaSet;
// batch/v1 Job), as plain value structs whose field names are the JSON names.
//
// Conventions (they keep the codec's round trip lossless):
// - std::optional<T> for fields that Kubernetes distinguishes as "unset" (pointers
//   or omitempty scalars whose zero value is meaningful); plain T where absent and
//   zero are the same thing upstream (strings, lists, maps with omitempty).
// - std::map for Kubernetes maps, so encoding is sorted like Go's encoding/json.
// - RawJson holds JSON that draplane passes through untouched (opaque driver
//   parameters, status.devices[].data) as compact JSON text.
// - Core objects (Pod, Node, Namespace) model only what DRA reads and writes; every
//   other field of a real manifest is kept verbatim in `extra` (a JSON object of
//   the unmodelled members) so that a Pod with probes and volumes round-trips.
//   resource.k8s.io objects have no `extra`: unknown fields are errors there.
//
// Plain values; no invariants beyond the types (validation.h checks them).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "api/quantity.h"

namespace draplane::api {

// Compact JSON text; empty string means absent.
struct RawJson {
  std::string text;
  bool empty() const { return text.empty(); }
  bool operator==(const RawJson&) const = default;
};

// ---------------------------------------------------------------- meta/v1

struct OwnerReference {
  std::string apiVersion;
  std::string kind;
  std::string name;
  std::string uid;
  std::optional<bool> controller;
  std::optional<bool> blockOwnerDeletion;
  bool operator==(const OwnerReference&) const = default;
};

struct ObjectMeta {
  std::string name;
  std::string generateName;
  std::string namespace_;  // JSON "namespace"
  std::string uid;
  std::string resourceVersion;
  int64_t generation = 0;
  std::string creationTimestamp;  // RFC 3339, "" when unset
  std::string deletionTimestamp;  // RFC 3339, "" when unset
  std::optional<int64_t> deletionGracePeriodSeconds;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<std::string> finalizers;
  std::vector<OwnerReference> ownerReferences;
  RawJson managedFields;  // JSON array, kept for server-side apply
  bool operator==(const ObjectMeta&) const = default;
};

struct TypeMeta {
  std::string apiVersion;
  std::string kind;
  bool operator==(const TypeMeta&) const = default;
};

// metav1.Condition
struct Condition {
  std::string type;
  std::string status;  // True | False | Unknown
  int64_t observedGeneration = 0;
  std::string lastTransitionTime;
  std::string reason;
  std::string message;
  bool operator==(const Condition&) const = default;
};

// ---------------------------------------------------------------- core/v1 selectors

struct NodeSelectorRequirement {
  std::string key;
  std::string operator_;  // JSON "operator": In NotIn Exists DoesNotExist Gt Lt
  std::vector<std::string> values;
  bool operator==(const NodeSelectorRequirement&) const = default;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> matchExpressions;
  std::vector<NodeSelectorRequirement> matchFields;
  bool operator==(const NodeSelectorTerm&) const = default;
};

struct NodeSelector {
  std::vector<NodeSelectorTerm> nodeSelectorTerms;
  bool operator==(const NodeSelector&) const = default;
};

// core/v1 Taint (nodes)
struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule PreferNoSchedule NoExecute
  std::string timeAdded;
  bool operator==(const Taint&) const = default;
};

// core/v1 Toleration (pods)
struct Toleration {
  std::string key;
  std::string operator_;  // JSON "operator": Equal (default) | Exists
  std::string value;
  std::string effect;
  std::optional<int64_t> tolerationSeconds;
  bool operator==(const Toleration&) const = default;
};

// ---------------------------------------------------------------- resource.k8s.io/v1: classes

struct CELDeviceSelector {
  std::string expression;
  bool operator==(const CELDeviceSelector&) const = default;
};

struct DeviceSelector {
  std::optional<CELDeviceSelector> cel;
  bool operator==(const DeviceSelector&) const = default;
};

struct OpaqueDeviceConfiguration {
  std::string driver;
  RawJson parameters;  // any JSON value (object in practice), <= 10 KiB
  bool operator==(const OpaqueDeviceConfiguration&) const = default;
};

struct DeviceClassConfiguration {
  std::optional<OpaqueDeviceConfiguration> opaque;
  bool operator==(const DeviceClassConfiguration&) const = default;
};

struct DeviceClassSpec {
  std::vector<DeviceSelector> selectors;
  std::vector<DeviceClassConfiguration> config;
  std::optional<std::string> extendedResourceName;
  bool operator==(const DeviceClassSpec&) const = default;
};

struct DeviceClass {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  DeviceClassSpec spec;
  bool operator==(const DeviceClass&) const = default;
};

// ---------------------------------------------------------------- resource.k8s.io/v1: slices

// Exactly one member is set in a valid attribute.
struct DeviceAttribute {
  std::optional<int64_t> int_;         // JSON "int"
  std::optional<bool> bool_;           // JSON "bool"
  std::optional<std::string> string_;  // JSON "string"
  std::optional<std::string> version;  // semver 2.0.0
  bool operator==(const DeviceAttribute&) const = default;
};

struct CapacityRequestPolicyRange {
  std::optional<Quantity> min;  // required by validation
  std::optional<Quantity> max;
  std::optional<Quantity> step;
  bool operator==(const CapacityRequestPolicyRange&) const = default;
};

struct CapacityRequestPolicy {
  std::optional<Quantity> default_;  // JSON "default"
  std::vector<Quantity> validValues;
  std::optional<CapacityRequestPolicyRange> validRange;
  bool operator==(const CapacityRequestPolicy&) const = default;
};

struct DeviceCapacity {
  Quantity value;
  std::optional<CapacityRequestPolicy> requestPolicy;
  bool operator==(const DeviceCapacity&) const = default;
};

struct Counter {
  Quantity value;
  bool operator==(const Counter&) const = default;
};

struct CounterSet {
  std::string name;
  std::map<std::string, Counter> counters;
  bool operator==(const CounterSet&) const = default;
};

struct DeviceCounterConsumption {
  std::string counterSet;
  std::map<std::string, Counter> counters;
  bool operator==(const DeviceCounterConsumption&) const = default;
};

struct DeviceTaint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule | NoExecute | None
  std::string timeAdded;
  bool operator==(const DeviceTaint&) const = default;
};

struct Device {
  std::string name;
  std::map<std::string, DeviceAttribute> attributes;  // QualifiedName -> value
  std::map<std::string, DeviceCapacity> capacity;     // QualifiedName -> capacity
  std::vector<DeviceCounterConsumption> consumesCounters;
  std::optional<std::string> nodeName;
  std::optional<NodeSelector> nodeSelector;
  std::optional<bool> allNodes;
  std::vector<DeviceTaint> taints;
  std::optional<bool> bindsToNode;
  std::vector<std::string> bindingConditions;
  std::vector<std::string> bindingFailureConditions;
  std::optional<bool> allowMultipleAllocations;
  bool operator==(const Device&) const = default;
};

struct ResourcePool {
  std::string name;
  int64_t generation = 0;
  int64_t resourceSliceCount = 0;
  bool operator==(const ResourcePool&) const = default;
};

struct ResourceSliceSpec {
  std::string driver;
  ResourcePool pool;
  std::optional<std::string> nodeName;
  std::optional<NodeSelector> nodeSelector;
  std::optional<bool> allNodes;
  std::optional<bool> perDeviceNodeSelection;
  std::vector<Device> devices;
  std::vector<CounterSet> sharedCounters;
  bool operator==(const ResourceSliceSpec&) const = default;
};

struct ResourceSlice {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  ResourceSliceSpec spec;
  bool operator==(const ResourceSlice&) const = default;
};

// ---------------------------------------------------------------- resource.k8s.io/v1: claims

struct DeviceToleration {
  std::string key;
  std::string operator_;  // JSON "operator": Equal (default) | Exists
  std::string value;
  std::string effect;  // "" (any) | NoSchedule | NoExecute
  std::optional<int64_t> tolerationSeconds;
  bool operator==(const DeviceToleration&) const = default;
};

struct CapacityRequirements {
  std::map<std::string, Quantity> requests;
  bool operator==(const CapacityRequirements&) const = default;
};

struct ExactDeviceRequest {
  std::string deviceClassName;
  std::vector<DeviceSelector> selectors;
  std::string allocationMode;  // ExactCount (default) | All
  std::optional<int64_t> count;
  std::optional<bool> adminAccess;
  std::vector<DeviceToleration> tolerations;
  std::optional<CapacityRequirements> capacity;
  bool operator==(const ExactDeviceRequest&) const = default;
};

struct DeviceSubRequest {
  std::string name;
  std::string deviceClassName;
  std::vector<DeviceSelector> selectors;
  std::string allocationMode;
  std::optional<int64_t> count;
  std::vector<DeviceToleration> tolerations;
  std::optional<CapacityRequirements> capacity;
  bool operator==(const DeviceSubRequest&) const = default;
};

struct DeviceRequest {
  std::string name;
  std::optional<ExactDeviceRequest> exactly;
  std::vector<DeviceSubRequest> firstAvailable;
  bool operator==(const DeviceRequest&) const = default;
};

struct DeviceConstraint {
  std::vector<std::string> requests;
  std::optional<std::string> matchAttribute;
  std::optional<std::string> distinctAttribute;
  bool operator==(const DeviceConstraint&) const = default;
};

struct DeviceClaimConfiguration {
  std::vector<std::string> requests;
  std::optional<OpaqueDeviceConfiguration> opaque;
  bool operator==(const DeviceClaimConfiguration&) const = default;
};

struct DeviceClaim {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<DeviceClaimConfiguration> config;
  bool operator==(const DeviceClaim&) const = default;
};

struct ResourceClaimSpec {
  DeviceClaim devices;
  bool operator==(const ResourceClaimSpec&) const = default;
};

struct DeviceRequestAllocationResult {
  std::string request;  // "req" or "req/subreq"
  std::string driver;
  std::string pool;
  std::string device;
  std::optional<bool> adminAccess;
  std::vector<DeviceToleration> tolerations;
  std::vector<std::string> bindingConditions;
  std::vector<std::string> bindingFailureConditions;
  std::optional<std::string> shareID;
  std::map<std::string, Quantity> consumedCapacity;
  bool operator==(const DeviceRequestAllocationResult&) const = default;
};

struct DeviceAllocationConfiguration {
  std::string source;  // FromClass | FromClaim
  std::vector<std::string> requests;
  std::optional<OpaqueDeviceConfiguration> opaque;
  bool operator==(const DeviceAllocationConfiguration&) const = default;
};

struct DeviceAllocationResult {
  std::vector<DeviceRequestAllocationResult> results;
  std::vector<DeviceAllocationConfiguration> config;
  bool operator==(const DeviceAllocationResult&) const = default;
};

struct AllocationResult {
  DeviceAllocationResult devices;
  std::optional<NodeSelector> nodeSelector;
  std::string allocationTimestamp;
  bool operator==(const AllocationResult&) const = default;
};

struct ResourceClaimConsumerReference {
  std::string apiGroup;
  std::string resource;
  std::string name;
  std::string uid;
  bool operator==(const ResourceClaimConsumerReference&) const = default;
};

struct NetworkDeviceData {
  std::string interfaceName;
  std::vector<std::string> ips;
  std::string hardwareAddress;
  bool operator==(const NetworkDeviceData&) const = default;
};

struct AllocatedDeviceStatus {
  std::string driver;
  std::string pool;
  std::string device;
  std::optional<std::string> shareID;
  std::vector<Condition> conditions;
  RawJson data;
  std::optional<NetworkDeviceData> networkData;
  bool operator==(const AllocatedDeviceStatus&) const = default;
};

struct ResourceClaimStatus {
  std::optional<AllocationResult> allocation;
  std::vector<ResourceClaimConsumerReference> reservedFor;
  std::vector<AllocatedDeviceStatus> devices;
  bool operator==(const ResourceClaimStatus&) const = default;
};

struct ResourceClaim {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  ResourceClaimSpec spec;
  ResourceClaimStatus status;
  bool operator==(const ResourceClaim&) const = default;
};

struct ResourceClaimTemplateSpec {
  ObjectMeta metadata;
  ResourceClaimSpec spec;
  bool operator==(const ResourceClaimTemplateSpec&) const = default;
};

struct ResourceClaimTemplate {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  ResourceClaimTemplateSpec spec;
  bool operator==(const ResourceClaimTemplate&) const = default;
};

// ---------------------------------------------------------------- resource.k8s.io/v1: DeviceTaintRule

// Which devices a DeviceTaintRule taints: each set field must match (an empty
// selector matches every device; a rule without one matches none).
struct DeviceTaintSelector {
  std::optional<std::string> driver;
  std::optional<std::string> pool;
  std::optional<std::string> device;
  bool operator==(const DeviceTaintSelector&) const = default;
};

struct DeviceTaintRuleSpec {
  std::optional<DeviceTaintSelector> deviceSelector;
  DeviceTaint taint;
  bool operator==(const DeviceTaintRuleSpec&) const = default;
};

struct DeviceTaintRuleStatus {
  std::vector<Condition> conditions;  // EvictionInProgress, at most 8
  bool operator==(const DeviceTaintRuleStatus&) const = default;
};

// Adds one taint to every matching device, as if the driver had published it.
struct DeviceTaintRule {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  DeviceTaintRuleSpec spec;
  DeviceTaintRuleStatus status;
  bool operator==(const DeviceTaintRule&) const = default;
};

// ---------------------------------------------------------------- core/v1: Pod

struct ResourceClaimRef {  // core/v1 ResourceClaim (container claim reference)
  std::string name;
  std::string request;
  bool operator==(const ResourceClaimRef&) const = default;
};

struct ResourceRequirements {
  std::map<std::string, Quantity> limits;
  std::map<std::string, Quantity> requests;
  std::vector<ResourceClaimRef> claims;
  bool operator==(const ResourceRequirements&) const = default;
};

struct EnvVar {
  std::string name;
  std::string value;
  RawJson valueFrom;
  bool operator==(const EnvVar&) const = default;
};

struct Container {
  std::string name;
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<EnvVar> env;
  std::string workingDir;
  ResourceRequirements resources;
  RawJson extra;  // unmodelled members (ports, probes, volumeMounts, ...)
  bool operator==(const Container&) const = default;
};

struct PodResourceClaim {
  std::string name;
  std::optional<std::string> resourceClaimName;
  std::optional<std::string> resourceClaimTemplateName;
  bool operator==(const PodResourceClaim&) const = default;
};

struct NodeAffinity {
  std::optional<NodeSelector> requiredDuringSchedulingIgnoredDuringExecution;
  RawJson preferredDuringSchedulingIgnoredDuringExecution;
  bool operator==(const NodeAffinity&) const = default;
};

struct Affinity {
  std::optional<NodeAffinity> nodeAffinity;
  RawJson extra;  // podAffinity, podAntiAffinity
  bool operator==(const Affinity&) const = default;
};

// spec.schedulingGroup (1.36+, gate GenericWorkload): names the PodGroup.
struct PodSchedulingGroup {
  std::optional<std::string> podGroupName;
  bool operator==(const PodSchedulingGroup&) const = default;
};

struct PodSpec {
  std::vector<Container> initContainers;
  std::vector<Container> containers;
  std::string restartPolicy;
  std::string nodeName;
  std::string schedulerName;
  std::string priorityClassName;
  std::optional<int32_t> priority;
  std::optional<std::string> preemptionPolicy;  // Never | PreemptLowerPriority, set by priority admission
  std::map<std::string, std::string> nodeSelector;
  std::optional<Affinity> affinity;
  std::vector<Toleration> tolerations;
  std::vector<PodResourceClaim> resourceClaims;
  std::optional<int64_t> terminationGracePeriodSeconds;
  std::optional<PodSchedulingGroup> schedulingGroup;  // the PodGroup (gang) the pod belongs to; immutable
  RawJson extra;  // volumes, serviceAccountName, securityContext, ...
  bool operator==(const PodSpec&) const = default;
};

struct PodCondition {
  std::string type;
  std::string status;
  std::string lastProbeTime;
  std::string lastTransitionTime;
  std::string reason;
  std::string message;
  bool operator==(const PodCondition&) const = default;
};

struct PodResourceClaimStatus {
  std::string name;
  std::optional<std::string> resourceClaimName;
  bool operator==(const PodResourceClaimStatus&) const = default;
};

struct ContainerExtendedResourceRequest {
  std::string containerName;
  std::string resourceName;
  std::string requestName;
  bool operator==(const ContainerExtendedResourceRequest&) const = default;
};

struct PodExtendedResourceClaimStatus {
  std::vector<ContainerExtendedResourceRequest> requestMappings;
  std::string resourceClaimName;
  bool operator==(const PodExtendedResourceClaimStatus&) const = default;
};

struct PodStatus {
  std::string phase;  // Pending Running Succeeded Failed Unknown
  std::vector<PodCondition> conditions;
  std::string message;
  std::string reason;
  std::string nominatedNodeName;
  std::string hostIP;
  std::string podIP;
  std::string startTime;
  RawJson containerStatuses;  // JSON array, written by the node agent
  std::vector<PodResourceClaimStatus> resourceClaimStatuses;
  std::optional<PodExtendedResourceClaimStatus> extendedResourceClaimStatus;
  RawJson extra;
  bool operator==(const PodStatus&) const = default;
};

struct Pod {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
  bool operator==(const Pod&) const = default;
};

// ---------------------------------------------------------------- core/v1: Node, Namespace

struct NodeSpec {
  bool unschedulable = false;
  std::vector<Taint> taints;
  std::string providerID;
  RawJson extra;
  bool operator==(const NodeSpec&) const = default;
};

struct NodeStatus {
  std::map<std::string, Quantity> capacity;
  std::map<std::string, Quantity> allocatable;
  RawJson conditions;  // JSON array
  RawJson addresses;   // JSON array
  RawJson nodeInfo;    // JSON object
  RawJson extra;
  bool operator==(const NodeStatus&) const = default;
};

struct Node {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  NodeSpec spec;
  NodeStatus status;
  bool operator==(const Node&) const = default;
};

struct Namespace {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  std::vector<std::string> specFinalizers;  // spec.finalizers
  std::string phase;                        // status.phase
  bool operator==(const Namespace&) const = default;
};

// ---------------------------------------------------------------- core/v1 config and service kinds
// Stored and served; the node agent reads ConfigMaps and Secrets. Unmodelled
// members of specs and statuses stay in `extra`, as in the Pod.

struct ConfigMap {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  std::optional<bool> immutable;
  std::map<std::string, std::string> data;
  std::map<std::string, std::string> binaryData;  // base64 text, as JSON carries []byte
  bool operator==(const ConfigMap&) const = default;
};

// Secret.data values are base64 text (JSON's []byte); stringData is merged into
// data by defaulting (kube-apiserver's conversion) and never stored.
struct Secret {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  std::optional<bool> immutable;
  std::map<std::string, std::string> data;
  std::map<std::string, std::string> stringData;
  std::string type;
  bool operator==(const Secret&) const = default;
};

struct ObjectReference {
  std::string kind;
  std::string namespace_;  // JSON "namespace"
  std::string name;
  std::string uid;
  std::string apiVersion;
  std::string resourceVersion;
  std::string fieldPath;
  bool operator==(const ObjectReference&) const = default;
};

struct LocalObjectReference {
  std::string name;
  bool operator==(const LocalObjectReference&) const = default;
};

struct ServiceAccount {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  std::vector<ObjectReference> secrets;
  std::vector<LocalObjectReference> imagePullSecrets;
  std::optional<bool> automountServiceAccountToken;
  bool operator==(const ServiceAccount&) const = default;
};

struct ServicePort {
  std::string name;
  std::string protocol;
  std::optional<std::string> appProtocol;
  int32_t port = 0;
  RawJson targetPort;  // IntOrString: a JSON number or string
  int32_t nodePort = 0;
  bool operator==(const ServicePort&) const = default;
};

struct ServiceSpec {
  std::vector<ServicePort> ports;
  std::map<std::string, std::string> selector;
  std::string clusterIP;
  std::vector<std::string> clusterIPs;
  std::string type;
  std::string sessionAffinity;
  RawJson extra;  // externalIPs, loadBalancerIP, ipFamilies, ...
  bool operator==(const ServiceSpec&) const = default;
};

struct Service {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  ServiceSpec spec;
  RawJson status;  // loadBalancer, conditions: not modelled
  bool operator==(const Service&) const = default;
};

struct VolumeResourceRequirements {
  std::map<std::string, Quantity> limits;
  std::map<std::string, Quantity> requests;
  bool operator==(const VolumeResourceRequirements&) const = default;
};

struct PersistentVolumeClaimSpec {
  std::vector<std::string> accessModes;
  VolumeResourceRequirements resources;
  std::string volumeName;
  std::optional<std::string> storageClassName;
  std::optional<std::string> volumeMode;
  RawJson extra;  // selector, dataSource, dataSourceRef, volumeAttributesClassName
  bool operator==(const PersistentVolumeClaimSpec&) const = default;
};

struct PersistentVolumeClaimStatus {
  std::string phase;
  std::vector<std::string> accessModes;
  std::map<std::string, Quantity> capacity;
  RawJson extra;  // conditions, allocatedResources, ...
  bool operator==(const PersistentVolumeClaimStatus&) const = default;
};

struct PersistentVolumeClaim {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  PersistentVolumeClaimSpec spec;
  PersistentVolumeClaimStatus status;
  bool operator==(const PersistentVolumeClaim&) const = default;
};

// ---------------------------------------------------------------- scheduling.k8s.io/v1beta1

// Workload and PodGroup (KEP-4671, Kubernetes 1.37, gate GenericWorkload; SPEC
// §6): the gang-scheduling objects. The feature-gated members kube-apiserver
// forbids with their gates off (compositePodGroupTemplates,
// schedulingConstraints, preemptionPolicy, parentCompositePodGroupName) are not
// modelled. Validation: api/workload.h.

struct TypedLocalObjectReference {
  std::string apiGroup;
  std::string kind;
  std::string name;
  bool operator==(const TypedLocalObjectReference&) const = default;
};

struct BasicSchedulingPolicy {
  bool operator==(const BasicSchedulingPolicy&) const = default;
};

struct GangSchedulingPolicy {
  int32_t minCount = 0;
  bool operator==(const GangSchedulingPolicy&) const = default;
};

// A union: exactly one member is set.
struct PodGroupSchedulingPolicy {
  std::optional<BasicSchedulingPolicy> basic;
  std::optional<GangSchedulingPolicy> gang;
  bool operator==(const PodGroupSchedulingPolicy&) const = default;
};

// A claim shared by the pods of a group (KEP-5729): exactly one of the names.
struct PodGroupResourceClaim {
  std::string name;
  std::optional<std::string> resourceClaimName;
  std::optional<std::string> resourceClaimTemplateName;
  bool operator==(const PodGroupResourceClaim&) const = default;
};

struct SingleDisruptionMode {
  bool operator==(const SingleDisruptionMode&) const = default;
};
struct AllDisruptionMode {
  bool operator==(const AllDisruptionMode&) const = default;
};
// A union: exactly one member is set; a PodGroup's defaults to single.
struct DisruptionMode {
  std::optional<SingleDisruptionMode> single;
  std::optional<AllDisruptionMode> all;
  bool operator==(const DisruptionMode&) const = default;
};

struct PodGroupTemplate {
  std::string name;
  PodGroupSchedulingPolicy schedulingPolicy;
  std::vector<PodGroupResourceClaim> resourceClaims;
  std::optional<DisruptionMode> disruptionMode;
  std::string priorityClassName;
  std::optional<int32_t> priority;
  bool operator==(const PodGroupTemplate&) const = default;
};

struct WorkloadSpec {
  std::optional<TypedLocalObjectReference> controllerRef;
  std::vector<PodGroupTemplate> podGroupTemplates;
  bool operator==(const WorkloadSpec&) const = default;
};

struct Workload {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  WorkloadSpec spec;
  bool operator==(const Workload&) const = default;
};

// The Workload and template a PodGroup was made from.
struct WorkloadReference {
  std::string workloadName;
  std::string templateName;
  bool operator==(const WorkloadReference&) const = default;
};

struct PodGroupSpec {
  std::optional<WorkloadReference> workloadRef;
  PodGroupSchedulingPolicy schedulingPolicy;
  std::vector<PodGroupResourceClaim> resourceClaims;
  std::optional<DisruptionMode> disruptionMode;
  std::string priorityClassName;
  std::optional<int32_t> priority;
  bool operator==(const PodGroupSpec&) const = default;
};

struct PodGroupResourceClaimStatus {
  std::string name;
  std::optional<std::string> resourceClaimName;
  bool operator==(const PodGroupResourceClaimStatus&) const = default;
};

struct PodGroupStatus {
  std::vector<Condition> conditions;
  std::vector<PodGroupResourceClaimStatus> resourceClaimStatuses;
  bool operator==(const PodGroupStatus&) const = default;
};

struct PodGroup {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  PodGroupSpec spec;
  PodGroupStatus status;
  bool operator==(const PodGroup&) const = default;
};

// ---------------------------------------------------------------- apps/v1, batch/v1 workloads
// Deployment, ReplicaSet and Job: stored, defaulted and validated as
// kube-apiserver does; their controllers are separate. Members draplane does
// not model stay in `extra`.

struct LabelSelectorRequirement {
  std::string key;
  std::string operator_;  // JSON "operator": In | NotIn | Exists | DoesNotExist
  std::vector<std::string> values;
  bool operator==(const LabelSelectorRequirement&) const = default;
};

// metav1.LabelSelector.
struct LabelSelector {
  std::map<std::string, std::string> matchLabels;
  std::vector<LabelSelectorRequirement> matchExpressions;
  bool operator==(const LabelSelector&) const = default;
};

struct PodTemplateSpec {
  ObjectMeta metadata;
  PodSpec spec;
  bool operator==(const PodTemplateSpec&) const = default;
};

// Deployment and ReplicaSet conditions (lastUpdateTime is the Deployment's).
struct WorkloadCondition {
  std::string type;
  std::string status;
  std::string lastUpdateTime;
  std::string lastTransitionTime;
  std::string reason;
  std::string message;
  bool operator==(const WorkloadCondition&) const = default;
};

struct RollingUpdateDeployment {
  RawJson maxUnavailable;  // IntOrString: 2 or "25%"
  RawJson maxSurge;
  bool operator==(const RollingUpdateDeployment&) const = default;
};

struct DeploymentStrategy {
  std::string type;  // Recreate | RollingUpdate
  std::optional<RollingUpdateDeployment> rollingUpdate;
  bool operator==(const DeploymentStrategy&) const = default;
};

struct DeploymentSpec {
  std::optional<int32_t> replicas;
  std::optional<LabelSelector> selector;
  PodTemplateSpec template_;  // JSON "template"
  DeploymentStrategy strategy;
  int32_t minReadySeconds = 0;
  std::optional<int32_t> revisionHistoryLimit;
  bool paused = false;
  std::optional<int32_t> progressDeadlineSeconds;
  bool operator==(const DeploymentSpec&) const = default;
};

struct DeploymentStatus {
  int64_t observedGeneration = 0;
  int32_t replicas = 0;
  int32_t updatedReplicas = 0;
  int32_t readyReplicas = 0;
  int32_t availableReplicas = 0;
  int32_t unavailableReplicas = 0;
  std::optional<int32_t> terminatingReplicas;
  std::vector<WorkloadCondition> conditions;
  std::optional<int32_t> collisionCount;
  bool operator==(const DeploymentStatus&) const = default;
};

struct Deployment {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  DeploymentSpec spec;
  DeploymentStatus status;
  bool operator==(const Deployment&) const = default;
};

struct ReplicaSetSpec {
  std::optional<int32_t> replicas;
  int32_t minReadySeconds = 0;
  std::optional<LabelSelector> selector;
  PodTemplateSpec template_;  // JSON "template"
  bool operator==(const ReplicaSetSpec&) const = default;
};

struct ReplicaSetStatus {
  int32_t replicas = 0;
  int32_t fullyLabeledReplicas = 0;
  int32_t readyReplicas = 0;
  int32_t availableReplicas = 0;
  std::optional<int32_t> terminatingReplicas;
  int64_t observedGeneration = 0;
  std::vector<WorkloadCondition> conditions;
  bool operator==(const ReplicaSetStatus&) const = default;
};

struct ReplicaSet {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  ReplicaSetSpec spec;
  ReplicaSetStatus status;
  bool operator==(const ReplicaSet&) const = default;
};

// Job.spec.scheduling (KEP-5547, 1.37): the Job controller compiles it into a
// Workload and a PodGroup and creates the Job's pods in that PodGroup. A gang
// without minCount takes the Job's parallelism.
struct JobGangSchedulingPolicy {
  std::optional<int32_t> minCount;
  bool operator==(const JobGangSchedulingPolicy&) const = default;
};
struct JobSchedulingPolicy {
  std::optional<BasicSchedulingPolicy> basic;
  std::optional<JobGangSchedulingPolicy> gang;
  bool operator==(const JobSchedulingPolicy&) const = default;
};
struct JobSchedulingConfiguration {
  std::optional<JobSchedulingPolicy> schedulingPolicy;
  std::optional<DisruptionMode> disruptionMode;
  std::vector<PodGroupResourceClaim> resourceClaims;
  bool operator==(const JobSchedulingConfiguration&) const = default;
};

struct JobSpec {
  std::optional<int32_t> parallelism;
  std::optional<int32_t> completions;
  std::optional<int64_t> activeDeadlineSeconds;
  RawJson podFailurePolicy;  // {rules: [...]}: kept as written
  std::optional<int32_t> backoffLimit;
  std::optional<int32_t> backoffLimitPerIndex;
  std::optional<LabelSelector> selector;
  std::optional<bool> manualSelector;
  PodTemplateSpec template_;  // JSON "template"
  std::optional<int32_t> ttlSecondsAfterFinished;
  std::optional<std::string> completionMode;  // NonIndexed | Indexed
  std::optional<bool> suspend;
  std::optional<JobSchedulingConfiguration> scheduling;  // 1.37, gate WorkloadWithJob (KEP-5547)
  RawJson extra;  // successPolicy, maxFailedIndexes, podReplacementPolicy, managedBy
  bool operator==(const JobSpec&) const = default;
};

struct JobStatus {
  std::vector<PodCondition> conditions;  // JobCondition has PodCondition's members
  std::string startTime;
  std::string completionTime;
  int32_t active = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  std::optional<int32_t> terminating;
  std::string completedIndexes;
  std::optional<std::string> failedIndexes;
  std::optional<int32_t> ready;
  RawJson extra;  // uncountedTerminatedPods
  bool operator==(const JobStatus&) const = default;
};

struct Job {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  JobSpec spec;
  JobStatus status;
  bool operator==(const Job&) const = default;
};

// ---------------------------------------------------------------- scheduling.k8s.io/v1

// Maps a priority class name to the integer priority its pods get (resolved
// into spec.priority by priority admission when a pod is created).
struct PriorityClass {
  TypeMeta typeMeta;
  ObjectMeta metadata;
  int32_t value = 0;
  bool globalDefault = false;
  std::string description;
  std::optional<std::string> preemptionPolicy;  // defaulted to PreemptLowerPriority
  bool operator==(const PriorityClass&) const = default;
};

inline constexpr const char* kPreemptLowerPriority = "PreemptLowerPriority";
inline constexpr const char* kPreemptNever = "Never";
// scheduling.HighestUserDefinablePriority and the system classes' values.
inline constexpr int32_t kHighestUserDefinablePriority = 1'000'000'000;
inline constexpr int32_t kSystemCriticalPriority = 2 * kHighestUserDefinablePriority;

// Any object draplane decodes from a manifest stream.
// A kind is added here, with its field table (api/internal/fields_*.h), and the
// codec's decoding and encoding follow (kinds are dispatched on the tables'
// KindName).
using Object = std::variant<DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate,
                            Pod, Node, Namespace, DeviceTaintRule, ConfigMap, Secret, ServiceAccount,
                            Service, PersistentVolumeClaim, Deployment, ReplicaSet, Job, PriorityClass,
                            Workload, PodGroup>;

// Well-known strings.
inline constexpr const char* kGroup = "resource.k8s.io";
inline constexpr const char* kResourceV1 = "resource.k8s.io/v1";
inline constexpr const char* kAllocationModeExactCount = "ExactCount";
inline constexpr const char* kAllocationModeAll = "All";
// Names the resource API defines for its writers (k8s.io/api/resource/v1),
// written by the claim controller and the scheduler alike: the finalizer of an
// allocated claim, the pod claim a generated claim is for, and the claim made
// for a pod's extended resources.
inline constexpr const char* kDeleteProtectionFinalizer = "resource.kubernetes.io/delete-protection";
inline constexpr const char* kPodClaimNameAnnotation = "resource.kubernetes.io/pod-claim-name";
inline constexpr const char* kExtendedResourceClaimAnnotation = "resource.kubernetes.io/extended-resource-claim";
// batch/v1's (k8s.io/api/batch/v1): the API server labels a Job's pod
// template with these at create, the Job controller reads and writes them.
inline constexpr const char* kJobTrackingFinalizer = "batch.kubernetes.io/job-tracking";
inline constexpr const char* kJobCompletionIndex = "batch.kubernetes.io/job-completion-index";
inline constexpr const char* kJobIndexFailureCount = "batch.kubernetes.io/job-index-failure-count";
inline constexpr const char* kJobControllerUid = "batch.kubernetes.io/controller-uid";
inline constexpr const char* kJobName = "batch.kubernetes.io/job-name";

}  // namespace draplane::api
