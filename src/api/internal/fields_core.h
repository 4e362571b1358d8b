// Field tables of the core/v1 subset: Pod, Node, Namespace (see field_table.h),
// in Go struct order. Structs with `extra` keep their unmodelled members there.
#pragma once

#include "api/internal/fields_meta.h"

namespace draplane::api::internal {

// PodResourceClaim.source, the v1alpha2-era ClaimSource: an error that says what
// to write instead (codec_decode.cc).
void read_removed_claim_source(Decoder& d, const JsonValue& v, const FieldPath& parent,
                               const FieldPath& path, PodResourceClaim& out);

// ---------------------------------------------------------------- Pod

template <>
struct FieldTable<ResourceClaimRef> {
  static constexpr auto fields = std::tuple(always("name", &ResourceClaimRef::name),
                                            omitempty("request", &ResourceClaimRef::request));
};

template <>
struct FieldTable<ResourceRequirements> {
  using T = ResourceRequirements;
  static constexpr auto fields =
      std::tuple(omitempty("limits", &T::limits), omitempty("requests", &T::requests),
                 omitempty("claims", &T::claims));
};

template <>
struct FieldTable<EnvVar> {
  static constexpr auto fields =
      std::tuple(always("name", &EnvVar::name), omitempty("value", &EnvVar::value),
                 omitempty("valueFrom", &EnvVar::valueFrom));
};

template <>
struct FieldTable<Container> {
  using T = Container;
  static constexpr auto fields = std::tuple(
      always("name", &T::name), omitempty("image", &T::image), omitempty("command", &T::command),
      omitempty("args", &T::args), omitempty("workingDir", &T::workingDir),
      omitempty("env", &T::env), always("resources", &T::resources));
};

template <>
struct FieldTable<PodResourceClaim> {
  using T = PodResourceClaim;
  static constexpr auto fields =
      std::tuple(always("name", &T::name), omitempty("resourceClaimName", &T::resourceClaimName),
                 omitempty("resourceClaimTemplateName", &T::resourceClaimTemplateName),
                 hook<T, read_removed_claim_source>("source"));
};

template <>
struct FieldTable<NodeAffinity> {
  using T = NodeAffinity;
  static constexpr auto fields =
      std::tuple(omitempty("requiredDuringSchedulingIgnoredDuringExecution",
                           &T::requiredDuringSchedulingIgnoredDuringExecution),
                 omitempty("preferredDuringSchedulingIgnoredDuringExecution",
                           &T::preferredDuringSchedulingIgnoredDuringExecution));
};

template <>
struct FieldTable<Affinity> {
  static constexpr auto fields = std::tuple(omitempty("nodeAffinity", &Affinity::nodeAffinity));
};

template <>
struct FieldTable<PodSchedulingGroup> {
  static constexpr auto fields = std::tuple(omitempty("podGroupName", &PodSchedulingGroup::podGroupName));
};

template <>
struct FieldTable<PodSpec> {
  using T = PodSpec;
  static constexpr auto fields = std::tuple(
      omitempty("initContainers", &T::initContainers), always("containers", &T::containers),
      omitempty("restartPolicy", &T::restartPolicy),
      omitempty("terminationGracePeriodSeconds", &T::terminationGracePeriodSeconds),
      omitempty("nodeSelector", &T::nodeSelector), omitempty("nodeName", &T::nodeName),
      omitempty("affinity", &T::affinity), omitempty("schedulerName", &T::schedulerName),
      omitempty("tolerations", &T::tolerations),
      omitempty("priorityClassName", &T::priorityClassName), omitempty("priority", &T::priority),
      omitempty("preemptionPolicy", &T::preemptionPolicy), omitempty("resourceClaims", &T::resourceClaims),
      omitempty("schedulingGroup", &T::schedulingGroup));
};

template <>
struct FieldTable<PodCondition> {
  using T = PodCondition;
  static constexpr auto fields =
      std::tuple(always("type", &T::type), always("status", &T::status),
                 ignored("observedGeneration"),  // 1.34 field, not modelled
                 omitempty("lastProbeTime", &T::lastProbeTime, kTime),
                 omitempty("lastTransitionTime", &T::lastTransitionTime, kTime),
                 omitempty("reason", &T::reason), omitempty("message", &T::message));
};

template <>
struct FieldTable<PodResourceClaimStatus> {
  using T = PodResourceClaimStatus;
  static constexpr auto fields =
      std::tuple(always("name", &T::name), omitempty("resourceClaimName", &T::resourceClaimName));
};

template <>
struct FieldTable<ContainerExtendedResourceRequest> {
  using T = ContainerExtendedResourceRequest;
  static constexpr auto fields =
      std::tuple(always("containerName", &T::containerName),
                 always("resourceName", &T::resourceName), always("requestName", &T::requestName));
};

template <>
struct FieldTable<PodExtendedResourceClaimStatus> {
  using T = PodExtendedResourceClaimStatus;
  static constexpr auto fields = std::tuple(always("requestMappings", &T::requestMappings),
                                            always("resourceClaimName", &T::resourceClaimName));
};

template <>
struct FieldTable<PodStatus> {
  using T = PodStatus;
  static constexpr auto fields = std::tuple(
      omitempty("phase", &T::phase), omitempty("conditions", &T::conditions),
      omitempty("message", &T::message), omitempty("reason", &T::reason),
      omitempty("nominatedNodeName", &T::nominatedNodeName), omitempty("hostIP", &T::hostIP),
      omitempty("podIP", &T::podIP), omitempty("startTime", &T::startTime, kTime),
      omitempty("containerStatuses", &T::containerStatuses),
      omitempty("resourceClaimStatuses", &T::resourceClaimStatuses),
      omitempty("extendedResourceClaimStatus", &T::extendedResourceClaimStatus));
};

template <>
struct FieldTable<Pod> {
  using T = Pod;
  static constexpr KindName kind{"Pod", "v1"};
  static constexpr auto fields =
      object_fields<T>(always("spec", &T::spec), always("status", &T::status));
};

// ---------------------------------------------------------------- Node, Namespace

template <>
struct FieldTable<NodeSpec> {
  using T = NodeSpec;
  static constexpr auto fields =
      std::tuple(omitempty("providerID", &T::providerID),
                 omitempty("unschedulable", &T::unschedulable), omitempty("taints", &T::taints));
};

template <>
struct FieldTable<NodeStatus> {
  using T = NodeStatus;
  static constexpr auto fields =
      std::tuple(omitempty("capacity", &T::capacity), omitempty("allocatable", &T::allocatable),
                 omitempty("conditions", &T::conditions), omitempty("addresses", &T::addresses),
                 omitempty("nodeInfo", &T::nodeInfo));
};

template <>
struct FieldTable<Node> {
  using T = Node;
  static constexpr KindName kind{"Node", "v1"};
  static constexpr auto fields =
      object_fields<T>(always("spec", &T::spec), always("status", &T::status));
};

// Namespace keeps spec.finalizers and status.phase flat in the struct.
template <>
struct FieldTable<Namespace> {
  using T = Namespace;
  static constexpr KindName kind{"Namespace", "v1"};
  static constexpr auto fields =
      object_fields<T>(nested("spec", omitempty("finalizers", &T::specFinalizers)),
                       nested("status", omitempty("phase", &T::phase),
                              ignored("conditions")));  // controller-written, not modelled
};

// ---------------------------------------------------------------- ConfigMap, Secret, ServiceAccount,
// Service, PersistentVolumeClaim

template <>
struct FieldTable<ConfigMap> {
  using T = ConfigMap;
  static constexpr KindName kind{"ConfigMap", "v1"};
  static constexpr auto fields = object_fields<T>(omitempty("immutable", &T::immutable), omitempty("data", &T::data),
                                                  omitempty("binaryData", &T::binaryData));
};

template <>
struct FieldTable<Secret> {
  using T = Secret;
  static constexpr KindName kind{"Secret", "v1"};
  static constexpr auto fields =
      object_fields<T>(omitempty("immutable", &T::immutable), omitempty("data", &T::data),
                       omitempty("stringData", &T::stringData), omitempty("type", &T::type));
};

template <>
struct FieldTable<ObjectReference> {
  using T = ObjectReference;
  static constexpr auto fields =
      std::tuple(omitempty("kind", &T::kind), omitempty("namespace", &T::namespace_), omitempty("name", &T::name),
                 omitempty("uid", &T::uid), omitempty("apiVersion", &T::apiVersion),
                 omitempty("resourceVersion", &T::resourceVersion), omitempty("fieldPath", &T::fieldPath));
};

template <>
struct FieldTable<LocalObjectReference> {
  static constexpr auto fields = std::tuple(omitempty("name", &LocalObjectReference::name));
};

template <>
struct FieldTable<ServiceAccount> {
  using T = ServiceAccount;
  static constexpr KindName kind{"ServiceAccount", "v1"};
  static constexpr auto fields =
      object_fields<T>(omitempty("secrets", &T::secrets), omitempty("imagePullSecrets", &T::imagePullSecrets),
                       omitempty("automountServiceAccountToken", &T::automountServiceAccountToken));
};

template <>
struct FieldTable<ServicePort> {
  using T = ServicePort;
  static constexpr auto fields =
      std::tuple(omitempty("name", &T::name), omitempty("protocol", &T::protocol),
                 omitempty("appProtocol", &T::appProtocol), always("port", &T::port),
                 omitempty("targetPort", &T::targetPort), omitempty("nodePort", &T::nodePort));
};

template <>
struct FieldTable<ServiceSpec> {
  using T = ServiceSpec;
  static constexpr auto fields =
      std::tuple(omitempty("ports", &T::ports), omitempty("selector", &T::selector),
                 omitempty("clusterIP", &T::clusterIP), omitempty("clusterIPs", &T::clusterIPs),
                 omitempty("type", &T::type), omitempty("sessionAffinity", &T::sessionAffinity));
};

template <>
struct FieldTable<Service> {
  using T = Service;
  static constexpr KindName kind{"Service", "v1"};
  static constexpr auto fields = object_fields<T>(always("spec", &T::spec), omitempty("status", &T::status));
};

template <>
struct FieldTable<VolumeResourceRequirements> {
  using T = VolumeResourceRequirements;
  static constexpr auto fields = std::tuple(omitempty("limits", &T::limits), omitempty("requests", &T::requests));
};

template <>
struct FieldTable<PersistentVolumeClaimSpec> {
  using T = PersistentVolumeClaimSpec;
  static constexpr auto fields =
      std::tuple(omitempty("accessModes", &T::accessModes), always("resources", &T::resources),
                 omitempty("volumeName", &T::volumeName), omitempty("storageClassName", &T::storageClassName),
                 omitempty("volumeMode", &T::volumeMode));
};

template <>
struct FieldTable<PersistentVolumeClaimStatus> {
  using T = PersistentVolumeClaimStatus;
  static constexpr auto fields = std::tuple(omitempty("phase", &T::phase), omitempty("accessModes", &T::accessModes),
                                            omitempty("capacity", &T::capacity));
};

template <>
struct FieldTable<PersistentVolumeClaim> {
  using T = PersistentVolumeClaim;
  static constexpr KindName kind{"PersistentVolumeClaim", "v1"};
  static constexpr auto fields =
      object_fields<T>(always("spec", &T::spec), always("status", &T::status));
};

// ---------------------------------------------------------------- Deployment, ReplicaSet, Job

template <>
struct FieldTable<LabelSelectorRequirement> {
  using T = LabelSelectorRequirement;
  static constexpr auto fields = std::tuple(always("key", &T::key), always("operator", &T::operator_),
                                            omitempty("values", &T::values));
};

template <>
struct FieldTable<LabelSelector> {
  using T = LabelSelector;
  static constexpr auto fields =
      std::tuple(omitempty("matchLabels", &T::matchLabels), omitempty("matchExpressions", &T::matchExpressions));
};

template <>
struct FieldTable<PodTemplateSpec> {
  using T = PodTemplateSpec;
  static constexpr auto fields = std::tuple(always("metadata", &T::metadata), always("spec", &T::spec));
};

template <>
struct FieldTable<WorkloadCondition> {
  using T = WorkloadCondition;
  static constexpr auto fields =
      std::tuple(always("type", &T::type), always("status", &T::status),
                 omitempty("lastUpdateTime", &T::lastUpdateTime, kTime),
                 omitempty("lastTransitionTime", &T::lastTransitionTime, kTime), omitempty("reason", &T::reason),
                 omitempty("message", &T::message));
};

template <>
struct FieldTable<RollingUpdateDeployment> {
  using T = RollingUpdateDeployment;
  static constexpr auto fields =
      std::tuple(omitempty("maxUnavailable", &T::maxUnavailable), omitempty("maxSurge", &T::maxSurge));
};

template <>
struct FieldTable<DeploymentStrategy> {
  using T = DeploymentStrategy;
  static constexpr auto fields = std::tuple(omitempty("type", &T::type), omitempty("rollingUpdate", &T::rollingUpdate));
};

template <>
struct FieldTable<DeploymentSpec> {
  using T = DeploymentSpec;
  static constexpr auto fields = std::tuple(
      omitempty("replicas", &T::replicas), omitempty("selector", &T::selector), always("template", &T::template_),
      always("strategy", &T::strategy), omitempty("minReadySeconds", &T::minReadySeconds),
      omitempty("revisionHistoryLimit", &T::revisionHistoryLimit), omitempty("paused", &T::paused),
      omitempty("progressDeadlineSeconds", &T::progressDeadlineSeconds));
};

template <>
struct FieldTable<DeploymentStatus> {
  using T = DeploymentStatus;
  static constexpr auto fields = std::tuple(
      omitempty("observedGeneration", &T::observedGeneration), omitempty("replicas", &T::replicas),
      omitempty("updatedReplicas", &T::updatedReplicas), omitempty("readyReplicas", &T::readyReplicas),
      omitempty("availableReplicas", &T::availableReplicas), omitempty("unavailableReplicas", &T::unavailableReplicas),
      omitempty("terminatingReplicas", &T::terminatingReplicas), omitempty("conditions", &T::conditions),
      omitempty("collisionCount", &T::collisionCount));
};

template <>
struct FieldTable<Deployment> {
  using T = Deployment;
  static constexpr KindName kind{"Deployment", "apps/v1"};
  static constexpr auto fields = object_fields<T>(always("spec", &T::spec), always("status", &T::status));
};

template <>
struct FieldTable<ReplicaSetSpec> {
  using T = ReplicaSetSpec;
  static constexpr auto fields =
      std::tuple(omitempty("replicas", &T::replicas), omitempty("minReadySeconds", &T::minReadySeconds),
                 omitempty("selector", &T::selector), always("template", &T::template_));
};

template <>
struct FieldTable<ReplicaSetStatus> {
  using T = ReplicaSetStatus;
  static constexpr auto fields = std::tuple(
      always("replicas", &T::replicas), omitempty("fullyLabeledReplicas", &T::fullyLabeledReplicas),
      omitempty("readyReplicas", &T::readyReplicas), omitempty("availableReplicas", &T::availableReplicas),
      omitempty("terminatingReplicas", &T::terminatingReplicas),
      omitempty("observedGeneration", &T::observedGeneration), omitempty("conditions", &T::conditions));
};

template <>
struct FieldTable<ReplicaSet> {
  using T = ReplicaSet;
  static constexpr KindName kind{"ReplicaSet", "apps/v1"};
  static constexpr auto fields = object_fields<T>(always("spec", &T::spec), always("status", &T::status));
};

// ---------------------------------------------------------------- Workload, PodGroup

template <>
struct FieldTable<TypedLocalObjectReference> {
  using T = TypedLocalObjectReference;
  static constexpr auto fields =
      std::tuple(omitempty("apiGroup", &T::apiGroup), always("kind", &T::kind), always("name", &T::name));
};

template <>
struct FieldTable<BasicSchedulingPolicy> {
  static constexpr auto fields = std::tuple();
};

template <>
struct FieldTable<GangSchedulingPolicy> {
  static constexpr auto fields = std::tuple(always("minCount", &GangSchedulingPolicy::minCount));
};

template <>
struct FieldTable<PodGroupSchedulingPolicy> {
  using T = PodGroupSchedulingPolicy;
  static constexpr auto fields = std::tuple(omitempty("basic", &T::basic), omitempty("gang", &T::gang));
};

template <>
struct FieldTable<PodGroupResourceClaim> {
  using T = PodGroupResourceClaim;
  static constexpr auto fields =
      std::tuple(always("name", &T::name), omitempty("resourceClaimName", &T::resourceClaimName),
                 omitempty("resourceClaimTemplateName", &T::resourceClaimTemplateName));
};

template <>
struct FieldTable<SingleDisruptionMode> {
  static constexpr auto fields = std::tuple();
};

template <>
struct FieldTable<AllDisruptionMode> {
  static constexpr auto fields = std::tuple();
};

template <>
struct FieldTable<DisruptionMode> {
  using T = DisruptionMode;
  static constexpr auto fields = std::tuple(omitempty("single", &T::single), omitempty("all", &T::all));
};

template <>
struct FieldTable<PodGroupTemplate> {
  using T = PodGroupTemplate;
  static constexpr auto fields =
      std::tuple(always("name", &T::name), always("schedulingPolicy", &T::schedulingPolicy),
                 omitempty("resourceClaims", &T::resourceClaims), omitempty("disruptionMode", &T::disruptionMode),
                 omitempty("priorityClassName", &T::priorityClassName), omitempty("priority", &T::priority));
};

template <>
struct FieldTable<WorkloadSpec> {
  using T = WorkloadSpec;
  static constexpr auto fields =
      std::tuple(omitempty("controllerRef", &T::controllerRef), always("podGroupTemplates", &T::podGroupTemplates));
};

template <>
struct FieldTable<Workload> {
  using T = Workload;
  static constexpr KindName kind{"Workload", "scheduling.k8s.io/v1beta1"};
  static constexpr auto fields = object_fields<T>(always("spec", &T::spec));
};

template <>
struct FieldTable<WorkloadReference> {
  using T = WorkloadReference;
  static constexpr auto fields = std::tuple(always("workloadName", &T::workloadName), always("templateName", &T::templateName));
};

template <>
struct FieldTable<PodGroupSpec> {
  using T = PodGroupSpec;
  static constexpr auto fields =
      std::tuple(omitempty("workloadRef", &T::workloadRef), always("schedulingPolicy", &T::schedulingPolicy),
                 omitempty("resourceClaims", &T::resourceClaims), omitempty("disruptionMode", &T::disruptionMode),
                 omitempty("priorityClassName", &T::priorityClassName), omitempty("priority", &T::priority));
};

template <>
struct FieldTable<PodGroupResourceClaimStatus> {
  using T = PodGroupResourceClaimStatus;
  static constexpr auto fields = std::tuple(always("name", &T::name), omitempty("resourceClaimName", &T::resourceClaimName));
};

template <>
struct FieldTable<PodGroupStatus> {
  using T = PodGroupStatus;
  static constexpr auto fields = std::tuple(omitempty("conditions", &T::conditions),
                                            omitempty("resourceClaimStatuses", &T::resourceClaimStatuses));
};

template <>
struct FieldTable<PodGroup> {
  using T = PodGroup;
  static constexpr KindName kind{"PodGroup", "scheduling.k8s.io/v1beta1"};
  static constexpr auto fields =
      object_fields<T>(always("spec", &T::spec), omitempty("status", &T::status));
};

template <>
struct FieldTable<JobGangSchedulingPolicy> {
  static constexpr auto fields = std::tuple(omitempty("minCount", &JobGangSchedulingPolicy::minCount));
};

template <>
struct FieldTable<JobSchedulingPolicy> {
  using T = JobSchedulingPolicy;
  static constexpr auto fields = std::tuple(omitempty("basic", &T::basic), omitempty("gang", &T::gang));
};

template <>
struct FieldTable<JobSchedulingConfiguration> {
  using T = JobSchedulingConfiguration;
  static constexpr auto fields =
      std::tuple(omitempty("schedulingPolicy", &T::schedulingPolicy), omitempty("disruptionMode", &T::disruptionMode),
                 omitempty("resourceClaims", &T::resourceClaims));
};

template <>
struct FieldTable<JobSpec> {
  using T = JobSpec;
  static constexpr auto fields = std::tuple(
      omitempty("parallelism", &T::parallelism), omitempty("completions", &T::completions),
      omitempty("activeDeadlineSeconds", &T::activeDeadlineSeconds),
      omitempty("podFailurePolicy", &T::podFailurePolicy), omitempty("backoffLimit", &T::backoffLimit),
      omitempty("backoffLimitPerIndex", &T::backoffLimitPerIndex), omitempty("selector", &T::selector),
      omitempty("manualSelector", &T::manualSelector), always("template", &T::template_),
      omitempty("ttlSecondsAfterFinished", &T::ttlSecondsAfterFinished),
      omitempty("completionMode", &T::completionMode), omitempty("suspend", &T::suspend),
      omitempty("scheduling", &T::scheduling));
};

template <>
struct FieldTable<JobStatus> {
  using T = JobStatus;
  static constexpr auto fields = std::tuple(
      omitempty("conditions", &T::conditions), omitempty("startTime", &T::startTime, kTime),
      omitempty("completionTime", &T::completionTime, kTime), omitempty("active", &T::active),
      omitempty("succeeded", &T::succeeded), omitempty("failed", &T::failed),
      omitempty("terminating", &T::terminating), omitempty("completedIndexes", &T::completedIndexes),
      omitempty("failedIndexes", &T::failedIndexes), omitempty("ready", &T::ready));
};

template <>
struct FieldTable<Job> {
  using T = Job;
  static constexpr KindName kind{"Job", "batch/v1"};
  static constexpr auto fields = object_fields<T>(always("spec", &T::spec), always("status", &T::status));
};

// ---------------------------------------------------------------- PriorityClass

template <>
struct FieldTable<PriorityClass> {
  using T = PriorityClass;
  static constexpr KindName kind{"PriorityClass", "scheduling.k8s.io/v1"};
  static constexpr auto fields =
      object_fields<T>(always("value", &T::value), omitempty("globalDefault", &T::globalDefault),
                       omitempty("description", &T::description), omitempty("preemptionPolicy", &T::preemptionPolicy));
};

}  // namespace draplane::api::internal
