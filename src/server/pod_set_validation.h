// Validation of apps/v1 StatefulSet and DaemonSet, which the server stores
// untyped: their selector, replicas and pod template are checked as a
// ReplicaSet's (api/validation_workloads.cc, upstream ValidateReplicaSetSpec
// and ValidatePodTemplateSpecForReplicaSet share these rules with
// ValidateStatefulSetSpec and ValidateDaemonSetSpec), plus their own
// updateStrategy (and a StatefulSet's podManagementPolicy), with upstream's
// field paths. Unset members get upstream's defaults first.
#pragma once

#include <optional>
#include <string>

#include "server/internal/api_impl.h"

namespace draplane::server {

enum class PodSetKind { kStatefulSet, kDaemonSet };

// Defaults `object` in place and validates it; the Invalid error, if any.
std::optional<ApiError> validate_pod_set(PodSetKind kind, const ResourceInfo& r, Json& object);

}  // namespace draplane::server
