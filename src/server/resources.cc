#include "server/resources.h"

#include <algorithm>

#include "server/strategies.h"

namespace draplane::server {

bool ResourceInfo::has_subresource(std::string_view s) const {
  return std::find(subresources.begin(), subresources.end(), s) != subresources.end();
}

ResourceInfo options_info(std::string options_kind) {
  ResourceInfo r;
  r.group = "meta.k8s.io";
  r.version = "v1";
  r.kind = std::move(options_kind);
  r.namespaced = false;
  return r;
}

// The one place a kind is registered: its resource, names, scope,
// subresources and strategy, once per served version.
const std::vector<ResourceInfo>& all_resources() {
  static const std::vector<ResourceInfo> kResources = {
      {"", "v1", "namespaces", "namespace", "Namespace", false, {"ns"}, {"status"}, &namespace_strategy()},
      {"", "v1", "nodes", "node", "Node", false, {"no"}, {"status"}, &node_strategy()},
      {"", "v1", "pods", "pod", "Pod", true, {"po"}, {"status", "binding", "log"}, &pod_strategy()},
      {"", "v1", "events", "event", "Event", true, {"ev"}, {}, &event_strategy()},
      {"", "v1", "configmaps", "configmap", "ConfigMap", true, {"cm"}, {}, &config_map_strategy()},
      {"", "v1", "secrets", "secret", "Secret", true, {}, {}, &secret_strategy()},
      {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true, {"sa"}, {}, &service_account_strategy()},
      {"", "v1", "services", "service", "Service", true, {"svc"}, {"status"}, &service_strategy()},
      {"", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", true, {"pvc"}, {"status"}, &persistent_volume_claim_strategy()},
      {"resource.k8s.io", "v1", "deviceclasses", "deviceclass", "DeviceClass", false, {}, {}, &device_class_strategy()},
      {"resource.k8s.io", "v1", "resourceclaims", "resourceclaim", "ResourceClaim", true, {}, {"status"}, &resource_claim_strategy()},
      {"resource.k8s.io", "v1", "resourceclaimtemplates", "resourceclaimtemplate", "ResourceClaimTemplate", true, {}, {}, &resource_claim_template_strategy()},
      {"resource.k8s.io", "v1", "resourceslices", "resourceslice", "ResourceSlice", false, {}, {}, &resource_slice_strategy()},
      {"resource.k8s.io", "v1", "devicetaintrules", "devicetaintrule", "DeviceTaintRule", false, {}, {"status"}, &device_taint_rule_strategy()},
      {"resource.k8s.io", "v1beta2", "deviceclasses", "deviceclass", "DeviceClass", false, {}, {}, &device_class_strategy(), true},
      {"resource.k8s.io", "v1beta2", "resourceclaims", "resourceclaim", "ResourceClaim", true, {}, {"status"}, &resource_claim_strategy(), true},
      {"resource.k8s.io", "v1beta2", "resourceclaimtemplates", "resourceclaimtemplate", "ResourceClaimTemplate", true, {}, {}, &resource_claim_template_strategy(), true},
      {"resource.k8s.io", "v1beta2", "resourceslices", "resourceslice", "ResourceSlice", false, {}, {}, &resource_slice_strategy(), true},
      {"resource.k8s.io", "v1beta1", "deviceclasses", "deviceclass", "DeviceClass", false, {}, {}, &device_class_strategy(), true},
      {"resource.k8s.io", "v1beta1", "resourceclaims", "resourceclaim", "ResourceClaim", true, {}, {"status"}, &resource_claim_strategy(), true},
      {"resource.k8s.io", "v1beta1", "resourceclaimtemplates", "resourceclaimtemplate", "ResourceClaimTemplate", true, {}, {}, &resource_claim_template_strategy(), true},
      {"resource.k8s.io", "v1beta1", "resourceslices", "resourceslice", "ResourceSlice", false, {}, {}, &resource_slice_strategy(), true},
      // The same objects as core/v1 events (stored as those), in the new shape.
      {"events.k8s.io", "v1", "events", "event", "Event", true, {"ev"}, {}, &event_strategy(), true},
      {"apps", "v1", "deployments", "deployment", "Deployment", true, {"deploy"}, {"status", "scale"}, &deployment_strategy()},
      {"apps", "v1", "replicasets", "replicaset", "ReplicaSet", true, {"rs"}, {"status", "scale"}, &replica_set_strategy()},
      {"apps", "v1", "statefulsets", "statefulset", "StatefulSet", true, {"sts"}, {"status", "scale"}, &stateful_set_strategy()},
      {"apps", "v1", "daemonsets", "daemonset", "DaemonSet", true, {"ds"}, {"status"}, &daemon_set_strategy()},
      {"batch", "v1", "jobs", "job", "Job", true, {}, {"status"}, &job_strategy()},
      {"coordination.k8s.io", "v1", "leases", "lease", "Lease", true, {}, {}, &lease_strategy()},
      {"scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", false, {"pc"}, {}, &priority_class_strategy()},
      {"scheduling.k8s.io", "v1beta1", "workloads", "workload", "Workload", true, {}, {}, &workload_strategy()},
      {"scheduling.k8s.io", "v1beta1", "podgroups", "podgroup", "PodGroup", true, {}, {"status"}, &pod_group_strategy()},
      {"scheduling.run.ai", "v2", "queues", "queue", "Queue", false, {}, {"status"}, &queue_strategy()},
  };
  return kResources;
}

const ResourceInfo* find_resource(std::string_view group, std::string_view version, std::string_view resource) {
  for (const auto& r : all_resources()) {
    if (r.group == group && r.version == version && r.resource == resource) return &r;
  }
  return nullptr;
}

const ResourceInfo* find_kind(std::string_view group, std::string_view kind) {
  for (const auto& r : all_resources()) {
    if (r.group == group && r.kind == kind && !r.converted) return &r;
  }
  return nullptr;
}

std::vector<GroupVersions> api_groups() {
  std::vector<GroupVersions> out;
  for (const auto& r : all_resources()) {
    if (r.group.empty()) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const GroupVersions& g) { return g.group == r.group; });
    if (it == out.end()) {
      out.push_back({r.group, {r.version}});
    } else if (std::find(it->versions.begin(), it->versions.end(), r.version) == it->versions.end()) {
      it->versions.push_back(r.version);
    }
  }
  return out;
}

}  // namespace draplane::server
