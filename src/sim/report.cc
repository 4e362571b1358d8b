#include "sim/report.h"

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace draplane::sim {

std::string to_json(const FillResult& r, const std::string& trace) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  auto key = [&](const char* k) { w.Key(k); };
  w.StartObject();
  key("mode");
  w.String("fill");
  key("trace");
  w.String(trace.c_str(), static_cast<rapidjson::SizeType>(trace.size()));
  key("policy");
  w.String(r.policy.c_str(), static_cast<rapidjson::SizeType>(r.policy.size()));
  key("seed");
  w.Uint64(r.seed);
  key("tasks");
  w.Uint64(r.tasks);
  key("scheduled_tasks");
  w.Uint64(r.scheduled);
  key("failed_tasks");
  w.Uint64(r.failed);
  key("failed_gpu_tasks");
  w.Uint64(r.gpu_tasks_failed);
  key("gpu_capacity_milli");
  w.Int64(r.capacity_milli);
  key("arrived_gpu_milli");
  w.Int64(r.arrived_milli);
  key("allocated_gpu_milli");
  w.Int64(r.allocated_milli);
  key("gpu_allocation_ratio");
  w.Double(r.gpu_allocation_ratio);
  key("allocation_ratio_at_100");
  if (r.allocation_ratio_at_100 < 0) w.Null();
  else w.Double(r.allocation_ratio_at_100);
  key("fragmented_gpu_ratio");
  w.Double(r.fragmented_gpu_ratio);
  key("fragmentation_rate");
  w.Double(r.fragmentation_rate);
  key("allocator_calls");
  w.Int64(r.allocator_calls);
  key("seconds");
  w.Double(r.seconds);
  w.EndObject();
  return buf.GetString();
}

void write_curve_csv(std::ostream& out, const std::vector<FillResult>& runs) {
  out << "policy,seed,arrived_pct,allocated,fragmented,frag_rate\n";
  for (const auto& r : runs) {
    for (const auto& p : r.curve) {
      out << fmt::format("{},{},{},{:.6f},{:.6f},{:.6f}\n", r.policy, r.seed, p.arrived_pct, p.allocated,
                         p.fragmented, p.frag_rate);
    }
  }
}

void write_table(std::ostream& out, const std::vector<FillResult>& runs, const std::string& trace) {
  out << fmt::format("trace: {}\n", trace);
  out << fmt::format("{:<15} {:>5} {:>7} {:>7} {:>10} {:>10} {:>8} {:>8} {:>7}\n", "policy", "seed", "tasks",
                     "failed", "alloc@100%", "alloc@end", "frag", "frag/idle", "seconds");
  for (const auto& r : runs) {
    std::string at100 = r.allocation_ratio_at_100 < 0 ? "-" : fmt::format("{:.2f}%", 100 * r.allocation_ratio_at_100);
    out << fmt::format("{:<15} {:>5} {:>7} {:>7} {:>10} {:>9.2f}% {:>7.2f}% {:>7.2f}% {:>7.2f}\n", r.policy, r.seed,
                       r.tasks, r.failed, at100, 100 * r.gpu_allocation_ratio, 100 * r.fragmented_gpu_ratio,
                       100 * r.fragmentation_rate, r.seconds);
  }
}

}  // namespace draplane::sim
