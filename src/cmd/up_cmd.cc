// `draplane up [--data-dir DIR] [--listen ADDR] [--nodes SPEC] [--demo [--demo-dir DIR]]`:
// the quick start. Starts the API server on the embedded store, the scheduler,
// the resource-claim controller and simulated nodes in one process
// (cluster::LocalCluster), waits until every node has published its GPUs, and
// prints how to reach it with kubectl. With --demo it then applies the manifests
// of examples/ and prints where each claim was allocated and what each pod
// printed. Runs until SIGINT/SIGTERM (or, with --exit, right after the demo).
#include <spdlog/spdlog.h>

#include <filesystem>
#include <iostream>

#include "client/rest_client.h"
#include "cluster/demo.h"
#include "cluster/local_cluster.h"
#include "cmd/cluster_flags.h"
#include "cmd/commands.h"
#include "cmd/signals.h"

namespace draplane::cmd {
namespace {

struct UpFlags {
  cluster::LocalClusterOptions o;
  std::string nodes;
  bool demo = false;
  std::string demo_dir;
  int demo_timeout_s = 60;
  int ready_timeout_s = 60;
  bool exit_after = false;
};

// examples/ of the working directory, else the one beside the binary's source tree.
std::string default_demo_dir() {
  namespace fs = std::filesystem;
  if (fs::is_directory("examples")) return "examples";
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  for (fs::path p = exe.parent_path(); !ec && !p.empty() && p != p.root_path(); p = p.parent_path()) {
    if (fs::is_directory(p / "examples") && fs::exists(p / "CMakeLists.txt")) return (p / "examples").string();
  }
  return "examples";
}

// run_demo's status when it ran through but pods it did not expect to wait are
// still pending: the exit status of `draplane up --demo`.
constexpr int kUnexpectedWait = 3;

int run_demo(cluster::LocalCluster& c, const UpFlags& f) {
  auto rest = client::RestClient::create(c.admin_config());
  if (!rest.has_value()) {
    std::cerr << "error: " << rest.error().message() << "\n";
    return 1;
  }
  std::string dir = f.demo_dir.empty() ? default_demo_dir() : f.demo_dir;
  auto files = cluster::manifest_files(dir);
  if (!files.has_value()) {
    std::cerr << "error: --demo-dir: " << files.error().message() << "\n";
    return 2;
  }
  std::cout << "\nApplying " << dir << "/ (" << files->size() << " files):\n";
  int failed = 0;
  for (const auto& o : cluster::apply_manifests(**rest, *files)) {
    switch (o.kind) {
      case cluster::ApplyOutcome::Kind::kCreated:
        std::cout << "  " << o.object << " created\n";
        break;
      case cluster::ApplyOutcome::Kind::kExists:
        std::cout << "  " << o.object << " unchanged (exists already)\n";
        break;
      case cluster::ApplyOutcome::Kind::kSkipped:
        std::cout << "  " << o.object << " skipped: " << o.message << "\n";
        break;
      case cluster::ApplyOutcome::Kind::kFailed:
        ++failed;
        std::cout << "  " << o.file << ": document " << o.document << ": " << o.object << " rejected: " << o.message
                  << "\n";
        break;
    }
  }
  if (failed) std::cout << "  (" << failed << " rejected on purpose or by mistake: the messages say why)\n";
  auto pending = cluster::wait_pods_settled(**rest, f.demo_timeout_s * 1000);
  std::cout << "\n" << cluster::demo_report(**rest);
  // Pods the examples mark as waiting on purpose are no failure; any other
  // pending pod is.
  auto summary = cluster::summarize_pending(pending, cluster::list_pods(**rest));
  std::cout << cluster::render_pending_summary(summary, f.demo_timeout_s) << std::flush;
  return summary.unexpected.empty() ? 0 : kUnexpectedWait;
}

int run_up(UpFlags f) {
  sigset_t sigs = block_stop_signals();
  spdlog::set_level(spdlog::level::warn);
  if (!f.nodes.empty()) {
    auto n = cluster::parse_sim_nodes(f.nodes);
    if (!n.has_value()) {
      std::cerr << "error: " << n.error().message() << "\n";
      return 2;
    }
    f.o.nodes = *n;
  } else {
    f.o.nodes = cluster::default_sim_nodes();
  }
  auto c = cluster::LocalCluster::start(f.o);
  if (!c.has_value()) {
    std::cerr << "error: " << c.error().message() << "\n";
    return c.error().code() == Code::kInvalid ? 2 : 1;
  }
  cluster::LocalCluster& lc = **c;
  if (auto r = lc.wait_nodes_ready(f.ready_timeout_s * 1000); !r.has_value()) {
    std::cerr << "error: " << r.error().message() << " (logs in " << lc.data_dir() << "/logs)\n";
    lc.stop();
    return 1;
  }
  std::cout << "draplane is up: API server " << lc.url() << ", scheduler, controllers and " << f.o.nodes.size()
            << " simulated node(s):\n";
  for (const auto& n : f.o.nodes) {
    std::cout << "  " << n.name << "  " << n.gpus << (n.dynamic_mig ? "" : "  mig=none")
              << (n.consumable_shares.mode == node::ConsumableShares::Mode::kDisabled
                     ? ""
                     : "  consumable-shares=" + node::to_string(n.consumable_shares)) << "\n";
  }
  std::cout << "kubeconfig: " << lc.kubeconfig_path() << "\n"
            << "logs: " << lc.data_dir() << "/logs\n\n"
            << "  export KUBECONFIG=" << lc.kubeconfig_path() << "\n"
            << "  kubectl get nodes\n"
            << "  kubectl get resourceslices\n"
            << "  kubectl apply -f examples/gpu/template-and-pod.yaml\n"
            << "  kubectl get resourceclaims -A\n"
            << "ready" << std::endl;
  int rc = 0;
  if (f.demo) rc = run_demo(lc, f);
  // Unexpected waits leave the cluster running for a look, unless --exit; the
  // exit status reports them either way.
  if ((rc == 0 || rc == kUnexpectedWait) && !(f.demo && f.exit_after)) {
    if (f.demo) std::cout << "\ndraplane keeps running; Ctrl-C stops it." << std::endl;
    int sig = wait_for_signal(sigs, [&] { return !lc.failure().empty(); });
    if (sig == 0) {
      std::cerr << "error: " << lc.failure() << "\n";
      rc = 1;
    }
  }
  lc.stop();
  return rc;
}

}  // namespace

void add_up(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<UpFlags>();
  auto* sub = app.add_subcommand(
      "up", "Start a whole cluster in one process: API server, scheduler, controllers and simulated GPU nodes");
  sub->add_option("--data-dir", f->o.data_dir, "Directory for the store, certificates, kubeconfig, node state and logs")
      ->capture_default_str();
  sub->add_option("--listen", f->o.listen, "HOST:PORT of the API server (port 0 picks a free one)")
      ->capture_default_str();
  sub->add_option("--advertise-address", f->o.advertise, "Address written into the kubeconfig and certificate");
  add_store_options(*sub, f->o);
  sub->add_option("--nodes", f->nodes,
                  "Simulated nodes: N (N nodes of 8x H100) or NAME=GPUS;NAME=GPUS (GPUS as agent --gpus, optionally "
                  "followed by agent flags ?mig=none&consumable-shares=4); "
                  "default: node-1=sim:8xH100;node-2=sim:8xH100;node-3=sim:4xA100-40GB");
  sub->add_option("--policy", f->o.policy, "Placement policy, as draplane simulate --policy: draplane (default; the simulator's winner) | fgd | best-fit | gpu-packing | gpu-clustering | dot-product | random | first-fit (Kubernetes without scoring) | packing (fewest free devices left)")
      ->capture_default_str();
  sub->add_option("--heartbeat", f->o.heartbeat_seconds, "Seconds between node heartbeats")->capture_default_str();
  add_event_ttl_option(*sub, f->o.event_ttl_s);
  sub->add_flag("--demo", f->demo, "Apply the examples and report allocations and pod output");
  sub->add_option("--demo-dir", f->demo_dir, "Manifests for --demo (default: examples/)");
  sub->add_option("--demo-timeout", f->demo_timeout_s, "Seconds to wait for the demo's pods to settle")
      ->capture_default_str();
  sub->add_option("--ready-timeout", f->ready_timeout_s, "Seconds to wait for the nodes to be ready")
      ->capture_default_str();
  sub->add_flag("--exit", f->exit_after, "With --demo: stop once the report is printed");
  sub->add_flag("--log-requests", f->o.log_requests, "Log one JSON line per API request to stderr");
  add_request_limit_options(*sub, f->o);
  sub->add_flag("-v,--verbose", f->o.verbose, "Debug level in the component logs");
  sub->callback([f, &exit_code] { exit_code = run_up(*f); });
}

}  // namespace draplane::cmd
