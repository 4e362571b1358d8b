// Informer: a list+watch cache of one resource collection, like client-go's.
//
// run() lists the collection, then watches from the list's resourceVersion;
// on 410 Gone (compacted history) or a broken stream it lists again (after a
// backoff on errors) and reports the differences as events, so handlers see
// every object reach its latest state exactly as if they had watched all along.
// Handlers run on the informer's thread, in event order.
//
// Objects are typed (api::Pod, api::ResourceClaim, ...). Items of a list lack
// apiVersion/kind on the wire; the informer fills them in before decoding.
//
// An object that cannot be decoded as T (a schema this build does not know,
// against a real cluster) is dropped: handlers never see it and get()/list()
// leave it out. Each drop is counted (decode_errors(), and per kind for the
// process: informer_decode_errors(), served on the API server's /metrics as
// draplane_informer_decode_errors_total{kind}); the first of each kind in the
// process is logged as a warning with the object's key and the decode error.
//
// Thread-safety: get()/list()/synced() may be called from any thread; handlers
// must be added before start().
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <cstdint>

#include <rapidjson/fwd.h>

#include "api/types.h"
#include "client/rest_client.h"

namespace spdlog {
class logger;
}

namespace draplane::client {

enum class EventType { kAdded, kModified, kDeleted };

// Untyped core: JSON objects keyed by "namespace/name" (or "name").
class RawInformer {
 public:
  struct Options {
    std::string api_version;  // "v1", "resource.k8s.io/v1"
    std::string kind;         // "Pod"
    std::string path;         // "/api/v1/pods" (all namespaces) or namespaced path
    std::string label_selector;
    std::string field_selector;
    int relist_backoff_ms = 1000;
    // Drop metadata.managedFields from every object before it is cached or
    // handed on (kube-scheduler's and kube-controller-manager's
    // TransformStripManagedFields): they are often the largest part of an
    // object, only server-side apply reads them, and an update without them
    // keeps the server's.
    bool strip_managed_fields = false;
    // Where an object that cannot be decoded is reported; nullptr: spdlog's
    // default logger.
    std::shared_ptr<spdlog::logger> logger = nullptr;
    // Informer<T>: whether get() and list() serve the objects; false for a
    // consumer that keeps its own copies from the handlers (the scheduler's
    // cache), so the process holds one copy, not two.
    bool keep_objects = true;
    // Whether the raw informer keeps each object's JSON (get(), list() and
    // the handlers' old JSON); Informer<T> keeps typed objects instead and
    // turns this off. Without it a relist tells modified objects by their
    // resourceVersion.
    bool keep_json = true;
  };
  // (type, key, old JSON or "" when added or not kept, new JSON (the last
  // state when deleted; "" for an object a relist found gone when JSON is not
  // kept))
  using Handler = std::function<void(EventType, const std::string& key, const std::string& old_json,
                                     const std::string& new_json)>;

  RawInformer(RestClient& client, Options options);
  ~RawInformer();

  void add_handler(Handler handler);
  // A handler of the parsed object (null for an object a relist found gone
  // when JSON is not kept), valid during the call: a typed decoder reads it
  // without the JSON text being written and parsed again.
  using ValueHandler = std::function<void(EventType, const std::string& key, const rapidjson::Value* object)>;
  void add_value_handler(ValueHandler handler);
  // Starts the background thread; stop() (or the destructor) ends it.
  void start();
  void stop();
  // True once the first list has been delivered to the handlers.
  bool synced() const { return synced_.load(); }
  bool wait_synced(int timeout_ms) const;

  std::optional<std::string> get(const std::string& key) const;
  std::vector<std::string> list() const;
  // resourceVersion of the last event or list applied.
  std::string resource_version() const;

  // Counts (and reports, see above) an object that could not be decoded as
  // the informer's type and was dropped.
  void decode_failed(const std::string& json, const Status& error) const;
  void decode_failed(const rapidjson::Value& object, const Status& error) const;
  // Objects dropped so far because they could not be decoded.
  uint64_t decode_errors() const { return decode_errors_.load(); }

 private:
  void run();
  Result<std::string> list_and_replace();  // returns the list resourceVersion
  Result<void> watch_from(const std::string& rv);
  // `object` (null: gone at a relist, JSON not kept) and its JSON when already
  // written ("" otherwise: written here when kept or a handler wants it);
  // `object_rv`: the object's resourceVersion; `rv`: the collection's, when it moves.
  void apply(EventType type, const std::string& key, const rapidjson::Value* object, std::string json,
             std::string object_rv, const std::string& rv);

  RestClient& client_;
  Options options_;
  std::vector<Handler> handlers_;
  std::vector<ValueHandler> value_handlers_;
  mutable std::mutex mu_;
  mutable std::condition_variable synced_cv_;
  struct Item {
    std::string resource_version;
    std::string json;  // when options_.keep_json
  };
  std::map<std::string, Item> items_;
  std::string rv_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  mutable std::atomic<uint64_t> decode_errors_{0};
  std::thread thread_;
};

// Objects the informers of this process dropped because they could not be
// decoded, by kind ("Pod").
std::map<std::string, uint64_t> informer_decode_errors();
// The same in the Prometheus text format:
// draplane_informer_decode_errors_total{kind="Pod"} N (with HELP and TYPE).
std::string render_informer_metrics();

// Typed view over a RawInformer, caching typed objects as client-go's
// informers do: each event is decoded once, whatever the number of handlers,
// and handlers get the previous object from the cache (no second decode);
// get() and list() copy from the cache instead of decoding. The raw informer
// under it keeps no JSON (Options::keep_json) and hands it each event parsed.
template <typename T>
class Informer {
 public:
  using Handler = std::function<void(EventType, const T* old_obj, const T& obj)>;

  Informer(RestClient& client, RawInformer::Options options);

  void add_handler(Handler handler) { handlers_.push_back(std::move(handler)); }
  void start() { raw_.start(); }
  void stop() { raw_.stop(); }
  bool synced() const { return raw_.synced(); }
  bool wait_synced(int timeout_ms) const { return raw_.wait_synced(timeout_ms); }
  // Nothing when Options::keep_objects is false.
  std::optional<T> get(const std::string& key) const;
  std::vector<T> list() const;
  uint64_t decode_errors() const { return raw_.decode_errors(); }

 private:
  void on_event(EventType type, const std::string& key, const rapidjson::Value* object);

  const bool keep_;
  RawInformer raw_;
  std::vector<Handler> handlers_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const T>> objects_;
};

// Decodes one parsed object (with apiVersion/kind) as T; used by Informer<T>.
template <typename T>
Result<T> decode_json_value(const rapidjson::Value& object);

// "namespace/name" or "name" for cluster-scoped objects, from object JSON.
std::string object_key(const std::string& json);

namespace internal {
inline RawInformer::Options without_json_copies(RawInformer::Options o) {
  o.keep_json = false;
  return o;
}
}  // namespace internal

template <typename T>
Informer<T>::Informer(RestClient& client, RawInformer::Options options)
    : keep_(options.keep_objects), raw_(client, internal::without_json_copies(std::move(options))) {
  raw_.add_value_handler([this](EventType type, const std::string& key, const rapidjson::Value* object) {
    on_event(type, key, object);
  });
}

template <typename T>
void Informer<T>::on_event(EventType type, const std::string& key, const rapidjson::Value* object) {
  std::shared_ptr<const T> obj, old;
  Status error;
  if (object != nullptr) {
    auto decoded = decode_json_value<T>(*object);
    if (decoded.has_value()) obj = std::make_shared<const T>(std::move(*decoded));
    else error = decoded.error();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = objects_.find(key);
    if (it != objects_.end()) old = it->second;
    // One that cannot be decoded leaves the cache: get() never returns it.
    if (type == EventType::kDeleted || !obj || !keep_) {
      if (it != objects_.end()) objects_.erase(it);
    } else if (it != objects_.end()) {
      it->second = obj;
    } else {
      objects_.emplace(key, obj);
    }
  }
  if (object == nullptr) {
    // Gone at a relist, its last state unknown to the raw informer: the cached
    // one, else the key alone.
    if (old) {
      obj = old;
    } else {
      auto slash = key.find('/');
      T stub;
      stub.metadata.namespace_ = slash == std::string::npos ? "" : key.substr(0, slash);
      stub.metadata.name = slash == std::string::npos ? key : key.substr(slash + 1);
      obj = std::make_shared<const T>(std::move(stub));
    }
  }
  if (!obj) {
    raw_.decode_failed(*object, error);
    return;
  }
  for (const auto& h : handlers_) h(type, old.get(), *obj);
}

template <typename T>
std::optional<T> Informer<T>::get(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return std::nullopt;
  return *it->second;
}

template <typename T>
std::vector<T> Informer<T>::list() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<T> out;
  out.reserve(objects_.size());
  for (const auto& [key, obj] : objects_) out.push_back(*obj);
  return out;
}

}  // namespace draplane::client
