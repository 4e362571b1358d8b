#include "cmd/leader_elect_flags.h"

#include <iostream>

#include "client/rest_client.h"
#include "cluster/local_cluster.h"
#include "cmd/component.h"

namespace draplane::cmd {
namespace {

void add_duration(CLI::App& sub, const std::string& name, std::chrono::milliseconds& into, const std::string& def,
                  const std::string& help) {
  sub.add_option_function<std::string>(
         name,
         [&into, name](const std::string& text) {
           auto d = cluster::parse_duration(text);
           if (!d.has_value()) throw CLI::ValidationError(name, d.error().message());
           into = *d;
         },
         help)
      ->default_str(def);
}

}  // namespace

void add_leader_elect_options(CLI::App& sub, LeaderElectFlags& f, const std::string& resource_name) {
  f.config.lease_name = resource_name;
  f.enabled_flag = sub.add_flag("--leader-elect", f.enabled,
                                 "Start a leader election client and gain leadership before executing the main "
                                 "loop (--leader-elect=false turns it off)")
                       ->default_str(resource_name.empty() ? "true with an etcd store" : "true");
  add_duration(sub, "--leader-elect-lease-duration", f.config.lease_duration, "15s",
               "How long a standby waits, after it last saw the Lease change, before it may take it over");
  add_duration(sub, "--leader-elect-renew-deadline", f.config.renew_deadline, "10s",
               "How long the leader tries to renew before it stops leading; less than the lease duration");
  add_duration(sub, "--leader-elect-retry-period", f.config.retry_period, "2s",
               "How long candidates wait between attempts to acquire and renew");
  if (!resource_name.empty()) {
    sub.add_option("--leader-elect-resource-name", f.config.lease_name, "The name of the Lease the election uses")
        ->capture_default_str();
  }
  sub.add_option("--leader-elect-resource-namespace", f.config.lease_namespace,
                 "The namespace of the election's Lease")
      ->capture_default_str();
}

int run_elected_when_asked(const LeaderElectFlags& elect, const client::KubeConfig& cfg, bool verbose,
                           const std::function<Status(const std::atomic<bool>& stop)>& work) {
  if (!elect.enabled) return run_until_stopped(work);
  auto lease_client = client::RestClient::create(cfg);
  if (!lease_client.has_value()) {
    std::cerr << "error: " << lease_client.error().message() << "\n";
    return 2;
  }
  client::LeaderElectionConfig election = elect.config;
  election.logger = stderr_logger("leader-election", verbose);
  return run_until_stopped([&](const std::atomic<bool>& stop) {
    return client::run_leader_elected(**lease_client, election, work, stop, false);
  });
}

}  // namespace draplane::cmd
