// LogServer: the agent's stand-in for the kubelet's read-only log API, so that
// the API server can serve `kubectl logs` (pods/<name>/log) by proxying to the
// node, as kube-apiserver proxies to the kubelet:
//   GET /containerLogs/<namespace>/<pod>/<container>?tailLines=N&limitBytes=N&previous=true
// answers 200 text/plain with the container's log, 404 (pod or container not on
// this node), 400 (container must be named). Plain HTTP on the given address
// (loopback by default), one request per connection; `follow` is not streamed
// (the log so far is returned). The port is published in the Node's
// status.daemonEndpoints.kubeletEndpoint.Port.
//
// Thread-safety: start()/stop() from one thread; requests are served on the
// server's own thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/result.h"

namespace draplane::node {

// (namespace, pod, container, previous) -> log file path, or an error
// (kNotFound -> 404, kInvalid -> 400).
using LogLocator = std::function<Result<std::string>(const std::string&, const std::string&, const std::string&, bool)>;

// The text to return for a log file: its last `tail_lines` lines (< 0: all),
// then at most `limit_bytes` bytes (< 0: no limit) from the start of that.
std::string select_log(const std::string& content, int64_t tail_lines, int64_t limit_bytes);

class LogServer {
 public:
  explicit LogServer(LogLocator locate);
  ~LogServer();
  // Binds host:port (port 0 picks one) and starts serving; returns the port.
  Result<int> start(const std::string& host, int port);
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace draplane::node
