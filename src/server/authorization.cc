#include "server/authorization.h"

#include <algorithm>
#include <map>
#include <set>

namespace draplane::server {
namespace {

constexpr const char* kNodeLabelsAdmission = "no restricted labels";
constexpr const char* kNodeUpdateAdmission = "taints unchanged; no restricted labels changed";
constexpr const char* kPodStatusAdmission = "labels and status.resourceClaimStatuses unchanged";
constexpr const char* kClaimStatusAdmission =
    "only status.devices entries of pool NODE change (the driver's device status)";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The prefix of a label key ("" when it has none).
std::string_view label_namespace(std::string_view key) {
  size_t slash = key.find('/');
  return slash == std::string_view::npos ? std::string_view() : key.substr(0, slash);
}

bool in_domain(std::string_view ns, std::string_view domain) {
  if (ns == domain) return true;
  return ns.size() > domain.size() && ends_with(ns, domain) && ns[ns.size() - domain.size() - 1] == '.';
}

// k8s.io/kubelet/pkg/apis IsKubeletLabel: the labels a kubelet sets on its own Node.
bool is_kubelet_label(std::string_view key) {
  static const std::set<std::string_view> labels = {
      "kubernetes.io/hostname",
      "topology.kubernetes.io/zone",
      "topology.kubernetes.io/region",
      "failure-domain.beta.kubernetes.io/zone",
      "failure-domain.beta.kubernetes.io/region",
      "beta.kubernetes.io/instance-type",
      "node.kubernetes.io/instance-type",
      "kubernetes.io/os",
      "kubernetes.io/arch",
      "beta.kubernetes.io/os",
      "beta.kubernetes.io/arch",
  };
  if (labels.count(key)) return true;
  std::string_view ns = label_namespace(key);
  return in_domain(ns, "kubelet.kubernetes.io") || in_domain(ns, "node.kubernetes.io");
}

std::map<std::string, std::string> labels_of(const JsonValue* obj) {
  std::map<std::string, std::string> out;
  const JsonValue* l = obj ? find(*obj, {"metadata", "labels"}) : nullptr;
  if (l == nullptr || !l->IsObject()) return out;
  for (auto it = l->MemberBegin(); it != l->MemberEnd(); ++it) {
    out[it->name.GetString()] = it->value.IsString() ? it->value.GetString() : to_string(it->value);
  }
  return out;
}

}  // namespace

const std::vector<AuthorizationRule>& authorization_rules() {
  using C = RuleCondition;
  static const std::vector<AuthorizationRule> rules = {
      {"admin", "*", "*", {"*"}, C::kAlways, ""},
      {"node", "", "nodes", {"create"}, C::kOwnNode, kNodeLabelsAdmission},
      {"node", "", "nodes", {"get", "list", "watch"}, C::kOwnNode, ""},
      {"node", "", "nodes", {"update", "patch"}, C::kOwnNode, kNodeUpdateAdmission},
      {"node", "", "nodes/status", {"update", "patch"}, C::kOwnNode, kNodeUpdateAdmission},
      {"node", "", "pods", {"get", "delete"}, C::kOnNode, ""},
      {"node", "", "pods", {"list", "watch"}, C::kPodsOfNode, ""},
      {"node", "", "pods/status", {"update", "patch"}, C::kOnNode, kPodStatusAdmission},
      {"node", "", "events", {"create", "update", "patch"}, C::kAlways, ""},
      {"node", "", "configmaps", {"get"}, C::kConfigOfBoundPod, ""},
      {"node", "", "secrets", {"get"}, C::kConfigOfBoundPod, ""},
      {"node", "coordination.k8s.io", "leases", {"get", "create", "update", "patch", "delete"}, C::kOwnLease, ""},
      {"node", "resource.k8s.io", "resourceslices", {"get", "create", "update", "patch", "delete"}, C::kOnNode, ""},
      {"node", "resource.k8s.io", "resourceslices", {"list", "watch", "deletecollection"}, C::kNodeNameSelector, ""},
      {"node", "resource.k8s.io", "resourceclaims", {"get"}, C::kClaimOfBoundPod, ""},
      {"node", "resource.k8s.io", "resourceclaims/status", {"update", "patch"}, C::kClaimOfBoundPod,
       kClaimStatusAdmission},
      {"node", "resource.k8s.io", "deviceclasses", {"get", "list", "watch"}, C::kAlways, ""},
  };
  return rules;
}

const AuthorizationRule* find_rule(std::string_view identity, std::string_view group, std::string_view resource,
                                   std::string_view subresource, std::string_view verb) {
  std::string full(resource);
  if (!subresource.empty()) full += "/" + std::string(subresource);
  for (const auto& r : authorization_rules()) {
    if (r.identity != identity) continue;
    if (r.group != "*" && r.group != group) continue;
    if (r.resource != "*" && r.resource != full) continue;
    for (const auto& v : r.verbs) {
      if (v == "*" || v == verb) return &r;
    }
  }
  return nullptr;
}

std::string condition_text(RuleCondition c) {
  // NODE: the node's name (user system:node:NODE); no angle brackets, which
  // Markdown would take for HTML.
  switch (c) {
    case RuleCondition::kAlways: return "always";
    case RuleCondition::kOwnNode: return "it is the Node NODE (list, watch: with fieldSelector metadata.name=NODE)";
    case RuleCondition::kNodeNameSelector: return "with fieldSelector spec.nodeName=NODE";
    case RuleCondition::kPodsOfNode:
      return "with fieldSelector spec.nodeName=NODE, or metadata.name= a pod bound to NODE";
    case RuleCondition::kOnNode: return "the object's spec.nodeName is NODE";
    case RuleCondition::kClaimOfBoundPod: return "a pod bound to NODE references the claim";
    case RuleCondition::kConfigOfBoundPod: return "a pod bound to NODE references the object (env, envFrom, volumes)";
    case RuleCondition::kOwnLease: return "it is the Lease kube-node-lease/NODE";
  }
  return "";
}

std::vector<std::string> forbidden_node_labels(const std::vector<std::string>& modified) {
  std::vector<std::string> out;
  for (const auto& key : modified) {
    std::string_view ns = label_namespace(key);
    bool restricted = in_domain(ns, "node-restriction.kubernetes.io");
    bool kubernetes = in_domain(ns, "kubernetes.io") || in_domain(ns, "k8s.io");
    if (restricted || (kubernetes && !is_kubelet_label(key))) out.push_back(key);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> modified_labels(const JsonValue* old_obj, const JsonValue* new_obj) {
  auto a = labels_of(old_obj), b = labels_of(new_obj);
  std::vector<std::string> out;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second != v) out.push_back(k);
  }
  for (const auto& [k, v] : b) {
    if (!a.count(k)) out.push_back(k);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool pod_references_claim(const JsonValue& pod, const std::string& claim) {
  std::set<std::string> entries;  // spec.resourceClaims[].name
  if (const JsonValue* rc = find(pod, {"spec", "resourceClaims"}); rc && rc->IsArray()) {
    for (const auto& c : rc->GetArray()) {
      if (!c.IsObject()) continue;
      if (get_string(c, {"resourceClaimName"}) == claim) return true;
      entries.insert(get_string(c, {"name"}));
    }
  }
  // Claims generated from templates: the entry's name in status.resourceClaimStatuses.
  if (const JsonValue* st = find(pod, {"status", "resourceClaimStatuses"}); st && st->IsArray()) {
    for (const auto& s : st->GetArray()) {
      if (s.IsObject() && get_string(s, {"resourceClaimName"}) == claim && entries.count(get_string(s, {"name"}))) {
        return true;
      }
    }
  }
  return get_string(pod, {"status", "extendedResourceClaimStatus", "resourceClaimName"}) == claim && !claim.empty();
}

}  // namespace draplane::server
