// A GET of one object, decoded: nullopt when the server has none (404), so
// that "not there" is an answer and not an error for callers that look
// objects up (the claim controller behind a lagging cache, the kubelet's
// ConfigMap and Secret volumes).
//
// Thread-safety: as the RestClient.
#pragma once

#include <optional>

#include "api/codec.h"
#include "client/resource_path.h"
#include "client/rest_client.h"
#include "common/result.h"

namespace draplane::client {

template <typename T>
Result<std::optional<T>> get_optional(RestClient& rest, const Path& path) {
  auto body = rest.get(path);
  if (!body.has_value()) {
    if (body.error().code() == Code::kNotFound) return std::optional<T>();
    return body.error();
  }
  ASSIGN_OR_RETURN(T obj, api::decode_as<T>(*body));
  return std::optional<T>(std::move(obj));
}

}  // namespace draplane::client
