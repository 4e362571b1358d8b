// `draplane bench`: runs one workload (workloads.h) in one mode and measures
// it as scheduler_perf does.
//
//   inprocess  the scheduler (sched::Scheduler with its allocator) on an
//              in-memory object store with resourceVersion preconditions; the
//              claim controller's template -> claim step (controllers::
//              claim_from_template) runs where the pod is created. No HTTP.
//   api        a whole `draplane server` (cluster::LocalCluster: HTTPS, SQLite
//              or memory store, scheduler and claim controller as in
//              production), objects created through the API, measured pods
//              created by `clients` concurrent REST clients, bound seen
//              through a pod watch. No kubelets.
//   e2e        the full system with simulated nodes and their kubelets
//              (formerly bench/cluster_bench): pods run to completion.
//
// Every run ends with a check of the final state (check.h); a wrong result is
// an error, not a figure.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/result.h"

namespace draplane::bench {

struct Options {
  std::string workload;
  int nodes = 0;  // 0: the workload's default
  int devices = 0;  // devices per node of the template workloads; 0: theirs (10)
  std::string policy;  // inprocess: the scheduler's --policy ("": its default)
  std::string mode = "inprocess";  // inprocess | api | e2e
  std::string store = "sqlite";    // api / e2e: sqlite | memory
  double duration_s = 10;          // SteadyState variants
  int clients = 8;                 // api: concurrent pod creators
  double timeout_s = 600;          // the measured phase fails beyond this
  std::string data_dir;            // api / e2e: default a temporary dir
};

// scheduler_perf's SchedulingThroughput: pods bound per 1 s sample (the first
// sample after the first bound pod skipped, empty intervals merged into the
// next one), its average and percentiles.
struct Throughput {
  double average = 0, p50 = 0, p90 = 0, p99 = 0;
  int samples = 0;
};

struct Report {
  std::string workload, mode, store;
  int nodes = 0, devices = 0;
  int pods = 0;            // measured pods created
  int bound = 0;           // of those, bound
  int unschedulable = 0;   // of those, reported Unschedulable at the end
  double seconds = 0;      // first measured create to last bind
  double pods_per_second = 0;  // SchedulingThroughput average (overall rate when there was no sample)
  Throughput throughput;
  double p50_ms = 0, p99_ms = 0;  // per pod, creation to bound
  int64_t allocator_calls = -1;   // -1: not known in this mode
  double peak_rss_mb = 0;
  // CPU (user + system, the whole process: server and clients too in api
  // mode) per measured pod: steadier than pods/s on a loaded machine.
  double cpu_ms_per_pod = 0;
  // api mode: API requests (not watches or lists) during the measured phase
  // per measured pod, whoever made them; -1 elsewhere.
  double api_requests_per_pod = -1;
  std::string note;
  std::string scheduler;  // inprocess: the scheduler's counters
};

Result<Report> run(const Options& options);

// Scale curves (`draplane bench --scale`): the workload of `base` (default
// SteadyStateClusterResourceClaimTemplate/empty) at each node count with the
// default devices per node, then at `base_nodes` nodes with each devices-per-node
// count. `axis` says which sweep a point belongs to ("nodes" or "devices").
struct ScalePoint {
  std::string axis;
  Report report;
};
Result<std::vector<ScalePoint>> run_scale(Options base, const std::vector<int>& nodes, const std::vector<int>& devices,
                                          int base_nodes, const std::function<void(const ScalePoint&)>& progress);
// axis,nodes,devices_per_node,devices,pods,cpu_ms_per_pod,allocator_calls_per_pod,pods_per_second,p50_ms,p99_ms,peak_rss_mb
std::string scale_csv(const std::vector<ScalePoint>& points);

// One line per workload: name, default nodes, summary, upstream config.
std::string list_text();
std::string table_text(const Report& r);
std::string json_text(const Report& r);

// --- pieces shared by the modes (and tests) ---

// SchedulingThroughput from bind times (seconds since the measured phase
// started, any order), sampled every `interval_s` as scheduler_perf's
// throughputCollector does.
Throughput sample_throughput(std::vector<double> bound_at_s, double interval_s = 1.0);
// Nearest-rank percentile of sorted values (0 when empty).
double percentile(const std::vector<double>& sorted, double p);
// The process's peak resident set so far, MiB.
double peak_rss_mb();
// The process's CPU time so far (user + system), seconds.
double cpu_seconds();

}  // namespace draplane::bench
