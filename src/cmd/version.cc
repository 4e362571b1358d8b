#include <iostream>

#include "cmd/commands.h"

namespace draplane::cmd {

void add_version(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("version", "Print the draplane version and the Kubernetes API it serves");
  sub->callback([&exit_code] {
    std::cout << "draplane " << DRAPLANE_VERSION << " (Kubernetes resource.k8s.io/v1, 1.36 semantics)\n";
    exit_code = 0;
  });
}

}  // namespace draplane::cmd
