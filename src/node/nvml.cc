#include "node/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

#include <fmt/format.h>

#include "node/versions.h"

namespace draplane::node {
namespace {

// ---- NVML C ABI, declared locally (layouts as in nvml.h of driver >= 550).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlGpuInstance_t = struct nvmlGpuInstance_st*;
using nvmlComputeInstance_t = struct nvmlComputeInstance_st*;
using nvmlEventSet_t = struct nvmlEventSet_st*;

constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
constexpr unsigned long long kEventTypeXidCriticalError = 0x8ULL;
constexpr unsigned kProfileIndexMax = 0x11;         // NVML_GPU_INSTANCE_PROFILE_* upper bound
constexpr unsigned kProfileIndex1SliceRev1 = 7;     // the "+me" profile
constexpr unsigned kComputeEngineProfileShared = 0;

struct nvmlMemory_t { unsigned long long total, free, used; };
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct nvmlGpuInstanceProfileInfo_t {
  unsigned id, isP2pSupported, sliceCount, instanceCount, multiprocessorCount, copyEngineCount, decoderCount,
      encoderCount, jpegCount, ofaCount;
  unsigned long long memorySizeMB;
};
// Versioned form (nvmlDeviceGetGpuInstanceProfileInfoV): version first, name last.
struct nvmlGpuInstanceProfileInfo_v2_t {
  unsigned version, id, isP2pSupported, sliceCount, instanceCount, multiprocessorCount, copyEngineCount,
      decoderCount, encoderCount, jpegCount, ofaCount;
  unsigned long long memorySizeMB;
  char name[96];  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
};
struct nvmlGpuInstancePlacement_t { unsigned start, size; };
struct nvmlGpuInstanceInfo_t {
  nvmlDevice_t device;
  unsigned id, profileId;
  nvmlGpuInstancePlacement_t placement;
};
struct nvmlComputeInstanceProfileInfo_t {
  unsigned id, sliceCount, instanceCount, multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount,
      sharedEncoderCount, sharedJpegCount, sharedOfaCount;
};
struct nvmlComputeInstanceInfo_t {
  nvmlDevice_t device;
  nvmlGpuInstance_t gpuInstance;
  unsigned id, profileId;
  nvmlGpuInstancePlacement_t placement;
};
struct nvmlGpuFabricInfo_t {
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned cliqueId;
  unsigned char state;  // 3 = NVML_GPU_FABRIC_STATE_COMPLETED
};
// Versioned form (nvmlDeviceGetGpuFabricInfoV, driver >= 550).
struct nvmlGpuFabricInfo_v2_t {
  unsigned version;
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned cliqueId;
  unsigned char state;
  unsigned healthMask;
};
struct nvmlDeviceAddressingMode_t { unsigned version, value; };

// NVML_STRUCT_VERSION(data, ver): the struct's size with the version in the top byte.
template <typename T>
constexpr unsigned struct_version(unsigned ver) {
  return static_cast<unsigned>(sizeof(T)) | (ver << 24U);
}
constexpr unsigned char kFabricStateCompleted = 3;  // NVML_GPU_FABRIC_STATE_COMPLETED
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType, eventData;
  unsigned gpuInstanceId, computeInstanceId;
};

}  // namespace

// The resolved function table. Members are named after the NVML symbol.
class NvmlLibrary {
 public:
  void* handle = nullptr;
  std::mutex mu;                     // guards event_set
  nvmlEventSet_t event_set = nullptr;
  bool events_failed = false;

#define NVML_FN(ret, name, args) ret(*name) args = nullptr;
#define NVML_LIST(X)                                                                                     \
  X(nvmlReturn_t, nvmlInit_v2, ())                                                                       \
  X(nvmlReturn_t, nvmlShutdown, ())                                                                      \
  X(const char*, nvmlErrorString, (nvmlReturn_t))                                                        \
  X(nvmlReturn_t, nvmlDeviceGetCount_v2, (unsigned*))                                                    \
  X(nvmlReturn_t, nvmlDeviceGetHandleByIndex_v2, (unsigned, nvmlDevice_t*))                              \
  X(nvmlReturn_t, nvmlDeviceGetHandleByUUID, (const char*, nvmlDevice_t*))                               \
  X(nvmlReturn_t, nvmlDeviceGetMinorNumber, (nvmlDevice_t, unsigned*))                                   \
  X(nvmlReturn_t, nvmlDeviceGetUUID, (nvmlDevice_t, char*, unsigned))                                    \
  X(nvmlReturn_t, nvmlDeviceGetName, (nvmlDevice_t, char*, unsigned))                                    \
  X(nvmlReturn_t, nvmlDeviceGetBrand, (nvmlDevice_t, int*))                                              \
  X(nvmlReturn_t, nvmlDeviceGetArchitecture, (nvmlDevice_t, unsigned*))                                  \
  X(nvmlReturn_t, nvmlDeviceGetCudaComputeCapability, (nvmlDevice_t, int*, int*))                        \
  X(nvmlReturn_t, nvmlDeviceGetMemoryInfo, (nvmlDevice_t, nvmlMemory_t*))                                \
  X(nvmlReturn_t, nvmlDeviceGetPciInfo_v3, (nvmlDevice_t, nvmlPciInfo_t*))                               \
  X(nvmlReturn_t, nvmlDeviceGetMigMode, (nvmlDevice_t, unsigned*, unsigned*))                            \
  X(nvmlReturn_t, nvmlDeviceSetMigMode, (nvmlDevice_t, unsigned, nvmlReturn_t*))                         \
  X(nvmlReturn_t, nvmlDeviceGetGpuInstanceProfileInfo, (nvmlDevice_t, unsigned, nvmlGpuInstanceProfileInfo_t*)) \
  X(nvmlReturn_t, nvmlDeviceGetGpuInstancePossiblePlacements_v2,                                         \
    (nvmlDevice_t, unsigned, nvmlGpuInstancePlacement_t*, unsigned*))                                    \
  X(nvmlReturn_t, nvmlDeviceCreateGpuInstanceWithPlacement,                                              \
    (nvmlDevice_t, unsigned, const nvmlGpuInstancePlacement_t*, nvmlGpuInstance_t*))                     \
  X(nvmlReturn_t, nvmlDeviceGetGpuInstanceById, (nvmlDevice_t, unsigned, nvmlGpuInstance_t*))            \
  X(nvmlReturn_t, nvmlGpuInstanceGetInfo, (nvmlGpuInstance_t, nvmlGpuInstanceInfo_t*))                   \
  X(nvmlReturn_t, nvmlGpuInstanceGetComputeInstanceProfileInfo,                                          \
    (nvmlGpuInstance_t, unsigned, unsigned, nvmlComputeInstanceProfileInfo_t*))                          \
  X(nvmlReturn_t, nvmlGpuInstanceCreateComputeInstance, (nvmlGpuInstance_t, unsigned, nvmlComputeInstance_t*)) \
  X(nvmlReturn_t, nvmlGpuInstanceGetComputeInstanceById, (nvmlGpuInstance_t, unsigned, nvmlComputeInstance_t*)) \
  X(nvmlReturn_t, nvmlComputeInstanceGetInfo_v2, (nvmlComputeInstance_t, nvmlComputeInstanceInfo_t*))   \
  X(nvmlReturn_t, nvmlComputeInstanceDestroy, (nvmlComputeInstance_t))                                   \
  X(nvmlReturn_t, nvmlGpuInstanceDestroy, (nvmlGpuInstance_t))                                           \
  X(nvmlReturn_t, nvmlDeviceGetMaxMigDeviceCount, (nvmlDevice_t, unsigned*))                             \
  X(nvmlReturn_t, nvmlDeviceGetMigDeviceHandleByIndex, (nvmlDevice_t, unsigned, nvmlDevice_t*))          \
  X(nvmlReturn_t, nvmlDeviceGetGpuInstanceId, (nvmlDevice_t, unsigned*))                                 \
  X(nvmlReturn_t, nvmlDeviceGetComputeInstanceId, (nvmlDevice_t, unsigned*))                             \
  X(nvmlReturn_t, nvmlSystemGetDriverVersion, (char*, unsigned))                                         \
  X(nvmlReturn_t, nvmlSystemGetCudaDriverVersion, (int*))                                                \
  X(nvmlReturn_t, nvmlEventSetCreate, (nvmlEventSet_t*))                                                 \
  X(nvmlReturn_t, nvmlDeviceGetSupportedEventTypes, (nvmlDevice_t, unsigned long long*))                 \
  X(nvmlReturn_t, nvmlDeviceRegisterEvents, (nvmlDevice_t, unsigned long long, nvmlEventSet_t))          \
  X(nvmlReturn_t, nvmlEventSetWait_v2, (nvmlEventSet_t, nvmlEventData_t*, unsigned))                     \
  X(nvmlReturn_t, nvmlEventSetFree, (nvmlEventSet_t))
// Newer or optional entry points: absent on older drivers, used when present.
#define NVML_OPTIONAL_LIST(X)                                                                            \
  X(nvmlReturn_t, nvmlInitWithFlags, (unsigned))                                                         \
  X(nvmlReturn_t, nvmlDeviceGetAddressingMode, (nvmlDevice_t, nvmlDeviceAddressingMode_t*))              \
  X(nvmlReturn_t, nvmlDeviceGetGpuFabricInfo, (nvmlDevice_t, nvmlGpuFabricInfo_t*))                    \
  X(nvmlReturn_t, nvmlDeviceGetGpuFabricInfoV, (nvmlDevice_t, nvmlGpuFabricInfo_v2_t*))                  \
  X(nvmlReturn_t, nvmlDeviceGetGpuInstanceProfileInfoV, (nvmlDevice_t, unsigned, nvmlGpuInstanceProfileInfo_v2_t*))
  NVML_LIST(NVML_FN)
  NVML_OPTIONAL_LIST(NVML_FN)
#undef NVML_FN

  std::string err(nvmlReturn_t r) const {
    return nvmlErrorString != nullptr ? fmt::format("{} ({})", nvmlErrorString(r), r) : fmt::format("error {}", r);
  }
  Status fail(std::string_view what, nvmlReturn_t r) const {
    return Status(Code::kUnavailable, fmt::format("NVML: {}: {}", what, err(r)));
  }

  // GPU-instance profile `index` (NVML_GPU_INSTANCE_PROFILE_*). The versioned
  // call answers only while MIG mode is enabled (and not on older drivers);
  // the plain one also with MIG disabled, which dynamic MIG needs to publish
  // placements before any exists.
  nvmlReturn_t profile_info(nvmlDevice_t d, unsigned index, nvmlGpuInstanceProfileInfo_t* out) const {
    if (nvmlDeviceGetGpuInstanceProfileInfoV != nullptr) {
      nvmlGpuInstanceProfileInfo_v2_t v{};
      v.version = struct_version<nvmlGpuInstanceProfileInfo_v2_t>(2);
      if (nvmlDeviceGetGpuInstanceProfileInfoV(d, index, &v) == NVML_SUCCESS) {
        *out = {v.id,          v.isP2pSupported, v.sliceCount, v.instanceCount, v.multiprocessorCount,
                v.copyEngineCount, v.decoderCount,   v.encoderCount, v.jpegCount,     v.ofaCount,
                v.memorySizeMB};
        return NVML_SUCCESS;
      }
    }
    return nvmlDeviceGetGpuInstanceProfileInfo(d, index, out);
  }

  // "<clusterUUID>.<cliqueId>" when the GPU's fabric probe completed, else "".
  // Prefers the versioned call (the plain one is deprecated in NVML 13).
  std::string clique_id(nvmlDevice_t d) const;
};

namespace {

std::string brand_name(int brand) {
  static const char* const kNames[] = {"Unknown",     "Quadro",      "Tesla",      "NVS",
                                       "Grid",        "GeForce",     "Titan",      "NvidiaVApps",
                                       "NvidiaVPC",   "NvidiaVCS",   "NvidiaVWS",  "NvidiaCloudGaming",
                                       "QuadroRTX",   "NvidiaRTX",   "Nvidia",     "GeForceRTX",
                                       "TitanRTX"};
  return brand >= 0 && brand < static_cast<int>(std::size(kNames)) ? kNames[brand] : "Unknown";
}

std::string architecture_name(unsigned arch) {
  switch (arch) {
    case 2: return "Kepler";
    case 3: return "Maxwell";
    case 4: return "Pascal";
    case 5: return "Volta";
    case 6: return "Turing";
    case 7: return "Ampere";
    case 8: return "Ada Lovelace";
    case 9: return "Hopper";
    case 10: return "Blackwell";
    default: return "Unknown";
  }
}

// NVML_COMPUTE_INSTANCE_PROFILE_* index of the compute instance that spans a
// whole GPU instance of `slices` slices.
unsigned full_ci_profile_index(unsigned slices) {
  switch (slices) {
    case 1: return 0;
    case 2: return 1;
    case 3: return 2;
    case 4: return 3;
    case 7: return 4;
    case 8: return 5;
    case 6: return 6;
    default: return 0;
  }
}

std::optional<int64_t> read_numa_node(const std::string& sysfs_root, const std::string& bus_id) {
  std::ifstream in(fmt::format("{}/bus/pci/devices/{}/numa_node", sysfs_root, bus_id));
  int64_t n = -1;
  if (!(in >> n) || n < 0) return std::nullopt;
  return n;
}

std::string uuid_of_bytes(const unsigned char b[16]) {
  return fmt::format("{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                     b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                     b[15]);
}

}  // namespace

std::string NvmlLibrary::clique_id(nvmlDevice_t d) const {
  unsigned char uuid[16];
  nvmlReturn_t status = NVML_SUCCESS;
  unsigned clique = 0;
  unsigned char state = 0;
  nvmlGpuFabricInfo_v2_t v{};
  v.version = struct_version<nvmlGpuFabricInfo_v2_t>(2);
  if (nvmlDeviceGetGpuFabricInfoV != nullptr && nvmlDeviceGetGpuFabricInfoV(d, &v) == NVML_SUCCESS) {
    std::memcpy(uuid, v.clusterUuid, sizeof uuid);
    status = v.status;
    clique = v.cliqueId;
    state = v.state;
  } else {
    nvmlGpuFabricInfo_t f{};
    if (nvmlDeviceGetGpuFabricInfo == nullptr || nvmlDeviceGetGpuFabricInfo(d, &f) != NVML_SUCCESS) return "";
    std::memcpy(uuid, f.clusterUuid, sizeof uuid);
    status = f.status;
    clique = f.cliqueId;
    state = f.state;
  }
  if (state != kFabricStateCompleted || status != NVML_SUCCESS) return "";
  return fmt::format("{}.{}", uuid_of_bytes(uuid), clique);
}

NvmlOptions nvml_options(std::string_view gpus_flag) {
  NvmlOptions o;
  if (const char* lib = std::getenv("DRAPLANE_NVML_LIB"); lib != nullptr && *lib != 0) o.library = lib;
  if (gpus_flag.starts_with("nvml:")) o.library = std::string(gpus_flag.substr(5));
  if (const char* sys = std::getenv("DRAPLANE_SYSFS_ROOT"); sys != nullptr && *sys != 0) o.sysfs_root = sys;
  return o;
}

NvmlBackend::NvmlBackend(std::unique_ptr<NvmlLibrary> lib, NvmlOptions options)
    : lib_(std::move(lib)), options_(std::move(options)) {}

NvmlBackend::~NvmlBackend() {
  if (lib_->event_set != nullptr) lib_->nvmlEventSetFree(lib_->event_set);
  lib_->nvmlShutdown();
  dlclose(lib_->handle);
}

Result<std::unique_ptr<NvmlBackend>> NvmlBackend::open(const NvmlOptions& options) {
  auto lib = std::make_unique<NvmlLibrary>();
  lib->handle = dlopen(options.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle == nullptr) {
    const char* e = dlerror();
    return Status(Code::kUnavailable,
                  fmt::format("NVML: cannot load {}: {}; is the NVIDIA driver installed? (use --gpus sim:8xH100 "
                              "to simulate GPUs)",
                              options.library, e != nullptr ? e : "unknown error"));
  }
  std::string missing;
#define NVML_RESOLVE(ret, name, args) \
  lib->name = reinterpret_cast<ret(*) args>(dlsym(lib->handle, #name)); \
  if (lib->name == nullptr && missing.empty()) missing = #name;
  NVML_LIST(NVML_RESOLVE)
  std::string required_missing = missing;
  NVML_OPTIONAL_LIST(NVML_RESOLVE)
#undef NVML_RESOLVE
  if (!required_missing.empty()) {
    dlclose(lib->handle);
    return Status(Code::kUnavailable, fmt::format("NVML: {} lacks symbol {} (driver too old?)", options.library,
                                                  required_missing));
  }
  nvmlReturn_t r = lib->nvmlInitWithFlags != nullptr ? lib->nvmlInitWithFlags(0) : lib->nvmlInit_v2();
  if (r != NVML_SUCCESS) {
    Status st = lib->fail(fmt::format("nvmlInit of {}", options.library), r);
    dlclose(lib->handle);
    return st;
  }
  return std::unique_ptr<NvmlBackend>(new NvmlBackend(std::move(lib), options));
}

Result<std::vector<GpuInfo>> NvmlBackend::discover() {
  NvmlLibrary& L = *lib_;
  char buf[96];
  nvmlReturn_t r = L.nvmlSystemGetDriverVersion(buf, sizeof buf);
  if (r != NVML_SUCCESS) return L.fail("nvmlSystemGetDriverVersion", r);
  ASSIGN_OR_RETURN(std::string driver_version, to_semver(buf));
  int cuda = 0;
  r = L.nvmlSystemGetCudaDriverVersion(&cuda);
  if (r != NVML_SUCCESS) return L.fail("nvmlSystemGetCudaDriverVersion", r);
  ASSIGN_OR_RETURN(std::string cuda_version, cuda_driver_version_semver(cuda));
  unsigned count = 0;
  r = L.nvmlDeviceGetCount_v2(&count);
  if (r != NVML_SUCCESS) return L.fail("nvmlDeviceGetCount_v2", r);

  std::vector<GpuInfo> out;
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t d = nullptr;
    if ((r = L.nvmlDeviceGetHandleByIndex_v2(i, &d)) != NVML_SUCCESS) return L.fail("GetHandleByIndex", r);
    GpuInfo g;
    g.index = static_cast<int>(i);
    g.driver_version = driver_version;
    g.cuda_driver_version = cuda_version;
    unsigned minor = 0;
    if ((r = L.nvmlDeviceGetMinorNumber(d, &minor)) != NVML_SUCCESS) return L.fail("GetMinorNumber", r);
    g.minor = static_cast<int>(minor);
    if ((r = L.nvmlDeviceGetUUID(d, buf, sizeof buf)) != NVML_SUCCESS) return L.fail("GetUUID", r);
    g.uuid = buf;
    if ((r = L.nvmlDeviceGetName(d, buf, sizeof buf)) != NVML_SUCCESS) return L.fail("GetName", r);
    g.product_name = buf;
    int brand = 0;
    if ((r = L.nvmlDeviceGetBrand(d, &brand)) != NVML_SUCCESS) return L.fail("GetBrand", r);
    g.brand = brand_name(brand);
    unsigned arch = 0;
    if ((r = L.nvmlDeviceGetArchitecture(d, &arch)) != NVML_SUCCESS) return L.fail("GetArchitecture", r);
    g.architecture = architecture_name(arch);
    int major = 0, minor_cc = 0;
    if ((r = L.nvmlDeviceGetCudaComputeCapability(d, &major, &minor_cc)) != NVML_SUCCESS)
      return L.fail("GetCudaComputeCapability", r);
    g.cuda_compute_capability = compute_capability_semver(major, minor_cc);
    nvmlMemory_t mem{};
    if ((r = L.nvmlDeviceGetMemoryInfo(d, &mem)) != NVML_SUCCESS) return L.fail("GetMemoryInfo", r);
    g.memory_bytes = static_cast<int64_t>(mem.total);
    nvmlPciInfo_t pci{};
    if ((r = L.nvmlDeviceGetPciInfo_v3(d, &pci)) != NVML_SUCCESS) return L.fail("GetPciInfo_v3", r);
    ASSIGN_OR_RETURN(g.pci_bus_id, normalize_pci_bus_id(pci.busId));
    g.pcie_root = pcie_root_for_bus_id(options_.sysfs_root, g.pci_bus_id).value_or(std::string());
    g.numa_node = read_numa_node(options_.sysfs_root, g.pci_bus_id);
    if (L.nvmlDeviceGetAddressingMode != nullptr) {
      nvmlDeviceAddressingMode_t mode{static_cast<unsigned>(sizeof(nvmlDeviceAddressingMode_t)) | (1u << 24), 0};
      if (L.nvmlDeviceGetAddressingMode(d, &mode) == NVML_SUCCESS) {
        g.addressing_mode = mode.value == 2 ? "ATS" : mode.value == 1 ? "HMM" : "None";
      }
    }
    g.clique_id = L.clique_id(d);
    unsigned current = 0, pending = 0;
    r = L.nvmlDeviceGetMigMode(d, &current, &pending);
    g.mig_capable = r == NVML_SUCCESS;
    g.mig_enabled = r == NVML_SUCCESS && current == 1;
    if (g.mig_capable) {
      for (unsigned idx = 0; idx <= kProfileIndexMax; ++idx) {
        nvmlGpuInstanceProfileInfo_t info{};
        if (L.profile_info(d, idx, &info) != NVML_SUCCESS) continue;
        MigProfile p;
        p.profile_index = static_cast<int>(idx);
        p.id = static_cast<int>(info.id);
        p.slice_count = static_cast<int>(info.sliceCount);
        p.instance_count = static_cast<int>(info.instanceCount);
        p.memory_mib = static_cast<int64_t>(info.memorySizeMB);
        p.multiprocessors = static_cast<int>(info.multiprocessorCount);
        p.copy_engines = static_cast<int>(info.copyEngineCount);
        p.decoders = static_cast<int>(info.decoderCount);
        p.encoders = static_cast<int>(info.encoderCount);
        p.jpeg_engines = static_cast<int>(info.jpegCount);
        p.ofa_engines = static_cast<int>(info.ofaCount);
        p.name = mig_profile_name(p.slice_count, p.memory_mib, g.memory_bytes, idx == kProfileIndex1SliceRev1);
        nvmlGpuInstancePlacement_t pl[16];
        unsigned n = 16;
        if (L.nvmlDeviceGetGpuInstancePossiblePlacements_v2(d, info.id, pl, &n) != NVML_SUCCESS) continue;
        for (unsigned k = 0; k < n; ++k) {
          p.placements.push_back({static_cast<int>(pl[k].start), static_cast<int>(pl[k].size)});
        }
        g.mig_profiles.push_back(std::move(p));
      }
      g.mig_capable = !g.mig_profiles.empty();
    }
    out.push_back(std::move(g));
  }
  return out;
}

Result<MigInstance> NvmlBackend::create_mig_device(const std::string& parent_uuid, int profile_id,
                                                   int placement_start) {
  NvmlLibrary& L = *lib_;
  nvmlDevice_t d = nullptr;
  nvmlReturn_t r = L.nvmlDeviceGetHandleByUUID(parent_uuid.c_str(), &d);
  if (r != NVML_SUCCESS) return not_found_error(fmt::format("NVML: GPU {}: {}", parent_uuid, L.err(r)));
  unsigned current = 0, pending = 0;
  r = L.nvmlDeviceGetMigMode(d, &current, &pending);
  if (r == NVML_ERROR_NOT_SUPPORTED) {
    return Status(Code::kFailedPrecondition, fmt::format("GPU {} does not support MIG", parent_uuid));
  }
  if (r != NVML_SUCCESS) return L.fail("GetMigMode", r);
  if (current != 1) {
    nvmlReturn_t activation = NVML_SUCCESS;
    if ((r = L.nvmlDeviceSetMigMode(d, 1, &activation)) != NVML_SUCCESS) return L.fail("SetMigMode(enable)", r);
  }
  nvmlGpuInstanceProfileInfo_t info{};
  bool found = false;
  for (unsigned idx = 0; idx <= kProfileIndexMax && !found; ++idx) {
    found = L.profile_info(d, idx, &info) == NVML_SUCCESS &&
            static_cast<int>(info.id) == profile_id;
  }
  if (!found) return not_found_error(fmt::format("GPU {}: no MIG profile with id {}", parent_uuid, profile_id));
  nvmlGpuInstancePlacement_t pl{static_cast<unsigned>(placement_start), 0};
  nvmlGpuInstancePlacement_t all[16];
  unsigned n = 16;
  if ((r = L.nvmlDeviceGetGpuInstancePossiblePlacements_v2(d, info.id, all, &n)) != NVML_SUCCESS)
    return L.fail("GetGpuInstancePossiblePlacements_v2", r);
  for (unsigned k = 0; k < n; ++k) {
    if (static_cast<int>(all[k].start) == placement_start) pl.size = all[k].size;
  }
  if (pl.size == 0) {
    return not_found_error(
        fmt::format("GPU {}: profile {} has no placement starting at {}", parent_uuid, profile_id, placement_start));
  }
  nvmlGpuInstance_t gi = nullptr;
  r = L.nvmlDeviceCreateGpuInstanceWithPlacement(d, info.id, &pl, &gi);
  if (r != NVML_SUCCESS) {
    return Status(Code::kFailedPrecondition,
                  fmt::format("NVML: creating GPU instance (profile {}, start {}) on {}: {}", profile_id,
                              placement_start, parent_uuid, L.err(r)));
  }
  nvmlGpuInstanceInfo_t gi_info{};
  nvmlComputeInstanceProfileInfo_t ci_profile{};
  nvmlComputeInstance_t ci = nullptr;
  nvmlComputeInstanceInfo_t ci_info{};
  if ((r = L.nvmlGpuInstanceGetInfo(gi, &gi_info)) != NVML_SUCCESS ||
      (r = L.nvmlGpuInstanceGetComputeInstanceProfileInfo(gi, full_ci_profile_index(info.sliceCount),
                                                           kComputeEngineProfileShared, &ci_profile)) !=
          NVML_SUCCESS ||
      (r = L.nvmlGpuInstanceCreateComputeInstance(gi, ci_profile.id, &ci)) != NVML_SUCCESS ||
      (r = L.nvmlComputeInstanceGetInfo_v2(ci, &ci_info)) != NVML_SUCCESS) {
    if (ci != nullptr) L.nvmlComputeInstanceDestroy(ci);
    L.nvmlGpuInstanceDestroy(gi);  // leave nothing half-made behind
    return L.fail("creating compute instance", r);
  }
  MigInstance m;
  m.parent_uuid = parent_uuid;
  unsigned minor = 0;
  L.nvmlDeviceGetMinorNumber(d, &minor);
  m.parent_minor = static_cast<int>(minor);
  m.profile_id = profile_id;
  m.placement = {static_cast<int>(gi_info.placement.start), static_cast<int>(gi_info.placement.size)};
  m.gi_id = static_cast<int>(gi_info.id);
  m.ci_id = static_cast<int>(ci_info.id);
  ASSIGN_OR_RETURN(std::vector<MigInstance> existing, list_mig_devices(parent_uuid));
  for (const MigInstance& e : existing) {
    if (e.gi_id == m.gi_id && e.ci_id == m.ci_id) m.uuid = e.uuid;
  }
  return m;
}

Status NvmlBackend::destroy_mig_device(const MigInstance& instance) {
  NvmlLibrary& L = *lib_;
  nvmlDevice_t d = nullptr;
  nvmlReturn_t r = L.nvmlDeviceGetHandleByUUID(instance.parent_uuid.c_str(), &d);
  if (r != NVML_SUCCESS) return L.fail(fmt::format("GPU {}", instance.parent_uuid), r);
  nvmlGpuInstance_t gi = nullptr;
  r = L.nvmlDeviceGetGpuInstanceById(d, static_cast<unsigned>(instance.gi_id), &gi);
  if (r == NVML_SUCCESS) {
    nvmlComputeInstance_t ci = nullptr;
    if (L.nvmlGpuInstanceGetComputeInstanceById(gi, static_cast<unsigned>(instance.ci_id), &ci) == NVML_SUCCESS) {
      if ((r = L.nvmlComputeInstanceDestroy(ci)) != NVML_SUCCESS) return L.fail("ComputeInstanceDestroy", r);
    }
    if ((r = L.nvmlGpuInstanceDestroy(gi)) != NVML_SUCCESS) return L.fail("GpuInstanceDestroy", r);
  } else if (r != NVML_ERROR_NOT_FOUND) {
    return L.fail("GetGpuInstanceById", r);
  }
  Result<std::vector<MigInstance>> left = list_mig_devices(instance.parent_uuid);
  if (!left) return left.error();
  if (left->empty()) {
    nvmlReturn_t activation = NVML_SUCCESS;
    if ((r = L.nvmlDeviceSetMigMode(d, 0, &activation)) != NVML_SUCCESS) return L.fail("SetMigMode(disable)", r);
  }
  return {};
}

Result<std::vector<MigInstance>> NvmlBackend::list_mig_devices(const std::string& parent_uuid) {
  NvmlLibrary& L = *lib_;
  unsigned count = 0;
  nvmlReturn_t r = L.nvmlDeviceGetCount_v2(&count);
  if (r != NVML_SUCCESS) return L.fail("nvmlDeviceGetCount_v2", r);
  std::vector<MigInstance> out;
  char buf[96];
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t d = nullptr;
    if (L.nvmlDeviceGetHandleByIndex_v2(i, &d) != NVML_SUCCESS) continue;
    if (L.nvmlDeviceGetUUID(d, buf, sizeof buf) != NVML_SUCCESS) continue;
    std::string uuid = buf;
    if (!parent_uuid.empty() && uuid != parent_uuid) continue;
    unsigned current = 0, pending = 0;
    if (L.nvmlDeviceGetMigMode(d, &current, &pending) != NVML_SUCCESS || current != 1) continue;
    unsigned minor = 0, max = 0;
    L.nvmlDeviceGetMinorNumber(d, &minor);
    if (L.nvmlDeviceGetMaxMigDeviceCount(d, &max) != NVML_SUCCESS) continue;
    std::vector<MigInstance> mine;
    for (unsigned k = 0; k < max; ++k) {
      nvmlDevice_t md = nullptr;
      if (L.nvmlDeviceGetMigDeviceHandleByIndex(d, k, &md) != NVML_SUCCESS) continue;
      MigInstance m;
      m.parent_uuid = uuid;
      m.parent_minor = static_cast<int>(minor);
      unsigned gi_id = 0, ci_id = 0;
      L.nvmlDeviceGetGpuInstanceId(md, &gi_id);
      L.nvmlDeviceGetComputeInstanceId(md, &ci_id);
      m.gi_id = static_cast<int>(gi_id);
      m.ci_id = static_cast<int>(ci_id);
      if (L.nvmlDeviceGetUUID(md, buf, sizeof buf) == NVML_SUCCESS) m.uuid = buf;
      nvmlGpuInstance_t gi = nullptr;
      nvmlGpuInstanceInfo_t gi_info{};
      if (L.nvmlDeviceGetGpuInstanceById(d, gi_id, &gi) == NVML_SUCCESS &&
          L.nvmlGpuInstanceGetInfo(gi, &gi_info) == NVML_SUCCESS) {
        m.placement = {static_cast<int>(gi_info.placement.start), static_cast<int>(gi_info.placement.size)};
        // gi_info.profileId is the GI profile id (19, 15, ...).
        m.profile_id = static_cast<int>(gi_info.profileId);
      }
      mine.push_back(std::move(m));
    }
    std::sort(mine.begin(), mine.end(), [](const MigInstance& a, const MigInstance& b) { return a.gi_id < b.gi_id; });
    out.insert(out.end(), mine.begin(), mine.end());
  }
  return out;
}

Result<std::optional<GpuEvent>> NvmlBackend::wait_event(int timeout_ms) {
  NvmlLibrary& L = *lib_;
  nvmlEventSet_t set = nullptr;
  {
    std::lock_guard<std::mutex> lock(L.mu);
    if (L.events_failed) return Status(Code::kUnavailable, "NVML: XID events cannot be registered");
    if (L.event_set == nullptr) {
      nvmlReturn_t r = L.nvmlEventSetCreate(&L.event_set);
      if (r != NVML_SUCCESS) {
        L.events_failed = true;
        return L.fail("nvmlEventSetCreate", r);
      }
      unsigned count = 0;
      L.nvmlDeviceGetCount_v2(&count);
      for (unsigned i = 0; i < count; ++i) {
        nvmlDevice_t d = nullptr;
        unsigned long long supported = 0;
        if (L.nvmlDeviceGetHandleByIndex_v2(i, &d) != NVML_SUCCESS ||
            L.nvmlDeviceGetSupportedEventTypes(d, &supported) != NVML_SUCCESS ||
            (supported & kEventTypeXidCriticalError) == 0 ||
            L.nvmlDeviceRegisterEvents(d, kEventTypeXidCriticalError, L.event_set) != NVML_SUCCESS) {
          L.events_failed = true;
          return Status(Code::kUnavailable, fmt::format("NVML: cannot register XID events on GPU {}", i));
        }
      }
    }
    set = L.event_set;
  }
  nvmlEventData_t data{};
  nvmlReturn_t r = L.nvmlEventSetWait_v2(set, &data, static_cast<unsigned>(timeout_ms));
  if (r == NVML_ERROR_TIMEOUT) return std::optional<GpuEvent>();
  if (r == NVML_ERROR_GPU_IS_LOST) return std::optional<GpuEvent>(GpuEvent{GpuEvent::Kind::kGpuLost, "", 0});
  if (r != NVML_SUCCESS) return L.fail("nvmlEventSetWait_v2", r);
  GpuEvent e;
  e.kind = GpuEvent::Kind::kXid;
  e.xid = data.eventData;
  char buf[96];
  if (data.device != nullptr && L.nvmlDeviceGetUUID(data.device, buf, sizeof buf) == NVML_SUCCESS) e.uuid = buf;
  return std::optional<GpuEvent>(e);
}

}  // namespace draplane::node
