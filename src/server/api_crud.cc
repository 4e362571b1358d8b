// Get, list, create, update, patch, delete and binding: the generic registry
// (after k8s.io/apiserver pkg/registry/generic/registry/store.go).
#include <algorithm>

#include "server/internal/impl_class.h"

namespace draplane::server {
namespace {

std::string q(const Request& req, const char* key) {
  auto it = req.query.find(key);
  return it == req.query.end() ? std::string() : it->second;
}
bool dry_run(const Request& req) { return q(req, "dryRun") == "All"; }

// An object going out: converted to the requested version (served_text).
Reply object_reply(const ResourceInfo& r, int code, const JsonValue& obj) {
  return json_reply(code, served_text(r, to_string(obj)));
}

Reply with_warnings(Reply reply, std::vector<std::string> warnings) {
  reply.warnings = std::move(warnings);
  return reply;
}

// kube-apiserver decodes a body only as the version the URL names.
std::optional<ApiError> check_api_version(const ResourceInfo& r, const JsonValue& obj) {
  std::string av = get_string(obj, {"apiVersion"});
  if (av.empty() || av == r.group_version()) return std::nullopt;
  return bad_request("the API version in the data (" + av + ") does not match the expected API version (" +
                     r.group_version() + ")");
}

// The request body (of the URL's version) as the storage version, with apiVersion and kind set.
std::optional<ApiError> body_to_storage(const ResourceInfo& r, Json& obj) {
  set_string(obj, "apiVersion", r.group_version(), obj.GetAllocator());
  set_string(obj, "kind", r.kind, obj.GetAllocator());
  return to_storage_version(r, obj);
}

// The stored form: no resourceVersion (it is the store's mod_revision).
std::string stored_form(Json& obj) {
  if (JsonValue* meta = find(obj, {"metadata"})) remove_member(*meta, "resourceVersion");
  return to_string(obj);
}

Json copy_of(const JsonValue& v) {
  Json d;
  d.CopyFrom(v, d.GetAllocator());
  return d;
}

// Everything but metadata and status: what "spec changed" means for generation.
bool spec_equal(const JsonValue& a, const JsonValue& b) {
  if (!a.IsObject() || !b.IsObject()) return a == b;
  auto skip = [](const JsonValue& name) {
    std::string_view n(name.GetString(), name.GetStringLength());
    return n == "metadata" || n == "status" || n == "apiVersion" || n == "kind";
  };
  size_t na = 0, nb = 0;
  for (auto& m : a.GetObject()) {
    if (skip(m.name)) continue;
    ++na;
    auto it = b.FindMember(m.name);
    if (it == b.MemberEnd() || it->value != m.value) return false;
  }
  for (auto& m : b.GetObject()) {
    if (!skip(m.name)) ++nb;
  }
  return na == nb;
}

bool equal_ignoring_rv(const JsonValue& a, const JsonValue& b) {
  Json x = copy_of(a), y = copy_of(b);
  if (JsonValue* m = find(x, {"metadata"})) remove_member(*m, "resourceVersion");
  if (JsonValue* m = find(y, {"metadata"})) remove_member(*m, "resourceVersion");
  return x == y;
}

std::string b64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += k[(n >> s) & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t n = uint8_t(in[i]) << 16;
    out += k[(n >> 18) & 63];
    out += k[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += k[(n >> 18) & 63];
    out += k[(n >> 12) & 63];
    out += k[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

std::string unb64(const std::string& in) {
  std::string out;
  uint32_t buf = 0;
  int bits = 0;
  for (char c : in) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+' || c == '-') v = 62;
    else if (c == '/' || c == '_') v = 63;
    else continue;
    buf = (buf << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buf >> bits) & 0xff);
    }
  }
  return out;
}

// The stored JSON with metadata.resourceVersion spliced in without parsing it:
// the fast path of large lists. Only when "metadata":{ is the first nested
// object (as every object the server writes has it); nullopt otherwise.
std::optional<std::string> with_resource_version(const std::string& stored, int64_t rev) {
  static const std::string kMeta = "\"metadata\":{";
  size_t p = stored.find(kMeta);
  if (p == std::string::npos || stored.find_first_of("{[", 1) < p) return std::nullopt;
  std::string rv = "\"resourceVersion\":\"" + std::to_string(rev) + "\"";
  size_t at = p + kMeta.size();
  std::string out;
  out.reserve(stored.size() + rv.size() + 1);
  out.append(stored, 0, at);
  out += rv;
  if (stored[at] != '}') out += ',';
  out.append(stored, at, std::string::npos);
  return out;
}

}  // namespace

Result<Stored> ApiServer::Impl::load(const std::string& key, int64_t revision) {
  ASSIGN_OR_RETURN(store::KeyValue kv, store_.get(key, revision));
  ASSIGN_OR_RETURN(Json obj, parse_json(kv.value));
  set_resource_version(obj, kv.mod_revision);
  return Stored{std::move(obj), kv.mod_revision};
}

Reply ApiServer::Impl::get(const Request& req, const Target& t) {
  if (auto e = authorize(req, t, "get", nullptr, nullptr)) return error_reply(*e);
  auto cur = load(t.key());
  if (!cur.has_value()) {
    if (cur.error().code() == Code::kNotFound) return error_reply(not_found(*t.resource, t.name));
    return error_reply(from_code(cur.error().code(), cur.error().message()));
  }
  if (wants_table(req.accept)) {
    to_served_version(*t.resource, cur->object);
    std::vector<const JsonValue*> one{&cur->object};
    return json_reply(200, to_table(*t.resource, one, std::to_string(cur->mod_revision), "", opts_.now(),
                                    q(req, "includeObject") != "None"));
  }
  return object_reply(*t.resource, 200, cur->object);
}

Reply ApiServer::Impl::list(const Request& req, const Target& t) {
  if (auto e = authorize(req, t, "list", nullptr, nullptr)) return error_reply(*e);
  auto params = parse_list_params(req, *t.resource);
  if (!params.has_value()) return error_reply(from_code(params.error().code(), params.error().message()));
  const ListParams& p = *params;
  std::string prefix = t.prefix();
  store::ListOptions so;
  if (!p.continue_token.empty()) {
    auto tok = parse_json(unb64(p.continue_token));
    const JsonValue* rv = tok.has_value() ? find(*tok, {"rv"}) : nullptr;
    if (!tok.has_value() || !rv || !rv->IsInt64()) return error_reply(bad_request("continue key is not valid: invalid token"));
    so.revision = rv->GetInt64();
    so.start_after = prefix + get_string(*tok, {"start"});
  } else if (p.resource_version_match == "Exact" && !p.resource_version.empty()) {
    so.revision = std::strtoll(p.resource_version.c_str(), nullptr, 10);
  }
  bool filtering = !p.labels.empty() || !p.fields.empty();
  bool table = wants_table(req.accept);
  std::vector<Json> items;         // Table output: parsed objects
  std::vector<std::string> texts;  // List output: JSON text of each item
  auto count = [&] { return table ? items.size() : texts.size(); };
  int64_t revision = 0, remaining = 0;
  std::string last_key;
  bool more = false;
  for (;;) {
    store::ListOptions chunk = so;
    chunk.limit = p.limit == 0 ? 0 : filtering ? std::max<int64_t>(p.limit, 500) : p.limit;
    auto l = store_.list(prefix, chunk);
    if (!l.has_value()) {
      if (l.error().code() == Code::kGone) {
        ApiError e = from_code(Code::kGone, "The provided continue parameter is too old to display a consistent list "
                                            "result. You can start a new list without the continue parameter.");
        return error_reply(e);
      }
      return error_reply(from_code(l.error().code(), l.error().message()));
    }
    revision = l->revision;
    so.revision = revision;
    size_t i = 0;
    for (; i < l->items.size(); ++i) {
      if (p.limit > 0 && static_cast<int64_t>(count()) >= p.limit) break;
      const auto& kv = l->items[i];
      last_key = kv.key;
      if (!filtering && !table) {
        if (auto text = with_resource_version(kv.value, kv.mod_revision)) {
          texts.push_back(served_text(*t.resource, std::move(*text)));
          continue;
        }
      }
      auto obj = parse_json(kv.value);
      if (!obj.has_value()) continue;
      if (filtering && !selected(p, *obj)) continue;
      set_resource_version(*obj, kv.mod_revision);
      to_served_version(*t.resource, *obj);
      if (table) items.push_back(std::move(obj).value());
      else texts.push_back(to_string(*obj));
    }
    if (i < l->items.size() || l->more) {
      if (p.limit > 0 && static_cast<int64_t>(count()) >= p.limit) {
        more = true;
        remaining = filtering ? 0 : l->remaining + static_cast<int64_t>(l->items.size() - i);
        break;
      }
      so.start_after = last_key;
      continue;
    }
    break;
  }
  std::string token;
  if (more) {
    std::string tok = R"({"v":"meta.k8s.io/v1","rv":)" + std::to_string(revision) + R"(,"start":")" +
                      last_key.substr(prefix.size()) + "\"}";
    token = b64(tok);
  }
  if (table) {
    std::vector<const JsonValue*> ptrs;
    for (const auto& o : items) ptrs.push_back(&o);
    return json_reply(200, to_table(*t.resource, ptrs, std::to_string(revision), token, opts_.now(),
                                    q(req, "includeObject") != "None"));
  }
  std::string body = R"({"kind":")" + t.resource->kind + R"(List","apiVersion":")" + t.resource->group_version() +
                     R"(","metadata":{"resourceVersion":")" + std::to_string(revision) + "\"";
  if (more) {
    body += R"(,"continue":")" + token + "\"";
    if (remaining > 0) body += R"(,"remainingItemCount":)" + std::to_string(remaining);
  }
  body += R"(},"items":[)";
  size_t total = 0;
  for (const auto& t : texts) total += t.size() + 1;
  body.reserve(body.size() + total + 2);
  for (size_t i = 0; i < texts.size(); ++i) {
    if (i) body += ',';
    body += texts[i];
  }
  body += "]}";
  return json_reply(200, std::move(body));
}

Reply ApiServer::Impl::create(const Request& req, const Target& t) {
  const ResourceInfo& r = *t.resource;
  FieldValidation fv;
  if (auto e = parse_field_validation(req, req.method == "PATCH" ? "PatchOptions" : "CreateOptions", fv)) {
    return error_reply(*e);
  }
  std::vector<std::string> warnings;
  auto parsed = parse_json(req.body);
  if (!parsed.has_value()) return error_reply(bad_request(parsed.error().message()));
  Json obj = std::move(parsed).value();
  if (!obj.IsObject()) return error_reply(bad_request("the body of the request must be a JSON object"));
  std::string kind = get_string(obj, {"kind"});
  if (!kind.empty() && kind != r.kind) {
    return error_reply(bad_request("the object provided is unrecognized (kind " + kind + " posted to " +
                                   qualified_resource(r) + ")"));
  }
  if (auto e = check_api_version(r, obj)) return error_reply(*e);
  if (auto e = body_to_storage(r, obj)) return error_reply(*e);
  auto& a = obj.GetAllocator();
  set_string(obj, "apiVersion", r.storage_group_version(), a);
  JsonValue& meta = ensure_object(obj, "metadata", a);
  std::string ns = get_string(meta, {"namespace"});
  if (r.namespaced) {
    if (ns.empty()) ns = t.namespace_;
    if (ns != t.namespace_) {
      return error_reply(bad_request("the namespace of the provided object does not match the namespace sent on the request"));
    }
    set_string(meta, "namespace", ns, a);
  } else {
    remove_member(meta, "namespace");
  }
  std::string name = get_string(meta, {"name"});
  std::string generate = get_string(meta, {"generateName"});
  if (name.empty() && !generate.empty()) {
    name = generate + opts_.random_suffix();
    set_string(meta, "name", name, a);
  }
  if (name.empty()) {
    return error_reply(invalid(r, "", {api::field_required(api::FieldPath("metadata.name"), "name or generateName is required")}));
  }
  if (r.namespaced) {
    auto nsobj = load("/registry/namespaces/" + ns);
    if (!nsobj.has_value()) {
      return error_reply(not_found(*find_resource("", "v1", "namespaces"), ns));
    }
    if (!get_string(nsobj->object, {"metadata", "deletionTimestamp"}).empty()) {
      return error_reply(forbidden(r, name, "unable to create new content in namespace " + ns +
                                                " because it is being terminated"));
    }
  }
  for (const char* k : {"resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields"}) {
    remove_member(meta, k);
  }
  set_string(meta, "uid", opts_.new_uid(), a);
  set_string(meta, "creationTimestamp", now_text(), a);
  set_member(meta, "generation", JsonValue(int64_t{1}), a);
  // PrepareForCreate of the kinds' strategies: clients do not set status.
  if (r.kind == "ResourceClaim") remove_member(obj, "status");
  if (r.kind == "Pod") {
    JsonValue st(rapidjson::kObjectType);
    st.AddMember("phase", "Pending", a);
    set_member(obj, "status", std::move(st), a);
  }
  if (r.kind == "Namespace") {
    JsonValue& labels = ensure_object(meta, "labels", a);
    set_string(labels, "kubernetes.io/metadata.name", name, a);
    // After `meta` is done with: a member added to obj may move obj's members.
    JsonValue& st = ensure_object(obj, "status", a);
    set_string(st, "phase", "Active", a);
  }
  if (auto e = typed_create(r, obj, fv, warnings)) return error_reply(*e);
  if (auto e = authorize(req, t, "create", nullptr, &obj)) return error_reply(*e);
  if (dry_run(req)) return with_warnings(object_reply(r, 201, obj), std::move(warnings));
  Target named = t;
  named.namespace_ = ns;
  named.name = name;
  auto created = store_.create(named.key(), stored_form(obj));
  if (!created.has_value()) {
    if (created.error().code() == Code::kAlreadyExists) return error_reply(already_exists(r, name));
    return error_reply(from_code(created.error().code(), created.error().message()));
  }
  set_resource_version(obj, created->mod_revision);
  return with_warnings(object_reply(r, 201, obj), std::move(warnings));
}

Reply ApiServer::Impl::update(const Request& req, const Target& t, const std::string& patch_type) {
  const ResourceInfo& r = *t.resource;
  bool is_patch = !patch_type.empty();
  bool apply = patch_type == "application/apply-patch+yaml";
  if (is_patch && patch_type != "application/merge-patch+json" && patch_type != "application/json-patch+json" &&
      patch_type != "application/strategic-merge-patch+json" && !apply) {
    ApiError e = from_code(Code::kBadRequest, "the body of the request was in an unknown format - accepted media types "
                                              "include: application/json-patch+json, application/merge-patch+json, "
                                              "application/apply-patch+yaml");
    e.http = 415;
    e.reason = "UnsupportedMediaType";
    return error_reply(e);
  }
  FieldValidation fv;
  if (auto e = parse_field_validation(req, is_patch ? "PatchOptions" : "UpdateOptions", fv)) return error_reply(*e);
  auto body = parse_json(req.body);
  if (!body.has_value()) return error_reply(bad_request(body.error().message()));
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::vector<std::string> warnings;
    auto cur = load(t.key());
    if (!cur.has_value()) {
      if (cur.error().code() == Code::kNotFound && apply && t.subresource.empty()) {
        Request create_req = req;
        create_req.body = req.body;
        Target coll = t;
        coll.name.clear();
        return create(create_req, coll);
      }
      if (cur.error().code() == Code::kNotFound) return error_reply(not_found(r, t.name));
      return error_reply(from_code(cur.error().code(), cur.error().message()));
    }
    Json obj;
    bool client_rv = false;
    if (!is_patch) {
      obj.CopyFrom(*body, obj.GetAllocator());
      client_rv = !get_string(obj, {"metadata", "resourceVersion"}).empty();
      if (obj.IsObject()) {
        if (auto e = check_api_version(r, obj)) return error_reply(*e);
      }
    } else {
      // Patches apply to the object as the requested version shows it.
      obj.CopyFrom(cur->object, obj.GetAllocator());
      to_served_version(r, obj);
      auto& a = obj.GetAllocator();
      if (patch_type == "application/json-patch+json") {
        if (Status st = json_patch(obj, *body, a); !st.ok()) return error_reply(from_code(st.code(), st.message()));
      } else if (patch_type == "application/strategic-merge-patch+json") {
        // Every kind served is built in (kube-apiserver refuses strategic merge
        // patches only for custom resources); lists outside core are atomic.
        strategic_merge_patch(obj, *body, a, !r.group.empty());
      } else {
        merge_patch(obj, *body, a);
      }
      client_rv = get_string(obj, {"metadata", "resourceVersion"}) != std::to_string(cur->mod_revision);
    }
    if (!obj.IsObject()) return error_reply(bad_request("the body of the request must be a JSON object"));
    if (auto e = body_to_storage(r, obj)) return error_reply(*e);
    auto& a = obj.GetAllocator();
    JsonValue& meta = ensure_object(obj, "metadata", a);
    std::string name = get_string(meta, {"name"});
    if (name.empty()) set_string(meta, "name", t.name, a);
    else if (name != t.name) {
      return error_reply(bad_request("the name of the object (" + name + ") does not match the name on the URL (" +
                                     t.name + ")"));
    }
    std::string rv = get_string(meta, {"resourceVersion"});
    if (client_rv && !rv.empty() && rv != std::to_string(cur->mod_revision)) {
      return error_reply(conflict(r, t.name, "the object has been modified; please apply your changes to the latest "
                                             "version and try again"));
    }
    set_string(obj, "apiVersion", r.storage_group_version(), a);
    const JsonValue& old_meta = *find(cur->object, {"metadata"});
    if (t.subresource == "status") {
      // Only status changes through /status (ResetObjectMetaForStatus).
      Json merged = copy_of(cur->object);
      const JsonValue* st = find(obj, {"status"});
      if (st) set_member(merged, "status", JsonValue(*st, merged.GetAllocator()), merged.GetAllocator());
      else remove_member(merged, "status");
      // CopyFrom, not move: `a` refers to obj's allocator, which a move would free.
      obj.CopyFrom(merged, a);
    } else {
      for (const char* k : {"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                            "namespace", "generation"}) {
        JsonValue& m = ensure_object(obj, "metadata", a);
        const JsonValue* ov = find(old_meta, {k});
        if (ov) set_member(m, k, JsonValue(*ov, a), a);
        else remove_member(m, k);
      }
      if (r.has_subresource("status") && r.kind != "Namespace") {
        const JsonValue* st = find(cur->object, {"status"});
        if (st) set_member(obj, "status", JsonValue(*st, a), a);
        else remove_member(obj, "status");
      }
      if (!spec_equal(cur->object, obj)) {
        const JsonValue* g = find(old_meta, {"generation"});
        int64_t gen = g && g->IsInt64() ? g->GetInt64() : 0;
        set_member(ensure_object(obj, "metadata", a), "generation", JsonValue(gen + 1), a);
      }
    }
    set_string(ensure_object(obj, "metadata", a), "resourceVersion", std::to_string(cur->mod_revision), a);
    if (auto e = typed_update(r, cur->object, obj, t.subresource, now_text(), fv, warnings)) return error_reply(*e);
    if (auto e = authorize(req, t, is_patch ? "patch" : "update", &cur->object, &obj)) return error_reply(*e);
    if (equal_ignoring_rv(cur->object, obj)) return with_warnings(object_reply(r, 200, cur->object), std::move(warnings));
    bool terminating = !get_string(obj, {"metadata", "deletionTimestamp"}).empty();
    const JsonValue* fin = find(obj, {"metadata", "finalizers"});
    bool no_finalizers = fin == nullptr || !fin->IsArray() || fin->Empty();
    if (dry_run(req)) return with_warnings(object_reply(r, 200, obj), std::move(warnings));
    if (terminating && no_finalizers) {
      // The last finalizer is gone: the object goes away now.
      auto res = delete_object(t, Stored{copy_of(obj), cur->mod_revision}, false);
      if (!res.has_value()) {
        if (res.error().code() == Code::kConflict) continue;
        return error_reply(from_code(res.error().code(), res.error().message()));
      }
      return with_warnings(object_reply(r, 200, *res), std::move(warnings));
    }
    auto w = store_.update(t.key(), stored_form(obj), cur->mod_revision);
    if (!w.has_value()) return error_reply(from_code(w.error().code(), w.error().message()));
    if (!w->succeeded) {
      if (client_rv) {
        return error_reply(conflict(r, t.name, "the object has been modified; please apply your changes to the latest "
                                               "version and try again"));
      }
      continue;
    }
    set_resource_version(obj, w->revision);
    return with_warnings(object_reply(r, 200, obj), std::move(warnings));
  }
  return error_reply(conflict(r, t.name, "too many concurrent updates; please try again"));
}

Result<Json> ApiServer::Impl::delete_object(const Target& t, Stored cur, bool dry) {
  Json& obj = cur.object;
  auto& a = obj.GetAllocator();
  const JsonValue* fin = find(obj, {"metadata", "finalizers"});
  if (fin && fin->IsArray() && !fin->Empty()) {
    if (!get_string(obj, {"metadata", "deletionTimestamp"}).empty()) return std::move(obj);
    JsonValue& meta = ensure_object(obj, "metadata", a);
    set_string(meta, "deletionTimestamp", now_text(), a);
    set_member(meta, "deletionGracePeriodSeconds", JsonValue(int64_t{0}), a);
    if (dry) return std::move(obj);
    ASSIGN_OR_RETURN(store::WriteResult w, store_.update(t.key(), stored_form(obj), cur.mod_revision));
    if (!w.succeeded) return Status(Code::kConflict, "modified concurrently");
    set_resource_version(obj, w.revision);
    return std::move(obj);
  }
  if (dry) return std::move(obj);
  std::string uid = get_string(obj, {"metadata", "uid"});
  if (t.resource->resource == "namespaces") delete_namespace_contents(t.name);
  ASSIGN_OR_RETURN(store::WriteResult w, store_.remove(t.key(), cur.mod_revision));
  if (!w.succeeded) return Status(Code::kConflict, "modified concurrently");
  collect_dependents(uid, t.resource->namespaced ? t.namespace_ : "", w.revision);
  return std::move(obj);
}

Reply ApiServer::Impl::remove(const Request& req, const Target& t) {
  const ResourceInfo& r = *t.resource;
  Json opts;
  if (!req.body.empty()) {
    auto b = parse_json(req.body);
    if (!b.has_value()) return error_reply(bad_request(b.error().message()));
    opts = std::move(b).value();
  }
  bool dry = dry_run(req);
  if (const JsonValue* d = opts.IsObject() ? find(opts, {"dryRun"}) : nullptr) {
    if (d->IsArray() && !d->Empty() && (*d)[0].IsString() && std::string((*d)[0].GetString()) == "All") dry = true;
  }
  for (int attempt = 0; attempt < 16; ++attempt) {
    auto cur = load(t.key());
    if (!cur.has_value()) {
      if (cur.error().code() == Code::kNotFound) return error_reply(not_found(r, t.name));
      return error_reply(from_code(cur.error().code(), cur.error().message()));
    }
    if (auto e = authorize(req, t, "delete", &cur->object, nullptr)) return error_reply(*e);
    if (opts.IsObject()) {
      std::string puid = get_string(opts, {"preconditions", "uid"});
      std::string uid = get_string(cur->object, {"metadata", "uid"});
      if (!puid.empty() && puid != uid) {
        return error_reply(conflict(r, t.name, "Precondition failed: UID in precondition: " + puid +
                                               ", UID in object meta: " + uid));
      }
      std::string prv = get_string(opts, {"preconditions", "resourceVersion"});
      if (!prv.empty() && prv != std::to_string(cur->mod_revision)) {
        return error_reply(conflict(r, t.name, "Precondition failed: ResourceVersion in precondition: " + prv +
                                               ", ResourceVersion in meta: " + std::to_string(cur->mod_revision)));
      }
    }
    auto res = delete_object(t, std::move(cur).value(), dry);
    if (!res.has_value()) {
      if (res.error().code() == Code::kConflict) continue;
      return error_reply(from_code(res.error().code(), res.error().message()));
    }
    return object_reply(r, 200, *res);
  }
  return error_reply(conflict(r, t.name, "too many concurrent updates; please try again"));
}

Reply ApiServer::Impl::remove_collection(const Request& req, const Target& t) {
  if (auto e = authorize(req, t, "deletecollection", nullptr, nullptr)) return error_reply(*e);
  auto params = parse_list_params(req, *t.resource);
  if (!params.has_value()) return error_reply(from_code(params.error().code(), params.error().message()));
  auto l = store_.list(t.prefix());
  if (!l.has_value()) return error_reply(from_code(l.error().code(), l.error().message()));
  std::string body = R"({"kind":")" + t.resource->kind + R"(List","apiVersion":")" + t.resource->group_version() +
                     R"(","metadata":{},"items":[)";
  bool first = true;
  for (const auto& kv : l->items) {
    auto obj = parse_json(kv.value);
    if (!obj.has_value() || !selected(*params, *obj)) continue;
    Target one = t;
    one.name = get_string(*obj, {"metadata", "name"});
    one.namespace_ = get_string(*obj, {"metadata", "namespace"});
    set_resource_version(*obj, kv.mod_revision);
    auto res = delete_object(one, Stored{std::move(obj).value(), kv.mod_revision}, dry_run(req));
    if (!res.has_value()) continue;
    if (!first) body += ',';
    first = false;
    body += served_text(*t.resource, to_string(*res));
  }
  body += "]}";
  return json_reply(200, std::move(body));
}

Reply ApiServer::Impl::bind(const Request& req, const Target& t) {
  if (auto e = authorize(req, t, "create", nullptr, nullptr)) return error_reply(*e);
  auto body = parse_json(req.body);
  if (!body.has_value()) return error_reply(bad_request(body.error().message()));
  std::string node = get_string(*body, {"target", "name"});
  if (node.empty()) {
    return error_reply(invalid(*t.resource, t.name, {api::field_required(api::FieldPath("target.name"), "")}));
  }
  for (int attempt = 0; attempt < 16; ++attempt) {
    auto cur = load(t.key());
    if (!cur.has_value()) return error_reply(not_found(*t.resource, t.name));
    Json& pod = cur->object;
    auto& a = pod.GetAllocator();
    std::string assigned = get_string(pod, {"spec", "nodeName"});
    if (!assigned.empty()) {
      return error_reply(conflict(*t.resource, t.name, "pod " + t.name + " is already assigned to node \"" + assigned + "\""));
    }
    if (!get_string(pod, {"metadata", "deletionTimestamp"}).empty()) {
      return error_reply(conflict(*t.resource, t.name, "pod " + t.name + " is being deleted, cannot be assigned to a host"));
    }
    set_string(ensure_object(pod, "spec", a), "nodeName", node, a);
    JsonValue& st = ensure_object(pod, "status", a);
    JsonValue* conds = find(st, {"conditions"});
    if (conds == nullptr || !conds->IsArray()) {
      set_member(st, "conditions", JsonValue(rapidjson::kArrayType), a);
      conds = find(st, {"conditions"});
    }
    for (rapidjson::SizeType i = 0; i < conds->Size(); ++i) {
      if (get_string((*conds)[i], {"type"}) == "PodScheduled") {
        conds->Erase(conds->Begin() + i);
        break;
      }
    }
    JsonValue c(rapidjson::kObjectType);
    c.AddMember("type", "PodScheduled", a);
    c.AddMember("status", "True", a);
    c.AddMember("lastTransitionTime", JsonValue(now_text().c_str(), a), a);
    conds->PushBack(c, a);
    if (dry_run(req)) break;
    auto w = store_.update(t.key(), stored_form(pod), cur->mod_revision);
    if (!w.has_value()) return error_reply(from_code(w.error().code(), w.error().message()));
    if (!w->succeeded) continue;
    break;
  }
  return json_reply(201, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201})");
}

void ApiServer::Impl::collect_dependents(const std::string& owner_uid, const std::string& namespace_,
                                         int64_t revision) {
  if (owner_uid.empty()) return;
  // Deletes `obj` when `owner_uid` was its only owner, else drops that reference.
  auto collect = [&](const ResourceInfo& r, Stored cur, const std::string& key) {
    Json& obj = cur.object;
    JsonValue* refs = find(obj, {"metadata", "ownerReferences"});
    if (!refs || !refs->IsArray()) return;
    size_t matching = 0;
    for (const auto& ref : refs->GetArray()) matching += get_string(ref, {"uid"}) == owner_uid;
    if (matching == 0) return;
    Target dep{&r, get_string(obj, {"metadata", "namespace"}), get_string(obj, {"metadata", "name"}), ""};
    if (matching == refs->Size()) {
      (void)delete_object(dep, std::move(cur), false);
    } else {
      // Other owners remain: only drop the reference to the deleted one.
      for (rapidjson::SizeType i = 0; i < refs->Size();) {
        if (get_string((*refs)[i], {"uid"}) == owner_uid) refs->Erase(refs->Begin() + i);
        else ++i;
      }
      (void)store_.update(key, stored_form(obj), cur.mod_revision);
    }
  };
  auto in_scope = [&](const ResourceInfo& r) {
    if (r.converted) return false;  // same objects as the storage version
    return namespace_.empty() || r.namespaced;  // cluster objects cannot depend on namespaced owners
  };
  if (auto keys = owners_ ? owners_->dependents(owner_uid, revision) : std::nullopt) {
    for (const auto& key : *keys) {
      const ResourceInfo* res = nullptr;
      for (const auto& r : all_resources()) {
        if (in_scope(r) && key.rfind(r.key_prefix(), 0) == 0) res = &r;
      }
      if (res == nullptr) continue;
      if (res->namespaced && !namespace_.empty() && key.rfind(res->key_prefix() + namespace_ + "/", 0) != 0) continue;
      auto cur = load(key);
      if (cur.has_value()) collect(*res, std::move(*cur), key);
    }
    return;
  }
  // No index (not started, or it stopped): scan.
  for (const auto& r : all_resources()) {
    if (!in_scope(r)) continue;
    std::string prefix = r.key_prefix() + (namespace_.empty() || !r.namespaced ? "" : namespace_ + "/");
    auto l = store_.list(prefix);
    if (!l.has_value()) continue;
    for (const auto& kv : l->items) {
      if (kv.value.find(owner_uid) == std::string::npos) continue;  // cheap pre-filter
      auto obj = parse_json(kv.value);
      if (!obj.has_value()) continue;
      collect(r, Stored{std::move(obj).value(), kv.mod_revision}, kv.key);
    }
  }
}

void ApiServer::Impl::delete_namespace_contents(const std::string& ns) {
  for (const auto& r : all_resources()) {
    if (!r.namespaced || r.converted) continue;
    auto l = store_.list(r.key_prefix() + ns + "/");
    if (!l.has_value()) continue;
    for (const auto& kv : l->items) {
      auto obj = parse_json(kv.value);
      if (!obj.has_value()) continue;
      Target dep{&r, ns, get_string(*obj, {"metadata", "name"}), ""};
      (void)delete_object(dep, Stored{std::move(obj).value(), kv.mod_revision}, false);
    }
  }
}

}  // namespace draplane::server
