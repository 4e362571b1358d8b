// What the node agent publishes about its node, and how it writes it:
// - the Node object (labels, capacity/allocatable incl. pods: 110, Ready
//   condition with heartbeat time, InternalIP/Hostname addresses, nodeInfo and
//   daemonEndpoints.kubeletEndpoint.Port = the agent's log endpoint);
// - the pool's ResourceSlices (slices.h build_slices), kept equal to what
//   is published: unchanged slices are left alone; any change (inventory,
//   taints, slice count) republishes every slice with generation + 1, creating,
//   updating and deleting slices to match (as the upstream resourceslice
//   controller does);
// - the DeviceClasses gpu.nvidia.com and mig.nvidia.com when missing.
//
// build_node and plan_slices are pure; the others talk to the API server.
// Thread-safety: free functions without shared state.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "api/types.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "common/result.h"
#include "node/gpu_info.h"
#include "node/slices.h"

namespace draplane::node {

struct NodeInfoOptions {
  std::string node_name;
  std::string host_ip = "127.0.0.1";
  std::map<std::string, std::string> labels;  // added to (and override) the defaults
  int64_t cpu = 0;                            // cores; 0 = this machine's
  int64_t memory_bytes = 0;                   // 0 = this machine's
  int kubelet_port = 0;                       // log endpoint; 0 = none
  std::string version = "v1.36.0-draplane";
};

// The Node with status at time `now` (RFC 3339).
api::Node build_node(const NodeInfoOptions& options, const std::vector<GpuInfo>& gpus, const std::string& now);

// Creates the Node or updates its labels and status. Errors from the API server.
Status register_node(client::RestClient& rest, const api::Node& node);
// Refreshes the Ready condition's heartbeat (re-registers a deleted Node).
Status heartbeat_node(client::RestClient& rest, const api::Node& node);

struct SlicePlan {
  int64_t generation = 0;
  std::vector<api::ResourceSlice> create, update;  // update carries resourceVersion
  std::vector<std::string> remove;                 // slice names
  bool empty() const { return create.empty() && update.empty() && remove.empty(); }
};

// `build(generation)` builds the desired slices; `existing` are the slices of
// this pool now. Nothing to do when they match at the current generation.
SlicePlan plan_slices(const std::vector<api::ResourceSlice>& existing,
                      const std::function<Result<std::vector<api::ResourceSlice>>(int64_t)>& build,
                      Status* error);

// The informer options of the node's ResourceSlices: those with spec.nodeName
// set to the node, the only ones a node may list and watch.
client::RawInformer::Options slice_informer(const std::string& node_name);

// The informer options of the DeviceClasses, all of them: their selectors and
// config decide which devices the agent publishes as shared (class_sharing).
client::RawInformer::Options class_informer();

// `options` with the per-device sharing `classes` ask for (slices.h
// class_sharing). When the --consumable-shares flag is set it decides alone and
// `options` comes back as is. Classes skipped or passed over are appended to
// `warnings`; errors building the plain pool too (the sharing is then empty).
SliceOptions with_class_sharing(SliceOptions options, const std::vector<GpuInfo>& gpus,
                                const std::vector<api::DeviceClass>& classes, std::vector<std::string>& warnings);

// Lists the pool's slices, plans and applies. Errors from building or the API.
Status publish_slices(client::RestClient& rest, const std::vector<GpuInfo>& gpus, const SliceOptions& options,
                      spdlog::logger& log);

// Creates the driver's DeviceClasses that do not exist. A node identity may not
// create classes (NodeRestriction): Forbidden is logged and not an error.
Status ensure_device_classes(client::RestClient& rest, spdlog::logger& log);

}  // namespace draplane::node
