// Scale curves: one workload run per cluster size, in one process, one after
// the other (peak RSS is the process's, so it only grows along a sweep).
#include <fmt/format.h>

#include "bench/bench.h"

namespace draplane::bench {

Result<std::vector<ScalePoint>> run_scale(Options base, const std::vector<int>& nodes, const std::vector<int>& devices,
                                          int base_nodes, const std::function<void(const ScalePoint&)>& progress) {
  if (base.workload.empty()) base.workload = "SteadyStateClusterResourceClaimTemplate/empty";
  std::vector<ScalePoint> out;
  auto one = [&](const std::string& axis, int n, int d) -> Result<void> {
    Options o = base;
    o.nodes = n;
    o.devices = d;
    auto r = run(o);
    if (!r.has_value()) {
      return Status(r.error().code(), fmt::format("{} nodes x {} devices: {}", n, d, r.error().message()));
    }
    out.push_back(ScalePoint{axis, std::move(*r)});
    if (progress) progress(out.back());
    return {};
  };
  for (int n : nodes) RETURN_IF_ERROR(one("nodes", n, 0));
  for (int d : devices) RETURN_IF_ERROR(one("devices", base_nodes, d));
  return out;
}

std::string scale_csv(const std::vector<ScalePoint>& points) {
  std::string csv =
      "axis,nodes,devices_per_node,devices,pods,cpu_ms_per_pod,allocator_calls_per_pod,pods_per_second,p50_ms,p99_ms,"
      "peak_rss_mb\n";
  for (const auto& p : points) {
    const Report& r = p.report;
    const int per_node = r.nodes > 0 ? r.devices / r.nodes : 0;
    const double calls = r.pods > 0 && r.allocator_calls >= 0 ? static_cast<double>(r.allocator_calls) / r.pods : -1;
    csv += fmt::format("{},{},{},{},{},{:.3f},{:.1f},{:.1f},{:.2f},{:.2f},{:.0f}\n", p.axis, r.nodes, per_node,
                       r.devices, r.pods, r.cpu_ms_per_pod, calls, r.pods_per_second, r.p50_ms, r.p99_ms,
                       r.peak_rss_mb);
  }
  return csv;
}

}  // namespace draplane::bench
