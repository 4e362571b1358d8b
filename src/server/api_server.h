// ApiServer: the Kubernetes REST API on a store::Store, independent of HTTP.
//
// It turns a parsed request (method, path, query, headers, body, authenticated
// user) into a response (code, content type, body) or a watch stream, following
// the Kubernetes API conventions: discovery, CRUD with metadata handling
// (uid, resourceVersion = the store's mod_revision, generation, creationTimestamp,
// generateName, finalizers and deletionTimestamp, ownerReferences with background
// garbage collection), status subresources, patches, dryRun, label and field
// selectors, limit/continue, Table output, watch, and NodeRestriction for node
// identities. Objects are kept in the store as JSON under
// /registry/<resource>/[<namespace>/]<name>. resource.k8s.io v1beta1 and v1beta2
// are served by conversion: stored as v1, converted on the way in and out.
// Request bodies are JSON, YAML (application/yaml, apply-patch+yaml) or, for v1
// Namespace, Kubernetes protobuf (protobuf_body.h); responses are JSON.
//
// Thread-safety: handle() may be called concurrently from any number of threads;
// a WatchStream is used by one consumer thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "server/metrics.h"
#include "store/store.h"

namespace draplane::server {

// Who is calling, as authentication established it.
struct Identity {
  std::string user;  // "admin", "system:node:<name>", "" when anonymous
  bool admin = false;
  std::string node;  // the node name for a node identity
};

struct Request {
  std::string method;  // GET POST PUT PATCH DELETE
  std::string path;    // without the query
  std::map<std::string, std::string> query;  // decoded
  std::string accept;
  std::string content_type;
  std::string if_none_match;  // If-None-Match (discovery ETags)
  std::string user_agent;     // names the field manager of writes without ?fieldManager=
  std::string body;
  Identity identity;
};

struct Response {
  int code = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::string> warnings;  // Warning: 299 - "..." headers
  // Further headers (ETag, Vary, Cache-Control, which then replaces the default).
  std::vector<std::pair<std::string, std::string>> headers;
};

// A running watch: JSON event lines produced by the store's delivery thread and
// taken by the HTTP layer. Ends after timeoutSeconds, on a store error, or when
// the consumer drops it.
class WatchStream {
 public:
  virtual ~WatchStream() = default;
  // Called (from any thread) when take() has something new. Set once, before take().
  virtual void set_notify(std::function<void()> notify) = 0;
  // Moves pending event lines (each a JSON object + "\n") into `out`; returns
  // false once the stream has ended and everything was taken.
  virtual bool take(std::vector<std::string>& out) = 0;
  // Seconds after which the consumer should end the stream.
  virtual int timeout_seconds() const = 0;
};

struct ApiServerOptions {
  // Timestamps (creationTimestamp, table ages); injected so tests are deterministic.
  std::shared_ptr<const common::Clock> clock = common::real_clock();
  // A fresh UID (RFC 4122 text); injected likewise.
  std::function<std::string()> new_uid;
  // Random lowercase suffix for generateName (5 characters).
  std::function<std::string()> random_suffix;
  std::string server_version = "v1.36.0-draplane";
  // Addresses advertised in discovery (serverAddressByClientCIDRs).
  std::string advertise_address = "127.0.0.1:6443";
  // The objects the server wrote last are kept parsed (up to this many bytes
  // of their stored JSON) so that their next update need not read them back;
  // 0 reads every update's object from the store.
  size_t recent_objects_bytes = size_t{16} << 20;
};

class ApiServer {
 public:
  ApiServer(store::Store& store, ApiServerOptions options, Metrics* metrics = nullptr);
  ~ApiServer();

  // Creates the `default` and `kube-system` namespaces when missing.
  Status bootstrap();

  struct Outcome {
    Response response;
    std::unique_ptr<WatchStream> watch;  // set for a watch request (response unused)
  };
  Outcome handle(const Request& request);

  store::Store& store() { return store_; }

 private:
  class Impl;
  store::Store& store_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace draplane::server
