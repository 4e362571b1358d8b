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
  };
  // (type, key, old JSON or "" when added, new JSON (the last state when deleted))
  using Handler = std::function<void(EventType, const std::string& key, const std::string& old_json,
                                     const std::string& new_json)>;

  RawInformer(RestClient& client, Options options);
  ~RawInformer();

  void add_handler(Handler handler);
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
  // Objects dropped so far because they could not be decoded.
  uint64_t decode_errors() const { return decode_errors_.load(); }

 private:
  void run();
  Result<std::string> list_and_replace();  // returns the list resourceVersion
  Result<void> watch_from(const std::string& rv);
  void apply(EventType type, const std::string& key, std::string json, const std::string& rv);

  RestClient& client_;
  Options options_;
  std::vector<Handler> handlers_;
  mutable std::mutex mu_;
  mutable std::condition_variable synced_cv_;
  std::map<std::string, std::string> items_;
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

// Typed view over a RawInformer.
template <typename T>
class Informer {
 public:
  using Handler = std::function<void(EventType, const T* old_obj, const T& obj)>;

  Informer(RestClient& client, RawInformer::Options options) : raw_(client, std::move(options)) {}

  // `wants_old`: decode the previous object for the handler (one more parse per
  // event); false passes null.
  void add_handler(Handler handler, bool wants_old = true);
  void start() { raw_.start(); }
  void stop() { raw_.stop(); }
  bool synced() const { return raw_.synced(); }
  bool wait_synced(int timeout_ms) const { return raw_.wait_synced(timeout_ms); }
  std::optional<T> get(const std::string& key) const;
  std::vector<T> list() const;
  uint64_t decode_errors() const { return raw_.decode_errors(); }

 private:
  RawInformer raw_;
  int handlers_ = 0;
};

// Decodes one object JSON (with apiVersion/kind) as T; used by Informer<T>.
template <typename T>
Result<T> decode_json_object(const std::string& json);

// "namespace/name" or "name" for cluster-scoped objects, from object JSON.
std::string object_key(const std::string& json);

template <typename T>
void Informer<T>::add_handler(Handler handler, bool wants_old) {
  // Every handler decodes the event; the first one reports a failure, so that
  // each dropped event counts once.
  const RawInformer* reporter = handlers_++ == 0 ? &raw_ : nullptr;
  raw_.add_handler([handler = std::move(handler), wants_old, reporter](EventType type, const std::string&,
                                                                       const std::string& old_json,
                                                                       const std::string& new_json) {
    auto obj = decode_json_object<T>(new_json);
    if (!obj.has_value()) {
      if (reporter) reporter->decode_failed(new_json, obj.error());
      return;
    }
    std::optional<T> old;
    if (wants_old && !old_json.empty()) {
      auto o = decode_json_object<T>(old_json);
      if (o.has_value()) old = std::move(*o);
    }
    handler(type, old ? &*old : nullptr, *obj);
  });
}

template <typename T>
std::optional<T> Informer<T>::get(const std::string& key) const {
  auto json = raw_.get(key);
  if (!json) return std::nullopt;
  auto obj = decode_json_object<T>(*json);
  if (!obj.has_value()) {
    raw_.decode_failed(*json, obj.error());
    return std::nullopt;
  }
  return std::move(*obj);
}

template <typename T>
std::vector<T> Informer<T>::list() const {
  std::vector<T> out;
  for (const auto& json : raw_.list()) {
    auto obj = decode_json_object<T>(json);
    if (obj.has_value()) {
      out.push_back(std::move(*obj));
    } else {
      raw_.decode_failed(json, obj.error());
    }
  }
  return out;
}

}  // namespace draplane::client
