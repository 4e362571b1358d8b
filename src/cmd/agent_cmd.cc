// `draplane agent --node NAME (--server URL [--token T] | --kubeconfig FILE)
//  [--gpus sim:8xH100|nvml|FILE] [--state-dir DIR]`: the node agent (GPU driver
// gpu.nvidia.com + kubelet) for one node. Flags -> options -> node::run_agent;
// stops on SIGINT/SIGTERM.
#include <spdlog/spdlog.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <sstream>

#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "cmd/commands.h"
#include "cmd/component.h"
#include "node/agent.h"

namespace draplane::cmd {
namespace {

struct AgentFlags {
  std::string node;
  std::string server;
  std::string kubeconfig;
  std::string context;
  std::string token;
  std::string ca_file;
  bool insecure = false;
  std::string gpus = "sim:8xH100";
  std::string state_dir;
  std::string host_ip = "127.0.0.1";
  int log_port = 0;
  int heartbeat = 10;
  std::vector<std::string> labels;
  bool verbose = false;
};

int run(const AgentFlags& f) {
  client::KubeConfig cfg;
  if (!f.kubeconfig.empty()) {
    auto k = client::load_kubeconfig(f.kubeconfig, f.context);
    if (!k.has_value()) {
      std::cerr << "error: --kubeconfig: " << k.error().message() << "\n";
      return 2;
    }
    cfg = *k;
  } else if (f.server.empty()) {
    std::cerr << "error: one of --server or --kubeconfig is required\n";
    return 2;
  }
  if (!f.server.empty()) cfg.server = f.server;
  if (!f.token.empty()) cfg.token = f.token;
  if (f.insecure) cfg.insecure_skip_tls_verify = true;
  if (!f.ca_file.empty()) {
    std::ifstream in(f.ca_file);
    if (!in) {
      std::cerr << "error: --certificate-authority: cannot read " << f.ca_file << "\n";
      return 2;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    cfg.ca_pem = ss.str();
  }
  auto rest = client::RestClient::create(cfg);
  if (!rest.has_value()) {
    std::cerr << "error: " << rest.error().message() << "\n";
    return 2;
  }
  node::AgentOptions o;
  o.node_name = f.node;
  o.gpus = f.gpus;
  o.state_dir = f.state_dir.empty() ? "./draplane-agent-" + f.node : f.state_dir;
  o.host_ip = f.host_ip;
  o.log_port = f.log_port;
  o.heartbeat_seconds = std::max(1, f.heartbeat);
  for (const auto& l : f.labels) {
    size_t eq = l.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "error: --label: expected KEY=VALUE, got \"" << l << "\"\n";
      return 2;
    }
    o.labels[l.substr(0, eq)] = l.substr(eq + 1);
  }
  o.logger = stderr_logger("agent/" + f.node, f.verbose);
  return run_until_stopped([&](const std::atomic<bool>& stop) { return node::run_agent(**rest, o, stop).status(); });
}

}  // namespace

void add_agent(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<AgentFlags>();
  auto* sub = app.add_subcommand("agent", "Run the node agent: GPU driver gpu.nvidia.com and kubelet for one node");
  sub->add_option("--node", f->node, "Node name (required)");
  sub->add_option("--server", f->server, "API server URL (overrides the kubeconfig's)");
  sub->add_option("--kubeconfig", f->kubeconfig, "Kubeconfig file");
  sub->add_option("--context", f->context, "Kubeconfig context");
  sub->add_option("--token", f->token, "Bearer token (e.g. the node's token from tokens.csv)");
  sub->add_option("--certificate-authority", f->ca_file, "CA certificate file for --server");
  sub->add_flag("--insecure-skip-tls-verify", f->insecure, "Do not verify the server certificate");
  sub->add_option("--gpus", f->gpus, "sim:<count>x<model>[,...], nvml, or an inventory YAML file")->capture_default_str();
  sub->add_option("--state-dir", f->state_dir, "Checkpoint, CDI specs and pod logs (default ./draplane-agent-<node>)");
  sub->add_option("--host-ip", f->host_ip, "Node address (pod hostIP, log endpoint)")->capture_default_str();
  sub->add_option("--log-port", f->log_port, "Port of the container log endpoint (0 picks one, -1 disables)")
      ->capture_default_str();
  sub->add_option("--heartbeat", f->heartbeat, "Seconds between Node status heartbeats")->capture_default_str();
  sub->add_option("--label", f->labels, "Extra Node label KEY=VALUE (repeatable)");
  sub->add_flag("-v,--verbose", f->verbose, "Debug logging");
  add_inject_xid(*sub, exit_code);
  sub->callback([f, sub, &exit_code] {
    if (sub->got_subcommand("inject-xid")) return;  // that one ran instead
    if (f->node.empty()) {  // not required() in CLI11: `agent inject-xid` has its own --node
      std::cerr << "error: --node is required\n";
      exit_code = 2;
      return;
    }
    exit_code = run(*f);
  });
}

}  // namespace draplane::cmd
