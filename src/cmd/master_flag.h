// kube-scheduler's and kube-controller-manager's --master for `draplane
// scheduler` and `draplane controllers`: API server URLs that take the place of
// the kubeconfig's server (its credentials still apply).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "client/kubeconfig.h"
#include "common/result.h"

namespace draplane::cmd {

void add_master_option(CLI::App& sub, std::string& master);

// The kubeconfig file's `context` (its current context when empty), with
// `master`, when given, as its server. The caller words the error: each command
// has its own message.
Result<client::KubeConfig> load_kubeconfig_with_master(const std::string& kubeconfig, const std::string& context,
                                                       const std::string& master);

}  // namespace draplane::cmd
