// draplane: one binary, many subcommands (like k3s). main only lists them.
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

#include "cmd/commands.h"
#include "common/malloc_tuning.h"

namespace {

// CLI11 answers "A subcommand is required" before it names a stray word; name
// it, as kubectl does ("unknown command", "unknown flag"). 0 when fine.
int check_command_words(CLI::App& app, int argc, char** argv, int i, const std::string& path) {
  if (i >= argc) return 0;
  const std::string word = argv[i];
  const bool needs_sub = app.get_require_subcommand_min() > 0;
  if (!word.empty() && word[0] == '-') {
    if (path == "draplane" && word != "-h" && word != "--help" && word != "--help-all") {
      std::cerr << "Error: unknown flag: " << word << "\nRun '" << path << " --help' for usage.\n";
      return 2;
    }
    return 0;
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() == word) return check_command_words(*sub, argc, argv, i + 1, path + " " + word);
  }
  if (needs_sub) {
    std::cerr << "Error: unknown command \"" << word << "\" for \"" << path << "\"\nRun '" << path
              << " --help' for usage.\n";
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  draplane::tune_malloc_for_server();  // most subcommands are long-running processes
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
  draplane::cmd::add_driver(app, exit_code);
  draplane::cmd::add_controllers(app, exit_code);
  draplane::cmd::add_up(app, exit_code);
  draplane::cmd::add_simulate(app, exit_code);
  draplane::cmd::add_bench(app, exit_code);
  if (int rc = check_command_words(app, argc, argv, 1, "draplane"); rc != 0) return rc;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    // Usage errors are invalid input: exit 2, as every subcommand's contract says.
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}
