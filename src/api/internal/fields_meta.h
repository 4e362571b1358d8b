// Field tables of meta/v1 and the core/v1 selector types (see field_table.h).
#pragma once

#include "api/internal/field_table.h"

namespace draplane::api::internal {

template <>
struct FieldTable<OwnerReference> {
  using T = OwnerReference;
  static constexpr auto fields = std::tuple(
      always("apiVersion", &T::apiVersion), always("kind", &T::kind), always("name", &T::name),
      always("uid", &T::uid), omitempty("controller", &T::controller),
      omitempty("blockOwnerDeletion", &T::blockOwnerDeletion));
};

template <>
struct FieldTable<ObjectMeta> {
  using T = ObjectMeta;
  static constexpr auto fields = std::tuple(
      omitempty("name", &T::name), omitempty("generateName", &T::generateName),
      omitempty("namespace", &T::namespace_),
      ignored("selfLink"),  // deprecated, never served since 1.20
      omitempty("uid", &T::uid), omitempty("resourceVersion", &T::resourceVersion),
      omitempty("generation", &T::generation),
      omitempty("creationTimestamp", &T::creationTimestamp, kTime),
      omitempty("deletionTimestamp", &T::deletionTimestamp, kTime),
      omitempty("deletionGracePeriodSeconds", &T::deletionGracePeriodSeconds),
      omitempty("labels", &T::labels), omitempty("annotations", &T::annotations),
      omitempty("ownerReferences", &T::ownerReferences), omitempty("finalizers", &T::finalizers),
      omitempty("managedFields", &T::managedFields, kArray));
};

template <>
struct FieldTable<Condition> {
  using T = Condition;
  static constexpr auto fields =
      std::tuple(always("type", &T::type), always("status", &T::status),
                 omitempty("observedGeneration", &T::observedGeneration),
                 always("lastTransitionTime", &T::lastTransitionTime, kTime),
                 always("reason", &T::reason), always("message", &T::message));
};

template <>
struct FieldTable<NodeSelectorRequirement> {
  using T = NodeSelectorRequirement;
  static constexpr auto fields = std::tuple(
      always("key", &T::key), always("operator", &T::operator_), omitempty("values", &T::values));
};

template <>
struct FieldTable<NodeSelectorTerm> {
  using T = NodeSelectorTerm;
  static constexpr auto fields = std::tuple(omitempty("matchExpressions", &T::matchExpressions),
                                            omitempty("matchFields", &T::matchFields));
};

template <>
struct FieldTable<NodeSelector> {
  static constexpr auto fields =
      std::tuple(always("nodeSelectorTerms", &NodeSelector::nodeSelectorTerms));
};

// A taint and a toleration have the same fields in core/v1 (nodes, pods) and
// resource.k8s.io/v1 (devices): one list each, for both types.
template <typename T>
constexpr auto taint_fields = std::tuple(always("key", &T::key), omitempty("value", &T::value),
                                         always("effect", &T::effect),
                                         omitempty("timeAdded", &T::timeAdded, kTime));

template <typename T>
constexpr auto toleration_fields = std::tuple(
    omitempty("key", &T::key), omitempty("operator", &T::operator_), omitempty("value", &T::value),
    omitempty("effect", &T::effect), omitempty("tolerationSeconds", &T::tolerationSeconds));

template <>
struct FieldTable<Taint> {
  static constexpr auto fields = taint_fields<Taint>;
};

template <>
struct FieldTable<Toleration> {
  static constexpr auto fields = toleration_fields<Toleration>;
};

// A top-level kind: apiVersion and kind (read by the caller, written first by
// the encoder), metadata, then the kind's own members.
template <typename T, typename... F>
constexpr auto object_fields(F... rest) {
  return std::tuple(ignored("apiVersion"), ignored("kind"), always("metadata", &T::metadata),
                    rest...);
}

}  // namespace draplane::api::internal
