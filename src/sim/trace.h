// The Alibaba GPU cluster trace (cluster-trace-gpu-v2023, "openb"), as the FGD
// paper (USENIX ATC'23) publishes it: a node list and a task list, CSV.
//
// Nodes: sn,cpu_milli,memory_mib,gpu,model. Tasks:
// name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,qos,pod_phase,
// creation_time,deletion_time,scheduled_time]; columns are found by header name,
// so the shorter files (multigpu50 has the first five only) load too.
// gpu_milli is the share of ONE GPU each of the num_gpu GPUs gets (1000 = whole);
// gpu_spec lists allowed models separated by '|' (empty: any).
//
// Errors name the file, the line and the column, and why.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace draplane::sim {

struct NodeSpec {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpus = 0;
  std::string model;  // empty for CPU-only nodes
};

struct TaskSpec {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int64_t gpu_milli = 0;            // per GPU, 0..1000; 0 when num_gpu == 0
  std::vector<std::string> models;  // allowed GPU models; empty = any
  std::optional<int64_t> creation_time, deletion_time;  // seconds, when the file has them

  // GPU milli the task asks for in all (num_gpu * gpu_milli).
  int64_t total_gpu_milli() const { return num_gpu * gpu_milli; }
  // A share of one GPU (the rest of that GPU stays usable by others).
  bool shares_gpu() const { return num_gpu == 1 && gpu_milli < 1000; }
};

Result<std::vector<NodeSpec>> load_nodes(const std::string& path);
Result<std::vector<TaskSpec>> load_tasks(const std::string& path);

// Folder of the shipped trace: $DRAPLANE_DATA_DIR/openb when set, else
// ../shared/data/openb beside the source tree this binary was built from, else
// ../shared/data/openb from the current directory (a repository root).
std::string default_trace_dir();
// "default", "gpushare100", ... -> <dir>/openb_pod_list_<name>.csv; anything
// with a '/' or ending in .csv is a path and returned as is.
std::string resolve_task_file(const std::string& trace, const std::string& dir);
// The GPU node list of the trace folder.
std::string default_node_file(const std::string& dir);

}  // namespace draplane::sim
