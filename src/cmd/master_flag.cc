#include "cmd/master_flag.h"

namespace draplane::cmd {

void add_master_option(CLI::App& sub, std::string& master) {
  sub.add_option("--master", master,
                 "API server URL, overriding the kubeconfig's; several comma-separated URLs fail over");
}

Result<client::KubeConfig> load_kubeconfig_with_master(const std::string& kubeconfig, const std::string& context,
                                                       const std::string& master) {
  auto cfg = client::load_kubeconfig(kubeconfig, context);
  if (cfg.has_value() && !master.empty()) cfg->server = master;
  return cfg;
}

}  // namespace draplane::cmd
