#include "server/field_schema.h"

namespace draplane::server::ssa {
namespace {

using Nodes = std::unordered_map<std::string, NodeType>;

NodeType map() { return {NodeKind::kMap, {}}; }
NodeType atomic() { return {NodeKind::kAtomic, {}}; }
NodeType set() { return {NodeKind::kSet, {}}; }
NodeType assoc(std::vector<std::string> keys) { return {NodeKind::kAssociative, std::move(keys)}; }

// ObjectMeta at `prefix` ("metadata", or "spec.metadata" of a template).
void object_meta(Nodes& n, const std::string& prefix) {
  n[field_path(prefix, "labels")] = map();
  n[field_path(prefix, "annotations")] = map();
  n[field_path(prefix, "finalizers")] = set();
  n[field_path(prefix, "ownerReferences")] = assoc({"uid"});
  n[field_path(prefix, "managedFields")] = atomic();
}

void container(Nodes& n, const std::string& c) {
  n[field_path(c, "ports")] = assoc({"containerPort", "protocol"});
  n[field_path(c, "env")] = assoc({"name"});
  n[field_path(c, "volumeMounts")] = assoc({"mountPath"});
  n[field_path(c, "volumeDevices")] = assoc({"devicePath"});
  n[field_path(c, "resources.limits")] = map();
  n[field_path(c, "resources.requests")] = map();
  n[field_path(c, "resources.claims")] = assoc({"name"});
}

Nodes common() {
  Nodes n;
  object_meta(n, "metadata");
  return n;
}

Nodes resource_claim() {
  // spec.devices.requests, constraints and config are +listType=atomic: the default.
  Nodes n = common();
  n["status.reservedFor"] = assoc({"uid"});
  n["status.devices"] = assoc({"driver", "device", "pool", "shareID"});
  n["status.devices[].conditions"] = assoc({"type"});
  n["status.devices[].data"] = atomic();  // runtime.RawExtension
  n["status.devices[].networkData.ips"] = atomic();
  return n;
}

Nodes resource_claim_template() {
  Nodes n = common();
  object_meta(n, "spec.metadata");
  return n;
}

Nodes pod() {
  Nodes n = common();
  for (const char* list : {"spec.containers", "spec.initContainers", "spec.ephemeralContainers"}) {
    n[list] = assoc({"name"});
    container(n, item_path(list));
  }
  n["spec.volumes"] = assoc({"name"});
  n["spec.nodeSelector"] = map();
  n["spec.overhead"] = map();
  n["spec.resourceClaims"] = assoc({"name"});
  n["spec.imagePullSecrets"] = assoc({"name"});
  n["spec.schedulingGates"] = assoc({"name"});
  n["spec.hostAliases"] = assoc({"ip"});
  n["spec.resources.limits"] = map();
  n["spec.resources.requests"] = map();
  n["status.conditions"] = assoc({"type"});
  n["status.resourceClaimStatuses"] = assoc({"name"});
  n["status.podIPs"] = assoc({"ip"});
  n["status.hostIPs"] = assoc({"ip"});
  return n;
}

Nodes node() {
  Nodes n = common();
  n["spec.podCIDRs"] = set();
  n["status.capacity"] = map();
  n["status.allocatable"] = map();
  n["status.conditions"] = assoc({"type"});
  n["status.addresses"] = assoc({"type"});
  return n;
}

Nodes namespace_() {
  Nodes n = common();
  n["status.conditions"] = assoc({"type"});
  return n;
}

}  // namespace

const NodeType& Schema::at(const std::string& schema_path) const {
  static const NodeType kDefault;
  auto it = nodes_.find(schema_path);
  return it == nodes_.end() ? kDefault : it->second;
}

const Schema& schema_for(std::string_view group, std::string_view kind) {
  static const Schema kCommon(common());
  static const Schema kClaim(resource_claim());
  static const Schema kTemplate(resource_claim_template());
  static const Schema kPod(pod());
  static const Schema kNode(node());
  static const Schema kNamespace(namespace_());
  if (group == "resource.k8s.io") {
    if (kind == "ResourceClaim") return kClaim;
    if (kind == "ResourceClaimTemplate") return kTemplate;
    return kCommon;
  }
  if (group.empty()) {
    if (kind == "Pod") return kPod;
    if (kind == "Node") return kNode;
    if (kind == "Namespace") return kNamespace;
  }
  return kCommon;
}

}  // namespace draplane::server::ssa
