#include "node/catalogue.h"

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

struct Row {
  const char* name;
  int index, id, slices, max;
  int64_t mib;
  int sm, dec, ce, jpeg, ofa;
  std::vector<MigPlacement> placements;
};

MigProfile profile(const Row& r) {
  MigProfile p;
  p.name = r.name;
  p.profile_index = r.index;
  p.id = r.id;
  p.slice_count = r.slices;
  p.instance_count = r.max;
  p.memory_mib = r.mib;
  p.multiprocessors = r.sm;
  p.decoders = r.dec;
  p.copy_engines = r.ce;
  p.jpeg_engines = r.jpeg;
  p.ofa_engines = r.ofa;
  p.encoders = 0;  // none of these data-centre parts has NVENC in a MIG instance
  p.placements = r.placements;
  return p;
}

// Hopper: H100 80GB and H200 share engine counts; memory differs (SPEC §4 tables,
// GiB values as nvidia-smi prints them, i.e. MiB / 1024 rounded to 2 places).
std::vector<MigProfile> hopper(const char* n1, const char* n1me, const char* n1x2, const char* n2,
                               const char* n3, const char* n4, const char* n7, int64_t m1, int64_t m2,
                               int64_t m4, int64_t m8) {
  const auto all7 = placements({0, 1, 2, 3, 4, 5, 6}, 1);
  std::vector<Row> rows = {
      {n1, k1Slice, 19, 1, 7, m1, 16, 1, 1, 1, 0, all7},
      // +me: NVML lists every 1-slice placement; the single OFA engine limits it to one.
      {n1me, k1SliceRev1, 20, 1, 1, m1, 16, 1, 1, 1, 1, all7},
      {n1x2, k1SliceRev2, 15, 1, 4, m2, 26, 1, 1, 1, 0, placements({0, 2, 4, 6}, 2)},
      {n2, k2Slice, 14, 2, 3, m2, 32, 2, 2, 2, 0, placements({0, 2, 4}, 2)},
      {n3, k3Slice, 9, 3, 2, m4, 60, 3, 3, 3, 0, placements({0, 4}, 4)},
      {n4, k4Slice, 5, 4, 1, m4, 64, 4, 4, 4, 0, placements({0}, 4)},
      {n7, k7Slice, 0, 7, 1, m8, 132, 7, 8, 7, 1, placements({0}, 8)},
  };
  std::vector<MigProfile> out;
  for (const Row& r : rows) out.push_back(profile(r));
  return out;
}

std::vector<MigProfile> ampere(const char* n1, const char* n1me, const char* n1x2, const char* n2,
                               const char* n3, const char* n4, const char* n7, int64_t m1, int64_t m2,
                               int64_t m4, int64_t m8) {
  const auto all7 = placements({0, 1, 2, 3, 4, 5, 6}, 1);
  std::vector<Row> rows = {
      {n1, k1Slice, 19, 1, 7, m1, 14, 0, 1, 0, 0, all7},
      {n1me, k1SliceRev1, 20, 1, 1, m1, 14, 1, 1, 1, 1, all7},
      {n1x2, k1SliceRev2, 15, 1, 4, m2, 14, 1, 1, 0, 0, placements({0, 2, 4, 6}, 2)},
      {n2, k2Slice, 14, 2, 3, m2, 28, 1, 2, 0, 0, placements({0, 2, 4}, 2)},
      {n3, k3Slice, 9, 3, 2, m4, 42, 2, 3, 0, 0, placements({0, 4}, 4)},
      {n4, k4Slice, 5, 4, 1, m4, 56, 2, 4, 0, 0, placements({0}, 4)},
      {n7, k7Slice, 0, 7, 1, m8, 98, 5, 7, 1, 1, placements({0}, 8)},
  };
  std::vector<MigProfile> out;
  for (const Row& r : rows) out.push_back(profile(r));
  return out;
}

std::vector<GpuModel> build() {
  std::vector<GpuModel> models;
  models.push_back({"H100-80GB", {"H100"}, "NVIDIA H100 80GB HBM3", "Nvidia", "Hopper", 9, 0, 81559, true,
                    hopper("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb",
                           9984, 20096, 40448, 81152)});
  models.push_back({"H200-141GB", {"H200"}, "NVIDIA H200", "Nvidia", "Hopper", 9, 0, 143771, true,
                    hopper("1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb",
                           16384, 33024, 71168, 143104)});
  models.push_back({"A100-40GB", {"A100-SXM4-40GB"}, "NVIDIA A100-SXM4-40GB", "Nvidia", "Ampere", 8, 0, 40960,
                    true,
                    ampere("1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb", 4864,
                           9856, 19968, 40192)});
  models.push_back({"A100-80GB", {"A100-SXM4-80GB"}, "NVIDIA A100-SXM4-80GB", "Nvidia", "Ampere", 8, 0, 81920,
                    true,
                    ampere("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", 9728,
                           19968, 40192, 81152)});
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
