// Object -> JsonValue in the Kubernetes JSON shape (codec_encode.cc).
// Thread-safety: pure function.
#pragma once

#include "api/internal/json_value.h"
#include "api/types.h"

namespace draplane::api::internal {

// kind and apiVersion first (apiVersion from typeMeta, or resource.k8s.io/v1 /
// v1 when empty), then metadata, spec, status in Go struct order.
JsonValue encode_object(const Object& object);

}  // namespace draplane::api::internal
