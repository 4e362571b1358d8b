// `draplane agent inject-xid --node NAME --gpu UUID|gpu-<minor>|all
//  (--xid CODE | --gpu-lost | --recover) [--state-dir DIR | --data-dir DIR]`:
// makes a simulated GPU of a running agent fail (or recover) on purpose. The
// event is appended to <state dir>/health/events, which the agent's simulated
// GPU backend reads (node/sim.h); its health monitor taints the devices and
// republishes the slices, the kubelet reports the pods' device health. The
// agent's state dir is --state-dir, else <--data-dir>/nodes/NAME (the layout of
// `draplane up`), else ./draplane-data/nodes/NAME when it exists (up's default
// data dir), else ./draplane-agent-NAME (the agent's default).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cluster/local_cluster.h"
#include "cmd/commands.h"
#include "node/sim.h"

namespace draplane::cmd {
namespace {

struct InjectFlags {
  std::string node;
  std::string gpu;
  uint64_t xid = 0;
  bool gpu_lost = false;
  bool recover = false;
  std::string state_dir;
  std::string data_dir;
};

std::string agent_state_dir(const InjectFlags& f) {
  if (!f.state_dir.empty()) return f.state_dir;
  if (!f.data_dir.empty()) return cluster::node_state_dir(f.data_dir, f.node);
  std::error_code ec;
  std::string up = cluster::node_state_dir(cluster::LocalClusterOptions{}.data_dir, f.node);
  if (std::filesystem::is_directory(up, ec)) return up;
  return "./draplane-agent-" + f.node;
}

int run(const InjectFlags& f) {
  int kinds = (f.xid > 0 ? 1 : 0) + (f.gpu_lost ? 1 : 0) + (f.recover ? 1 : 0);
  if (kinds != 1) {
    std::cerr << "error: exactly one of --xid CODE (a positive number), --gpu-lost or --recover is required\n";
    return 2;
  }
  const std::string dir = agent_state_dir(f) + "/health";
  std::ifstream in(dir + "/" + node::kInjectedGpusFile);
  if (!in) {
    std::cerr << "error: " << dir << "/" << node::kInjectedGpusFile
              << " not found: no agent with simulated GPUs (--gpus sim:...) has run with state dir "
              << agent_state_dir(f) << " (see --state-dir, --data-dir)\n";
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto uuid = node::resolve_injected_gpu(ss.str(), f.gpu);
  if (!uuid.has_value()) {
    std::cerr << "error: --gpu: " << uuid.error().message() << "\n";
    return 1;
  }
  node::GpuEvent e;
  e.uuid = *uuid;
  e.xid = f.xid;
  e.kind = f.recover ? node::GpuEvent::Kind::kRecovered
                     : f.gpu_lost ? node::GpuEvent::Kind::kGpuLost : node::GpuEvent::Kind::kXid;
  Status st = node::append_injected_event(dir, e);
  if (!st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return 1;
  }
  std::cout << "node " << f.node << ": " << node::format_injected_event(e) << "\n";
  return 0;
}

}  // namespace

void add_inject_xid(CLI::App& agent, int& exit_code) {
  auto f = std::make_shared<InjectFlags>();
  auto* sub = agent.add_subcommand(
      "inject-xid",
      "Make a simulated GPU of a running agent fail (XID error, GPU lost) or recover: its devices get the\n"
      "health taints gpu.nvidia.com/xid=<code> (NoSchedule; application XIDs 13, 31, 43, 45, 68, 109: None)\n"
      "or gpu.nvidia.com/gpu-lost (NoSchedule), pods using them show them Unhealthy; --recover clears them");
  sub->add_option("--node", f->node, "Node name of the agent")->required();
  sub->add_option("--gpu", f->gpu, "The GPU: its UUID, gpu-<minor> (the device name), or all")->required();
  sub->add_option("--xid", f->xid, "Inject this XID error");
  sub->add_flag("--gpu-lost", f->gpu_lost, "Inject a GPU-lost event (NVML_ERROR_GPU_IS_LOST)");
  sub->add_flag("--recover", f->recover, "The GPU was repaired: clear its XID and GPU-lost taints");
  sub->add_option("--state-dir", f->state_dir, "The agent's --state-dir");
  sub->add_option("--data-dir", f->data_dir, "The --data-dir of `draplane up` (node state in DIR/nodes/NAME)");
  sub->callback([f, &exit_code] { exit_code = run(*f); });
}

}  // namespace draplane::cmd
