// `draplane driver --node NAME [--kubeconfig FILE [--context C] | in-cluster]
//  [--plugin-dir DIR] [--registry-dir DIR] [--cdi-root DIR] [--driver-root DIR] [--host-driver-root DIR]
//  [--gpus nvml|sim:...]
//  [--mig dynamic|none] [--consumable-shares ...]`: the gpu.nvidia.com driver as
// a kubelet plugin (node/driver.h). Without --kubeconfig it uses the pod's
// service account, as a DaemonSet runs it. Flags -> options -> node::run_driver;
// stops on SIGINT/SIGTERM.
#include <cstdlib>
#include <iostream>

#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "cmd/commands.h"
#include "cmd/component.h"
#include "node/driver.h"

namespace draplane::cmd {
namespace {

struct DriverFlags {
  std::string kubeconfig;
  std::string context;
  std::string mig = "dynamic";
  std::string consumable_shares = "disabled";
  bool verbose = false;
  node::DriverOptions options;
};

int run(DriverFlags& f) {
  if (f.mig != "dynamic" && f.mig != "none") {
    std::cerr << "error: --mig: Unsupported value: \"" << f.mig << "\": supported values: \"dynamic\", \"none\"\n";
    return 2;
  }
  f.options.dynamic_mig = f.mig == "dynamic";
  auto shares = node::parse_consumable_shares(f.consumable_shares);
  if (!shares.has_value()) {
    std::cerr << "error: " << shares.error().message() << "\n";
    return 2;
  }
  f.options.consumable_shares = *shares;
  auto cfg = f.kubeconfig.empty() ? client::in_cluster_config() : client::load_kubeconfig(f.kubeconfig, f.context);
  if (!cfg.has_value()) {
    std::cerr << "error: " << (f.kubeconfig.empty() ? "" : "--kubeconfig: ") << cfg.error().message() << "\n";
    return 2;
  }
  auto rest = client::RestClient::create(*cfg);
  if (!rest.has_value()) {
    std::cerr << "error: " << rest.error().message() << "\n";
    return 2;
  }
  f.options.logger = stderr_logger("driver/" + f.options.node_name, f.verbose);
  return run_until_stopped(
      [&](const std::atomic<bool>& stop) { return node::run_driver(**rest, f.options, stop).status(); });
}

}  // namespace

void add_driver(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<DriverFlags>();
  node::DriverOptions& o = f->options;
  auto* sub = app.add_subcommand("driver", "Run the GPU driver gpu.nvidia.com as a kubelet plugin (gRPC) on a real node");
  sub->add_option("--node", o.node_name, "Node name (required; in a DaemonSet from the downward API)")->required();
  sub->add_option("--kubeconfig", f->kubeconfig, "Kubeconfig file (default: the pod's service account)");
  sub->add_option("--context", f->context, "Kubeconfig context");
  sub->add_option("--plugin-dir", o.plugin_dir, "dra.sock, checkpoint.json and MPS state")->capture_default_str();
  sub->add_option("--registry-dir", o.registry_dir, "The kubelet's plugin registry (gpu.nvidia.com-reg.sock)")
      ->capture_default_str();
  sub->add_option("--cdi-root", o.cdi_root, "Where the container runtime reads CDI specs")->capture_default_str();
  if (const char* root = std::getenv("NVIDIA_DRIVER_ROOT"); root != nullptr && *root != 0) o.driver_root.root = root;
  sub->add_option("--driver-root", o.driver_root.root,
                  "Where this process sees the NVIDIA driver's files (default $NVIDIA_DRIVER_ROOT, else /)")
      ->capture_default_str();
  sub->add_option("--host-driver-root", o.driver_root.host_root,
                  "The same directory on the host, for the CDI mounts (/run/nvidia/driver with the GPU operator)")
      ->capture_default_str();
  sub->add_option("--gpus", o.gpus, "nvml, sim:<count>x<model>[,...], or an inventory YAML file")->capture_default_str();
  sub->add_option("--mig", f->mig, "dynamic: publish MIG placements (partitionable devices); none: whole GPUs only")
      ->capture_default_str();
  sub->add_option("--consumable-shares", f->consumable_shares,
                  "Publish every device as shared: disabled, unlimited, memory or N")
      ->capture_default_str();
  sub->add_flag("-v,--verbose", f->verbose, "Debug logging");
  sub->callback([f, &exit_code] { exit_code = run(*f); });
}

}  // namespace draplane::cmd
