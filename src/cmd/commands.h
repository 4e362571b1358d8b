// Subcommands of the draplane binary. Each add_* registers one subcommand on the
// root app; its callback stores the process exit code in `exit_code`. A subcommand
// is a thin layer: flags -> options -> library call -> output. One file each.
#pragma once

#include <CLI/CLI.hpp>

namespace draplane::cmd {

void add_version(CLI::App& app, int& exit_code);   // version.cc
void add_validate(CLI::App& app, int& exit_code);  // validate_cmd.cc
void add_convert(CLI::App& app, int& exit_code);   // convert_cmd.cc
void add_cel(CLI::App& app, int& exit_code);       // cel_cmd.cc
void add_allocate(CLI::App& app, int& exit_code);  // allocate_cmd.cc
void add_server(CLI::App& app, int& exit_code);    // server_cmd.cc
void add_scheduler(CLI::App& app, int& exit_code);  // scheduler_cmd.cc
void add_agent(CLI::App& app, int& exit_code);        // agent_cmd.cc
void add_inject_xid(CLI::App& agent, int& exit_code);  // inject_xid_cmd.cc: `agent inject-xid`
void add_agent_prepare(CLI::App& agent, int& exit_code);  // agent_prepare_cmd.cc: `agent prepare`
void add_driver(CLI::App& app, int& exit_code);       // driver_cmd.cc
void add_controllers(CLI::App& app, int& exit_code);  // controllers_cmd.cc
void add_up(CLI::App& app, int& exit_code);           // up_cmd.cc
void add_simulate(CLI::App& app, int& exit_code);     // simulate_cmd.cc
void add_bench(CLI::App& app, int& exit_code);        // bench_cmd.cc

}  // namespace draplane::cmd
