#include "server/api_server.h"

#include <chrono>

#include "api/codec.h"
#include "api/decode_limits.h"
#include "server/internal/impl_class.h"
#include "server/priority_admission.h"
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

// What kube-apiserver's content negotiation accepts for a request body: the
// serializers of the built-in types (negotiation.NegotiateInputSerializer), and
// for PATCH the patch types (handlers/patch.go). An empty Content-Type is JSON.
constexpr std::string_view kBodyMediaTypes = "application/json, application/yaml, application/vnd.kubernetes.protobuf";
constexpr std::string_view kPatchMediaTypes =
    "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, "
    "application/apply-patch+yaml";

std::optional<ApiError> check_body_media_type(const Request& req, const std::string& type) {
  if (req.method == "PATCH") {
    for (std::string_view t : {"application/json-patch+json", "application/merge-patch+json",
                               "application/strategic-merge-patch+json", "application/apply-patch+yaml"}) {
      if (type == t) return std::nullopt;
    }
    return unsupported_media_type("the body of the request was in an unknown format - accepted media types include: " +
                                  std::string(kPatchMediaTypes));
  }
  if (type.empty() || type == "application/json" || type == "application/yaml" ||
      type == "application/vnd.kubernetes.protobuf") {
    return std::nullopt;
  }
  return unsupported_media_type("the body of the request was in an unknown format - accepted media types include: " +
                                std::string(kBodyMediaTypes));
}

// Sets `out` to `req` with its body as JSON when the body is protobuf or YAML
// (out.method stays empty when the body is used as it is). 415 for a body in a
// media type the API server does not read.
std::optional<ApiError> body_as_json(const Request& req, Request& out) {
  if (req.body.empty()) return std::nullopt;
  std::string type = media_type(req.content_type);
  if (req.method == "POST" || req.method == "PUT" || req.method == "PATCH" || req.method == "DELETE") {
    if (auto e = check_body_media_type(req, type)) return e;
  }
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
    // Protobuf strings are bytes; served as JSON they read as Go writes them.
    out.body = api::valid_utf8(pb->json) ? std::move(pb->json) : api::coerce_utf8(pb->json);
    out.content_type = "application/json";
    return std::nullopt;
  }
  bool yaml = (type == "application/yaml" && req.method != "PATCH") || type == "application/apply-patch+yaml";
  if (yaml && !looks_like_json(req.body)) {
    auto json = api::yaml_to_json(req.body);
    if (!json.has_value()) return bad_request(json.error().message());
    out = req;
    out.body = std::move(json).value();
    if (type == "application/yaml") out.content_type = "application/json";
    return std::nullopt;
  }
  // Invalid UTF-8 in a JSON body reads as Go's decoder reads it (U+FFFD for a
  // bad byte; kube-apiserver accepts it), for every kind and patch alike.
  if (!api::valid_utf8(req.body)) {
    out = req;
    out.body = api::coerce_utf8(req.body);
  }
  return std::nullopt;
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
      l.dry_run = is_dry_run(request);
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
  if (Status st = create_system_priority_classes(store_, [this] { return opts_.new_uid(); }, now_text()); !st.ok()) {
    return st;
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
  if (!priority_classes_) {
    auto cache = std::make_unique<PriorityClassCache>(store_);
    if (Status st = cache->start(); !st.ok()) return st;
    priority_classes_ = std::move(cache);
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
  } else if (t->subresource == "scale" && !t->name.empty()) {
    out.response = scale(rq, *t);
  } else if (m == "GET") {
    if (t->name.empty()) {
      // ListOptions.watch converts as every options boolean does: the Python
      // client's `watch=True` is a watch.
      if (query_flag(rq, "watch")) return watch(rq, *t);
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
    out.response = error_reply(method_not_allowed());
  }
  return out;
}

namespace {

ApiError invalid_list_options(api::FieldErrorList errs) {
  return invalid(options_info("ListOptions"), "", std::move(errs));
}

// metainternalversion validation ValidateListOptions (and validateWatchOptions),
// with the WatchList feature on.
api::FieldErrorList validate_list_options(const ListParams& p) {
  api::FieldErrorList errs;
  const api::FieldPath match_path("resourceVersionMatch");
  const std::string& match = p.resource_version_match;
  if (p.watch) {
    if (p.send_initial_events.has_value() && match != "NotOlderThan") {
      errs.push_back(api::field_forbidden(match_path, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
    }
    if (!match.empty()) {
      if (!p.send_initial_events.has_value()) {
        errs.push_back(api::field_forbidden(match_path, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"));
      }
      if (match != "NotOlderThan") errs.push_back(api::field_not_supported(match_path, match, {"NotOlderThan"}));
      if (!p.continue_token.empty()) {
        errs.push_back(api::field_forbidden(match_path, "resourceVersionMatch is forbidden when continue is provided"));
      }
    }
    return errs;
  }
  if (!match.empty()) {
    if (p.resource_version.empty()) {
      errs.push_back(api::field_forbidden(match_path, "resourceVersionMatch is forbidden unless resourceVersion is provided"));
    }
    if (!p.continue_token.empty()) {
      errs.push_back(api::field_forbidden(match_path, "resourceVersionMatch is forbidden when continue is provided"));
    }
    if (match != "Exact" && match != "NotOlderThan") {
      errs.push_back(api::field_not_supported(match_path, match, {"Exact", "NotOlderThan", ""}));
    }
    if (match == "Exact" && p.resource_version == "0") {
      errs.push_back(api::field_forbidden(match_path, "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""));
    }
  }
  if (p.send_initial_events.has_value()) {
    errs.push_back(api::field_forbidden(api::FieldPath("sendInitialEvents"), "sendInitialEvents is forbidden for list"));
  }
  return errs;
}

}  // namespace

std::optional<ApiError> parse_list_params(const Request& req, const ResourceInfo& r, ListParams& p) {
  // Convert_url_Values_To_v1_ListOptions, field by field: the scalars first.
  p.watch = query_flag(req, "watch");
  p.allow_watch_bookmarks = query_flag(req, "allowWatchBookmarks");
  p.resource_version = query_string(req, "resourceVersion");
  p.resource_version_match = query_string(req, "resourceVersionMatch");
  auto timeout = query_int64(req, "timeoutSeconds");
  if (!timeout.has_value()) return bad_request(timeout.error().message());
  p.timeout_seconds = *timeout;
  auto limit = query_int64(req, "limit");
  if (!limit.has_value()) return bad_request(limit.error().message());
  p.limit = limit->value_or(0);
  p.continue_token = query_string(req, "continue");
  p.send_initial_events = query_option_bool(req, "sendInitialEvents");
  // Then the selectors (v1 -> internal conversion).
  auto labels = Selector::parse_labels(query_string(req, "labelSelector"));
  if (!labels.has_value()) return bad_request(labels.error().message());
  p.labels = std::move(labels).value();
  auto fields = Selector::parse_fields(query_string(req, "fieldSelector"), r);
  if (!fields.has_value()) return bad_request(fields.error().message());
  p.fields = std::move(fields).value();
  // SetListOptionsDefaults: a watch from "" or "0" sends its initial events.
  if (p.watch && !p.send_initial_events.has_value() && p.resource_version_match.empty() &&
      (p.resource_version.empty() || p.resource_version == "0")) {
    p.send_initial_events = true;
    p.resource_version_match = "NotOlderThan";
  }
  api::FieldErrorList errs = validate_list_options(p);
  if (!errs.empty()) return invalid_list_options(std::move(errs));
  return std::nullopt;
}

bool selected(const ListParams& p, const JsonValue& object) {
  return p.labels.matches_labels(object) && p.fields.matches_fields(object);
}

}  // namespace draplane::server
