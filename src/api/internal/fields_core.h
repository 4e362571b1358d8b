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
      omitempty("resourceClaims", &T::resourceClaims));
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

}  // namespace draplane::api::internal
