// What both front ends of the node driver (`draplane agent`, `draplane driver`)
// and `draplane agent prepare` share to open a node's GPUs: the backend from
// --gpus, the command runner and the DeviceState with its checkpoint; and the
// stop-aware sleep and retry of their loops.
//
// Thread-safety: the functions keep no state.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "common/result.h"
#include "node/command_runner.h"
#include "node/gpu_backend.h"
#include "node/prepare.h"

namespace draplane::node {

// Sleeps up to `ms`, returning early when stop is set; false when stopped.
bool sleep_unless_stopped(const std::atomic<bool>& stop, int ms);

// Retries `op` with backoff (100 ms doubling to 5 s) until it succeeds, fails
// with kInvalid, or stop.
Status retry(const std::atomic<bool>& stop, spdlog::logger& log, const char* what, const std::function<Status()>& op);

// The seed of a node's simulated GPU identities (make_backend): a stable hash of
// the node name, so nodes differ and a restart keeps its UUIDs.
uint64_t node_seed(const std::string& node_name);

// A node's GPUs and prepare state, as every front end opens them: the backend
// from --gpus (simulated identities seeded by the node name), the command
// runner (recording for simulated GPUs, which have no nvidia-smi), and the
// DeviceState with its checkpoint under options.plugin_dir. Members are
// destroyed devices first.
struct NodeDevices {
  std::unique_ptr<GpuBackend> backend;
  std::unique_ptr<CommandRunner> runner;
  std::unique_ptr<DeviceState> devices;
};
// Creates options.cdi_dir and options.plugin_dir when missing. Errors: kInvalid
// for --gpus, discovery and checkpoint errors, kInternal for the directories.
Result<NodeDevices> open_node_devices(const std::string& gpus_flag, const PrepareOptions& options,
                                      const std::string& boot_id);

}  // namespace draplane::node
