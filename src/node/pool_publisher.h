// PoolPublisher: keeps the node's pool of ResourceSlices published, for both
// front ends of the node driver (`draplane agent` and `draplane driver`).
//  - start(): watches the DeviceClasses (their config decides which GPUs are
//    published as shared, slices.h class_sharing; not with --consumable-shares,
//    which decides alone), publishes the slices (retrying until it works or
//    stop), then watches the pool's slices;
//  - poll_once(): waits for one GPU health event (HealthMonitor) and publishes
//    again when the taints changed, or when someone else changed or deleted the
//    slices or a DeviceClass changed (as the upstream resourceslice controller
//    puts them back; a no-op when they are as they should be, so the
//    publisher's own writes settle).
//
// Thread-safety: start() and stop() from one thread; poll_once() from one
// thread (the caller's loop).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "client/informer.h"
#include "client/rest_client.h"
#include "common/result.h"
#include "node/gpu_info.h"
#include "node/gpu_backend.h"
#include "node/health.h"
#include "node/slices.h"

namespace draplane::node {

class PoolPublisher {
 public:
  // `health` gives the taints; it must outlive the publisher.
  PoolPublisher(client::RestClient& rest, std::vector<GpuInfo> gpus, SliceOptions options, HealthMonitor& health,
                spdlog::logger& log);
  ~PoolPublisher();

  // See above. Errors: the last publish error when stopped before it worked,
  // kInvalid from building the slices.
  Status start(const std::atomic<bool>& stop);

  // See above. Returns true when the health taints changed.
  bool poll_once(int timeout_ms);

  // Stops the watches. Idempotent.
  void stop();

 private:
  SliceOptions desired();

  client::RestClient& rest_;
  const std::vector<GpuInfo> gpus_;
  const SliceOptions options_;
  HealthMonitor& health_;
  spdlog::logger& log_;
  std::atomic<bool> republish_{false};
  client::Informer<api::DeviceClass> classes_;
  std::unique_ptr<client::RawInformer> slices_;
  std::string last_sharing_;
};

}  // namespace draplane::node
