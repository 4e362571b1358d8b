// --mode e2e (formerly bench/cluster_bench.cc): the whole system in one
// process (cluster::LocalCluster: HTTPS API server, scheduler, claim
// controller, a simulated node agent and kubelet per node, first-fit), pods
// with one single-GPU claim template each that really run (`sleep 1`),
// created by `clients` threads and measured from creation to Running. As
// 20 pods per node do not fit on 8 GPUs at once, finished pods' claims must be
// released for the later pods to run. A reported figure with no peer: no
// other system measures the same path.
#include <algorithm>
#include <filesystem>

#include "api/codec.h"
#include "bench/check.h"
#include "bench/modes.h"
#include "client/informer.h"
#include "client/resource_path.h"
#include "cluster/local_cluster.h"

namespace draplane::bench {
namespace {

namespace res = client::resources;

constexpr const char* kTemplate = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate",
  "metadata":{"name":"one-gpu","namespace":"test"},
  "spec":{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}}})";

std::string pod_json(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"test"},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox",
    "command":["sleep","1"],"resources":{"claims":[{"name":"gpu"}]}}],
    "resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"one-gpu"}]}})";
}

Result<Report> measure(cluster::LocalCluster& c, const Options& options, int nodes, int pods) {
  auto admin = client::RestClient::create(c.admin_config());
  if (!admin.has_value()) return admin.error();
  if (auto r = (*admin)->post(res::kNamespaces.all(), R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"test"}})");
      !r.has_value()) {
    return r.error();
  }
  if (auto r = (*admin)->post(res::kResourceClaimTemplates.ns("test"), kTemplate); !r.has_value()) return r.error();

  Tracker tracker;
  client::Informer<api::Pod> informer(**admin, {"v1", "Pod", res::kPods.ns("test").str(), "", "", 1000, true, nullptr});
  informer.add_handler(
      [&](client::EventType type, const api::Pod*, const api::Pod& pod) {
        // A pod that ran its second before the agent reported it may go straight to Succeeded.
        if (type != client::EventType::kDeleted && (pod.status.phase == "Running" || pod.status.phase == "Succeeded")) {
          tracker.bound(pod_key(pod));
        }
      });
  informer.start();
  if (!informer.wait_synced(30000)) return Status(Code::kUnavailable, "the pod informer did not sync");

  std::vector<std::string> keys;
  for (int i = 0; i < pods; ++i) keys.push_back("test/p-" + std::to_string(i));
  const auto start = Clock::now();
  const double cpu_start = cpu_seconds();
  auto created = parallel_requests(c.admin_config(), options.clients, keys.size(),
                                   [&](client::RestClient& rest, size_t i) -> Result<void> {
                                     tracker.created(keys[i]);
                                     auto r = rest.post(res::kPods.ns("test"), pod_json("p-" + std::to_string(i)));
                                     if (!r.has_value()) return r.error();
                                     return {};
                                   });
  if (!created.has_value()) return created.error();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.timeout_s));
  if (!tracker.wait(keys, deadline)) return Status(Code::kDeadlineExceeded, "not every pod ran before the timeout");
  const double cpu_used = cpu_seconds() - cpu_start;
  informer.stop();

  Report rep;
  rep.cpu_ms_per_pod = 1000 * cpu_used / pods;
  rep.workload = "e2e";
  rep.mode = "e2e";
  rep.store = options.store;
  rep.nodes = nodes;
  rep.devices = nodes * 8;
  auto times = tracker.snapshot();
  std::vector<double> at, lat;
  for (const auto& k : keys) {
    const auto& t = times[k];
    ++rep.bound;
    at.push_back(std::chrono::duration<double>(t.bound - start).count());
    lat.push_back(std::chrono::duration<double, std::milli>(t.bound - t.created).count());
  }
  std::sort(lat.begin(), lat.end());
  rep.pods = pods;
  rep.seconds = *std::max_element(at.begin(), at.end());
  rep.throughput = sample_throughput(at);
  rep.pods_per_second = rep.seconds > 0 ? rep.bound / rep.seconds : 0;
  rep.p50_ms = percentile(lat, 50);
  rep.p99_ms = percentile(lat, 99);
  rep.note = "pods/s here is the overall rate, creation to Running; latency is creation to Running";

  // No device in two allocations among the claims left.
  client::Informer<api::ResourceClaim> claims(
      **admin, {"resource.k8s.io/v1", "ResourceClaim", res::kResourceClaims.all().str(), "", "", 1000, true, nullptr});
  claims.start();
  if (!claims.wait_synced(30000)) return Status(Code::kUnavailable, "listing claims for the check failed");
  Expectation none;
  none.measured_namespace = "-";
  auto errors = check_state({}, claims.list(), none);
  claims.stop();
  if (!errors.empty()) return Status(Code::kInternal, "wrong result: " + errors.front());
  rep.peak_rss_mb = peak_rss_mb();
  return rep;
}

}  // namespace

Result<Report> run_e2e(const Options& options) {
  const int nodes = options.nodes > 0 ? options.nodes : 100;
  const int pods = nodes * 20;
  bool temp = false;
  const std::string dir = run_data_dir(options, "draplane-bench-e2e", &temp);
  cluster::LocalClusterOptions o;
  o.data_dir = dir;
  o.listen = "127.0.0.1:0";
  o.policy = "first-fit";
  o.store = options.store;
  for (int i = 1; i <= nodes; ++i) o.nodes.push_back({"node-" + std::to_string(i), "sim:8xH100"});
  auto c = cluster::LocalCluster::start(o);
  if (!c.has_value()) return c.error();
  Result<Report> rep = Status(Code::kUnavailable, "the nodes did not become ready");
  if (auto r = (*c)->wait_nodes_ready(300000); r.has_value()) rep = measure(**c, options, nodes, pods);
  (*c)->stop();
  if (temp) std::filesystem::remove_all(dir);
  return rep;
}

}  // namespace draplane::bench
