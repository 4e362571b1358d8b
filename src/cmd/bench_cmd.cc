// `draplane bench`: Kubernetes' scheduler_perf DRA workloads run by draplane
// (src/bench, docs/benchmarks.md). --list names them; --workload runs one in
// --mode inprocess | api | e2e and prints a table, or one JSON object (--json).
// A run whose final state is wrong (a device given twice, a bound pod whose
// claims are not allocated and reserved for it, other counts than the
// workload implies) fails.
// Exit codes: 0 done, 2 bad flags, 1 the run failed or its result was wrong.
#include <iostream>

#include "bench/bench.h"
#include "cmd/commands.h"

namespace draplane::cmd {
namespace {

struct BenchFlags {
  bool list = false;
  bool json = false;
  bench::Options options;
};

int run_bench(const BenchFlags& flags) {
  if (flags.list) {
    std::cout << bench::list_text();
    return 0;
  }
  if (flags.options.workload.empty() && flags.options.mode != "e2e") {
    std::cerr << "Error: --workload is required (see --list), except with --mode e2e\n";
    return 2;
  }
  auto report = bench::run(flags.options);
  if (!report.has_value()) {
    const auto code = report.error().code();
    std::cerr << "draplane bench: " << report.error().message() << "\n";
    return code == Code::kInvalid || code == Code::kNotFound ? 2 : 1;
  }
  std::cout << (flags.json ? bench::json_text(*report) + "\n" : bench::table_text(*report));
  return 0;
}

}  // namespace

void add_bench(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* sub = app.add_subcommand("bench", "Run Kubernetes' scheduler_perf DRA workloads and check the result");
  sub->add_flag("--list", flags->list, "name the workloads and exit");
  sub->add_option("--workload", flags->options.workload, "the workload to run (see --list)");
  sub->add_option("--nodes", flags->options.nodes, "nodes (default: the workload's, 500 for most)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--mode", flags->options.mode,
                  "inprocess: scheduler on an in-memory store; api: a draplane server, pods through the API; "
                  "e2e: the whole system with simulated nodes and kubelets")
      ->check(CLI::IsMember({"inprocess", "api", "e2e"}))
      ->capture_default_str();
  sub->add_option("--store", flags->options.store, "api and e2e: the server's store")
      ->check(CLI::IsMember({"sqlite", "memory"}))
      ->capture_default_str();
  sub->add_option("--duration", flags->options.duration_s, "SteadyState workloads: seconds of rounds (upstream: 10)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--clients", flags->options.clients, "api and e2e: concurrent clients creating pods")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--timeout", flags->options.timeout_s, "seconds before an unfinished run fails")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--data-dir", flags->options.data_dir, "api and e2e: the server's data dir (default: a temporary one, removed)");
  sub->add_flag("--json", flags->json, "print one JSON object instead of the table");
  sub->callback([flags, &exit_code] { exit_code = run_bench(*flags); });
}

}  // namespace draplane::cmd
