#include "node/catalogue.h"

#include <array>
#include <cctype>

namespace draplane::node {
namespace {

// NVML_GPU_INSTANCE_PROFILE_* indices (argument of nvmlDeviceGetGpuInstanceProfileInfo).
constexpr int k1Slice = 0, k2Slice = 1, k3Slice = 2, k4Slice = 3, k7Slice = 4, k1SliceRev1 = 7,
              k1SliceRev2 = 9;

std::vector<MigPlacement> placements(std::initializer_list<int> starts, int size) {
  std::vector<MigPlacement> out;
  for (int s : starts) out.push_back({s, size});
  return out;
}

// Engines of one MIG profile: multiprocessors, decoders, copy engines, JPEG, OFA.
struct Engines {
  int sm, dec, ce, jpeg, ofa;
};

// Per architecture, the engines of its seven profiles in the order
// 1g, 1g+me, 1g x2, 2g, 3g, 4g, 7g (SPEC §4 tables). H100 80GB and H200
// share Hopper's; memory differs per model.
using ArchEngines = std::array<Engines, 7>;
constexpr ArchEngines kHopper = {
    {{16, 1, 1, 1, 0}, {16, 1, 1, 1, 1}, {26, 1, 1, 1, 0}, {32, 2, 2, 2, 0}, {60, 3, 3, 3, 0}, {64, 4, 4, 4, 0},
     {132, 7, 8, 7, 1}}};
constexpr ArchEngines kAmpere = {
    {{14, 0, 1, 0, 0}, {14, 1, 1, 1, 1}, {14, 1, 1, 0, 0}, {28, 1, 2, 0, 0}, {42, 2, 3, 0, 0}, {56, 2, 4, 0, 0},
     {98, 5, 7, 1, 1}}};

MigProfile profile(const char* name, int index, int id, int slices, int max, int64_t mib, const Engines& e,
                   std::vector<MigPlacement> placements) {
  MigProfile p;
  p.name = name;
  p.profile_index = index;
  p.id = id;
  p.slice_count = slices;
  p.instance_count = max;
  p.memory_mib = mib;
  p.multiprocessors = e.sm;
  p.decoders = e.dec;
  p.copy_engines = e.ce;
  p.jpeg_engines = e.jpeg;
  p.ofa_engines = e.ofa;
  p.encoders = 0;  // none of these data-centre parts has NVENC in a MIG instance
  p.placements = std::move(placements);
  return p;
}

// The seven profiles of a 7-slice part: `names` in the order of ArchEngines,
// memory of 1, 2, 4 and 8 eighths in MiB (GiB values as nvidia-smi prints
// them, i.e. MiB / 1024 rounded to 2 places).
std::vector<MigProfile> mig_profiles(const ArchEngines& e, const std::array<const char*, 7>& names, int64_t m1,
                                     int64_t m2, int64_t m4, int64_t m8) {
  const auto all7 = placements({0, 1, 2, 3, 4, 5, 6}, 1);
  return {
      profile(names[0], k1Slice, 19, 1, 7, m1, e[0], all7),
      // +me: NVML lists every 1-slice placement; the single OFA engine limits it to one.
      profile(names[1], k1SliceRev1, 20, 1, 1, m1, e[1], all7),
      profile(names[2], k1SliceRev2, 15, 1, 4, m2, e[2], placements({0, 2, 4, 6}, 2)),
      profile(names[3], k2Slice, 14, 2, 3, m2, e[3], placements({0, 2, 4}, 2)),
      profile(names[4], k3Slice, 9, 3, 2, m4, e[4], placements({0, 4}, 4)),
      profile(names[5], k4Slice, 5, 4, 1, m4, e[5], placements({0}, 4)),
      profile(names[6], k7Slice, 0, 7, 1, m8, e[6], placements({0}, 8)),
  };
}

std::vector<GpuModel> build() {
  std::vector<GpuModel> models;
  models.push_back({"H100-80GB", {"H100"}, "NVIDIA H100 80GB HBM3", "Nvidia", "Hopper", 9, 0, 81559, true,
                    mig_profiles(kHopper, {"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"},
                                 9984, 20096, 40448, 81152)});
  models.push_back({"H200-141GB", {"H200"}, "NVIDIA H200", "Nvidia", "Hopper", 9, 0, 143771, true,
                    mig_profiles(kHopper, {"1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"},
                                 16384, 33024, 71168, 143104)});
  models.push_back({"A100-40GB", {"A100-SXM4-40GB"}, "NVIDIA A100-SXM4-40GB", "Nvidia", "Ampere", 8, 0, 40960,
                    true,
                    mig_profiles(kAmpere, {"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"},
                                 4864, 9856, 19968, 40192)});
  models.push_back({"A100-80GB", {"A100-SXM4-80GB"}, "NVIDIA A100-SXM4-80GB", "Nvidia", "Ampere", 8, 0, 81920,
                    true,
                    mig_profiles(kAmpere, {"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"},
                                 9728, 19968, 40192, 81152)});
  return models;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

}  // namespace

const std::vector<GpuModel>& gpu_catalogue() {
  static const std::vector<GpuModel> kModels = build();  // immutable after first use
  return kModels;
}

const GpuModel* find_gpu_model(std::string_view name) {
  for (const GpuModel& m : gpu_catalogue()) {
    if (iequals(m.key, name)) return &m;
    for (const std::string& a : m.aliases) {
      if (iequals(a, name)) return &m;
    }
  }
  return nullptr;
}

std::string gpu_model_names() {
  std::string out;
  for (const GpuModel& m : gpu_catalogue()) {
    if (!out.empty()) out += ", ";
    out += m.key;
    if (!m.aliases.empty()) out += " (" + m.aliases[0] + ")";
  }
  return out;
}

}  // namespace draplane::node
