// ApiServer::Impl's authorization: the filter every request passes (the node
// authorizer's rules, authorization.h) and NodeRestriction admission of the
// objects a node writes.
#include <optional>
#include <utility>

#include "server/authorization.h"
#include "server/internal/impl_class.h"

namespace draplane::server {

namespace {

// kube-apiserver's text for a request the authorizer refuses, with its reason.
ApiError not_authorized(const Identity& id, const Target& t, const std::string& verb, const std::string& reason) {
  const ResourceInfo& r = *t.resource;
  std::string res = r.resource + (t.subresource.empty() ? "" : "/" + t.subresource);
  std::string scope = t.namespace_.empty() ? " at the cluster scope" : " in the namespace \"" + t.namespace_ + "\"";
  return forbidden(r, t.name,
                   "User \"" + id.user + "\" cannot " + verb + " resource \"" + res + "\" in API group \"" + r.group +
                       "\"" + scope + (reason.empty() ? "" : ": " + reason));
}

// "a, b, c".
std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// Equal lists, absent and empty alike (apimachinery's semantic equality).
bool same_list(const JsonValue* a, const JsonValue* b) {
  auto empty = [](const JsonValue* v) { return v == nullptr || v->IsNull() || (v->IsArray() && v->Empty()); };
  if (empty(a) || empty(b)) return empty(a) && empty(b);
  return *a == *b;
}

// NodeRestriction's check of a pod status update: the entries of
// status.resourceClaimStatuses (name and claim name, in order) are unchanged.
bool same_claim_statuses(const JsonValue& old_pod, const JsonValue& new_pod) {
  auto entries = [](const JsonValue& pod) {
    std::vector<std::pair<std::string, std::optional<std::string>>> out;
    const JsonValue* st = find(pod, {"status", "resourceClaimStatuses"});
    if (st == nullptr || !st->IsArray()) return out;
    for (const auto& s : st->GetArray()) {
      if (!s.IsObject()) continue;
      const JsonValue* n = find(s, {"resourceClaimName"});
      std::optional<std::string> claim;
      if (n && n->IsString()) claim = n->GetString();
      out.emplace_back(get_string(s, {"name"}), claim);
    }
    return out;
  };
  return entries(old_pod) == entries(new_pod);
}

// The node's check of a claim status update (its driver reports device
// status, KEP-4817): allocation and reservedFor unchanged, and the
// status.devices entries of pools other than the node's own unchanged.
bool only_own_device_statuses(const JsonValue& old_claim, const JsonValue& new_claim, const std::string& node) {
  const JsonValue* a = find(old_claim, {"status", "allocation"});
  const JsonValue* b = find(new_claim, {"status", "allocation"});
  bool a_none = a == nullptr || a->IsNull(), b_none = b == nullptr || b->IsNull();
  if (a_none != b_none || (!a_none && *a != *b)) return false;
  if (!same_list(find(old_claim, {"status", "reservedFor"}), find(new_claim, {"status", "reservedFor"}))) return false;
  auto others = [&](const JsonValue& claim) {
    std::vector<const JsonValue*> out;
    const JsonValue* d = find(claim, {"status", "devices"});
    if (d == nullptr || !d->IsArray()) return out;
    for (const auto& e : d->GetArray()) {
      if (!e.IsObject() || get_string(e, {"pool"}) != node) out.push_back(&e);
    }
    return out;
  };
  auto x = others(old_claim), y = others(new_claim);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (*x[i] != *y[i]) return false;
  }
  return true;
}

}  // namespace

// The authorization filter and NodeRestriction admission for one request
// (authorization.h has the table). Called with null objects before the
// handler has the objects (the filter), and again with the objects of a
// write (admission); checks that need an object the caller does not have
// yet pass until then, except for get, which reads the object itself.
std::optional<ApiError> ApiServer::Impl::authorize(const Request& req, const Target& t, const std::string& verb,
                                                   const JsonValue* old_obj, const JsonValue* new_obj) const {
  const Identity& id = req.identity;
  const ResourceInfo& r = *t.resource;
  if (id.admin && find_rule("admin", r.group, r.resource, t.subresource, verb)) return std::nullopt;
  if (id.node.empty()) return not_authorized(id, t, verb, "");
  const AuthorizationRule* rule = find_rule("node", r.group, r.resource, t.subresource, verb);
  if (rule == nullptr) return not_authorized(id, t, verb, node_denial_reason(r.resource, t.subresource));
  return authorize_node(req, t, verb, *rule, old_obj, new_obj);
}

// What the node authorizer answers for a request no rule allows.
std::string ApiServer::Impl::node_denial_reason(const std::string& resource, const std::string& subresource) {
  if (resource == "resourceclaims") {
    return subresource.empty() ? "can only get individual resources of this type" : "cannot get subresource";
  }
  if (resource == "leases") return "can only get, create, update, patch, or delete a node lease";
  return "";
}

std::optional<ApiError> ApiServer::Impl::authorize_node(const Request& req, const Target& t, const std::string& verb,
                                                        const AuthorizationRule& rule, const JsonValue* old_obj,
                                                        const JsonValue* new_obj) const {
  const Identity& id = req.identity;
  const std::string& node = id.node;
  const ResourceInfo& r = *t.resource;
  auto denied = [&](const std::string& reason) { return not_authorized(id, t, verb, reason); };
  // NodeRestriction's answers name the object (on create, the new one's name).
  auto refused = [&](const std::string& reason) {
    std::string name = t.name;
    if (name.empty() && new_obj) name = get_string(*new_obj, {"metadata", "name"});
    return forbidden(r, name, reason);
  };
  auto node_of = [](const JsonValue& o) { return get_string(o, {"spec", "nodeName"}); };
  auto fields = [&]() -> Selector {
    auto it = req.query.find("fieldSelector");
    if (it == req.query.end()) return Selector();
    auto s = Selector::parse_fields(it->second, r);
    return s.has_value() ? std::move(s).value() : Selector();
  };
  auto selects_node = [&](const Selector& s) {
    for (const auto& q : s.requirements()) {
      bool eq = q.op == Selector::Op::kEq && !q.values.empty();
      if (q.key == "spec.nodeName" && eq && q.values[0] == node) return true;
    }
    return false;
  };
  const std::string no_relationship = "no relationship found between node '" + node + "' and this object";
  switch (rule.condition) {
    case RuleCondition::kAlways:
      break;
    case RuleCondition::kOwnNode: {
      if (verb == "get" || verb == "list" || verb == "watch") {
        std::string name = t.name.empty() ? fields().pinned_name() : t.name;
        if (name == node) break;
        return denied(name.empty() ? "node '" + node + "' cannot read all nodes, only its own Node object"
                                   : "node '" + node + "' cannot read '" + name + "', only its own Node object");
      }
      std::string name = verb == "create" ? (new_obj ? get_string(*new_obj, {"metadata", "name"}) : node) : t.name;
      if (name != node) return refused("node \"" + node + "\" is not allowed to modify node \"" + name + "\"");
      if (verb == "create" && new_obj) {
        auto bad = forbidden_node_labels(modified_labels(nullptr, new_obj));
        if (!bad.empty()) {
          return refused("node \"" + node + "\" is not allowed to set the following labels: " + join(bad));
        }
      }
      if (verb != "create" && old_obj && new_obj) {
        if (!same_list(find(*old_obj, {"spec", "taints"}), find(*new_obj, {"spec", "taints"}))) {
          return refused("node \"" + node + "\" is not allowed to modify taints");
        }
        auto bad = forbidden_node_labels(modified_labels(old_obj, new_obj));
        if (!bad.empty()) return refused("is not allowed to modify labels: " + join(bad));
      }
      break;
    }
    case RuleCondition::kNodeNameSelector:
      if (!selects_node(fields())) {
        return denied("can only list/watch/deletecollection " + r.resource + " with nodeName field selector");
      }
      break;
    case RuleCondition::kPodsOfNode: {
      Selector s = fields();
      if (selects_node(s)) break;
      // A single pod (metadata.name=) bound to the node may be listed or watched.
      std::string name = s.pinned_name();
      if (!name.empty() && !t.namespace_.empty()) {
        Target one = t;
        one.name = name;
        auto pod = load_for_authorization(one);
        if (pod && node_of(*pod) == node) break;
      }
      return denied("can only list/watch pods with spec.nodeName field selector");
    }
    case RuleCondition::kOnNode: {
      bool pods = r.resource == "pods";
      if (verb == "create") {
        if (new_obj && node_of(*new_obj) != node) {
          return refused("can only create " + r.kind + " with the same NodeName as the requesting node");
        }
        break;
      }
      std::optional<Json> loaded;
      if (verb == "get") {
        loaded = load_for_authorization(t);
        if (!loaded) return denied(no_relationship);
        old_obj = &*loaded;
      }
      if (old_obj && node_of(*old_obj) != node) {
        if (pods && verb == "delete") {
          return refused("node \"" + node + "\" can only delete pods with spec.nodeName set to itself");
        }
        if (pods && verb != "get") {
          return refused("node \"" + node + "\" can only update pod status for pods with spec.nodeName set to itself");
        }
        return denied(no_relationship);
      }
      if (new_obj && node_of(*new_obj) != node) return denied(no_relationship);
      if (pods && t.subresource == "status" && old_obj && new_obj) {
        if (!modified_labels(old_obj, new_obj).empty()) {
          return refused("node \"" + node + "\" cannot update labels through pod status");
        }
        if (!same_claim_statuses(*old_obj, *new_obj)) {
          return refused("node \"" + node + "\" cannot update resource claim statues");
        }
      }
      break;
    }
    case RuleCondition::kClaimOfBoundPod:
      if (!claim_of_bound_pod(t.namespace_, t.name, node)) return denied(no_relationship);
      if (t.subresource == "status" && old_obj && new_obj && !only_own_device_statuses(*old_obj, *new_obj, node)) {
        return refused("node \"" + node + "\" may only update status.devices entries of its own pool");
      }
      break;
    case RuleCondition::kConfigOfBoundPod:
      if (!config_of_bound_pod(t.namespace_, r.resource, t.name, node)) return denied(no_relationship);
      break;
    case RuleCondition::kOwnLease: {
      if (t.namespace_ != "kube-node-lease") {
        return refused("can only access leases in the \"kube-node-lease\" system namespace");
      }
      std::string name = verb == "create" ? (new_obj ? get_string(*new_obj, {"metadata", "name"}) : node) : t.name;
      if (name != node) return refused("can only access node lease with the same name as the requesting node");
      break;
    }
  }
  return std::nullopt;
}

std::optional<Json> ApiServer::Impl::load_for_authorization(const Target& t) const {
  auto kv = store_.get(t.key());
  if (!kv.has_value()) return std::nullopt;
  auto obj = parse_json(kv->value);
  if (!obj.has_value()) return std::nullopt;
  return std::move(obj).value();
}

// The node authorizer's graph edge node <- pod <- ResourceClaim: some pod bound
// to the node references the claim. The pods the claim is reserved for are
// asked first (the usual case: the scheduler reserves before it binds); the
// namespace's pods only when none of them is the one.
bool ApiServer::Impl::claim_of_bound_pod(const std::string& namespace_, const std::string& claim,
                                         const std::string& node) const {
  if (claim.empty() || namespace_.empty()) return false;
  auto uses = [&](const JsonValue& pod) {
    return get_string(pod, {"spec", "nodeName"}) == node && pod_references_claim(pod, claim);
  };
  std::string pods = "/registry/pods/" + namespace_ + "/";
  if (auto kv = store_.get("/registry/resourceclaims/" + namespace_ + "/" + claim); kv.has_value()) {
    auto obj = parse_json(kv->value);
    const JsonValue* rf = obj.has_value() ? find(*obj, {"status", "reservedFor"}) : nullptr;
    if (rf && rf->IsArray()) {
      for (const auto& c : rf->GetArray()) {
        if (!c.IsObject() || get_string(c, {"resource"}) != "pods" || !get_string(c, {"apiGroup"}).empty()) continue;
        auto pkv = store_.get(pods + get_string(c, {"name"}));
        if (!pkv.has_value()) continue;
        auto pod = parse_json(pkv->value);
        if (pod.has_value() && uses(*pod)) return true;
      }
    }
  }
  auto all = store_.list(pods);
  if (!all.has_value()) return false;
  for (const auto& kv : all->items) {
    auto pod = parse_json(kv.value);
    if (pod.has_value() && uses(*pod)) return true;
  }
  return false;
}

namespace {

// Whether the pod names the ConfigMap ("configmaps") or Secret ("secrets") in
// its containers' env or envFrom, its volumes (also projected ones) or, for a
// Secret, its imagePullSecrets: the node authorizer's pod -> object edges.
bool pod_references_config(const JsonValue& pod, const std::string& resource, const std::string& name) {
  const bool cm = resource == "configmaps";
  const char* key_ref = cm ? "configMapKeyRef" : "secretKeyRef";
  const char* from_ref = cm ? "configMapRef" : "secretRef";
  auto named = [&](const JsonValue* v, const char* member) { return v != nullptr && get_string(*v, {member}) == name; };
  for (const char* list : {"containers", "initContainers", "ephemeralContainers"}) {
    const JsonValue* cs = find(pod, {"spec", list});
    if (cs == nullptr || !cs->IsArray()) continue;
    for (const auto& c : cs->GetArray()) {
      const JsonValue* env = find(c, {"env"});
      if (env != nullptr && env->IsArray()) {
        for (const auto& e : env->GetArray()) {
          if (named(find(e, {"valueFrom", key_ref}), "name")) return true;
        }
      }
      const JsonValue* from = find(c, {"envFrom"});
      if (from != nullptr && from->IsArray()) {
        for (const auto& e : from->GetArray()) {
          if (named(find(e, {from_ref}), "name")) return true;
        }
      }
    }
  }
  const JsonValue* vols = find(pod, {"spec", "volumes"});
  if (vols != nullptr && vols->IsArray()) {
    for (const auto& v : vols->GetArray()) {
      if (cm ? named(find(v, {"configMap"}), "name") : named(find(v, {"secret"}), "secretName")) return true;
      const JsonValue* sources = find(v, {"projected", "sources"});
      if (sources == nullptr || !sources->IsArray()) continue;
      for (const auto& s : sources->GetArray()) {
        if (named(find(s, {cm ? "configMap" : "secret"}), "name")) return true;
      }
    }
  }
  const JsonValue* pulls = find(pod, {"spec", "imagePullSecrets"});
  if (!cm && pulls != nullptr && pulls->IsArray()) {
    for (const auto& p : pulls->GetArray()) {
      if (get_string(p, {"name"}) == name) return true;
    }
  }
  return false;
}

}  // namespace

bool ApiServer::Impl::config_of_bound_pod(const std::string& namespace_, const std::string& resource,
                                          const std::string& name, const std::string& node) const {
  if (name.empty() || namespace_.empty()) return false;
  auto all = store_.list("/registry/pods/" + namespace_ + "/");
  if (!all.has_value()) return false;
  for (const auto& kv : all->items) {
    auto pod = parse_json(kv.value);
    if (pod.has_value() && get_string(*pod, {"spec", "nodeName"}) == node &&
        pod_references_config(*pod, resource, name)) {
      return true;
    }
  }
  return false;
}

}  // namespace draplane::server
