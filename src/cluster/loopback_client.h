// LoopbackClient: the Kubernetes REST API of an ApiServer in the same process,
// behind the client::RestClient interface, without HTTP, TLS or sockets (as
// kube-apiserver's loopback client serves its own in-process clients). The
// scheduler and controllers that `draplane server` runs beside its API server
// use it: every request still goes through the ApiServer's authorization,
// admission, validation, metrics and watch, as the caller's fixed identity;
// only the transport is gone. (In `draplane bench --mode api` the transport
// was about a third of the API server's work and a fifth of the informers'.)
//
// What the HTTP layer adds and this does not: the max-inflight limits (the
// loopback identity is an admin, which they exempt), the request timeout, and
// the access log of --log-requests.
//
// Thread-safety: request() and watch() may be called concurrently.
#pragma once

#include "client/rest_client.h"
#include "server/api_server.h"

namespace draplane::cluster {

class LoopbackClient final : public client::RestClient {
 public:
  // `api` must outlive this; `identity` is every request's caller.
  LoopbackClient(server::ApiServer& api, server::Identity identity) : api_(api), identity_(std::move(identity)) {}

  Result<client::Response> request(std::string_view method, std::string_view target, std::string_view body,
                                   std::string_view content_type) override;
  // Streams the ApiServer's watch: events as its WatchStream produces them,
  // until the handler returns false, *stop is set (checked at least every
  // `poll_ms`), the stream ends, or its timeoutSeconds pass.
  Result<void> watch(std::string_view target, const std::function<bool(std::string_view event)>& on_event,
                     const std::atomic<bool>* stop, int poll_ms) override;

 private:
  server::Request make_request(std::string_view method, std::string_view target) const;

  server::ApiServer& api_;
  server::Identity identity_;
};

}  // namespace draplane::cluster
