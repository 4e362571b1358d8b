// Who may do what: the authorization table the API server enforces, and the
// object checks of NodeRestriction admission.
//
// Identities (credentials.h): the admin (group system:masters) may do anything;
// a node (user system:node:<name>) may do what kube-apiserver's node authorizer
// (plugin/pkg/auth/authorizer/node, with AuthorizeNodeWithSelectors) and the
// NodeRestriction admission plugin allow it; any other authenticated user may
// read discovery only; anonymous requests get 401 except for the health and
// version endpoints. The in-process scheduler and controllers use the admin
// token (there are no separate scheduler or controller identities).
//
// authorization_rules() is the table docs/security.md shows; a unit test checks
// that the two agree (tests/server/authorization_test.cc).
//
// Thread-safety: immutable tables and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/json_util.h"

namespace draplane::server {

// When a rule allows a request.
enum class RuleCondition {
  kAlways,
  // The Node named after the requesting node (list/watch: fieldSelector
  // metadata.name=<node>; create: the new object's name).
  kOwnNode,
  // list/watch/deletecollection with the fieldSelector spec.nodeName=<node>.
  kNodeNameSelector,
  // pods list/watch: kNodeNameSelector, or metadata.name=<a pod bound to the node>
  // in a namespace.
  kPodsOfNode,
  // The object's spec.nodeName is the node (existing object and, on create and
  // update, the new one).
  kOnNode,
  // A ResourceClaim that a pod bound to the node references (spec.resourceClaims
  // by name, through status.resourceClaimStatuses, or its extended resource claim).
  kClaimOfBoundPod,
  // A ConfigMap or Secret that a pod bound to the node references (env,
  // envFrom, volumes; a Secret also as imagePullSecrets).
  kConfigOfBoundPod,
  // The Lease named after the node in namespace kube-node-lease.
  kOwnLease,
};

struct AuthorizationRule {
  std::string identity;   // "admin" or "node"
  std::string group;      // API group ("" core, "*" any)
  std::string resource;   // plural, with "/subresource"; "*" any
  std::vector<std::string> verbs;  // "*" any
  RuleCondition condition = RuleCondition::kAlways;
  // Further NodeRestriction checks of the object written ("" none).
  std::string admission;
};

// Every rule; a request no rule allows is forbidden.
const std::vector<AuthorizationRule>& authorization_rules();
// The rule of `identity` for group, resource[/subresource] and verb, or nullptr.
const AuthorizationRule* find_rule(std::string_view identity, std::string_view group, std::string_view resource,
                                   std::string_view subresource, std::string_view verb);
// The condition as docs/security.md words it.
std::string condition_text(RuleCondition c);

// NodeRestriction: the label keys in `modified` a node may not set, add, change
// or remove on its own Node (node-restriction.kubernetes.io, and kubernetes.io /
// k8s.io labels other than the kubelet's own), sorted.
std::vector<std::string> forbidden_node_labels(const std::vector<std::string>& modified);
// The label keys that differ between two objects' metadata.labels (either may be null).
std::vector<std::string> modified_labels(const JsonValue* old_obj, const JsonValue* new_obj);

// Whether `pod` references the ResourceClaim named `claim` (its own namespace).
bool pod_references_claim(const JsonValue& pod, const std::string& claim);

}  // namespace draplane::server
