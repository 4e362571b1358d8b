// Kubernetes protobuf request bodies (Content-Type application/vnd.kubernetes.protobuf),
// as client-go's typed clients send them (kubectl create namespace, ...): the
// 4-byte magic "k8s\0", then a runtime.Unknown message
//   typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2, contentEncoding = 3, contentType = 4
// whose raw bytes are the object in its generated.proto encoding.
//
// draplane reads the envelope for any kind and the object for core/v1
// Namespace, ConfigMap, Secret, and the subset of apps/v1 Deployment and batch/v1 Job that
// kubectl create sends (ObjectMeta: name 1, generateName 2, namespace 3, uid 5,
// resourceVersion 6, generation 7, creationTimestamp 8, labels 11,
// annotations 12, ownerReferences 13, finalizers 14; spec.finalizers;
// status.phase), and writes the object as the JSON the API server handles.
// gogo-protobuf writes proto2 scalars even when empty, so empty strings and
// zero numbers are taken as unset.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace draplane::server {

struct ProtobufBody {
  std::string api_version;  // typeMeta.apiVersion, "v1"
  std::string kind;         // typeMeta.kind, "Namespace"
  bool supported = false;   // the kind's object could be read (json is set)
  std::string json;
};

// kBadRequest naming the problem (missing magic, malformed wire data, a field
// of the wrong type, an ObjectMeta field draplane does not read, a content
// encoding) for a body that cannot be read.
Result<ProtobufBody> decode_protobuf_body(std::string_view body);

}  // namespace draplane::server
