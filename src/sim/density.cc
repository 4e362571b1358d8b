#include "sim/density.h"

#include <algorithm>
#include <iomanip>
#include <map>

#include "sim/simulator.h"

namespace draplane::sim {
namespace {

constexpr int64_t kGiB = 1024;  // MiB
constexpr const char* kModel = "NVIDIA H100 80GB HBM3";

struct MigProfile {
  const char* name;
  double gib;
  int per_gpu;
};
// H100 80GB, smallest instance first (SPEC §4; the +me variant is one per GPU).
constexpr MigProfile kMig[] = {{"1g.10gb", 9.75, 7}, {"1g.20gb", 19.62, 4}, {"3g.40gb", 39.50, 2}, {"7g.80gb", 79.25, 1}};

int32_t share_of(int per_gpu) { return per_gpu <= 0 ? 0 : static_cast<int32_t>(kMilli / per_gpu); }

int32_t mig_milli(int gib) {
  for (const auto& p : kMig) {
    if (p.gib >= gib) return share_of(p.per_gpu);
  }
  return 0;
}

int32_t mps_milli(int64_t gib, int64_t gpu_mib) {
  return static_cast<int32_t>((gib * kGiB * kMilli + gpu_mib - 1) / gpu_mib);
}

TaskSpec pod_task(size_t i, int32_t milli) {
  TaskSpec t;
  t.name = "pod-" + std::to_string(i);
  t.cpu_milli = 1000;
  t.memory_mib = 4 * kGiB;
  t.num_gpu = 1;
  t.gpu_milli = milli;
  return t;
}

}  // namespace

Result<std::vector<DensityRow>> density(const DensityOptions& o) {
  if (o.min_gib < 1 || o.max_gib < o.min_gib) return invalid_error("pod sizes: need 1 <= min <= max GiB");
  std::vector<NodeSpec> nodes;
  for (int n = 0; n < o.nodes; ++n) {
    nodes.push_back(NodeSpec{"h100-" + std::to_string(n), 1'000'000, 16 * 1024 * kGiB, o.gpus_per_node, kModel});
  }
  const int gpus = o.nodes * o.gpus_per_node;
  // The mix: sizes uniform over min..max GiB, the same draw for every mode.
  Rng rng(o.seed);
  std::vector<int> mix(static_cast<size_t>(o.mix_pods));
  for (int& g : mix) g = o.min_gib + static_cast<int>(rng.below(static_cast<uint64_t>(o.max_gib - o.min_gib + 1)));

  std::vector<DensityRow> rows;
  const char* modes[] = {"whole", "mig", "time-slicing", "mps"};
  for (const char* mode : modes) {
    const std::string m = mode;
    for (int size = o.min_gib; size <= o.max_gib + 1; ++size) {
      const bool is_mix = size > o.max_gib;
      std::vector<int> sizes = is_mix ? mix : std::vector<int>(static_cast<size_t>(gpus) * kMilli, size);
      const int largest = *std::max_element(sizes.begin(), sizes.end());
      std::vector<TaskSpec> tasks;
      tasks.reserve(sizes.size());
      for (size_t i = 0; i < sizes.size(); ++i) {
        int32_t milli = kMilli;
        if (m == "mig") milli = mig_milli(sizes[i]);
        if (m == "time-slicing") milli = share_of(static_cast<int>(o.gpu_memory_mib / (largest * kGiB)));
        if (m == "mps") milli = mps_milli(sizes[i], o.gpu_memory_mib);
        if (milli <= 0 || milli > kMilli) return invalid_error(std::to_string(sizes[i]) + " GiB does not fit one GPU");
        tasks.push_back(pod_task(i, milli));
      }
      FillOptions fo;
      fo.policy = o.policy;
      fo.seed = o.seed;
      fo.in_trace_order = true;
      fo.stop_at_first_failure = true;
      ASSIGN_OR_RETURN(FillResult r, run_fill(nodes, tasks, fo));
      rows.push_back(DensityRow{m, is_mix ? "mix" : std::to_string(size), r.scheduled, gpus});
    }
  }
  return rows;
}

void write_density(std::ostream& out, const std::vector<DensityRow>& rows, bool json) {
  if (json) {
    for (const auto& r : rows) {
      out << "{\"sharing\":\"" << r.sharing << "\",\"pod_gib\":\"" << r.pod << "\",\"pods\":" << r.pods
          << ",\"gpus\":" << r.gpus << ",\"pods_per_gpu\":" << std::fixed << std::setprecision(2)
          << static_cast<double>(r.pods) / std::max(1, r.gpus) << "}\n";
    }
    return;
  }
  std::vector<std::string> sizes;
  std::map<std::string, std::map<std::string, size_t>> table;
  std::vector<std::string> modes;
  for (const auto& r : rows) {
    if (std::find(sizes.begin(), sizes.end(), r.pod) == sizes.end()) sizes.push_back(r.pod);
    if (std::find(modes.begin(), modes.end(), r.sharing) == modes.end()) modes.push_back(r.sharing);
    table[r.sharing][r.pod] = r.pods;
  }
  out << "pods that fit on " << (rows.empty() ? 0 : rows.front().gpus) << " H100 80GB, by GPU memory per pod (GiB)\n";
  out << std::left << std::setw(14) << "sharing";
  for (const auto& s : sizes) out << std::right << std::setw(6) << s;
  out << "\n";
  for (const auto& m : modes) {
    out << std::left << std::setw(14) << m;
    for (const auto& s : sizes) out << std::right << std::setw(6) << table[m][s];
    out << "\n";
  }
}

}  // namespace draplane::sim
