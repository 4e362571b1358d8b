// `draplane server`: the API server on the embedded store with the scheduler and
// the resource-claim controller in process (cluster::LocalCluster without
// simulated nodes; agents join with `draplane agent`). Prints the kubeconfig
// path once /readyz answers 200, then serves until SIGINT/SIGTERM.
#include <iostream>

#include "cluster/local_cluster.h"
#include "cmd/cluster_flags.h"
#include "cmd/commands.h"
#include "cmd/leader_elect_flags.h"
#include "cmd/signals.h"
#include "common/split.h"

namespace draplane::cmd {
namespace {

struct ServerFlags {
  cluster::LocalClusterOptions o;
  std::string nodes;
  bool no_scheduler = false;
  bool no_controllers = false;
  LeaderElectFlags elect;
};

int run_server(ServerFlags f) {
  sigset_t sigs = block_stop_signals();
  for (std::string_view n : common::split(f.nodes, ',')) {
    if (!n.empty()) f.o.node_tokens.emplace_back(n);
  }
  f.o.scheduler = !f.no_scheduler;
  f.o.controllers = !f.no_controllers;
  if (f.elect.given()) f.o.leader_elect = f.elect.enabled;
  f.o.leader_election = f.elect.config;
  auto c = cluster::LocalCluster::start(f.o);
  if (!c.has_value()) {
    std::cerr << "error: " << c.error().message() << "\n";
    return c.error().code() == Code::kInvalid ? 2 : 1;
  }
  std::cout << "draplane server listening on " << (*c)->url() << "\n"
            << "kubeconfig: " << (*c)->kubeconfig_path() << "\n"
            << "ready" << std::endl;
  cluster::LocalCluster& lc = **c;
  int sig = wait_for_signal(sigs, [&] { return !lc.failure().empty(); });
  lc.stop();
  if (sig == 0) {
    std::cerr << "error: " << lc.failure() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

void add_server(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ServerFlags>();
  auto* sub = app.add_subcommand("server", "Run the Kubernetes API server with the embedded store, the scheduler and the controllers");
  sub->add_option("--data-dir", flags->o.data_dir, "Directory for the store, certificates, tokens and kubeconfig")
      ->capture_default_str();
  sub->add_option("--listen", flags->o.listen, "HOST:PORT to listen on (port 0 picks a free one)")->capture_default_str();
  sub->add_option("--advertise-address", flags->o.advertise, "Address written into the kubeconfig and certificate");
  add_store_options(*sub, flags->o);
  sub->add_option("--nodes", flags->nodes, "Comma-separated node names to create node-agent tokens for");
  sub->add_option("--threads", flags->o.server_threads, "API server event loops (threads); requests block theirs while the store commits")->capture_default_str();
  sub->add_option("--compact-interval", flags->o.compact_interval_s, "Seconds between store compactions")
      ->capture_default_str();
  sub->add_flag("--insecure-http", flags->o.insecure_http, "Serve plain HTTP (tests and benchmarks only)");
  sub->add_flag("--log-requests", flags->o.log_requests, "Log one JSON line per request to stderr");
  add_request_limit_options(*sub, flags->o);
  sub->add_option("--policy", flags->o.policy, "Placement policy, as draplane simulate --policy: draplane (default; the simulator's winner) | fgd | best-fit | gpu-packing | gpu-clustering | dot-product | random | first-fit (Kubernetes without scoring) | packing (fewest free devices left)")
      ->capture_default_str();
  add_event_ttl_option(*sub, flags->o.event_ttl_s);
  sub->add_flag("--no-scheduler", flags->no_scheduler, "Do not run the scheduler in this process");
  sub->add_flag("--no-controllers", flags->no_controllers, "Do not run the resource-claim controller in this process");
  sub->add_option("--tls-cert-file", flags->o.tls_cert_file,
                  "Serving certificate (PEM; default <data-dir>/pki/server.crt, created on first start)");
  sub->add_option("--tls-private-key-file", flags->o.tls_private_key_file,
                  "Private key of --tls-cert-file (default <data-dir>/pki/server.key)");
  sub->add_option("--client-ca-file", flags->o.client_ca_file,
                  "The cluster CA, written into the kubeconfig (default <data-dir>/pki/ca.crt)");
  sub->add_option("--token-auth-file", flags->o.token_auth_file,
                  "Static bearer tokens: token,user,uid,\"group1,group2\" per line (default <data-dir>/tokens.csv)");
  // The embedded scheduler's and controllers' Leases: draplane-scheduler and
  // draplane-controllers (on by default with an etcd store).
  add_leader_elect_options(*sub, flags->elect, "");
  sub->add_flag("-v,--verbose", flags->o.verbose, "Debug level in the component logs (<data-dir>/logs)");
  sub->callback([flags, &exit_code] { exit_code = run_server(*flags); });
}

}  // namespace draplane::cmd
