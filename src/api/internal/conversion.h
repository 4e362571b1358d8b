// Version conversion on the codec's JSON tree (used by the decoder before the
// typed decode, so every served version reaches the same v1 structs).
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include "api/internal/json_value.h"
#include "common/result.h"

namespace draplane::api::internal {

// Rewrites `object` (a resource.k8s.io object of `api_version`/`kind`) into the
// resource.k8s.io/v1 shape in place and sets its apiVersion to v1:
//   v1beta1: flat request fields -> requests[].exactly; devices[].basic{...} ->
//            devices[] fields; empty spec.nodeName / false spec.allNodes dropped.
//   v1beta2, v1: shape unchanged.
// Error (kBadRequest) with what to write instead for removed versions
// (v1alpha1, v1alpha2, v1alpha3) and removed kinds (ResourceClass,
// PodSchedulingContext, ResourceClaimParameters, ResourceClassParameters), and
// for an unknown version of the group.
Status convert_to_v1(JsonValue& object, std::string_view api_version, std::string_view kind);

// The resource.k8s.io kinds Kubernetes removed (ResourceClass, PodSchedulingContext,
// ResourceClaimParameters, ResourceClassParameters): convert_to_v1 says what to write.
bool is_removed_resource_kind(std::string_view kind);

// Rewrites a resource.k8s.io/v1 `object` of `kind` into the shape of
// `target_api_version` in place and sets its apiVersion (the inverse of
// convert_to_v1, as kube-apiserver converts stored objects for older clients):
//   v1beta1: requests[].exactly{...} -> flat request fields; device fields other
//            than name -> devices[].basic{...} (basic always present).
//   v1beta2, v1: shape unchanged.
// Error (kBadRequest) for a target version the group does not serve.
Status convert_from_v1(JsonValue& object, std::string_view target_api_version, std::string_view kind);

}  // namespace draplane::api::internal
