#include "node/agent.h"

#include <spdlog/sinks/null_sink.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "client/informer.h"
#include "node/agent_node.h"
#include "node/checkpoint.h"
#include "node/gpu_backend.h"
#include "node/health.h"
#include "node/node_devices.h"
#include "node/kubelet.h"
#include "node/kubelet_logs.h"
#include "node/pool_publisher.h"
#include "node/prepare.h"
#include "node/slices.h"

namespace draplane::node {

namespace {

SliceOptions slice_options(const AgentOptions& options) {
  SliceOptions so;
  so.node_name = options.node_name;
  so.dynamic_mig = options.dynamic_mig;
  so.consumable_shares = options.consumable_shares;
  return so;
}

}  // namespace

Result<std::vector<api::ResourceSlice>> offline_slices(const AgentOptions& options,
                                                       const std::vector<api::DeviceClass>& classes,
                                                       std::vector<std::string>& warnings) {
  if (options.node_name.empty()) return invalid_error("agent: --node is required");
  ASSIGN_OR_RETURN(std::unique_ptr<GpuBackend> backend, make_backend(options.gpus, node_seed(options.node_name)));
  ASSIGN_OR_RETURN(std::vector<GpuInfo> gpus, backend->discover());
  return build_slices(gpus, with_class_sharing(slice_options(options), gpus, classes, warnings));
}

Result<void> run_agent(client::RestClient& rest, const AgentOptions& options, const std::atomic<bool>& stop) {
  if (options.node_name.empty()) return invalid_error("agent: --node is required");
  if (options.state_dir.empty()) return invalid_error("agent: --state-dir is required");
  auto log = options.logger ? options.logger
                            : std::make_shared<spdlog::logger>("agent", std::make_shared<spdlog::sinks::null_sink_mt>());
  const common::Clock& clock = *options.clock;
  const std::string dir = std::filesystem::absolute(options.state_dir).string();
  PrepareOptions po;
  po.node_name = options.node_name;
  po.cdi_dir = dir + "/cdi";
  po.plugin_dir = dir + "/plugin";
  ASSIGN_OR_RETURN(NodeDevices opened, open_node_devices(options.gpus, po, read_boot_id()));
  GpuBackend* backend = opened.backend.get();
  DeviceState* devices = opened.devices.get();
  const std::vector<GpuInfo> gpus = devices->gpus();
  log->info("node {}: {} GPU(s) ({})", options.node_name, gpus.size(), options.gpus);
  // Simulated GPUs also fail on purpose: `draplane agent inject-xid` (sim.h).
  if (Status s = backend->watch_injected_events(dir + "/health"); !s.ok()) {
    log->warn("injected GPU events: {}", s.to_string());
  }

  KubeletOptions ko;
  ko.node_name = options.node_name;
  ko.state_dir = dir;
  ko.cdi_dir = po.cdi_dir;
  ko.host_ip = options.host_ip;
  ko.max_grace_seconds = options.max_grace_seconds;
  const char* path = std::getenv("PATH");
  ko.base_env = {std::string("PATH=") + (path ? path : "/usr/local/bin:/usr/bin:/bin"), "HOME=/"};
  ko.clock = options.clock;
  ko.logger = log;
  const HealthMonitor* monitor = nullptr;  // the one below, set before the kubelet starts
  ko.device_health = [&monitor, node = options.node_name](const std::string& pool, const std::string& device) {
    return pool == node && monitor ? monitor->health(device) : std::string("Unknown");
  };
  PosixLauncher launcher;
  Kubelet kubelet(rest, *devices, launcher, ko);

  LogServer logs([&kubelet](const std::string& ns, const std::string& pod, const std::string& c, bool prev) {
    return kubelet.log_path(ns, pod, c, prev);
  });
  int log_port = 0;
  if (options.log_port >= 0) {
    ASSIGN_OR_RETURN(log_port, logs.start(options.host_ip, options.log_port));
    log->info("node {}: container logs on http://{}:{}/containerLogs/", options.node_name, options.host_ip, log_port);
  }

  NodeInfoOptions no;
  no.node_name = options.node_name;
  no.host_ip = options.host_ip;
  no.labels = options.labels;
  no.cpu = options.cpu;
  no.memory_bytes = options.memory_bytes;
  no.kubelet_port = log_port;
  Status st = retry(stop, *log, "register node", [&] { return register_node(rest, build_node(no, gpus, clock.rfc3339())); });
  if (!st.ok()) return st;
  st = retry(stop, *log, "device classes", [&] { return ensure_device_classes(rest, *log); });
  if (!st.ok()) return st;

  HealthMonitor health(*backend, gpus, options.dynamic_mig, clock);
  PoolPublisher publisher(rest, gpus, slice_options(options), health, *log);
  st = publisher.start(stop);
  if (!st.ok()) return st;

  monitor = &health;
  kubelet.start();
  std::thread health_thread([&] {
    while (!stop.load()) {
      if (publisher.poll_once(500)) kubelet.device_health_changed();  // pods' and claims' device health
    }
  });
  while (sleep_unless_stopped(stop, options.heartbeat_seconds * 1000)) {
    Status h = heartbeat_node(rest, build_node(no, gpus, clock.rfc3339()));
    if (!h.ok()) log->warn("node heartbeat: {}", h.to_string());
  }
  health_thread.join();
  publisher.stop();
  kubelet.stop();
  logs.stop();
  return {};
}

}  // namespace draplane::node
