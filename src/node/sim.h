// SimBackend: simulated GPUs for tests, `draplane up` and the simulator.
//
// GPUs come from the catalogue (catalogue.h) with identities derived from a
// seed: UUIDs and the NVLink clique's cluster UUID are hashes of (seed, index),
// PCI bus ids, PCIe roots and NUMA nodes follow the index like a DGX board, so a
// given (spec, seed) always yields the same inventory. MIG create/destroy only
// records state (overlaps are refused as NVML would); events are injected.
//
// Spec grammar (the part after "sim:"): `<count>x<model>[,<count>x<model>...]`,
// e.g. "8xH100", "4xA100-40GB,2xH200"; a bare model means one GPU. Models:
// gpu_model_names(). Minors and NVML indices run 0.. in spec order.
//
// Inventory file (YAML), for hand-written nodes:
//   driverVersion: "550.54.15"     # optional, default below
//   cudaDriverVersion: 12040       # optional
//   gpus:
//   - model: H100                  # required
//     count: 2                     # optional, default 1
//     numaNode: 1                  # optional overrides, applied to each GPU
//     cliqueID: "<uuid>.<n>"       # "" = not on a fabric
//     addressingMode: HMM
//     migCapable: false
//     productName: ...
//     uuid / pciBusID / pcieRoot / minor   # only with count 1
// Unknown fields are errors naming their path (gpus[1].numa: unknown field).
//
// Injected events (`draplane agent inject-xid`): once the agent calls
// watch_injected_events(<state dir>/health), that directory holds
//   gpus    "gpu-<minor> <uuid>" per GPU, written by the backend, so the command
//           can check and resolve --gpu without asking the agent;
//   events  one event per line, appended by the command and read by wait_event
//           from where it was when watching began (events written while no
//           agent watched are not replayed, as a GPU's are not):
//             xid <uuid> <code>    an XID error (nvmlEventTypeXidCriticalError)
//             gpu-lost <uuid>      NVML_ERROR_GPU_IS_LOST
//             recover <uuid>       the GPU was repaired: its health taints go
//           <uuid> "*" means every GPU of the node.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "node/gpu_backend.h"

namespace draplane::node {

struct SimOptions {
  uint64_t seed = 0;
  std::string driver_version = "550.54.15";
  int cuda_driver_version = 12040;
};

// Parses a spec ("8xH100", without the "sim:" prefix). Error kInvalid naming the
// offending item and listing the known models.
Result<std::vector<GpuInfo>> parse_sim_spec(std::string_view spec, const SimOptions& options);

// Parses an inventory document (YAML text). Error kInvalid with the field path.
Result<std::vector<GpuInfo>> parse_inventory(std::string_view yaml_text, const SimOptions& options);

// Reads and parses an inventory file. Error kNotFound when it cannot be read.
Result<std::vector<GpuInfo>> load_inventory_file(const std::string& path, const SimOptions& options);

inline constexpr const char* kInjectedEventsFile = "events";
inline constexpr const char* kInjectedGpusFile = "gpus";

// One line of the events file (no newline) and back. Parse errors are kInvalid
// naming the line.
std::string format_injected_event(const GpuEvent& event);
Result<GpuEvent> parse_injected_event(std::string_view line);

// The gpus file's text for `gpus`, and the UUID that `gpu` (a UUID, "gpu-<minor>"
// or "all", which gives "") names in such a text. Error kNotFound listing the
// GPUs there are.
std::string format_injected_gpus(const std::vector<GpuInfo>& gpus);
Result<std::string> resolve_injected_gpu(std::string_view gpus_text, std::string_view gpu);

// Appends one event line to <dir>/events (a single write, so lines from
// concurrent writers do not interleave). Error kUnavailable when it cannot.
Status append_injected_event(const std::string& dir, const GpuEvent& event);

class SimBackend final : public GpuBackend {
 public:
  explicit SimBackend(std::vector<GpuInfo> gpus, uint64_t seed = 0);

  std::string_view kind() const override { return "sim"; }
  Result<std::vector<GpuInfo>> discover() override;
  Result<MigInstance> create_mig_device(const std::string& parent_uuid, int profile_id,
                                        int placement_start) override;
  Status destroy_mig_device(const MigInstance& instance) override;
  Result<std::vector<MigInstance>> list_mig_devices(const std::string& parent_uuid) override;
  Result<std::optional<GpuEvent>> wait_event(int timeout_ms) override;
  Status watch_injected_events(const std::string& dir) override;

  // Test and simulator hooks.
  void inject_event(GpuEvent event);
  // Makes wait_event fail with kUnavailable (events cannot be registered).
  void set_events_unavailable(bool unavailable);
  // Makes the next create_mig_device fail with kUnavailable (fault injection).
  void fail_next_mig_create();

 private:
  const GpuInfo* find_gpu(const std::string& uuid) const;
  // Queues the complete lines appended to the events file since the last read.
  void read_injected_events();  // mu_ held

  const uint64_t seed_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<GpuInfo> gpus_;                           // guarded by mu_ (mig_enabled)
  std::map<std::string, std::vector<MigInstance>> mig_;  // parent uuid -> instances
  uint64_t mig_serial_ = 0;
  std::deque<GpuEvent> events_;
  bool events_unavailable_ = false;
  bool fail_next_create_ = false;
  std::string events_path_;   // "" = no injected events
  uint64_t events_offset_ = 0;  // bytes of the events file already read
};

}  // namespace draplane::node
