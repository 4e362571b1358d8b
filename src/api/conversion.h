// Conversion between resource.k8s.io API versions.
//
// draplane's object model is resource.k8s.io/v1. The decoder (codec.h) converts
// v1beta1 and v1beta2 input to v1 losslessly as it reads, and rejects removed
// versions (v1alpha2 and friends: ResourceClass, classParameters, pod claim
// `source:`) with an error that says exactly what to write in v1 instead. This
// header is the entry point for `draplane convert`.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/codec.h"
#include "common/result.h"

namespace draplane::api {

// The version `draplane convert --to` accepts.
inline constexpr std::string_view kConvertTarget = "resource.k8s.io/v1";

// OK when objects can be converted to `target_api_version`; error (kInvalid)
// naming the supported target otherwise.
Status check_conversion_target(std::string_view target_api_version);

// Decodes (and so converts) every document of a stream; each successful
// document is a v1 object whose typeMeta.apiVersion is the v1 one.
std::vector<DecodedDocument> convert_stream(std::string_view text);

// The served versions of resource.k8s.io, storage (v1) first.
inline constexpr std::string_view kServedResourceVersions[] = {
    "resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1"};

// Converts one resource.k8s.io object given as JSON text from the version its
// apiVersion names (v1, v1beta2, v1beta1) to `target_api_version` (one of
// those), through v1, without decoding it: unknown fields stay where they are
// (the typed decoder reports them later), numbers keep their text. Returns
// compact JSON with apiVersion set to the target. kBadRequest for text that is
// not a JSON object, a removed or unknown source version, or an unserved target.
Result<std::string> convert_json(std::string_view json, std::string_view target_api_version);

}  // namespace draplane::api
