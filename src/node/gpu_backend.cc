#include "node/gpu_backend.h"

#include <filesystem>

#include <fmt/format.h>

#include "node/nvml.h"
#include "node/sim.h"

namespace draplane::node {

Result<std::unique_ptr<GpuBackend>> make_backend(std::string_view gpus_flag, uint64_t seed) {
  if (gpus_flag == "nvml" || gpus_flag.starts_with("nvml:")) {
    ASSIGN_OR_RETURN(std::unique_ptr<NvmlBackend> b, NvmlBackend::open(nvml_options(gpus_flag)));
    return std::unique_ptr<GpuBackend>(std::move(b));
  }
  std::string_view spec = gpus_flag;
  if (spec.substr(0, 4) == "sim:") spec.remove_prefix(4);
  SimOptions options;
  options.seed = seed;
  std::string path(spec);
  std::error_code ec;
  bool is_file = spec.find('/') != std::string_view::npos || spec.ends_with(".yaml") || spec.ends_with(".yml") ||
                 std::filesystem::is_regular_file(path, ec);
  Result<std::vector<GpuInfo>> gpus = is_file ? load_inventory_file(path, options) : parse_sim_spec(spec, options);
  if (!gpus) return invalid_error(fmt::format("--gpus {}: {}", gpus_flag, gpus.error().message()));
  return std::unique_ptr<GpuBackend>(std::make_unique<SimBackend>(std::move(*gpus), seed));
}

}  // namespace draplane::node
