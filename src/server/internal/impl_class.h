// ApiServer::Impl: the request handlers. Declared here so that routing
// (api_server.cc), CRUD (api_crud.cc) and watch (api_watch.cc) share it.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "cel/cel.h"
#include "server/authorization.h"
#include "server/internal/api_impl.h"
#include "server/internal/namespace_cache.h"
#include "server/internal/owner_index.h"
#include "server/internal/priority_class_cache.h"
#include "server/internal/recent_objects.h"
#include "server/internal/watch_event_cache.h"
#include "server/managed_fields.h"
#include "server/metered_store.h"
#include "server/query_params.h"
#include "server/strategy.h"

namespace draplane::server {

// The registry hooks (strategy.h) are the namespace's: its contents and the
// namespace cache.
class ApiServer::Impl final : public RegistryHooks {
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
  bool config_of_bound_pod(const std::string& namespace_, const std::string& resource, const std::string& name,
                           const std::string& node) const;

  // CRUD (api_crud.cc).
  Reply get(const Request& req, const Target& t);
  Reply list(const Request& req, const Target& t);
  // `applied`: the managedFields of a create by server-side apply (else an
  // Update entry of the request's field manager is recorded).
  Reply create(const Request& req, const Target& t, const ssa::Managers* applied = nullptr);
  Reply update(const Request& req, const Target& t, const std::string& patch_type);
  // GET, PUT and PATCH of a Deployment's or ReplicaSet's /scale (scale.cc).
  Reply scale(const Request& req, const Target& t);
  // The steps of create (api_crud.cc).
  std::optional<ApiError> create_body_to_storage(const ResourceInfo& r, Json& obj);
  std::optional<ApiError> name_created(const Target& t, Json& obj, Target& named);
  std::optional<ApiError> check_namespace_lifecycle(const Target& named);
  Json prepare_create_meta(Json& obj);
  std::optional<ApiError> create_strategy(const StrategyContext& c, Json& obj, std::vector<std::string>& warnings);
  Reply write_create(const Target& named, Json obj, std::vector<std::string> warnings);
  // The steps of update and patch (api_crud.cc): the request, then per attempt
  // load, apply patch, strategy, managed fields, admission, conditional write.
  struct UpdateCall;
  struct Updated;
  std::optional<ApiError> parse_update(UpdateCall& u);
  std::optional<Reply> update_attempt(const UpdateCall& u, Result<Stored>& cur, bool& wrote);
  std::optional<Reply> update_missing(const UpdateCall& u, const Status& why);
  std::optional<ApiError> apply_patch(const UpdateCall& u, const Stored& cur, Updated& n);
  void prepare_update(const UpdateCall& u, const Stored& cur, Updated& n);
  std::optional<ApiError> validate_update(const UpdateCall& u, const Stored& cur, Updated& n);
  void record_update_fields(const UpdateCall& u, const Stored& cur, Updated& n);
  std::optional<Reply> write_update(const UpdateCall& u, const Stored& cur, Updated& n, bool& wrote);
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
  // Garbage collection by DeleteOptions.propagationPolicy (api_crud.cc):
  // Background (also the default) is delete_object's cascade; Orphan drops the
  // owner's reference from its dependents first; Foreground marks the owner
  // (foregroundDeletion finalizer, deletionTimestamp), deletes its dependents
  // in the foreground too, and removes it once no dependent with
  // blockOwnerDeletion is left (at once, or when the last such one goes).
  struct Dependent {
    const ResourceInfo* resource;
    std::string key;
    Stored stored;
  };
  std::vector<Dependent> dependents_of(const std::string& owner_uid, const std::string& namespace_, int64_t revision);
  Result<Json> delete_with_policy(const Target& t, Stored cur, bool dry_run, const std::string& policy);
  Result<Json> delete_foreground(const Target& t, Stored cur);
  // Removes owner `owner_uid` from the references of `cur` (stored at `key`);
  // kConflict when another write came first (on_newest tries again).
  Result<Json> drop_owner_reference(const std::string& key, Stored cur, const std::string& owner_uid);
  // Runs `act` (a delete) on `cur` and, while it meets a newer version
  // (kConflict: a controller wrote the object between the read and the write),
  // on the object as stored now, until it is gone; at most 16 tries. A
  // cascade that gave up on a conflict left dependents owned by nothing.
  void on_newest(const std::string& key, Stored cur, const std::function<Result<Json>(Stored)>& act);
  // Removes the foregroundDeletion finalizer of the object at `t` (uid
  // `owner_uid`) when no blocking dependent is left.
  void finish_foreground(const Target& t, const std::string& owner_uid);
  // After `removed` went away: its owners waiting in the foreground may go.
  void release_foreground_owners(const JsonValue& removed);
  // RegistryHooks.
  void delete_namespace_contents(const std::string& namespace_) override;
  void namespace_changed(const std::string& name, int64_t revision) override {
    if (namespaces_) namespaces_->invalidate(name, revision);
  }
  Result<Stored> load(const std::string& key, int64_t revision = 0);

  // Watch (api_watch.cc).
  Outcome watch(const Request& req, const Target& t);

  std::string now_text() const { return opts_.clock->rfc3339(); }
  // What a kind's strategy is given with a request of resource `r` (at `now`,
  // RFC 3339; the clock's when not given).
  StrategyContext context(const ResourceInfo& r, FieldValidation fv, std::string now) {
    return StrategyContext{r, std::move(now), &programs_, fv};
  }
  StrategyContext context(const ResourceInfo& r, FieldValidation fv) { return context(r, fv, now_text()); }

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
  // PriorityClasses for the Priority admission of pods; started by bootstrap().
  std::unique_ptr<PriorityClassCache> priority_classes_;
  // The objects this server created or updated last, for their next update.
  RecentObjects recent_;
  // CEL programs compiled by validation (device selectors): writes repeat the
  // same few expressions. The server's own, handed to strategies.
  cel::ProgramCache programs_;
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
