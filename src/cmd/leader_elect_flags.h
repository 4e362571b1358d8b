// kube-scheduler's and kube-controller-manager's leader election flags
// (--leader-elect, --leader-elect-lease-duration, --leader-elect-renew-deadline,
// --leader-elect-retry-period, --leader-elect-resource-name,
// --leader-elect-resource-namespace) for `draplane scheduler`, `draplane
// controllers` and `draplane server`.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "client/leader_election.h"

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

}  // namespace draplane::cmd
