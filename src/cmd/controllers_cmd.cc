// `draplane controllers --kubeconfig FILE`: the resource-claim controller
// (claim templates -> claims, reservedFor cleanup, deallocation) and the device
// taint eviction controller (NoExecute device taints evict pods) against any
// Kubernetes API server. Flags -> options -> controllers::run_controllers;
// stops on SIGINT/SIGTERM.
#include <spdlog/spdlog.h>

#include <atomic>
#include <iostream>

#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "cmd/commands.h"
#include "cmd/component.h"
#include "cmd/leader_elect_flags.h"
#include "cmd/master_flag.h"
#include "controllers/claim_controller.h"

namespace draplane::cmd {
namespace {

struct ControllerFlags {
  std::string kubeconfig;
  std::string context;
  int workers = 8;
  bool verbose = false;
  std::string master;
  LeaderElectFlags elect;
};

int run(const ControllerFlags& f) {
  auto cfg = load_kubeconfig_with_master(f.kubeconfig, f.context, f.master);
  if (!cfg.has_value()) {
    std::cerr << "error: --kubeconfig: " << cfg.error().message() << "\n";
    return 2;
  }
  auto rest = client::RestClient::create(*cfg);
  if (!rest.has_value()) {
    std::cerr << "error: " << rest.error().message() << "\n";
    return 2;
  }
  controllers::ControllerOptions o;
  o.workers = std::max(1, f.workers);
  o.logger = stderr_logger("controllers", f.verbose);
  return run_elected_when_asked(f.elect, *cfg, f.verbose, [&](const std::atomic<bool>& stop) {
    return controllers::run_controllers(**rest, o, stop);
  });
}

}  // namespace

void add_controllers(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<ControllerFlags>();
  auto* sub = app.add_subcommand("controllers", "Run the resource-claim and device taint eviction controllers");
  sub->add_option("--kubeconfig", f->kubeconfig, "Kubeconfig file")->required();
  sub->add_option("--context", f->context, "Kubeconfig context");
  sub->add_option("--workers", f->workers, "Concurrent syncs")->capture_default_str();
  sub->add_flag("-v,--verbose", f->verbose, "Debug logging");
  add_master_option(*sub, f->master);
  add_leader_elect_options(*sub, f->elect, "draplane-controllers");
  sub->callback([f, &exit_code] { exit_code = run(*f); });
}

}  // namespace draplane::cmd
