// `draplane bench`: Kubernetes' scheduler_perf DRA workloads run by draplane
// (src/bench, docs/benchmarks.md). --list names them; --workload runs one in
// --mode inprocess | api | e2e and prints a table, or one JSON object (--json).
// A run whose final state is wrong (a device given twice, a bound pod whose
// claims are not allocated and reserved for it, other counts than the
// workload implies) fails.
// Exit codes: 0 done, 2 bad flags, 1 the run failed or its result was wrong.
#include <fstream>
#include <iostream>

#include "bench/bench.h"
#include "cmd/commands.h"
#include "sim/plot.h"

namespace draplane::cmd {
namespace {

struct BenchFlags {
  bool list = false;
  bool json = false;
  bench::Options options;
  // --scale: per-pod cost as the cluster grows.
  bool scale = false;
  std::vector<int> scale_nodes{100, 250, 500, 1000, 2500, 5000};
  std::vector<int> scale_devices{8, 16, 32, 64, 128};
  int scale_base_nodes = 500;
  std::string csv, plot;
};

// The scale curves as a chart: CPU per pod against devices in the cluster.
sim::Chart scale_chart(const std::vector<bench::ScalePoint>& points, const std::string& workload) {
  sim::Chart chart;
  chart.title = "draplane bench --scale: " + workload;
  chart.x_label = "devices in the cluster (log scale)";
  chart.y_label = "scheduler CPU per pod, ms";
  chart.log_x = true;
  chart.series.resize(2);
  chart.series[0].name = "nodes grow";
  chart.series[1].name = "devices/node grow";
  for (const auto& p : points) {
    chart.series[p.axis == "nodes" ? 0 : 1].points.emplace_back(p.report.devices, p.report.cpu_ms_per_pod);
  }
  return chart;
}

int run_scale(const BenchFlags& flags) {
  auto points = bench::run_scale(flags.options, flags.scale_nodes, flags.scale_devices, flags.scale_base_nodes,
                                 [](const bench::ScalePoint& p) {
                                   std::cerr << "bench --scale: " << p.report.nodes << " nodes, " << p.report.devices
                                             << " devices: " << p.report.cpu_ms_per_pod << " ms CPU per pod\n";
                                 });
  if (!points.has_value()) {
    std::cerr << "draplane bench --scale: " << points.error().message() << "\n";
    return 1;
  }
  const std::string csv = bench::scale_csv(*points);
  std::cout << csv;
  if (!flags.csv.empty()) {
    std::ofstream out(flags.csv);
    out << csv;
    if (!out) {
      std::cerr << "--csv: cannot write " << flags.csv << "\n";
      return 2;
    }
  }
  if (!flags.plot.empty()) {
    const std::string workload = points->empty() ? "" : points->front().report.workload;
    sim::Chart chart = scale_chart(*points, workload);
    if (flags.plot.ends_with(".png")) {
      if (auto w = sim::write_chart_png(chart, flags.plot); !w.has_value()) {
        std::cerr << "--plot: " << w.error().message() << "\n";
        return 2;
      }
    } else {
      std::ofstream out(flags.plot);
      out << sim::chart_svg(chart);
      if (!out) {
        std::cerr << "--plot: cannot write " << flags.plot << "\n";
        return 2;
      }
    }
  }
  return 0;
}

int run_bench(const BenchFlags& flags) {
  if (flags.list) {
    std::cout << bench::list_text();
    return 0;
  }
  if (flags.scale) return run_scale(flags);
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
  sub->add_option("--devices", flags->options.devices,
                  "devices per node of the template and SteadyState workloads (default 10; scale curves)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--policy", flags->options.policy,
                  "inprocess: the scheduler's placement policy, as draplane scheduler --policy (default: its default)");
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
  sub->add_flag("--scale", flags->scale,
                "scale curves: the workload (default SteadyStateClusterResourceClaimTemplate/empty) at each "
                "--scale-nodes count, then at --scale-base-nodes with each --scale-devices count; prints CSV");
  sub->add_option("--scale-nodes", flags->scale_nodes, "node counts of the node sweep")->delimiter(',')->capture_default_str();
  sub->add_option("--scale-devices", flags->scale_devices, "devices per node of the device sweep")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--scale-base-nodes", flags->scale_base_nodes, "nodes of the device sweep")->capture_default_str();
  sub->add_option("--csv", flags->csv, "--scale: also write the CSV to this file");
  sub->add_option("--plot", flags->plot, "--scale: write the curves as FILE.svg or FILE.png");
  sub->callback([flags, &exit_code] { exit_code = run_bench(*flags); });
}

}  // namespace draplane::cmd
