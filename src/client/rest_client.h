// RestClient: a Kubernetes REST API client over HTTP/1.1 (TLS or plain).
//
// It speaks the API server's conventions, not a typed model: callers pass paths
// such as /apis/resource.k8s.io/v1/namespaces/default/resourceclaims and JSON
// bodies, and get the body back or a Status decoded from the server's
// metav1.Status (404 -> kNotFound, 409 AlreadyExists -> kAlreadyExists, 409
// Conflict -> kConflict, 422 -> kInvalid, 410 -> kGone, 401/403, 5xx and
// connection failures -> kUnavailable).
//
// Thread-safety: one RestClient may be used from several threads; concurrent
// requests run in parallel, each on its own keep-alive connection (a small pool
// of idle ones is kept; one the server closed is replaced).
// watch() opens its own connection per call, so watches run beside requests.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "client/kubeconfig.h"
#include "common/result.h"

namespace draplane::client {

struct Response {
  int status = 0;
  std::string body;
  std::string content_type;
};

class RestClient {
 public:
  // Validates the server URL (http:// or https://host[:port]) and the TLS material;
  // connects lazily on the first request. Several comma-separated URLs name
  // API servers of one cluster.
  //
  // Resending follows Go's net/http transport (and so client-go): a request of
  // which nothing was written (the connection failed, or the write failed
  // before its first byte) may be sent again, on a fresh connection or to the
  // next server; a GET, HEAD or OPTIONS whose answer was lost may be sent
  // again too (once more on a fresh connection when a reused one failed, and
  // to the next server). A POST, PUT, PATCH or DELETE that was written, in
  // whole or in part, is never sent again: the transport error is returned,
  // since the server may have applied it. After such an error the next call
  // starts at the next server. An idle kept-alive connection the server has
  // closed is noticed before it is reused, so that race does not cost a write.
  static Result<std::unique_ptr<RestClient>> create(const KubeConfig& config);
  virtual ~RestClient() = default;

  // One request; any HTTP status is a successful Response (transport errors are
  // kUnavailable). `content_type` is sent when `body` is non-empty.
  virtual Result<Response> request(std::string_view method, std::string_view target,
                                   std::string_view body = {},
                                   std::string_view content_type = "application/json") = 0;

  // Convenience wrappers: the body on 2xx, else the server's Status as an error.
  Result<std::string> get(std::string_view target);
  Result<std::string> post(std::string_view target, std::string_view json);
  Result<std::string> put(std::string_view target, std::string_view json);
  Result<std::string> patch(std::string_view target, std::string_view body,
                            std::string_view content_type = "application/merge-patch+json");
  Result<std::string> del(std::string_view target);

  // Streams a watch (target should carry ?watch=1&resourceVersion=...). Calls
  // `on_event` with each newline-delimited JSON event; stops when the handler
  // returns false, when *stop becomes true (checked between reads; the read
  // itself waits at most `poll_ms`), or when the server ends the stream. Returns
  // OK on a clean end, the server's Status for a non-2xx answer, kUnavailable on
  // transport errors.
  virtual Result<void> watch(std::string_view target,
                             const std::function<bool(std::string_view event)>& on_event,
                             const std::atomic<bool>* stop, int poll_ms = 500) = 0;
};

// Maps a non-2xx response to a Status, reading metav1.Status {reason, message}
// from the body when present.
Status status_from_response(const Response& response);

}  // namespace draplane::client
