// `draplane scheduler --kubeconfig FILE [--name draplane] [--policy NAME]` (NAME as simulate --policy, or packing):
// the DRA scheduler against any Kubernetes API server. Flags -> options ->
// sched::run_scheduler; stops on SIGINT/SIGTERM.
#include <spdlog/spdlog.h>

#include <atomic>
#include <iostream>

#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "cmd/commands.h"
#include "cmd/component.h"
#include "cmd/leader_elect_flags.h"
#include "cmd/master_flag.h"
#include "sched/policy_flag.h"
#include "sched/runner.h"

namespace draplane::cmd {
namespace {

struct SchedulerFlags {
  std::string kubeconfig;
  std::string context;
  std::string name = "draplane";
  std::string policy = std::string(sched::kDefaultPolicy);
  int bind_workers = 16;
  bool only_named = false;
  bool verbose = false;
  std::string master;
  LeaderElectFlags elect;
};

int run(const SchedulerFlags& f) {
  sched::RunnerOptions o;
  if (auto p = sched::apply_policy(f.policy, o.scheduler); !p.has_value()) {
    std::cerr << "error: " << p.error().message() << "\n";
    return 2;
  }
  auto cfg = load_kubeconfig_with_master(f.kubeconfig, f.context, f.master);
  if (!cfg) {
    std::cerr << "error: " << cfg.error().message() << "\n";
    return 2;
  }
  auto watch_client = client::RestClient::create(*cfg);
  auto write_client = client::RestClient::create(*cfg);
  if (!watch_client || !write_client) {
    std::cerr << "error: " << (watch_client ? write_client.error() : watch_client.error()).message() << "\n";
    return 2;
  }
  if (f.verbose) spdlog::set_level(spdlog::level::debug);

  o.scheduler.name = f.name;
  o.scheduler.serve_default = !f.only_named;
  o.scheduler.bind_workers = f.bind_workers;
  return run_elected_when_asked(f.elect, *cfg, f.verbose, [&](const std::atomic<bool>& stop) {
    return sched::run_scheduler(**watch_client, **write_client, o, stop).status();
  });
}

}  // namespace

void add_scheduler(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SchedulerFlags>();
  CLI::App* cmd = app.add_subcommand("scheduler", "Run the DRA scheduler against a Kubernetes API server");
  cmd->add_option("--kubeconfig", flags->kubeconfig, "kubeconfig file")->required();
  cmd->add_option("--context", flags->context, "kubeconfig context (default: current-context)");
  cmd->add_option("--name", flags->name, "spec.schedulerName served")->capture_default_str();
  cmd->add_option("--policy", flags->policy, "Placement policy, as draplane simulate --policy: draplane (default; the simulator's winner) | fgd | best-fit | gpu-packing | gpu-clustering | dot-product | random | first-fit (Kubernetes without scoring) | packing (fewest free devices left)")->capture_default_str();
  cmd->add_option("--bind-workers", flags->bind_workers,
                  "threads writing claim allocations and bindings while the next pods are scheduled (0: inline)")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  cmd->add_flag("--only-named", flags->only_named,
                "serve only pods naming this scheduler (not \"\" or default-scheduler)");
  cmd->add_flag("-v,--verbose", flags->verbose, "debug logging");
  add_master_option(*cmd, flags->master);
  add_leader_elect_options(*cmd, flags->elect, "draplane-scheduler");
  cmd->callback([flags, &exit_code] { exit_code = run(*flags); });
}

}  // namespace draplane::cmd
