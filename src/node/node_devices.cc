#include "node/node_devices.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

namespace draplane::node {

bool sleep_unless_stopped(const std::atomic<bool>& stop, int ms) {
  for (int waited = 0; waited < ms && !stop.load(); waited += 50) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return !stop.load();
}

Status retry(const std::atomic<bool>& stop, spdlog::logger& log, const char* what, const std::function<Status()>& op) {
  int backoff = 100;
  while (true) {
    Status st = op();
    if (st.ok() || st.code() == Code::kInvalid) return st;
    log.warn("{}: {} (retrying)", what, st.to_string());
    if (!sleep_unless_stopped(stop, backoff)) return st;
    backoff = std::min(backoff * 2, 5000);
  }
}

uint64_t node_seed(const std::string& name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across runs and builds
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

Result<NodeDevices> open_node_devices(const std::string& gpus_flag, const PrepareOptions& options,
                                      const std::string& boot_id) {
  std::error_code ec;
  for (const std::string& d : {options.cdi_dir, options.plugin_dir}) {
    std::filesystem::create_directories(d, ec);
    if (ec) return Status(Code::kInternal, "create " + d + ": " + ec.message());
  }
  NodeDevices n;
  ASSIGN_OR_RETURN(n.backend, make_backend(gpus_flag, node_seed(options.node_name)));
  if (n.backend->kind() == "sim") {
    n.runner = std::make_unique<RecordingRunner>();
  } else {
    n.runner = std::make_unique<ProcessRunner>();
  }
  ASSIGN_OR_RETURN(n.devices, DeviceState::create(*n.backend, *n.runner, options, boot_id));
  return n;
}

}  // namespace draplane::node
