// `draplane agent prepare --node NAME --gpus SPEC --state-dir DIR --device NAME...
//  [--claim-uid UID] [--unprepare]`: prepares (or unprepares) one claim for
// devices of this node without an API server or kubelet, through the same
// DeviceState as the agent and `draplane driver` (node/prepare.h): checkpoint
// under DIR/plugin, CDI spec under DIR/cdi. For checking a real GPU node
// (scripts/gpu-check). Prints, one per line:
//   cdi-spec: <path>
//   cdi-device: k8s.gpu.nvidia.com/claim=<uid>-<device>
//   env: NAME=value          (the spec's and the devices' container edits)
//   device-node: /dev/...
// --unprepare undoes the claim (destroying what prepare created).
#include <iostream>
#include <memory>

#include "cmd/commands.h"
#include "cmd/input.h"
#include "node/cdi.h"
#include "node/checkpoint.h"
#include "node/node_devices.h"
#include "node/prepare.h"
#include "node/slices.h"

namespace draplane::cmd {
namespace {

struct PrepareFlags {
  std::string node;
  std::string gpus = "nvml";
  std::string state_dir;
  std::vector<std::string> devices;
  std::string claim_uid = "gpu-check";
  bool unprepare = false;
};

// The container edits of the claim's CDI spec: spec-level, then per device.
int print_edits(const std::string& path) {
  auto text = read_input(path);
  if (!text.has_value()) {
    std::cerr << "error: " << text.error().message() << "\n";
    return 1;
  }
  auto spec = node::decode_cdi_spec(*text);
  if (!spec.has_value()) {
    std::cerr << "error: " << path << ": " << spec.error().message() << "\n";
    return 1;
  }
  auto print = [](const node::CdiEdits& e) {
    for (const auto& v : e.env) std::cout << "env: " << v << "\n";
    for (const auto& n : e.device_nodes) std::cout << "device-node: " << n.path << "\n";
  };
  print(spec->edits);
  for (const auto& d : spec->devices) print(d.edits);
  return 0;
}

int run(const PrepareFlags& f) {
  node::PrepareOptions o;
  o.node_name = f.node;
  o.cdi_dir = f.state_dir + "/cdi";
  o.plugin_dir = f.state_dir + "/plugin";
  // As the agent and the driver open them: the same simulated identities for
  // the node, no nvidia-smi for simulated GPUs.
  auto opened = node::open_node_devices(f.gpus, o, node::read_boot_id());
  if (!opened.has_value()) {
    std::cerr << "error: " << opened.error().message() << "\n";
    return 1;
  }
  node::DeviceState* state = opened->devices.get();
  if (f.unprepare) {
    Status st = state->unprepare(f.claim_uid);
    if (!st.ok()) {
      std::cerr << "error: unprepare " << f.claim_uid << ": " << st.message() << "\n";
      return 1;
    }
    std::cout << "unprepared: " << f.claim_uid << "\n";
    return 0;
  }
  api::AllocationResult a;
  for (const auto& d : f.devices) {
    api::DeviceRequestAllocationResult r;
    r.request = "gpu";
    r.driver = node::kDriverName;
    r.pool = f.node;
    r.device = d;
    a.devices.results.push_back(r);
  }
  auto prepared = state->prepare({"default", f.claim_uid, f.claim_uid}, a);
  if (!prepared.has_value()) {
    std::cerr << "error: prepare: " << prepared.error().message() << "\n";
    return 1;
  }
  const std::string path = node::cdi_spec_path(o.cdi_dir, f.claim_uid);
  std::cout << "cdi-spec: " << path << "\n";
  for (const auto& p : *prepared) {
    for (const auto& id : p.cdi_device_ids) std::cout << "cdi-device: " << id << "\n";
  }
  return print_edits(path);
}

}  // namespace

void add_agent_prepare(CLI::App& agent, int& exit_code) {
  auto f = std::make_shared<PrepareFlags>();
  auto* sub = agent.add_subcommand(
      "prepare",
      "Prepare (or --unprepare) one claim for devices of this node as the driver does, without a server:\n"
      "prints the CDI spec path, the CDI device ids and the container edits (env, device nodes)");
  sub->add_option("--node", f->node, "Node name (the pool of the devices)")->required();
  sub->add_option("--gpus", f->gpus, "nvml, nvml:<library>, sim:<spec> or an inventory file")->capture_default_str();
  sub->add_option("--state-dir", f->state_dir, "Checkpoint (DIR/plugin) and CDI specs (DIR/cdi)")->required();
  sub->add_option("--device", f->devices, "Device name (gpu-0, gpu-0-mig-1g10gb-19-0); repeatable");
  sub->add_option("--claim-uid", f->claim_uid, "The claim's UID")->capture_default_str();
  sub->add_flag("--unprepare", f->unprepare, "Unprepare the claim instead");
  sub->callback([f, &exit_code] {
    if (!f->unprepare && f->devices.empty()) {
      std::cerr << "error: --device is required\n";
      exit_code = 2;
      return;
    }
    exit_code = run(*f);
  });
}

}  // namespace draplane::cmd
