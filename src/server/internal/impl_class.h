// ApiServer::Impl: the request handlers. Declared here so that routing
// (api_server.cc), CRUD (api_crud.cc) and watch (api_watch.cc) share it.
#pragma once

#include <memory>
#include <optional>

#include "server/authorization.h"
#include "server/internal/api_impl.h"
#include "server/internal/namespace_cache.h"
#include "server/internal/owner_index.h"
#include "server/internal/recent_objects.h"
#include "server/internal/watch_event_cache.h"
#include "server/managed_fields.h"
#include "server/metered_store.h"
#include "server/query_params.h"

namespace draplane::server {

class ApiServer::Impl {
 public:
  // With metrics, every store call goes through a metered_store (store latency).
  Impl(store::Store& store, ApiServerOptions options, Metrics* metrics)
      : metered_(metrics ? metered_store(store, *metrics) : nullptr),
        store_(metered_ ? *metered_ : store),
        opts_(std::move(options)),
        metrics_(metrics),
        recent_(opts_.recent_objects_bytes) {}

  Outcome handle(const Request& req);
  Status bootstrap();

 private:
  friend class ApiServer;
  // Routing.
  std::optional<Target> parse_target(const std::string& path, std::string* error) const;
  // Authorization and NodeRestriction admission (api_authorize.cc, authorization.h):
  // null objects when the caller does not have them yet (the filter before
  // the handler); the old and new objects of a write when it does.
  std::optional<ApiError> authorize(const Request& req, const Target& t, const std::string& verb,
                                    const JsonValue* old_obj, const JsonValue* new_obj) const;
  std::optional<ApiError> authorize_node(const Request& req, const Target& t, const std::string& verb,
                                         const AuthorizationRule& rule, const JsonValue* old_obj,
                                         const JsonValue* new_obj) const;
  static std::string node_denial_reason(const std::string& resource, const std::string& subresource);
  // The stored object of `t` (as stored, without resourceVersion), or nullopt.
  std::optional<Json> load_for_authorization(const Target& t) const;
  bool claim_of_bound_pod(const std::string& namespace_, const std::string& claim, const std::string& node) const;

  // CRUD (api_crud.cc).
  Reply get(const Request& req, const Target& t);
  Reply list(const Request& req, const Target& t);
  // `applied`: the managedFields of a create by server-side apply (else an
  // Update entry of the request's field manager is recorded).
  Reply create(const Request& req, const Target& t, const ssa::Managers* applied = nullptr);
  Reply update(const Request& req, const Target& t, const std::string& patch_type);
  Reply remove(const Request& req, const Target& t);
  Reply remove_collection(const Request& req, const Target& t);
  Reply bind(const Request& req, const Target& t);
  // pods/<name>/log, proxied to the node agent (pod_log.cc).
  Reply pod_log(const Request& req, const Target& t);
  // Deletes `key` now, or marks it terminating when it has finalizers. Then
  // collects dependents (ownerReferences) and namespace contents.
  Result<Json> delete_object(const Target& t, Stored cur, bool dry_run);
  // `revision`: the owner's delete (the index must have seen every change before it).
  void collect_dependents(const std::string& owner_uid, const std::string& namespace_, int64_t revision);
  void delete_namespace_contents(const std::string& namespace_);
  Result<Stored> load(const std::string& key, int64_t revision = 0);

  // Watch (api_watch.cc).
  Outcome watch(const Request& req, const Target& t);

  std::string now_text() const { return opts_.clock->rfc3339(); }

  std::unique_ptr<store::Store> metered_;  // before store_, which may refer to it
  store::Store& store_;
  ApiServerOptions opts_;
  Metrics* metrics_;
  // Shared by all watch streams: each store event decoded once.
  std::shared_ptr<WatchEventCache> watch_events_ = std::make_shared<WatchEventCache>();
  // Dependents by owner UID, for cascading deletes; started by bootstrap().
  std::unique_ptr<OwnerIndex> owners_;
  // Namespaces and whether they terminate, for creates; started by bootstrap().
  std::unique_ptr<NamespaceCache> namespaces_;
  // The objects this server created or updated last, for their next update.
  RecentObjects recent_;
};

// ListOptions shared by list, watch and delete-collection.
struct ListParams {
  Selector labels, fields;
  int64_t limit = 0;  // <= 0: no limit
  std::string continue_token;
  std::string resource_version;
  std::string resource_version_match;
  bool watch = false;
  bool allow_watch_bookmarks = false;
  std::optional<bool> send_initial_events;
  std::optional<int64_t> timeout_seconds;
};
// The ListOptions of the query as kube-apiserver's listOpts makes them: decoded
// (a value that does not convert is a 400 with the conversion's message),
// defaulted as with the WatchList feature on (a watch from "" or "0" sends its
// initial events) and validated (422 `ListOptions.meta.k8s.io "" is invalid`).
std::optional<ApiError> parse_list_params(const Request& req, const ResourceInfo& r, ListParams& out);
// Whether `object` passes the selectors.
bool selected(const ListParams& p, const JsonValue& object);

}  // namespace draplane::server
