// draplane: one binary, many subcommands (like k3s). main only lists them.
#include <CLI/CLI.hpp>

#include "cmd/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"draplane: Kubernetes Dynamic Resource Allocation for GPUs and accelerators"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  int exit_code = 0;
  draplane::cmd::add_version(app, exit_code);
  draplane::cmd::add_validate(app, exit_code);
  draplane::cmd::add_convert(app, exit_code);
  draplane::cmd::add_cel(app, exit_code);
  draplane::cmd::add_allocate(app, exit_code);
  draplane::cmd::add_server(app, exit_code);
  draplane::cmd::add_scheduler(app, exit_code);
  draplane::cmd::add_agent(app, exit_code);
  draplane::cmd::add_controllers(app, exit_code);
  draplane::cmd::add_up(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    // Usage errors are invalid input: exit 2, as every subcommand's contract says.
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}
