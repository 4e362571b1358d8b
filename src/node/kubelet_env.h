// The container's own environment as the kubelet builds it
// (pkg/kubelet/kubelet_pods.go makeEnvironmentVariables): envFrom entries
// (ConfigMaps and Secrets, with their prefix), then env entries, a later one
// replacing an earlier one of the same name; env values from valueFrom:
// configMapKeyRef, secretKeyRef (optional or not) and fieldRef (metadata.name,
// metadata.namespace, metadata.uid, metadata.labels['k'],
// metadata.annotations['k'], spec.nodeName, spec.serviceAccountName,
// spec.hostname, status.hostIP, status.podIP, status.podIPs).
//
// A reference that cannot be resolved (missing object or key, not optional) is
// the kubelet's CreateContainerConfigError: the error's message is the
// kubelet's ("configmap \"x\" not found", "couldn't find key k in Secret ns/s").
//
// Pure functions over the lookups; thread-safe when the lookups are.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/types.h"
#include "common/result.h"

namespace draplane::node {

// Lookups in the pod's namespace: nullopt when the object does not exist; an
// error for any other failure (the container waits and is retried).
struct EnvSources {
  std::function<Result<std::optional<api::ConfigMap>>(const std::string& name)> config_map;
  std::function<Result<std::optional<api::Secret>>(const std::string& name)> secret;
};

// "NAME=value" entries of the container's envFrom and env, in order.
// kFailedPrecondition (CreateContainerConfigError) for an unresolvable
// reference; the lookups' errors otherwise.
Result<std::vector<std::string>> resolve_container_env(const api::Pod& pod, const api::Container& container,
                                                        const EnvSources& sources);

// The pod's hostname: spec.hostname when set, else the pod's name.
std::string pod_hostname(const api::Pod& pod);

}  // namespace draplane::node
