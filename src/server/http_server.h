// HttpServer: HTTP/1.1 (over TLS by default) in front of an ApiServer, on
// Boost.Beast/Asio with C++20 coroutines: one coroutine per connection, so
// thousands of watches cost no thread each.
//
// Threads: each runs its own event loop, and a connection stays on the loop it
// was accepted onto (round robin). Requests run on that thread and block it
// while the store commits (a SQLite fsync), so the server keeps more loops than
// cores (`threads`): concurrent writers then land in one group commit. One
// shared loop for all threads had every request hop between threads and woke
// idle ones: at 8 clients, 32 shared threads cost 414 us of CPU per create,
// 32 loops 340 us (api_bench). The price: a slow request (a large list, a pod
// log fetched from an agent) delays the other connections of its loop.
//
// Authentication: `Authorization: Bearer <token>` looked up in the TokenTable; a
// wrong token is 401 at once, a missing one is the anonymous user (which the
// ApiServer only lets reach /healthz, /readyz, /livez and /version).
//
// Limits, in kube-apiserver's order (its handler chain on Go's net/http): the
// header is read alone (at most max_header_bytes: a longer request line is 414,
// longer fields 431), the caller authenticated and counted against the in-flight
// limits (429 with Retry-After), and only then is the body read (over
// max_request_body_bytes: 413 RequestEntityTooLarge). A request answered without
// its body (a wrong token, the anonymous user, 413, 429) closes the connection
// afterwards, so an unauthenticated upload is never buffered. Timeouts close
// connections that idle, or trickle a header, a body or the reading of a reply.
//
// Thread-safety: start() and stop() from one thread; the rest is internal.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "server/api_server.h"
#include "server/credentials.h"
#include "server/metrics.h"

namespace draplane::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 6443;  // 0 = pick a free port
  int threads = 32;  // event loops (see above)
  bool tls = true;
  std::string cert_file;  // PEM serving certificate (tls)
  std::string key_file;   // PEM private key (tls)
  bool log_requests = false;  // one structured line per request to stderr

  // kube-apiserver's limits and timeouts (genericapiserver's defaults); a
  // timeout of 0 is none.
  // Request bodies: MaxRequestBodyBytes (3 MiB, twice etcd's request limit).
  uint64_t max_request_body_bytes = 3 << 20;
  // Request line and header fields, each (Go's MaxHeaderBytes, 1 MiB).
  uint32_t max_header_bytes = 1 << 20;
  // From the first byte of a request to the end of its header (ReadHeaderTimeout);
  // also bounds the TLS handshake.
  std::chrono::milliseconds read_header_timeout{32'000};
  // A keep-alive connection waiting for its next request (IdleTimeout).
  std::chrono::milliseconds idle_timeout{90'000};
  // Reading a request's body and writing its reply, each (--request-timeout).
  std::chrono::milliseconds request_timeout{60'000};
  // Requests served at once, not counting watches and pod logs
  // (--max-requests-inflight / --max-mutating-requests-inflight; mutating =
  // anything but GET and HEAD). Over them: 429, except for system:masters (the
  // admin). 0 = no limit.
  int max_requests_inflight = 400;
  int max_mutating_requests_inflight = 200;
  // The share of each of those limits one user (identity) may hold, in percent,
  // so one identity cannot starve the others (kube-apiserver gets this from API
  // Priority and Fairness). 0 or 100: no share per user.
  int max_inflight_percent_per_user = 25;
  // Open connections; past it the server accepts no more until one closes
  // (Go's netutil.LimitListener; kube-apiserver has none). 0 = no limit.
  int max_connections = 10'000;
};

// The access log line of a request (one JSON object and a newline); the user
// and path are JSON-escaped, so a crafted path cannot forge or split lines.
std::string access_log_line(const Request& r, int code, double ms);

// The value of a `Warning:` header for `text`, as kube-apiserver writes it:
// code 299, agent "-", and the text as an RFC 7230 quoted-string (`"` and `\`
// escaped), e.g. 299 - "unknown field \"spec.x\"". kubectl drops a warning
// whose quotes are not escaped.
std::string warning_header(std::string_view text);

class HttpServer {
 public:
  HttpServer(ApiServer& api, const TokenTable& tokens, Metrics& metrics, HttpServerOptions options);
  ~HttpServer();  // stops

  // Binds and starts serving; returns the bound port. kUnavailable when the
  // address cannot be bound or the certificate cannot be loaded.
  Result<uint16_t> start();
  void stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace draplane::server
