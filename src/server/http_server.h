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
// Thread-safety: start() and stop() from one thread; the rest is internal.
#pragma once

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
};

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
