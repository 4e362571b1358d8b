// kube-scheduler's and kube-controller-manager's leader election flags
// (--leader-elect, --leader-elect-lease-duration, --leader-elect-renew-deadline,
// --leader-elect-retry-period, --leader-elect-resource-name,
// --leader-elect-resource-namespace) for `draplane scheduler`, `draplane
// controllers` and `draplane server`.
#pragma once

#include <CLI/CLI.hpp>

#include <atomic>
#include <functional>
#include <string>

#include "client/kubeconfig.h"
#include "client/leader_election.h"
#include "common/result.h"

namespace draplane::cmd {

struct LeaderElectFlags {
  bool enabled = true;  // --leader-elect; --leader-elect=false turns it off
  CLI::Option* enabled_flag = nullptr;
  client::LeaderElectionConfig config;
  // Whether --leader-elect was on the command line (after parsing).
  bool given() const { return enabled_flag != nullptr && enabled_flag->count() > 0; }
};

// Adds the flags. `resource_name` is the default Lease name; with it empty the
// --leader-elect-resource-name flag is not offered (`draplane server` runs two
// components, each with its own Lease).
void add_leader_elect_options(CLI::App& sub, LeaderElectFlags& f, const std::string& resource_name);

// Runs `work` until SIGINT/SIGTERM (run_until_stopped): at once, or with
// --leader-elect only while this process holds the Lease, renewed over a
// connection of its own to `cfg`'s server (renewals do not queue behind the
// work's requests). A lost Lease ends the process (exit 1), as kube-scheduler's
// and kube-controller-manager's: their supervisor restarts them as standbys.
// Returns the exit code (2 when the Lease's client cannot be made).
int run_elected_when_asked(const LeaderElectFlags& elect, const client::KubeConfig& cfg, bool verbose,
                           const std::function<Status(const std::atomic<bool>& stop)>& work);

}  // namespace draplane::cmd
