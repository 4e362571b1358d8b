#include "server/api_server.h"

#include <chrono>

#include "api/codec.h"
#include "server/authorization.h"
#include "server/internal/impl_class.h"
#include "server/protobuf_body.h"

namespace draplane::server {
namespace {

ApiError unsupported_media_type(std::string message) {
  ApiError e = from_code(Code::kBadRequest, std::move(message));
  e.http = 415;
  e.reason = "UnsupportedMediaType";
  return e;
}

// The media type of a Content-Type header, lowercased, without parameters.
std::string media_type(const std::string& content_type) {
  std::string t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && t.back() == ' ') t.pop_back();
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t;
}

bool looks_like_json(const std::string& body) {
  size_t i = body.find_first_not_of(" \t\r\n");
  return i != std::string::npos && (body[i] == '{' || body[i] == '[');
}

// Sets `out` to `req` with its body as JSON when the body is protobuf or YAML
// (out.method stays empty when the body is used as it is).
std::optional<ApiError> body_as_json(const Request& req, Request& out) {
  if (req.body.empty()) return std::nullopt;
  std::string type = media_type(req.content_type);
  if (type == "application/vnd.kubernetes.protobuf") {
    auto pb = decode_protobuf_body(req.body);
    if (!pb.has_value()) return bad_request(pb.error().message());
    if (!pb->supported) {
      return unsupported_media_type(
          "the body of the request was in an unknown format - accepted media types include: application/json, "
          "application/yaml, and application/vnd.kubernetes.protobuf for v1 Namespace only (this body is " +
          (pb->api_version.empty() ? std::string() : pb->api_version + " ") + pb->kind + "); send " + pb->kind +
          " as JSON");
    }
    out = req;
    out.body = std::move(pb->json);
    out.content_type = "application/json";
    return std::nullopt;
  }
  if (type.rfind("application/cbor", 0) == 0) {
    return unsupported_media_type("the body of the request was in an unknown format - accepted media types include: "
                                  "application/json, application/yaml, application/vnd.kubernetes.protobuf");
  }
  bool yaml = (type == "application/yaml" && req.method != "PATCH") || type == "application/apply-patch+yaml";
  if (yaml && !looks_like_json(req.body)) {
    auto json = api::yaml_to_json(req.body);
    if (!json.has_value()) return bad_request(json.error().message());
    out = req;
    out.body = std::move(json).value();
    if (type == "application/yaml") out.content_type = "application/json";
  }
  return std::nullopt;
}

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

}  // namespace

ApiServer::ApiServer(store::Store& store, ApiServerOptions options, Metrics* metrics)
    : store_(store), impl_(std::make_unique<Impl>(store, std::move(options), metrics)) {}
ApiServer::~ApiServer() = default;

Status ApiServer::bootstrap() { return impl_->bootstrap(); }

ApiServer::Outcome ApiServer::handle(const Request& request) {
  auto start = std::chrono::steady_clock::now();
  Outcome out = impl_->handle(request);
  if (impl_->metrics_ != nullptr) {
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    RequestLabels l;
    const std::string& m = request.method;
    l.verb = m;
    std::string err;
    if (auto t = impl_->parse_target(request.path, &err)) {
      l.group = t->resource->group;
      l.version = t->resource->version;
      l.resource = t->resource->resource;
      l.subresource = t->subresource;
      l.scope = !t->name.empty() ? "resource" : !t->namespace_.empty() ? "namespace" : "cluster";
      // kube-apiserver's reported verbs (endpoints/metrics CleanVerb).
      bool named = !t->name.empty();
      if (out.watch) l.verb = "WATCH";
      else if (m == "GET" && !named) l.verb = "LIST";
      else if (m == "DELETE" && !named) l.verb = "DELETECOLLECTION";
      else if (m == "PATCH" && media_type(request.content_type) == "application/apply-patch+yaml") l.verb = "APPLY";
      auto dr = request.query.find("dryRun");
      l.dry_run = dr != request.query.end() && dr->second == "All";
    }
    impl_->metrics_->observe_request(l, out.response.code, secs);
  }
  return out;
}

Status ApiServer::Impl::bootstrap() {
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    std::string key = std::string("/registry/namespaces/") + ns;
    if (store_.get(key).has_value()) continue;
    std::string body = std::string(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")") + ns +
                       R"(","uid":")" + opts_.new_uid() + R"(","creationTimestamp":")" + now_text() +
                       R"(","labels":{"kubernetes.io/metadata.name":")" + ns +
                       R"("}},"spec":{},"status":{"phase":"Active"}})";
    auto r = store_.create(key, body);
    if (!r.has_value() && r.error().code() != Code::kAlreadyExists) return r.error();
  }
  if (!owners_) {
    auto idx = std::make_unique<OwnerIndex>(store_);
    if (Status st = idx->start("/registry/"); !st.ok()) return st;
    owners_ = std::move(idx);
  }
  if (!namespaces_) {
    auto cache = std::make_unique<NamespaceCache>(store_);
    if (Status st = cache->start(); !st.ok()) return st;
    namespaces_ = std::move(cache);
  }
  return Status();
}

std::optional<Target> ApiServer::Impl::parse_target(const std::string& path, std::string* error) const {
  std::vector<std::string> seg;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) seg.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  std::string group, version;
  size_t rest;
  if (seg.size() >= 2 && seg[0] == "api") {
    version = seg[1];
    rest = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis") {
    group = seg[1];
    version = seg[2];
    rest = 3;
  } else {
    return std::nullopt;
  }
  std::vector<std::string> r(seg.begin() + static_cast<std::ptrdiff_t>(rest), seg.end());
  if (r.empty()) return std::nullopt;
  Target t;
  if (r[0] == "namespaces" && r.size() >= 3 && group.empty() && (r[2] == "status" || r[2] == "finalize")) {
    t.resource = find_resource("", version, "namespaces");
    t.name = r[1];
    t.subresource = r[2];
    return t;
  }
  if (r[0] == "namespaces" && r.size() >= 3) {
    t.namespace_ = r[1];
    r.erase(r.begin(), r.begin() + 2);
  }
  t.resource = find_resource(group, version, r[0]);
  if (t.resource == nullptr) return std::nullopt;
  if (t.resource->namespaced == false && !t.namespace_.empty()) return std::nullopt;
  if (r.size() >= 2) t.name = r[1];
  if (r.size() >= 3) {
    t.subresource = r[2];
    if (!t.resource->has_subresource(t.subresource)) return std::nullopt;
  }
  if (r.size() > 3) return std::nullopt;
  (void)error;
  return t;
}

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

ApiServer::Outcome ApiServer::Impl::handle(const Request& req) {
  Outcome out;
  bool health = req.path == "/healthz" || req.path == "/livez" || req.path == "/readyz" || req.path == "/version" ||
                req.path.rfind("/healthz/", 0) == 0 || req.path.rfind("/readyz/", 0) == 0 ||
                req.path.rfind("/livez/", 0) == 0;
  if (req.identity.user.empty() && !health) {
    out.response = error_reply(from_code(Code::kUnauthorized, "Unauthorized"));
    return out;
  }
  if (req.path == "/metrics") {
    if (!req.identity.admin) {
      out.response = error_reply(from_code(Code::kForbidden, "forbidden: User \"" + req.identity.user +
                                                                 "\" cannot get path \"/metrics\""));
      return out;
    }
    out.response.content_type = "text/plain; version=0.0.4";
    out.response.body = metrics_ ? metrics_->render() : "";
    return out;
  }
  if (auto d = discovery(req, opts_)) {
    out.response = std::move(*d);
    return out;
  }
  std::string err;
  auto t = parse_target(req.path, &err);
  if (!t) {
    ApiError e = from_code(Code::kNotFound, "the server could not find the requested resource");
    out.response = error_reply(e);
    return out;
  }
  // Bodies other than JSON become JSON here: protobuf (Namespace; kubectl's
  // typed commands send it) and YAML (create/update, and apply patches).
  Request as_json;
  if (auto e = body_as_json(req, as_json)) {
    out.response = error_reply(*e);
    return out;
  }
  const Request& rq = as_json.method.empty() ? req : as_json;
  const std::string& m = rq.method;
  if (m == "GET" && t->subresource == "log") {
    out.response = pod_log(rq, *t);
  } else if (m == "GET") {
    if (t->name.empty()) {
      auto w = rq.query.find("watch");
      if (w != rq.query.end() && (w->second == "true" || w->second == "1")) return watch(rq, *t);
      out.response = list(rq, *t);
    } else {
      out.response = get(rq, *t);
    }
  } else if (m == "POST" && t->name.empty()) {
    out.response = create(rq, *t);
  } else if (m == "POST" && t->subresource == "binding") {
    out.response = bind(rq, *t);
  } else if (m == "PUT" && !t->name.empty()) {
    out.response = update(rq, *t, "");
  } else if (m == "PATCH" && !t->name.empty()) {
    std::string ct = rq.content_type.substr(0, rq.content_type.find(';'));
    out.response = update(rq, *t, ct.empty() ? "unknown" : ct);
  } else if (m == "DELETE" && !t->name.empty() && t->subresource.empty()) {
    out.response = remove(rq, *t);
  } else if (m == "DELETE" && t->name.empty()) {
    out.response = remove_collection(rq, *t);
  } else {
    ApiError e = from_code(Code::kBadRequest, "the server does not allow this method on the requested resource");
    e.http = 405;
    e.reason = "MethodNotAllowed";
    out.response = error_reply(e);
  }
  return out;
}

Result<ListParams> parse_list_params(const Request& req, const ResourceInfo& r) {
  ListParams p;
  auto q = [&](const char* k) {
    auto it = req.query.find(k);
    return it == req.query.end() ? std::string() : it->second;
  };
  ASSIGN_OR_RETURN(p.labels, Selector::parse_labels(q("labelSelector")));
  ASSIGN_OR_RETURN(p.fields, Selector::parse_fields(q("fieldSelector"), r));
  std::string limit = q("limit");
  if (!limit.empty()) {
    char* end = nullptr;
    p.limit = std::strtoll(limit.c_str(), &end, 10);
    if (end == limit.c_str() || *end != '\0' || p.limit < 0) {
      return Status(Code::kBadRequest, "invalid limit \"" + limit + "\"");
    }
  }
  p.continue_token = q("continue");
  p.resource_version = q("resourceVersion");
  p.resource_version_match = q("resourceVersionMatch");
  return p;
}

bool selected(const ListParams& p, const JsonValue& object) {
  return p.labels.matches_labels(object) && p.fields.matches_fields(object);
}

}  // namespace draplane::server
