// The modes: --mode inprocess (inprocess.cc), api (api_target.cc), e2e (e2e.cc).
#pragma once

#include <functional>
#include <memory>

#include "bench/bench.h"
#include "bench/target.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"

namespace draplane::bench {

// Starts the scheduler on its own thread over an in-memory store.
// `options.policy`: the scheduler's --policy ("" its default).
Result<std::unique_ptr<Target>> make_inprocess_target(Tracker& tracker, const Options& options);
// Starts a `draplane server` (scheduler and claim controller, no nodes) in a
// data dir and watches its pods.
Result<std::unique_ptr<Target>> make_api_target(Tracker& tracker, const Options& options);

// The data dir of an api or e2e run: --data-dir, or a fresh temporary one
// (named <prefix>-<pid>; *temporary set, for the caller to remove).
std::string run_data_dir(const Options& options, const std::string& prefix, bool* temporary);

// --mode e2e: the whole system with simulated nodes and kubelets.
Result<Report> run_e2e(const Options& options);

// Runs fn(i) for i in [0, n) on `threads` threads, each with its own client
// to `cfg`; the first error.
Result<void> parallel_requests(const client::KubeConfig& cfg, int threads, size_t n,
                               const std::function<Result<void>(client::RestClient&, size_t)>& fn);
// The same on the caller's clients, a thread each: their connections stay
// open from call to call, as scheduler_perf's clients' do (a TLS handshake
// per client per round of pods was more CPU than the pods).
Result<void> parallel_requests(const std::vector<std::unique_ptr<client::RestClient>>& clients, size_t n,
                               const std::function<Result<void>(client::RestClient&, size_t)>& fn);

}  // namespace draplane::bench
