// `draplane simulate`: replays the Alibaba GPU trace (or another in its CSV
// format) on a simulated cluster, placing every task with a policy and the DRA
// allocator, and reports how much of the GPU capacity gets allocated
// (docs/simulation.md).
//
// Output: a summary table (default; --compare: means and standard deviations
// over seeds), or one JSON object per run (--json, one per line when several
// seeds or policies run); --csv FILE writes the curves, --plot FILE.svg a figure.
// Exit codes: 0 done, 2 bad flags or input, 1 internal error.
#include <unistd.h>

#include <fstream>
#include <iostream>

#include "cmd/commands.h"
#include "common/split.h"
#include "sim/density.h"
#include "sim/manifest.h"
#include "sim/plot.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace draplane::cmd {
namespace {

struct SimulateFlags {
  std::string trace = "default";
  std::string nodes;
  std::string cluster;   // manifests instead of the node CSV
  std::string workload;  // manifests instead of the task CSV
  std::string data;
  std::string mode = "fill";
  std::string policy = "draplane";
  std::vector<uint64_t> seeds{42};
  uint64_t seed_count = 1;
  double inflate = 1.3;
  size_t max_tasks = 0;
  bool json = false;
  bool verify = false;
  bool quiet = false;
  bool compare = false;
  bool density = false;
  std::string csv;
  std::string plot;
};

int run_simulate(const SimulateFlags& flags) {
  if (flags.mode != "fill" && flags.mode != "replay") {
    std::cerr << "--mode: \"" << flags.mode << "\": accepted values are fill, replay\n";
    return 2;
  }
  std::vector<sim::PolicyKind> policies;
  if (flags.policy == "all" || flags.compare) {
    policies = sim::all_policies();
  } else {
    for (auto name : common::split(flags.policy, ',')) {
      auto p = sim::parse_policy(name);
      if (!p) {
        std::cerr << "--policy: " << p.error().message() << " (or all)\n";
        return 2;
      }
      policies.push_back(*p);
    }
  }
  if (flags.density) {
    // The seeds' density question (sim/density.h); --policy picks the placement (one policy).
    sim::DensityOptions o;
    if (policies.size() == 1) o.policy = policies.front();
    auto rows = sim::density(o);
    if (!rows) {
      std::cerr << "simulate --density: " << rows.error().message() << "\n";
      return 1;
    }
    sim::write_density(std::cout, *rows, flags.json);
    return 0;
  }
  if (!(flags.inflate > 0)) {
    std::cerr << "--inflate: must be greater than 0\n";
    return 2;
  }
  if (!flags.plot.empty() && !flags.plot.ends_with(".svg") && !flags.plot.ends_with(".png")) {
    std::cerr << "--plot: \"" << flags.plot << "\": the file name must end in .svg or .png\n";
    return 2;
  }
  if (flags.plot.ends_with(".png") && !sim::png_supported()) {
    std::cerr << "--plot: \"" << flags.plot
              << "\": this draplane was built without cairo (libcairo2-dev), so only SVG plots (.svg) are available\n";
    return 2;
  }
  std::string dir = flags.data.empty() ? sim::default_trace_dir() : flags.data;
  std::string task_file = sim::resolve_task_file(flags.trace, dir);
  std::string node_file = flags.nodes.empty() ? sim::default_node_file(dir) : flags.nodes;
  if (!flags.cluster.empty() && !flags.nodes.empty()) {
    std::cerr << "--cluster: give either --cluster or --nodes\n";
    return 2;
  }
  auto nodes = flags.cluster.empty() ? sim::load_nodes(node_file) : sim::load_cluster_manifests(flags.cluster);
  if (!nodes) {
    std::cerr << (flags.cluster.empty() ? "--nodes: " : "--cluster: ") << nodes.error().message() << "\n";
    return 2;
  }
  if (!flags.workload.empty()) task_file = flags.workload;
  auto tasks = flags.workload.empty() ? sim::load_tasks(task_file) : sim::load_workload_manifests(flags.workload);
  if (!tasks) {
    std::cerr << (flags.workload.empty() ? "--trace: " : "--workload: ") << tasks.error().message() << "\n";
    return 2;
  }
  std::vector<uint64_t> seeds;
  for (uint64_t first : flags.seeds) {
    for (uint64_t k = 0; k < flags.seed_count; ++k) seeds.push_back(first + k);
  }
  std::vector<sim::FillResult> runs;
  // Progress only where a person watches: a terminal on stderr.
  bool progress = !flags.quiet && isatty(STDERR_FILENO) != 0;
  for (auto policy : policies) {
    for (uint64_t seed : seeds) {
      sim::FillOptions options;
      options.mode = flags.mode == "replay" ? sim::Mode::kReplay : sim::Mode::kFill;
      options.policy = policy;
      options.seed = seed;
      options.inflate = flags.inflate;
      options.max_tasks = flags.max_tasks;
      options.verify = flags.verify;
      if (progress) {
        options.progress_every = 1000;
        options.progress = [policy, seed](size_t done, size_t total) {
          std::cerr << "simulate: " << sim::policy_name(policy) << " seed " << seed << ": " << done << "/" << total
                    << " tasks\r" << std::flush;
        };
      }
      auto r = sim::run_fill(*nodes, *tasks, options);
      if (progress) std::cerr << std::string(60, ' ') << "\r" << std::flush;
      if (!r) {
        std::cerr << "simulate: " << r.error().message() << "\n";
        return r.error().code() == Code::kInvalid ? 2 : 1;
      }
      if (flags.json) std::cout << sim::to_json(*r, task_file) << "\n" << std::flush;
      runs.push_back(std::move(*r));
    }
  }
  if (flags.compare) sim::write_summary(std::cout, runs, task_file);
  else if (!flags.json) sim::write_table(std::cout, runs, task_file);
  if (!flags.csv.empty()) {
    std::ofstream out(flags.csv);
    sim::write_curve_csv(out, runs);
    if (!out) {
      std::cerr << "--csv: cannot write " << flags.csv << "\n";
      return 2;
    }
  }
  if (flags.plot.ends_with(".png")) {
    auto written = sim::write_curves_png(runs, "draplane simulate: " + flags.trace, flags.plot);
    if (!written) {
      std::cerr << "--plot: " << written.error().message() << "\n";
      return 2;
    }
  } else if (!flags.plot.empty()) {
    std::ofstream out(flags.plot);
    out << sim::curves_svg(runs, "draplane simulate: " + flags.trace);
    if (!out) {
      std::cerr << "--plot: cannot write " << flags.plot << "\n";
      return 2;
    }
  }
  return 0;
}

}  // namespace

void add_simulate(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SimulateFlags>();
  CLI::App* sub = app.add_subcommand("simulate", "Replay a GPU cluster trace with a placement policy and the DRA allocator");
  sub->add_option("--trace", flags->trace,
                  "task list: a name of the shipped trace (default, gpushare20..100, multigpu50, gpuspec33) or a CSV file")
      ->capture_default_str();
  sub->add_option("--nodes", flags->nodes, "node list CSV (default: the trace's GPU nodes)");
  sub->add_option("--cluster", flags->cluster, "the cluster as Kubernetes manifests (Nodes and ResourceSlices, YAML or JSON) instead of --nodes");
  sub->add_option("--workload", flags->workload,
                  "the workload as Kubernetes manifests (Pods with ResourceClaims or templates; annotations "
                  "draplane.io/sim-arrival and draplane.io/sim-duration in seconds) instead of --trace");
  sub->add_option("--data", flags->data, "folder of the shipped trace (default: ../shared/data/openb beside the source tree, or $DRAPLANE_DATA_DIR/openb)");
  sub->add_option("--mode", flags->mode, "fill: tasks arrive in random order and never leave, until --inflate; replay: arrivals and departures at the trace's times")->capture_default_str();
  sub->add_option("--policy", flags->policy,
                  "draplane (default), first-fit (Kubernetes' default), random, dot-product, gpu-clustering, gpu-packing, best-fit, fgd; several separated by commas, or all")
      ->capture_default_str();
  sub->add_option("--seed", flags->seeds, "random seed(s); several run one after the other")->capture_default_str();
  sub->add_option("--seeds", flags->seed_count, "run this many consecutive seeds from each --seed (the paper: --seed 42 --seeds 10)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--inflate", flags->inflate, "fill mode: add tasks until the GPU requested reaches this many times the capacity")
      ->capture_default_str();
  sub->add_option("--max-tasks", flags->max_tasks, "stop after this many arrivals (0: all)");
  sub->add_flag("--compare", flags->compare,
                "every policy, and a table of means and standard deviations over the seeds (use with --seeds 10)");
  sub->add_flag("--density", flags->density,
                "how many 10-16 GiB inference pods fit on 32 H100 80GB with whole GPUs, MIG, time-slicing and MPS");
  sub->add_flag("--json", flags->json, "print one JSON object per run instead of the table");
  sub->add_option("--csv", flags->csv, "write the curves (arrived % -> allocated, fragmented) to this CSV file");
  sub->add_option("--plot", flags->plot, "write the curves as a figure, FILE.svg or FILE.png (PNG needs a build with cairo), one curve per policy, mean over seeds");
  sub->add_flag("--verify", flags->verify, "check after every placement that the simulator agrees with the allocator's state (slow)");
  sub->add_flag("-q,--quiet", flags->quiet, "no progress on stderr (shown only when stderr is a terminal)");
  sub->callback([flags, &exit_code] { exit_code = run_simulate(*flags); });
}

}  // namespace draplane::cmd
