#include "sim/report.h"

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>
#include <map>
#include <variant>

namespace draplane::sim {

std::string to_json(const FillResult& r, const std::string& trace) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  auto text = [&](const char* key, const std::string& value) {
    w.Key(key);
    w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
  };
  w.StartObject();
  text("mode", r.mode);
  text("trace", trace);
  text("policy", r.policy);
  // Counts are integers, ratios fractions of 1; allocation_ratio_at_100 is
  // null when arrivals never reached 100% (and in replay), the mean and peak
  // null in fill mode.
  using Number = std::variant<int64_t, double>;
  const std::pair<const char*, Number> numbers[] = {
      {"seed", static_cast<int64_t>(r.seed)},
      {"tasks", static_cast<int64_t>(r.tasks)},
      {"scheduled_tasks", static_cast<int64_t>(r.scheduled)},
      {"failed_tasks", static_cast<int64_t>(r.failed)},
      {"failed_gpu_tasks", static_cast<int64_t>(r.gpu_tasks_failed)},
      {"gpu_capacity_milli", r.capacity_milli},
      {"arrived_gpu_milli", r.arrived_milli},
      {"allocated_gpu_milli", r.allocated_milli},
      {"allocator_calls", r.allocator_calls},
      {"gpu_allocation_ratio", r.gpu_allocation_ratio},
      {"allocation_ratio_at_100", r.allocation_ratio_at_100},
      {"fragmented_gpu_ratio", r.fragmented_gpu_ratio},
      {"fragmentation_rate", r.fragmentation_rate},
      {"mean_allocation_ratio", r.mean_allocation_ratio},
      {"peak_allocation_ratio", r.peak_allocation_ratio},
      {"seconds", r.seconds},
  };
  for (const auto& [key, value] : numbers) {
    w.Key(key);
    if (const auto* i = std::get_if<int64_t>(&value)) w.Int64(*i);
    else if (std::get<double>(value) < 0) w.Null();
    else w.Double(std::get<double>(value));
  }
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

namespace {

// first-fit is what Kubernetes does today; say so under a table that has it.
void label_kubernetes_default(std::ostream& out, const std::vector<FillResult>& runs) {
  for (const auto& r : runs) {
    if (r.policy == "first-fit") {
      out << "first-fit: Kubernetes' default (the DRA allocator's first fit, nodes unscored)\n";
      return;
    }
  }
}

}  // namespace

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
  label_kubernetes_default(out, runs);
}

namespace {

// "mean ± sd" in percent of values that are fractions of 1 (population sd, as the paper's tables).
std::string mean_sd(const std::vector<double>& v) {
  if (v.empty()) return "-";
  double mean = 0, var = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(v.size());
  return fmt::format("{:.2f} ± {:.2f}", 100 * mean, 100 * std::sqrt(var));
}

}  // namespace

void write_summary(std::ostream& out, const std::vector<FillResult>& runs, const std::string& trace) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const FillResult*>> by_policy;
  for (const auto& r : runs) {
    if (!by_policy.count(r.policy)) order.push_back(r.policy);
    by_policy[r.policy].push_back(&r);
  }
  out << fmt::format("trace: {}\n", trace);
  out << fmt::format("{:<15} {:>5} {:>15} {:>15} {:>15} {:>8}\n", "policy", "seeds", "alloc@100% (%)",
                     "alloc@end (%)", "frag (%)", "seconds");
  for (const auto& policy : order) {
    std::vector<double> at100, end, frag;
    double seconds = 0;
    for (const FillResult* r : by_policy[policy]) {
      if (r->allocation_ratio_at_100 >= 0) at100.push_back(r->allocation_ratio_at_100);
      end.push_back(r->gpu_allocation_ratio);
      frag.push_back(r->fragmented_gpu_ratio);
      seconds += r->seconds;
    }
    size_t n = by_policy[policy].size();
    out << fmt::format("{:<15} {:>5} {:>15} {:>15} {:>15} {:>8.2f}\n", policy, n, mean_sd(at100), mean_sd(end),
                       mean_sd(frag), seconds / static_cast<double>(n));
  }
  label_kubernetes_default(out, runs);
}

}  // namespace draplane::sim
