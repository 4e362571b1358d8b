// `draplane agent --node NAME (--server URL[,URL...] [--token T] | --kubeconfig FILE)
//  [--gpus sim:8xH100|nvml|FILE] [--state-dir DIR] [--mig dynamic|none]
//  [--consumable-shares disabled|unlimited|memory|N]`: the node agent (GPU driver
// gpu.nvidia.com + kubelet) for one node. Flags -> options -> node::run_agent;
// stops on SIGINT/SIGTERM.
// `draplane agent --node NAME --gpus SPEC [--mig ...] [--consumable-shares ...]
//  [-f classes.yaml] --print-slices`: prints the ResourceSlices that agent would
// publish at start, for those DeviceClasses, as a YAML stream; no server.
#include <spdlog/spdlog.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <sstream>

#include "api/codec.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "cmd/commands.h"
#include "cmd/component.h"
#include "cmd/input.h"
#include "node/agent.h"

namespace draplane::cmd {
namespace {

struct AgentFlags {
  std::string node;
  std::vector<std::string> servers;  // --server, repeated or comma-separated
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
  std::string mig = "dynamic";
  std::string consumable_shares = "disabled";
  std::vector<std::string> files;  // --print-slices: DeviceClasses
  bool print_slices = false;
};

// The flags both modes share; false (after printing why) when one is invalid.
bool sharing_options(const AgentFlags& f, node::AgentOptions& o) {
  if (f.mig != "dynamic" && f.mig != "none") {
    std::cerr << "error: --mig: Unsupported value: \"" << f.mig << "\": supported values: \"dynamic\", \"none\"\n";
    return false;
  }
  o.dynamic_mig = f.mig == "dynamic";
  auto shares = node::parse_consumable_shares(f.consumable_shares);
  if (!shares.has_value()) {
    std::cerr << "error: " << shares.error().message() << "\n";
    return false;
  }
  o.consumable_shares = *shares;
  return true;
}

// --print-slices: the DeviceClasses of the -f files (other kinds are skipped, so
// the file of a whole scenario may be given), the slices on stdout.
int print_slices(const AgentFlags& f) {
  node::AgentOptions o;
  o.node_name = f.node;
  o.gpus = f.gpus;
  if (!sharing_options(f, o)) return 2;
  std::vector<api::DeviceClass> classes;
  for (const auto& file : f.files) {
    auto text = read_input(file);
    if (!text.has_value()) {
      std::cerr << "error: " << text.error().message() << "\n";
      return 2;
    }
    for (auto& doc : api::decode_stream(*text)) {
      if (doc.kind != "DeviceClass") continue;
      if (!doc.object.has_value()) {
        std::cerr << "error: " << file << ": document " << doc.index << ": DeviceClass/" << doc.name << ": "
                  << doc.object.error().message() << "\n";
        return 2;
      }
      classes.push_back(std::get<api::DeviceClass>(std::move(doc.object).value()));
    }
  }
  std::vector<std::string> warnings;
  auto slices = node::offline_slices(o, classes, warnings);
  for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
  if (!slices.has_value()) {
    std::cerr << "error: " << slices.error().message() << "\n";
    return 2;
  }
  std::vector<api::Object> out(slices->begin(), slices->end());
  std::cout << api::to_yaml_stream(out);
  return 0;
}

int run(const AgentFlags& f) {
  if (f.print_slices) return print_slices(f);
  client::KubeConfig cfg;
  if (!f.kubeconfig.empty()) {
    auto k = client::load_kubeconfig(f.kubeconfig, f.context);
    if (!k.has_value()) {
      std::cerr << "error: --kubeconfig: " << k.error().message() << "\n";
      return 2;
    }
    cfg = *k;
  } else if (f.servers.empty()) {
    std::cerr << "error: one of --server or --kubeconfig is required\n";
    return 2;
  }
  if (!f.servers.empty()) {
    // Several API servers of one cluster: the client fails over between them.
    cfg.server.clear();
    for (const auto& s : f.servers) cfg.server += (cfg.server.empty() ? "" : ",") + s;
  }
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
  if (!sharing_options(f, o)) return 2;
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
  sub->add_option("--server", f->servers,
                  "API server URL (overrides the kubeconfig's); repeated or comma-separated, the agent fails over "
                  "between the servers of one cluster");
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
  sub->add_option("--mig", f->mig, "dynamic: publish MIG placements (partitionable devices); none: whole GPUs only")
      ->capture_default_str();
  sub->add_option("--consumable-shares", f->consumable_shares,
                  "Publish every device as shared, as the NVIDIA driver's flag: disabled, unlimited, memory or N "
                  "(when set, DeviceClass sharing config is not used)")
      ->capture_default_str();
  sub->add_flag("--print-slices", f->print_slices,
                "Print the ResourceSlices this agent would publish (for the -f DeviceClasses) and exit; no server");
  sub->add_option("-f,--filename", f->files, "--print-slices: YAML/JSON files with DeviceClasses ('-' for stdin)");
  add_inject_xid(*sub, exit_code);
  add_agent_prepare(*sub, exit_code);
  sub->callback([f, sub, &exit_code] {
    if (sub->got_subcommand("inject-xid") || sub->got_subcommand("prepare")) return;  // that one ran instead
    if (f->node.empty()) {  // not required() in CLI11: `agent inject-xid` has its own --node
      std::cerr << "error: --node is required\n";
      exit_code = 2;
      return;
    }
    exit_code = run(*f);
  });
}

}  // namespace draplane::cmd
