// LocalCluster: a whole DRA cluster in one process, the way `draplane server` and
// `draplane up` run it: the API server on the embedded store (HTTPS, generated PKI
// and tokens, kubeconfig in the data dir), the scheduler, the resource-claim
// controller and any number of simulated nodes (node agent + kubelet each).
//
// Every component talks to the API server over its own REST connections with its
// own identity (admin for scheduler and controllers, system:node:<name> for each
// agent, so NodeRestriction applies), exactly as separate processes would; only
// the process is shared. Component logs go to <data-dir>/logs/<component>.log.
//
// Thread-safety: start() and stop() from one thread; the accessors are immutable
// after start().
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/kubeconfig.h"
#include "client/leader_election.h"
#include "common/result.h"
#include "node/slices.h"

namespace draplane::cluster {

struct SimNode {
  std::string name;
  std::string gpus;  // as `draplane agent --gpus`: sim:8xH100, sim:4xA100-40GB,2xH200, a file
  bool dynamic_mig = true;                  // agent --mig dynamic|none
  node::ConsumableShares consumable_shares = {};  // agent --consumable-shares
};

// Where `draplane up` keeps a simulated node's agent state (checkpoint, CDI
// specs, logs, injected health events): <data dir>/nodes/<node>.
std::string node_state_dir(const std::string& data_dir, const std::string& node);

struct LocalClusterOptions {
  std::string data_dir = "./draplane-data";
  std::string listen = "127.0.0.1:6443";  // port 0 picks a free one
  std::string advertise;                  // default: the listen host
  std::string store = "sqlite";           // sqlite | memory | etcd://HOST:PORT[,HOST:PORT...]
  // With an etcd store: kube-apiserver's --etcd-prefix, --etcd-cafile,
  // --etcd-certfile and --etcd-keyfile.
  std::string etcd_prefix = "/registry";
  std::string etcd_cafile, etcd_certfile, etcd_keyfile;
  int server_threads = 32;  // HttpServerOptions::threads
  bool insecure_http = false;
  bool log_requests = false;
  // kube-apiserver's flags of the same names (HttpServerOptions).
  int max_requests_inflight = 400;
  int max_mutating_requests_inflight = 200;
  std::string request_timeout = "1m0s";  // a Go duration: 1m0s, 30s, 500ms
  int compact_interval_s = 300;
  // kube-apiserver's --tls-cert-file and --tls-private-key-file (the serving
  // certificate), --client-ca-file (the cluster CA, written into the kubeconfig)
  // and --token-auth-file; "" takes <data-dir>/pki/server.crt, server.key,
  // ca.crt and <data-dir>/tokens.csv (created on first start).
  std::string tls_cert_file, tls_private_key_file, client_ca_file, token_auth_file;
  bool scheduler = true;
  bool controllers = true;
  // The scheduler and controllers run here act only while they hold their
  // Lease (kube-system/draplane-scheduler, draplane-controllers), so that
  // servers of one etcd cluster run one of each. nullopt: on with an etcd store.
  std::optional<bool> leader_elect;
  client::LeaderElectionConfig leader_election;  // durations and namespace
  std::string policy = "draplane";  // scheduler's placement policy (sched/policy_flag.h)
  std::vector<std::string> node_tokens;  // extra node identities to mint tokens for
  std::vector<SimNode> nodes;            // simulated nodes run in process
  int heartbeat_seconds = 10;
  bool verbose = false;  // debug level in the component logs
  // How long an Event lives after its last write (kube-apiserver's --event-ttl).
  int64_t event_ttl_s = 3600;
};

// A Go duration as kube-apiserver's flags take it ("1h", "30m", "1h30m", "90s",
// "1h0m0s"), in whole seconds. kInvalid naming the text otherwise.
Result<int64_t> parse_duration_seconds(const std::string& text);

// The default simulated cluster of `draplane up`: 2 nodes with 8x H100 80GB and
// one with 4x A100 40GB.
std::vector<SimNode> default_sim_nodes();

// Parses a Go duration as kube-apiserver's flags take them ("1m0s", "30s",
// "1.5s", "500ms", "1h"): one or more decimal numbers, each with a unit among
// ns us ms s m h. kInvalid names the text.
Result<std::chrono::milliseconds> parse_duration(const std::string& text);

// Parses `--nodes` of `draplane up`: "NAME=GPUS;NAME=GPUS" or a count N (N nodes
// of 8x H100 named node-1..node-N). GPUS may end in agent flags as a query,
// "?mig=none&consumable-shares=memory" (keys mig and consumable-shares).
// kInvalid names the bad part.
Result<std::vector<SimNode>> parse_sim_nodes(const std::string& text);

class LocalCluster {
 public:
  // Starts the server, waits until it serves, then the components. Errors:
  // kInvalid for bad options, kUnavailable when the address cannot be bound or
  // the data dir cannot be used.
  static Result<std::unique_ptr<LocalCluster>> start(const LocalClusterOptions& options);
  ~LocalCluster();  // stop()

  // Stops the components (nodes first, then controllers and scheduler), then the
  // server. Idempotent.
  void stop();

  const std::string& url() const;              // https://host:port
  const std::string& kubeconfig_path() const;  // <data-dir>/kubeconfig
  const std::string& data_dir() const;         // absolute
  client::KubeConfig admin_config() const;

  // Waits until every simulated node is registered and Ready and has published
  // its ResourceSlices. kUnavailable on timeout, naming the nodes still missing.
  Result<void> wait_nodes_ready(int timeout_ms);

  // A component that stopped on an error ("" while all run): `draplane up` exits
  // when one does.
  std::string failure() const;

 private:
  LocalCluster();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace draplane::cluster
