// Get, list, create, update, patch, delete and binding: the generic registry
// (after k8s.io/apiserver pkg/registry/generic/registry/store.go).
#include <algorithm>
#include <cstring>
#include <limits>

#include "api/codec_tree.h"
#include "api/decode_limits.h"
#include "common/base64.h"
#include "server/internal/impl_class.h"
#include "server/priority_admission.h"

namespace draplane::server {
namespace {

std::string q(const Request& req, const char* key) {
  auto it = req.query.find(key);
  return it == req.query.end() ? std::string() : it->second;
}
bool dry_run(const Request& req) { return is_dry_run(req); }

// DeleteOptions as the delete handlers read them: from the body when there is
// one, else from the query (gracePeriodSeconds, orphanDependents,
// propagationPolicy, dryRun); then ValidateDeleteOptions. Sets `dry` and
// `propagation` (orphanDependents read as Orphan or Background; "" when unset).
std::optional<ApiError> delete_options(const Request& req, bool& dry, std::string& propagation) {
  std::vector<std::string> dry_values;
  std::optional<std::string> policy;
  bool orphan_set = false;
  bool orphan = false;
  if (!req.body.empty()) {
    auto b = parse_json(req.body);
    if (!b.has_value()) return bad_request(b.error().message());
    if (b->IsObject()) {
      if (const JsonValue* d = find(*b, {"dryRun"}); d != nullptr && d->IsArray()) {
        for (const auto& v : d->GetArray()) dry_values.push_back(v.IsString() ? v.GetString() : "");
      }
      if (const JsonValue* pp = find(*b, {"propagationPolicy"}); pp != nullptr && pp->IsString()) {
        policy = pp->GetString();
      }
      const JsonValue* o = find(*b, {"orphanDependents"});
      orphan_set = o != nullptr && !o->IsNull();
      orphan = orphan_set && o->IsBool() && o->GetBool();
    }
  } else {
    auto grace = query_int64(req, "gracePeriodSeconds");
    if (!grace.has_value()) return bad_request(grace.error().message());
    auto o = query_option_bool(req, "orphanDependents");
    orphan_set = o.has_value();
    orphan = o.value_or(false);
    policy = query_value(req, "propagationPolicy");
    dry_values = query_dry_run(req);
  }
  api::FieldErrorList errs;
  const api::FieldPath policy_path("propagationPolicy");
  if (orphan_set && policy) {
    errs.push_back(api::field_invalid(policy_path, *policy, "orphanDependents and deletionPropagation cannot be both set"));
  }
  if (policy && *policy != "Foreground" && *policy != "Background" && *policy != "Orphan") {
    errs.push_back(api::field_not_supported(policy_path, *policy, {"Foreground", "Background", "Orphan", "nil"}));
  }
  std::optional<ApiError> dry_error = check_dry_run(dry_values, "DeleteOptions");
  if (dry_error) api::append_errors(errs, dry_error->causes);
  if (!errs.empty()) {
    return invalid(options_info("DeleteOptions"), "", std::move(errs));
  }
  dry = !dry_values.empty();
  propagation = policy ? *policy : orphan_set ? (orphan ? "Orphan" : "Background") : "";
  return std::nullopt;
}

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

// metadata.creationTimestamp and deletionTimestamp of a request's object read
// as kube-apiserver's decoder reads a metav1.Time (400 with Go's parse error,
// naming the field), before the server sets its own values there.
std::optional<ApiError> check_meta_times(const ResourceInfo& r, const Json& object) {
  for (const char* field : {"creationTimestamp", "deletionTimestamp"}) {
    const JsonValue* t = find(object, {"metadata", field});
    if (t == nullptr || t->IsNull() || (t->IsString() && t->GetStringLength() == 0)) continue;  // "" as the codec
    std::string why;
    if (!t->IsString()) {
      why = std::string("json: cannot unmarshal ") + (t->IsNumber() ? "number" : t->IsBool() ? "bool" : t->IsArray() ? "array" : "object") +
            " into Go value of type string";
    } else if (auto err = api::rfc3339_error(std::string_view(t->GetString(), t->GetStringLength()))) {
      why = *err;
    } else {
      continue;
    }
    // transformDecodeError's wording, and the field (which Go's message lacks).
    return bad_request(r.kind + " in version \"" + r.version + "\" cannot be handled as a " + r.kind +
                       ": metadata." + field + ": " + why);
  }
  return std::nullopt;
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

// etcd refuses a request over its --max-request-bytes (1.5 MiB by default) and
// kube-apiserver passes the refusal on as it gets it: a 500 whose message is
// etcd's ("etcdserver: request is too large"), no reason. Objects are bounded
// the same way here (their stored JSON and key), whatever the store.
constexpr size_t kMaxStoredRequestBytes = 3 << 19;  // 1.5 MiB
std::optional<ApiError> too_large_for_store(const std::string& key, const std::string& stored) {
  if (key.size() + stored.size() <= kMaxStoredRequestBytes) return std::nullopt;
  ApiError e;
  e.http = 500;
  e.message = "etcdserver: request is too large";
  return e;
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

// Continue tokens are base64 RawURLEncoding of
// {"v":"meta.k8s.io/v1","rv":<revision>,"start":"<last key>"}, as upstream's
// storage encodes them (draplane's start key is the last key returned).
struct ContinueToken {
  int64_t revision = 0;  // < 0: the latest
  std::string start;     // the last key returned, below the prefix
};

// storage.DecodeContinue, with its errors ("continue key is not valid: ...").
Result<ContinueToken> decode_continue(const std::string& token) {
  auto fail = [](const std::string& why) {
    return Status(Code::kBadRequest, "continue key is not valid" + (why.empty() ? std::string() : ": " + why));
  };
  auto data = common::base64_decode(token, common::Base64::kRawUrl);
  if (!data.has_value()) return fail(data.error().message());
  auto doc = parse_json(*data);
  if (!doc.has_value()) return fail(doc.error().message());
  if (!doc->IsObject()) return fail("json: cannot unmarshal " + std::string(doc->IsArray() ? "array" : "value") +
                                    " into Go value of type storage.continueToken");
  const JsonValue* v = find(*doc, {"v"});
  const JsonValue* rv = find(*doc, {"rv"});
  const JsonValue* start = find(*doc, {"start"});
  if (rv != nullptr && !rv->IsNull() && !rv->IsInt64()) {
    return fail("json: cannot unmarshal " + std::string(rv->IsString() ? "string" : "number") +
                " into Go struct field continueToken.rv of type int64");
  }
  std::string version = v != nullptr && v->IsString() ? v->GetString() : "";
  if (version != "meta.k8s.io/v1") {
    return Status(Code::kBadRequest,
                  "continue key is not valid: server does not recognize this encoded version " + version);
  }
  ContinueToken t;
  t.revision = rv != nullptr && rv->IsInt64() ? rv->GetInt64() : 0;
  if (t.revision == 0) return fail("incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
  t.start = start != nullptr && start->IsString() ? std::string(start->GetString(), start->GetStringLength()) : "";
  if (t.start.empty()) return fail("encoded start key empty (version meta.k8s.io/v1)");
  // A start key that path.Clean would change could climb out of the prefix.
  std::string key = t.start[0] == '/' ? t.start : "/" + t.start;
  bool clean = key.find("//") == std::string::npos && key.find("/./") == std::string::npos &&
               key.find("/../") == std::string::npos && !key.ends_with("/.") && !key.ends_with("/..") &&
               (key.size() == 1 || key.back() != '/');
  if (!clean) return fail(t.start);
  t.start = key.substr(1);
  return t;
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


// ---- field management (server-side apply and managedFields)

// The top-level fields a write owns: kube-apiserver's strategies reset status
// on main-resource writes and everything but status on /status.
ssa::Scope scope_of(const ResourceInfo& r, const std::string& subresource) {
  if (subresource == "status") return ssa::Scope::kStatusOnly;
  if (strategy_of(r).main_resource_resets_status(r)) return ssa::Scope::kAllButStatus;
  return ssa::Scope::kAll;
}

ssa::Writer writer_of(const Request& req, const ResourceInfo& r, const std::string& subresource) {
  std::string manager = q(req, "fieldManager");
  if (manager.empty()) manager = ssa::manager_from_user_agent(req.user_agent);
  return ssa::Writer{manager, r.group_version(), subresource};
}

// PatchOptions / CreateOptions / UpdateOptions checks of fieldManager and force.
std::optional<ApiError> check_manager_options(const Request& req, std::string_view options_kind, bool apply) {
  api::FieldErrorList errs;
  std::string manager = q(req, "fieldManager");
  if (apply && manager.empty()) {
    errs.push_back(api::field_required(api::FieldPath("fieldManager"), "is required for apply patch"));
  }
  if (!apply && options_kind == "PatchOptions" && req.query.count("force")) {
    errs.push_back(api::field_forbidden(api::FieldPath("force"), "may not be specified for non-apply patch"));
  }
  if (manager.size() > 128) errs.push_back(api::field_too_long(api::FieldPath("fieldManager"), 128));
  if (auto e = check_dry_run(query_dry_run(req), options_kind)) api::append_errors(errs, e->causes);
  if (errs.empty()) return std::nullopt;
  return invalid(options_info(std::string(options_kind)), "", std::move(errs));
}

// The version check of an applied configuration (versionCheckManager) and its managedFields.
std::optional<ApiError> check_applied(const ResourceInfo& r, const JsonValue& config) {
  if (!config.IsObject()) return bad_request("the body of the request must be a JSON object");
  std::string av = get_string(config, {"apiVersion"}), kind = get_string(config, {"kind"});
  if (av != r.group_version() || kind != r.kind) {
    size_t slash = av.find('/');
    std::string gv = slash == std::string::npos ? "/" + av : av;
    return bad_request("invalid object type: " + gv + ", Kind=" + kind);
  }
  const JsonValue* mf = find(config, {"metadata", "managedFields"});
  if (mf != nullptr && !mf->IsNull()) return bad_request("metadata.managedFields must be nil");
  return std::nullopt;
}

ApiError apply_conflict(const std::vector<ssa::Conflict>& conflicts) {
  ApiError e = from_code(Code::kConflict, ssa::conflict_message(conflicts));
  for (const auto& c : conflicts) {
    e.other_causes.push_back({"FieldManagerConflict", "conflict with " + ssa::print_manager(c.manager_id),
                              ssa::path_string(c.path)});
  }
  return e;
}

// `object` (storage version) as the request's version shows it, when that differs.
const JsonValue& served_view(const ResourceInfo& r, const JsonValue& object, Json& holder) {
  if (!r.converted) return object;
  holder.CopyFrom(object, holder.GetAllocator());
  to_served_version(r, holder);
  return holder;
}

// What a create compares against: a new Go object of the kind as it
// serializes, i.e. with its non-pointer structs present and empty (so that a
// creator owns the fields in spec.devices, not spec.devices itself).
Json empty_like(const ResourceInfo& r, const JsonValue& object) {
  Json e(rapidjson::kObjectType);
  auto& a = e.GetAllocator();
  for (const char* k : {"metadata", "spec", "status"}) {
    const JsonValue* v = find(object, {k});
    if (v && v->IsObject()) e.AddMember(rapidjson::StringRef(k), JsonValue(rapidjson::kObjectType), a);
  }
  for (const auto& path : strategy_of(r).empty_structs()) {
    JsonValue* at = &e;
    for (const char* k : path) at = &ensure_object(*at, k, a);
  }
  return e;
}

// Records an Update by `req` in the managedFields of `obj` (final, storage
// version) over `old` (nullptr for a create). The managers are the request's
// own managedFields when it sent some (a reset when [] or [{}]; not on
// subresources), else the live object's.
void track_update(const ResourceInfo& r, const std::string& subresource, const Request& req, const JsonValue* old,
                  const JsonValue* request_managed_fields, Json& obj, const std::string& now) {
  ssa::Managers managers;
  bool from_request = false;
  if (subresource.empty() && request_managed_fields != nullptr && !request_managed_fields->IsNull()) {
    if (ssa::is_reset(request_managed_fields)) {
      from_request = true;
    } else if (auto d = ssa::decode_managed_fields(request_managed_fields); d.has_value() && !d->empty()) {
      managers = std::move(d).value();
      from_request = true;
    }
  }
  if (!from_request && old != nullptr) {
    if (auto d = ssa::decode_managed_fields(find(*old, {"metadata", "managedFields"})); d.has_value()) {
      managers = std::move(d).value();
    }
  }
  Json old_holder, new_holder;
  Json empty = empty_like(r, obj);
  const JsonValue& live = old ? served_view(r, *old, old_holder) : static_cast<const JsonValue&>(empty);
  const JsonValue& updated = served_view(r, obj, new_holder);
  ssa::record_update(ssa::schema_for(r.group, r.kind), live, updated, managers, writer_of(req, r, subresource),
                     scope_of(r, subresource), now);
  ssa::encode_managed_fields(managers, obj);
}

}  // namespace

std::optional<ApiError> parse_field_validation(const Request& req, std::string_view options_kind,
                                               FieldValidation& out) {
  std::string v = q(req, "fieldValidation");
  if (v.empty() || v == "Warn") {
    out = FieldValidation::kWarn;
  } else if (v == "Strict") {
    out = FieldValidation::kStrict;
  } else if (v == "Ignore") {
    out = FieldValidation::kIgnore;
  } else {
    return invalid(options_info(std::string(options_kind)), "",
                   {api::field_not_supported(api::FieldPath("fieldValidation"), v, {"Ignore", "Strict", "Warn"})});
  }
  return std::nullopt;
}

Result<Stored> ApiServer::Impl::load(const std::string& key, int64_t revision) {
  ASSIGN_OR_RETURN(store::KeyValue kv, store_.get(key, revision));
  ASSIGN_OR_RETURN(Json obj, parse_json(kv.value));
  set_resource_version(obj, kv.mod_revision);
  return Stored{std::move(obj), kv.mod_revision};
}

Reply ApiServer::Impl::get(const Request& req, const Target& t) {
  if (auto e = authorize(req, t, "get", nullptr, nullptr)) return error_reply(*e);
  // The watch cache serves a get with a resourceVersion; one that is not a
  // uint64 fails there with an error that is not a Status (500, reason unset).
  if (std::string rv = q(req, "resourceVersion"); !rv.empty() && rv != "0") {
    if (auto n = go_parse_uint64(rv); !n.has_value()) {
      ApiError e = from_code(Code::kInternal,
                             api::field_invalid(api::FieldPath("resourceVersion"), rv, n.error().message()).to_string());
      e.reason = "";
      return error_reply(e);
    }
  }
  auto cur = load(t.key());
  if (!cur.has_value()) {
    if (cur.error().code() == Code::kNotFound) return error_reply(not_found(*t.resource, t.name));
    return error_reply(from_code(cur.error().code(), cur.error().message()));
  }
  if (wants_table(req.accept)) {
    if (auto e = check_table_options(req)) return error_reply(*e);
    to_served_version(*t.resource, cur->object);
    std::vector<const JsonValue*> one{&cur->object};
    return json_reply(200, to_table(*t.resource, one, std::to_string(cur->mod_revision), "", opts_.clock->unix_seconds(),
                                    q(req, "includeObject") != "None"));
  }
  return object_reply(*t.resource, 200, cur->object);
}

Reply ApiServer::Impl::list(const Request& req, const Target& t) {
  if (auto e = authorize(req, t, "list", nullptr, nullptr)) return error_reply(*e);
  ListParams p;
  if (auto e = parse_list_params(req, *t.resource, p)) return error_reply(*e);
  std::string prefix = t.prefix();
  store::ListOptions so;
  // storage.ValidateListOptions: the continue token, else the resourceVersion.
  if (!p.continue_token.empty()) {
    auto tok = decode_continue(p.continue_token);
    if (!tok.has_value()) return error_reply(bad_request("invalid continue token: " + tok.error().message()));
    if (!p.resource_version.empty() && p.resource_version != "0") {
      return error_reply(bad_request("specifying resource version is not allowed when using continue"));
    }
    so.revision = std::max<int64_t>(tok->revision, 0);
    so.start_after = prefix + tok->start;
  } else if (!p.resource_version.empty()) {
    uint64_t rv = 0;
    if (p.resource_version != "0") {
      auto n = go_parse_uint64(p.resource_version);
      if (!n.has_value()) {
        return error_reply(bad_request(
            "invalid resource version: " +
            api::field_invalid(api::FieldPath("resourceVersion"), p.resource_version, n.error().message()).to_string()));
      }
      rv = *n;
    }
    // Exact lists at the revision; so does a paged list with a plain resourceVersion.
    bool exact = p.resource_version_match == "Exact" || (p.resource_version_match.empty() && p.limit > 0 && rv > 0);
    if (exact) so.revision = static_cast<int64_t>(std::min<uint64_t>(rv, std::numeric_limits<int64_t>::max()));
    // A revision the store has not reached: etcd's future-revision error for an
    // exact list, the watch cache's (retry after 1 s) for a not-older-than one.
    if (int64_t current = store_.current_revision(); rv > static_cast<uint64_t>(current)) {
      ApiError e = from_code(Code::kDeadlineExceeded, "Timeout: Too large resource version: " + std::to_string(rv) +
                                                          ", current: " + std::to_string(current));
      e.other_causes.push_back({"ResourceVersionTooLarge", "Too large resource version", ""});
      e.retry_after = exact ? 0 : 1;
      return error_reply(e);
    }
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
    chunk.limit = p.limit <= 0 ? 0 : filtering ? std::max<int64_t>(p.limit, 500) : p.limit;
    auto l = store_.list(prefix, chunk);
    if (!l.has_value()) {
      if (l.error().code() == Code::kGone) {
        ApiError e = from_code(Code::kGone, p.continue_token.empty()
                                                ? "The resourceVersion for the provided list is too old."
                                                : "The provided continue parameter is too old to display a consistent "
                                                  "list result. You can start a new list without the continue "
                                                  "parameter.");
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
    token = common::base64_encode(tok, common::Base64::kRawUrl);
  }
  if (table) {
    if (auto e = check_table_options(req)) return error_reply(*e);
    std::vector<const JsonValue*> ptrs;
    for (const auto& o : items) ptrs.push_back(&o);
    return json_reply(200, to_table(*t.resource, ptrs, std::to_string(revision), token, opts_.clock->unix_seconds(),
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

// ---- create, step by step: the body as the storage version -> the object's
// metadata -> namespace lifecycle -> strategy -> managed fields -> admission
// -> write.

Reply ApiServer::Impl::create(const Request& req, const Target& t, const ssa::Managers* applied) {
  const ResourceInfo& r = *t.resource;
  // The authorization filter, before the body is looked at (admission below).
  if (auto e = authorize(req, t, "create", nullptr, nullptr)) return error_reply(*e);
  FieldValidation fv;
  if (auto e = parse_field_validation(req, req.method == "PATCH" ? "PatchOptions" : "CreateOptions", fv)) {
    return error_reply(*e);
  }
  if (applied == nullptr) {
    if (auto e = check_manager_options(req, "CreateOptions", false)) return error_reply(*e);
  }
  auto parsed = parse_json(req.body);
  if (!parsed.has_value()) return error_reply(bad_request(parsed.error().message()));
  Json obj = std::move(parsed).value();
  if (auto e = create_body_to_storage(r, obj)) return error_reply(*e);
  Target named = t;
  if (auto e = name_created(t, obj, named)) return error_reply(*e);
  if (auto e = check_namespace_lifecycle(named)) return error_reply(*e);
  if (auto e = admit_priority(store_, priority_classes_.get(), r, named.name, obj, /*update=*/false)) return error_reply(*e);
  Json request_managed_fields = prepare_create_meta(obj);  // null unless the body set them
  std::vector<std::string> warnings;
  // The create's time is its creationTimestamp.
  StrategyContext c = context(r, fv, get_string(obj, {"metadata", "creationTimestamp"}));
  if (auto e = create_strategy(c, obj, warnings)) return error_reply(*e);
  if (applied != nullptr) ssa::encode_managed_fields(*applied, obj);
  else track_update(r, "", req, nullptr, &request_managed_fields, obj, now_text());
  if (auto e = authorize(req, t, "create", nullptr, &obj)) return error_reply(*e);
  if (dry_run(req)) return with_warnings(object_reply(r, 201, obj), std::move(warnings));
  return write_create(named, std::move(obj), std::move(warnings));
}

// The request body checked against the URL's resource and made the storage version.
std::optional<ApiError> ApiServer::Impl::create_body_to_storage(const ResourceInfo& r, Json& obj) {
  if (!obj.IsObject()) return bad_request("the body of the request must be a JSON object");
  if (auto e = check_meta_times(r, obj)) return e;
  std::string kind = get_string(obj, {"kind"});
  if (!kind.empty() && kind != r.kind) {
    return bad_request("the object provided is unrecognized (kind " + kind + " posted to " + qualified_resource(r) +
                       ")");
  }
  if (auto e = check_api_version(r, obj)) return e;
  if (auto e = body_to_storage(r, obj)) return e;
  set_string(obj, "apiVersion", r.storage_group_version(), obj.GetAllocator());
  return std::nullopt;
}

// The created object's namespace (the URL's) and name (from generateName when
// it has none), which `named` then names.
std::optional<ApiError> ApiServer::Impl::name_created(const Target& t, Json& obj, Target& named) {
  const ResourceInfo& r = *t.resource;
  auto& a = obj.GetAllocator();
  JsonValue& meta = ensure_object(obj, "metadata", a);
  std::string ns = get_string(meta, {"namespace"});
  if (r.namespaced) {
    if (ns.empty()) ns = t.namespace_;
    if (ns != t.namespace_) {
      return bad_request("the namespace of the provided object does not match the namespace sent on the request");
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
    return invalid(r, "", {api::field_required(api::FieldPath("metadata.name"), "name or generateName is required")});
  }
  named.namespace_ = ns;
  named.name = name;
  return std::nullopt;
}

// The metadata the server owns on create (BeforeCreate): uid,
// creationTimestamp, generation; no resourceVersion, deletion or managedFields
// (the body's are returned, null when it has none).
Json ApiServer::Impl::prepare_create_meta(Json& obj) {
  auto& a = obj.GetAllocator();
  JsonValue& meta = ensure_object(obj, "metadata", a);
  Json request_managed_fields;
  if (const JsonValue* mf = find(meta, {"managedFields"})) {
    request_managed_fields.CopyFrom(*mf, request_managed_fields.GetAllocator());
  }
  for (const char* k : {"resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields"}) {
    remove_member(meta, k);
  }
  set_string(meta, "uid", opts_.new_uid(), a);
  set_string(meta, "creationTimestamp", now_text(), a);
  set_member(meta, "generation", JsonValue(int64_t{1}), a);
  return request_managed_fields;
}

// NamespaceLifecycle admission: a namespaced object goes into an existing
// namespace that is not terminating.
std::optional<ApiError> ApiServer::Impl::check_namespace_lifecycle(const Target& named) {
  const ResourceInfo& r = *named.resource;
  if (!r.namespaced) return std::nullopt;
  const std::string& ns = named.namespace_;
  auto known = namespaces_ ? namespaces_->state(ns) : NamespaceCache::State::kUnknown;
  bool terminating = known == NamespaceCache::State::kTerminating;
  if (known == NamespaceCache::State::kUnknown) {
    auto nsobj = load("/registry/namespaces/" + ns);
    if (!nsobj.has_value()) return not_found(*find_resource("", "v1", "namespaces"), ns);
    terminating = !get_string(nsobj->object, {"metadata", "deletionTimestamp"}).empty();
  }
  if (terminating) {
    return forbidden(r, named.name, "unable to create new content in namespace " + ns + " because it is being terminated");
  }
  return std::nullopt;
}

// The kind's strategy on create: PrepareForCreate, then Validate and Canonicalize.
std::optional<ApiError> ApiServer::Impl::create_strategy(const StrategyContext& c, Json& obj,
                                                         std::vector<std::string>& warnings) {
  const Strategy& strategy = strategy_of(c.resource);
  std::vector<std::string> late_warnings;
  if (auto e = strategy.prepare_for_create(c, obj, late_warnings)) return e;
  if (auto e = strategy.validate_create(c, obj, warnings)) return e;
  warnings.insert(warnings.end(), late_warnings.begin(), late_warnings.end());
  return std::nullopt;
}

// The store's create: 409 when the name is taken.
Reply ApiServer::Impl::write_create(const Target& named, Json obj, std::vector<std::string> warnings) {
  const ResourceInfo& r = *named.resource;
  std::string stored = stored_form(obj);
  if (auto e = too_large_for_store(named.key(), stored)) return error_reply(*e);
  auto created = store_.create(named.key(), stored);
  if (!created.has_value()) {
    if (created.error().code() == Code::kAlreadyExists) return error_reply(already_exists(r, named.name));
    return error_reply(from_code(created.error().code(), created.error().message()));
  }
  set_resource_version(obj, created->mod_revision);
  Reply ok = with_warnings(object_reply(r, 201, obj), std::move(warnings));
  recent_.put(named.key(), Stored{std::move(obj), created->mod_revision}, stored.size());
  return ok;
}

// ---- update and patch, step by step (the registry's Update with its patcher):
// the request is parsed once; then each attempt is load -> apply patch ->
// strategy (prepare, validate, canonicalize) -> managed fields -> admission ->
// conditional write, and a conflicting write tries again from a fresh load.

// The request of an update or patch, as every attempt uses it.
struct ApiServer::Impl::UpdateCall {
  const Request& req;
  const Target& t;
  const std::string& patch_type;  // "" for PUT
  bool is_patch = false;
  bool apply = false;  // application/apply-patch+yaml
  bool force = false;
  FieldValidation fv = FieldValidation::kWarn;
  Json body{};
  const ssa::Schema* schema = nullptr;
  ssa::Writer writer{};
  std::string key{};
  const ResourceInfo& resource() const { return *t.resource; }
  const char* verb() const { return is_patch ? "patch" : "update"; }
};

// The new object of one attempt, as its steps build it.
struct ApiServer::Impl::Updated {
  Json obj;
  bool client_rv = false;  // the client named the resourceVersion it updates
  std::optional<ssa::Managers> applied;  // the managers after a server-side apply
  Json request_managed_fields;           // of a PUT body
  std::vector<std::string> warnings;
};

Reply ApiServer::Impl::update(const Request& req, const Target& t, const std::string& patch_type) {
  UpdateCall u{req, t, patch_type};
  if (auto e = parse_update(u)) return error_reply(*e);
  bool use_recent = true;  // until an attempt from a recent object fails
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::optional<Stored> recent = use_recent ? recent_.take(u.key) : std::nullopt;
    const bool from_recent = recent.has_value();
    Result<Stored> cur = from_recent ? Result<Stored>(std::move(*recent)) : load(u.key);
    bool wrote = false;
    std::optional<Reply> reply = update_attempt(u, cur, wrote);
    if (from_recent && !wrote) {
      // The recent object may be stale: what it led to is settled against the store.
      use_recent = false;
      continue;
    }
    if (reply.has_value()) return std::move(*reply);
  }
  return error_reply(conflict(*t.resource, t.name, "too many concurrent updates; please try again"));
}

// The authorization filter, the patch type, the options and the body.
std::optional<ApiError> ApiServer::Impl::parse_update(UpdateCall& u) {
  const Request& req = u.req;
  const ResourceInfo& r = u.resource();
  u.is_patch = !u.patch_type.empty();
  u.apply = u.patch_type == "application/apply-patch+yaml";
  // The authorization filter, before the body is looked at (admission below).
  if (auto e = authorize(req, u.t, u.verb(), nullptr, nullptr)) return e;
  if (u.is_patch && u.patch_type != "application/merge-patch+json" && u.patch_type != "application/json-patch+json" &&
      u.patch_type != "application/strategic-merge-patch+json" && !u.apply) {
    ApiError e = from_code(Code::kBadRequest, "the body of the request was in an unknown format - accepted media types "
                                              "include: application/json-patch+json, application/merge-patch+json, "
                                              "application/apply-patch+yaml");
    e.http = 415;
    e.reason = "UnsupportedMediaType";
    return e;
  }
  const char* options_kind = u.is_patch ? "PatchOptions" : "UpdateOptions";
  if (auto e = parse_field_validation(req, options_kind, u.fv)) return e;
  if (auto e = check_manager_options(req, options_kind, u.apply)) return e;
  auto body = parse_json(req.body);
  if (!body.has_value()) return bad_request(body.error().message());
  u.body = std::move(body).value();
  if (u.apply) {
    if (auto e = check_applied(r, u.body)) return e;
  }
  u.force = query_flag(req, "force");
  u.schema = &ssa::schema_for(r.group, r.kind);
  u.writer = writer_of(req, r, u.t.subresource);
  u.key = u.t.key();
  return std::nullopt;
}

// One attempt from the loaded object `cur`: a reply, or nullopt to try again
// from the store's object. `wrote`: the attempt changed the store.
std::optional<Reply> ApiServer::Impl::update_attempt(const UpdateCall& u, Result<Stored>& cur, bool& wrote) {
  if (!cur.has_value()) return update_missing(u, cur.error());
  Updated n;
  if (auto e = apply_patch(u, *cur, n)) return error_reply(*e);
  prepare_update(u, *cur, n);
  if (auto e = validate_update(u, *cur, n)) return error_reply(*e);
  record_update_fields(u, *cur, n);
  if (auto e = admit_priority(store_, priority_classes_.get(), u.resource(), u.t.name, n.obj, /*update=*/true)) return error_reply(*e);
  if (auto e = authorize(u.req, u.t, u.verb(), &cur->object, &n.obj)) return error_reply(*e);
  return write_update(u, *cur, n, wrote);
}

// The object is not there: 404, except that a server-side apply creates it
// (the configuration applied to an empty object).
std::optional<Reply> ApiServer::Impl::update_missing(const UpdateCall& u, const Status& why) {
  const ResourceInfo& r = u.resource();
  if (why.code() != Code::kNotFound) return error_reply(from_code(why.code(), why.message()));
  if (!u.apply || !u.t.subresource.empty()) return error_reply(not_found(r, u.t.name));
  ssa::Managers managers;
  Json empty(rapidjson::kObjectType);
  auto res = ssa::apply(*u.schema, empty, u.body, managers, u.writer, scope_of(r, ""), u.force,
                        now_text());
  if (!res.has_value()) return error_reply(bad_request(res.error().message()));
  Request create_req = u.req;
  create_req.body = to_string(res->object);
  create_req.content_type = "application/json";
  Target coll = u.t;
  coll.name.clear();
  return create(create_req, coll, &managers);
}

// The new object: the PUT body, or the patch applied to the loaded object as
// the request's version shows it; then as the storage version, named as the
// URL names it, and checked against the resourceVersion the client sent.
std::optional<ApiError> ApiServer::Impl::apply_patch(const UpdateCall& u, const Stored& cur, Updated& n) {
  const ResourceInfo& r = u.resource();
  Json& obj = n.obj;
  if (!u.is_patch) {
    if (u.body.IsObject()) {
      if (const JsonValue* mf = find(u.body, {"metadata", "managedFields"})) {
        n.request_managed_fields.CopyFrom(*mf, n.request_managed_fields.GetAllocator());
      }
    }
    obj.CopyFrom(u.body, obj.GetAllocator());
    n.client_rv = !get_string(obj, {"metadata", "resourceVersion"}).empty();
    if (obj.IsObject()) {
      if (auto e = check_api_version(r, obj)) return e;
    }
  } else {
    // Patches apply to the object as the requested version shows it.
    obj.CopyFrom(cur.object, obj.GetAllocator());
    to_served_version(r, obj);
    auto& a = obj.GetAllocator();
    if (u.patch_type == "application/json-patch+json") {
      if (Status st = json_patch(obj, u.body, a); !st.ok()) return from_code(st.code(), st.message());
    } else if (u.apply) {
      auto managers = ssa::decode_managed_fields(find(cur.object, {"metadata", "managedFields"}));
      if (!managers.has_value()) {
        return from_code(Code::kInternal, "failed to decode managed fields: " + managers.error().message());
      }
      StrategyContext c = context(r, u.fv);
      auto defaults = [&c](Json& o) { strategy_of(c.resource).apply_defaults(c, o); };
      auto res = ssa::apply(*u.schema, obj, u.body, *managers, u.writer,
                            scope_of(r, u.t.subresource), u.force, c.now, defaults);
      if (!res.has_value()) return bad_request(res.error().message());
      if (!res->conflicts.empty()) return apply_conflict(res->conflicts);
      obj.CopyFrom(res->object, a);
      n.applied = std::move(managers).value();
    } else if (u.patch_type == "application/strategic-merge-patch+json") {
      // Every kind served is built in (kube-apiserver refuses strategic merge
      // patches only for custom resources); lists outside core are atomic.
      strategic_merge_patch(obj, u.body, a, !r.group.empty());
    } else {
      merge_patch(obj, u.body, a);
    }
    n.client_rv = get_string(obj, {"metadata", "resourceVersion"}) != std::to_string(cur.mod_revision);
  }
  if (!obj.IsObject()) return bad_request("the body of the request must be a JSON object");
  if (auto e = check_meta_times(r, obj)) return e;
  if (auto e = body_to_storage(r, obj)) return e;
  auto& a = obj.GetAllocator();
  JsonValue& meta = ensure_object(obj, "metadata", a);
  std::string name = get_string(meta, {"name"});
  if (name.empty()) {
    set_string(meta, "name", u.t.name, a);
  } else if (name != u.t.name) {
    return bad_request("the name of the object (" + name + ") does not match the name on the URL (" + u.t.name + ")");
  }
  std::string rv = get_string(meta, {"resourceVersion"});
  if (n.client_rv && !rv.empty() && rv != std::to_string(cur.mod_revision)) {
    return conflict(r, u.t.name, "the object has been modified; please apply your changes to the latest version and "
                                 "try again");
  }
  set_string(obj, "apiVersion", r.storage_group_version(), a);
  return std::nullopt;
}

// The generation: the old one, plus one when the spec (all but metadata and status) changed.
static int64_t next_generation(const JsonValue& old, const JsonValue& obj) {
  const JsonValue* g = find(old, {"metadata", "generation"});
  int64_t gen = g && g->IsInt64() ? g->GetInt64() : 0;
  return spec_equal(old, obj) ? gen : gen + 1;
}

// PrepareForUpdate: a /status write changes only status (ResetObjectMetaForStatus);
// a write of the main resource keeps the server-owned metadata, and what the
// kind's strategy resets (its status); the generation follows the spec.
void ApiServer::Impl::prepare_update(const UpdateCall& u, const Stored& cur, Updated& n) {
  const ResourceInfo& r = u.resource();
  Json& obj = n.obj;
  auto& a = obj.GetAllocator();
  const JsonValue& old_meta = *find(cur.object, {"metadata"});
  if (u.t.subresource == "status") {
    Json merged = copy_of(cur.object);
    const JsonValue* st = find(obj, {"status"});
    if (st) set_member(merged, "status", JsonValue(*st, merged.GetAllocator()), merged.GetAllocator());
    else remove_member(merged, "status");
    // CopyFrom, not move: `a` refers to obj's allocator, which a move would free.
    obj.CopyFrom(merged, a);
  } else {
    for (const char* k : {"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "namespace",
                          "generation"}) {
      JsonValue& m = ensure_object(obj, "metadata", a);
      const JsonValue* ov = find(old_meta, {k});
      if (ov) set_member(m, k, JsonValue(*ov, a), a);
      else remove_member(m, k);
    }
    strategy_of(r).prepare_for_update(r, cur.object, obj);  // the generation follows in validate_update
  }
  set_string(ensure_object(obj, "metadata", a), "resourceVersion", std::to_string(cur.mod_revision), a);
}

// ValidateUpdate and Canonicalize of the kind's strategy; then the generation
// again, now that defaults are in (an apply or patch may omit defaulted fields).
std::optional<ApiError> ApiServer::Impl::validate_update(const UpdateCall& u, const Stored& cur, Updated& n) {
  const ResourceInfo& r = u.resource();
  Json& obj = n.obj;
  if (auto e = strategy_of(r).validate_update(context(r, u.fv), cur.object, obj, u.t.subresource, n.warnings)) return e;
  if (u.t.subresource.empty()) {
    const JsonValue* g = find(cur.object, {"metadata", "generation"});
    int64_t gen = next_generation(cur.object, obj);
    if (g || gen != 0) set_member(ensure_object(obj, "metadata", obj.GetAllocator()), "generation", JsonValue(gen), obj.GetAllocator());
  }
  return std::nullopt;
}

// managedFields: the managers after a server-side apply, else an Update entry
// of the request's field manager.
void ApiServer::Impl::record_update_fields(const UpdateCall& u, const Stored& cur, Updated& n) {
  if (n.applied) {
    ssa::encode_managed_fields(*n.applied, n.obj);
    return;
  }
  // A patch's result carries the live managedFields unless the patch changed them.
  Json patched_managed_fields;
  if (u.is_patch) {
    if (const JsonValue* mf = find(n.obj, {"metadata", "managedFields"})) {
      patched_managed_fields.CopyFrom(*mf, patched_managed_fields.GetAllocator());
    }
  }
  track_update(u.resource(), u.t.subresource, u.req, &cur.object,
               u.is_patch ? &patched_managed_fields : &n.request_managed_fields, n.obj, now_text());
}

// The write, conditional on the loaded revision: none when nothing changed or
// on a dry run; the delete when the last finalizer of a terminating object is
// gone; nullopt when another write came first (the caller tries again, unless
// the client named the revision: then 409).
std::optional<Reply> ApiServer::Impl::write_update(const UpdateCall& u, const Stored& cur, Updated& n, bool& wrote) {
  const ResourceInfo& r = u.resource();
  Json& obj = n.obj;
  if (equal_ignoring_rv(cur.object, obj)) return with_warnings(object_reply(r, 200, cur.object), std::move(n.warnings));
  bool terminating = !get_string(obj, {"metadata", "deletionTimestamp"}).empty();
  const JsonValue* fin = find(obj, {"metadata", "finalizers"});
  bool no_finalizers = fin == nullptr || !fin->IsArray() || fin->Empty();
  if (dry_run(u.req)) return with_warnings(object_reply(r, 200, obj), std::move(n.warnings));
  if (terminating && no_finalizers) {
    // The last finalizer is gone: the object goes away now.
    auto res = delete_object(u.t, Stored{copy_of(obj), cur.mod_revision}, false);
    if (!res.has_value()) {
      if (res.error().code() == Code::kConflict) return std::nullopt;
      return error_reply(from_code(res.error().code(), res.error().message()));
    }
    wrote = true;
    return with_warnings(object_reply(r, 200, *res), std::move(n.warnings));
  }
  std::string stored = stored_form(obj);
  if (auto e = too_large_for_store(u.key, stored)) return error_reply(*e);
  auto w = store_.update(u.key, stored, cur.mod_revision);
  if (!w.has_value()) return error_reply(from_code(w.error().code(), w.error().message()));
  if (!w->succeeded) {
    if (n.client_rv) {
      return error_reply(conflict(r, u.t.name, "the object has been modified; please apply your changes to the latest "
                                               "version and try again"));
    }
    return std::nullopt;
  }
  wrote = true;
  set_resource_version(obj, w->revision);
  Reply ok = with_warnings(object_reply(r, 200, obj), std::move(n.warnings));
  recent_.put(u.key, Stored{std::move(obj), w->revision}, stored.size());
  return ok;
}

Result<Json> ApiServer::Impl::delete_object(const Target& t, Stored cur, bool dry) {
  const Strategy& strategy = strategy_of(*t.resource);
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
    strategy.after_delete(*this, t.name, w.revision);
    set_resource_version(obj, w.revision);
    return std::move(obj);
  }
  if (dry) return std::move(obj);
  std::string uid = get_string(obj, {"metadata", "uid"});
  strategy.before_remove(*this, t.name);
  ASSIGN_OR_RETURN(store::WriteResult w, store_.remove(t.key(), cur.mod_revision));
  if (!w.succeeded) return Status(Code::kConflict, "modified concurrently");
  recent_.erase(t.key());
  strategy.after_delete(*this, t.name, w.revision);
  collect_dependents(uid, t.resource->namespaced ? t.namespace_ : "", w.revision);
  release_foreground_owners(obj);
  return std::move(obj);
}

Reply ApiServer::Impl::remove(const Request& req, const Target& t) {
  const ResourceInfo& r = *t.resource;
  // The authorization filter; the object's checks follow once it is read.
  if (auto e = authorize(req, t, "delete", nullptr, nullptr)) return error_reply(*e);
  Json opts;
  if (!req.body.empty()) {
    auto b = parse_json(req.body);
    if (!b.has_value()) return error_reply(bad_request(b.error().message()));
    opts = std::move(b).value();
  }
  bool dry = false;
  std::string policy;
  if (auto e = delete_options(req, dry, policy)) return error_reply(*e);
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
    auto res = delete_with_policy(t, std::move(cur).value(), dry, policy);
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
  if (!strategy_of(*t.resource).deletes_collections()) {  // after authorization, as kube-apiserver's filters
    return error_reply(method_not_allowed());
  }
  ListParams params;
  if (auto e = parse_list_params(req, *t.resource, params)) return error_reply(*e);
  bool dry = false;
  std::string policy;
  if (auto e = delete_options(req, dry, policy)) return error_reply(*e);
  auto l = store_.list(t.prefix());
  if (!l.has_value()) return error_reply(from_code(l.error().code(), l.error().message()));
  std::string body = R"({"kind":")" + t.resource->kind + R"(List","apiVersion":")" + t.resource->group_version() +
                     R"(","metadata":{},"items":[)";
  bool first = true;
  for (const auto& kv : l->items) {
    auto obj = parse_json(kv.value);
    if (!obj.has_value() || !selected(params, *obj)) continue;
    Target one = t;
    one.name = get_string(*obj, {"metadata", "name"});
    one.namespace_ = get_string(*obj, {"metadata", "namespace"});
    // NodeRestriction checks each object a delete-collection deletes.
    if (auto e = authorize(req, one, "delete", &*obj, nullptr)) return error_reply(*e);
    set_resource_version(*obj, kv.mod_revision);
    auto res = delete_with_policy(one, Stored{std::move(obj).value(), kv.mod_revision}, dry, policy);
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

namespace {

constexpr const char* kForegroundFinalizer = "foregroundDeletion";
constexpr const char* kOrphanFinalizer = "orphan";

// The ownerReferences of `obj` naming `uid`: how many, and whether one blocks
// the owner's deletion.
std::pair<size_t, bool> references_to(const JsonValue& obj, const std::string& uid) {
  const JsonValue* refs = find(obj, {"metadata", "ownerReferences"});
  size_t n = 0;
  bool blocking = false;
  if (refs == nullptr || !refs->IsArray()) return {0, false};
  for (const auto& ref : refs->GetArray()) {
    if (get_string(ref, {"uid"}) != uid) continue;
    ++n;
    const JsonValue* b = find(ref, {"blockOwnerDeletion"});
    blocking |= b != nullptr && b->IsBool() && b->GetBool();
  }
  return {n, blocking};
}

size_t reference_count(const JsonValue& obj) {
  const JsonValue* refs = find(obj, {"metadata", "ownerReferences"});
  return refs != nullptr && refs->IsArray() ? refs->Size() : 0;
}

bool has_finalizer(const JsonValue& obj, std::string_view name) {
  const JsonValue* fin = find(obj, {"metadata", "finalizers"});
  if (fin == nullptr || !fin->IsArray()) return false;
  for (const auto& f : fin->GetArray()) {
    if (f.IsString() && f.GetString() == name) return true;
  }
  return false;
}

// Adds `finalizer` and, unless set, the deletionTimestamp `now`.
void mark_terminating(Json& obj, const char* finalizer, const std::string& now) {
  auto& a = obj.GetAllocator();
  JsonValue& meta = ensure_object(obj, "metadata", a);
  if (!has_finalizer(obj, finalizer)) {
    JsonValue* fin = find(meta, {"finalizers"});
    if (fin == nullptr || !fin->IsArray()) {
      set_member(meta, "finalizers", JsonValue(rapidjson::kArrayType), a);
      fin = find(meta, {"finalizers"});
    }
    fin->PushBack(JsonValue(finalizer, a), a);
  }
  if (get_string(obj, {"metadata", "deletionTimestamp"}).empty()) {
    set_string(meta, "deletionTimestamp", now, a);
    set_member(meta, "deletionGracePeriodSeconds", JsonValue(int64_t{0}), a);
  }
}

// Drops `finalizer` from the object load() returns, if its uid is `uid`:
// write(object, revision) stores it, or remove(stored) deletes it when that was
// its last finalizer; each returns false on a conflict (then all again).
template <typename Load, typename Write, typename Remove>
void drop_finalizer(const std::string& uid, const char* finalizer, Load load, Write write, Remove remove) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    auto cur = load();
    if (!cur.has_value()) return;
    Json& obj = cur->object;
    if (get_string(obj, {"metadata", "uid"}) != uid || !has_finalizer(obj, finalizer)) return;
    JsonValue* fin = find(obj, {"metadata", "finalizers"});
    for (rapidjson::SizeType i = 0; i < fin->Size(); ++i) {
      if ((*fin)[i].IsString() && (*fin)[i].GetString() == std::string_view(finalizer)) {
        fin->Erase(fin->Begin() + i);
        break;
      }
    }
    if (fin->Empty() ? remove(std::move(*cur)) : write(obj, cur->mod_revision)) return;
  }
}

}  // namespace

std::vector<ApiServer::Impl::Dependent> ApiServer::Impl::dependents_of(const std::string& owner_uid,
                                                                       const std::string& namespace_, int64_t revision) {
  std::vector<Dependent> out;
  if (owner_uid.empty()) return out;
  auto in_scope = [&](const ResourceInfo& r) {
    if (r.converted) return false;  // same objects as the storage version
    return namespace_.empty() || r.namespaced;  // cluster objects cannot depend on namespaced owners
  };
  auto add = [&](const ResourceInfo& r, const std::string& key, Stored cur) {
    if (references_to(cur.object, owner_uid).first > 0) out.push_back({&r, key, std::move(cur)});
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
      if (cur.has_value()) add(*res, key, std::move(*cur));
    }
    return out;
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
      add(r, kv.key, Stored{std::move(obj).value(), kv.mod_revision});
    }
  }
  return out;
}

Result<Json> ApiServer::Impl::drop_owner_reference(const std::string& key, Stored cur, const std::string& owner_uid) {
  JsonValue* refs = find(cur.object, {"metadata", "ownerReferences"});
  if (refs == nullptr || !refs->IsArray()) return Json();
  bool dropped = false;
  for (rapidjson::SizeType i = 0; i < refs->Size();) {
    if (get_string((*refs)[i], {"uid"}) == owner_uid) {
      refs->Erase(refs->Begin() + i);
      dropped = true;
    } else {
      ++i;
    }
  }
  if (!dropped) return Json();
  if (refs->Empty()) remove_member(*find(cur.object, {"metadata"}), "ownerReferences");  // as Go's omitempty
  ASSIGN_OR_RETURN(store::WriteResult w, store_.update(key, stored_form(cur.object), cur.mod_revision));
  if (!w.succeeded) return Status(Code::kConflict, "modified concurrently");
  return Json();
}

void ApiServer::Impl::on_newest(const std::string& key, Stored cur, const std::function<Result<Json>(Stored)>& act) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    auto done = act(std::move(cur));
    if (done.has_value() || done.error().code() != Code::kConflict) return;
    auto again = load(key);
    if (!again.has_value()) return;  // gone meanwhile
    cur = std::move(*again);
  }
}

void ApiServer::Impl::collect_dependents(const std::string& owner_uid, const std::string& namespace_,
                                         int64_t revision) {
  for (auto& d : dependents_of(owner_uid, namespace_, revision)) {
    // A dependent's controller may write it as its owner goes (the claim
    // controller releasing a PodGroup's claim, the ReplicaSet controller
    // writing a ReplicaSet's status).
    on_newest(d.key, std::move(d.stored), [&](Stored cur) -> Result<Json> {
      const size_t refs = references_to(cur.object, owner_uid).first;
      if (refs == 0) return Json();  // no longer a dependent
      if (refs != reference_count(cur.object)) {
        return drop_owner_reference(d.key, std::move(cur), owner_uid);  // other owners keep it
      }
      Target dep{d.resource, get_string(cur.object, {"metadata", "namespace"}),
                 get_string(cur.object, {"metadata", "name"}), ""};
      return delete_object(dep, std::move(cur), false);
    });
  }
}

Result<Json> ApiServer::Impl::delete_with_policy(const Target& t, Stored cur, bool dry, const std::string& policy) {
  if (dry || (policy != "Orphan" && policy != "Foreground")) return delete_object(t, std::move(cur), dry);
  const std::string uid = get_string(cur.object, {"metadata", "uid"});
  const std::string ns = t.resource->namespaced ? t.namespace_ : "";
  if (policy == "Foreground") return delete_foreground(t, std::move(cur));
  auto deps = dependents_of(uid, ns, store_.current_revision());
  if (deps.empty()) return delete_object(t, std::move(cur), false);
  // The orphan finalizer's work, done here: the owner is marked terminating first,
  // so that no controller adopts the dependents again, then they lose the reference.
  mark_terminating(cur.object, kOrphanFinalizer, now_text());
  ASSIGN_OR_RETURN(store::WriteResult w, store_.update(t.key(), stored_form(cur.object), cur.mod_revision));
  if (!w.succeeded) return Status(Code::kConflict, "modified concurrently");
  recent_.erase(t.key());
  set_resource_version(cur.object, w.revision);
  for (auto& d : deps) {
    on_newest(d.key, std::move(d.stored), [&](Stored cur) { return drop_owner_reference(d.key, std::move(cur), uid); });
  }
  finish_foreground(t, uid);  // drops the orphan finalizer
  return std::move(cur.object);
}

Result<Json> ApiServer::Impl::delete_foreground(const Target& t, Stored cur) {
  const std::string uid = get_string(cur.object, {"metadata", "uid"});
  const std::string ns = t.resource->namespaced ? t.namespace_ : "";
  auto deps = dependents_of(uid, ns, store_.current_revision());
  if (deps.empty()) return delete_object(t, std::move(cur), false);  // nothing to wait for
  mark_terminating(cur.object, kForegroundFinalizer, now_text());
  ASSIGN_OR_RETURN(store::WriteResult w, store_.update(t.key(), stored_form(cur.object), cur.mod_revision));
  if (!w.succeeded) return Status(Code::kConflict, "modified concurrently");
  recent_.erase(t.key());
  strategy_of(*t.resource).after_delete(*this, t.name, w.revision);
  Json obj = std::move(cur.object);
  set_resource_version(obj, w.revision);
  for (auto& d : deps) {
    if (references_to(d.stored.object, uid).first < reference_count(d.stored.object)) {
      on_newest(d.key, std::move(d.stored),  // other owners keep it
                [&](Stored cur) { return drop_owner_reference(d.key, std::move(cur), uid); });
      continue;
    }
    Target dep{d.resource, get_string(d.stored.object, {"metadata", "namespace"}),
               get_string(d.stored.object, {"metadata", "name"}), ""};
    on_newest(d.key, std::move(d.stored), [&](Stored cur) { return delete_foreground(dep, std::move(cur)); });
  }
  finish_foreground(t, uid);
  return obj;
}

// Also drops the orphan finalizer (delete_with_policy calls it once the
// dependents are orphaned).
void ApiServer::Impl::finish_foreground(const Target& t, const std::string& owner_uid) {
  auto cur = load(t.key());
  if (!cur.has_value() || get_string(cur->object, {"metadata", "uid"}) != owner_uid) return;
  const bool foreground = has_finalizer(cur->object, kForegroundFinalizer);
  if (!foreground && !has_finalizer(cur->object, kOrphanFinalizer)) return;
  const std::string ns = t.resource->namespaced ? t.namespace_ : "";
  for (const auto& d : foreground ? dependents_of(owner_uid, ns, store_.current_revision()) : std::vector<Dependent>{}) {
    if (references_to(d.stored.object, owner_uid).second) return;  // still waiting for it
  }
  drop_finalizer(
      owner_uid, foreground ? kForegroundFinalizer : kOrphanFinalizer, [&] { return load(t.key()); },
      [&](Json& obj, int64_t rev) {
        recent_.erase(t.key());
        auto u = store_.update(t.key(), stored_form(obj), rev);
        return !u.has_value() || u->succeeded;
      },
      [&](Stored last) {
        // The last finalizer: the object goes, and with it the non-blocking dependents.
        auto r = delete_object(t, std::move(last), false);
        return r.has_value() || r.error().code() != Code::kConflict;
      });
}

void ApiServer::Impl::release_foreground_owners(const JsonValue& removed) {
  const JsonValue* refs = find(removed, {"metadata", "ownerReferences"});
  if (refs == nullptr || !refs->IsArray()) return;
  const std::string ns = get_string(removed, {"metadata", "namespace"});
  for (const auto& ref : refs->GetArray()) {
    const JsonValue* b = find(ref, {"blockOwnerDeletion"});
    if (b == nullptr || !b->IsBool() || !b->GetBool()) continue;  // only blocking dependents hold an owner
    const std::string api_version = get_string(ref, {"apiVersion"});
    const std::string group = api_version.find('/') == std::string::npos ? "" : api_version.substr(0, api_version.find('/'));
    const std::string kind = get_string(ref, {"kind"});
    for (const auto& r : all_resources()) {
      if (r.converted || r.kind != kind || r.group != group) continue;
      finish_foreground(Target{&r, r.namespaced ? ns : "", get_string(ref, {"name"}), ""}, get_string(ref, {"uid"}));
      break;
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
      on_newest(kv.key, Stored{std::move(obj).value(), kv.mod_revision},
                [&](Stored cur) { return delete_object(dep, std::move(cur), false); });
    }
  }
}

}  // namespace draplane::server
