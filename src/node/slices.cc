#include "node/slices.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "alloc/snapshot.h"
#include "node/config.h"
#include "node/versions.h"

namespace draplane::node {
namespace {

using api::Counter;
using api::DeviceAttribute;
using api::DeviceCapacity;
using api::Quantity;

// Upstream publishes every count and size with resource.NewQuantity(n, BinarySI).
Quantity qty(int64_t n) { return Quantity::from_int(n, Quantity::Format::kBinarySI); }
DeviceAttribute str(const std::string& s) {
  DeviceAttribute a;
  a.string_ = s;
  return a;
}
DeviceAttribute ver(const std::string& s) {
  DeviceAttribute a;
  a.version = s;
  return a;
}
DeviceAttribute integer(int64_t v) {
  DeviceAttribute a;
  a.int_ = v;
  return a;
}

// The resource dimensions of a MIG profile, in capacity (camelCase) and counter
// (DNS label) spelling, as upstream's capacitiesToCounters derives one from the other.
struct Dimension {
  const char* capacity;
  const char* counter;
  int64_t (*get)(const MigProfile&);
};
const Dimension kDimensions[] = {
    {"multiprocessors", "multiprocessors", [](const MigProfile& p) -> int64_t { return p.multiprocessors; }},
    {"copyEngines", "copy-engines", [](const MigProfile& p) -> int64_t { return p.copy_engines; }},
    {"decoders", "decoders", [](const MigProfile& p) -> int64_t { return p.decoders; }},
    {"encoders", "encoders", [](const MigProfile& p) -> int64_t { return p.encoders; }},
    {"jpegEngines", "jpeg-engines", [](const MigProfile& p) -> int64_t { return p.jpeg_engines; }},
    {"ofaEngines", "ofa-engines", [](const MigProfile& p) -> int64_t { return p.ofa_engines; }},
    {"memory", "memory", [](const MigProfile& p) -> int64_t { return p.memory_mib * 1024 * 1024; }},
};

// Per-dimension maximum over all profiles: what the full GPU offers and consumes.
MigProfile max_profile(const GpuInfo& g) {
  MigProfile m;
  for (const MigProfile& p : g.mig_profiles) {
    m.multiprocessors = std::max(m.multiprocessors, p.multiprocessors);
    m.copy_engines = std::max(m.copy_engines, p.copy_engines);
    m.decoders = std::max(m.decoders, p.decoders);
    m.encoders = std::max(m.encoders, p.encoders);
    m.jpeg_engines = std::max(m.jpeg_engines, p.jpeg_engines);
    m.ofa_engines = std::max(m.ofa_engines, p.ofa_engines);
    m.memory_mib = std::max(m.memory_mib, p.memory_mib);
  }
  return m;
}

std::map<std::string, Counter> counters(const MigProfile& p, int slice_start, int slice_count) {
  std::map<std::string, Counter> out;
  for (const Dimension& d : kDimensions) out[d.counter] = Counter{qty(d.get(p))};
  for (int i = slice_start; i < slice_start + slice_count; ++i) out[fmt::format("memory-slice-{}", i)] = Counter{qty(1)};
  return out;
}

std::map<std::string, DeviceCapacity> capacities(const MigProfile& p) {
  std::map<std::string, DeviceCapacity> out;
  for (const Dimension& d : kDimensions) out[d.capacity] = DeviceCapacity{qty(d.get(p)), std::nullopt};
  return out;
}

// Attributes a MIG device shares with its parent GPU.
std::map<std::string, DeviceAttribute> common_attributes(const GpuInfo& g) {
  std::map<std::string, DeviceAttribute> a;
  a["productName"] = str(g.product_name);
  a["brand"] = str(g.brand);
  a["architecture"] = str(g.architecture);
  a["cudaComputeCapability"] = ver(g.cuda_compute_capability);
  a["driverVersion"] = ver(g.driver_version);
  a["cudaDriverVersion"] = ver(g.cuda_driver_version);
  if (!g.addressing_mode.empty()) a["addressingMode"] = str(g.addressing_mode);
  a["resource.kubernetes.io/pciBusID"] = str(g.pci_bus_id);
  if (!g.pcie_root.empty()) a["resource.kubernetes.io/pcieRoot"] = str(g.pcie_root);
  if (g.numa_node) a["resource.kubernetes.io/numaNode"] = integer(*g.numa_node);
  if (!g.clique_id.empty()) a["cliqueID"] = str(g.clique_id);
  return a;
}

// The driver's applyConsumableShares: the device may be allocated many times;
// its memory (rounded down to the 1Mi step, which validRange needs max and
// default to be multiples of) gets a request policy, and N adds `shares`. A
// device without memory capacity gets allowMultipleAllocations only.
void apply_consumable_shares(api::Device& d, const ConsumableShares& s) {
  if (!s.enabled()) return;
  d.allowMultipleAllocations = true;
  // Deliberate difference: a partitionable device also has multiprocessors,
  // engines... as capacities. Without a request policy each share would
  // consume them whole (KEP 5075), so a shared GPU would take one share only;
  // they get default 0, 0..value by 1 instead, and a claim may still ask for some.
  for (auto& [name, cap] : d.capacity) {
    if (name == kMemoryCapacity || cap.requestPolicy || cap.value.is_zero()) continue;  // 0: consumes nothing
    api::CapacityRequestPolicy none;
    none.default_ = Quantity::from_int(0);
    none.validRange = api::CapacityRequestPolicyRange{Quantity::from_int(0), cap.value, Quantity::from_int(1)};
    cap.requestPolicy = none;
  }
  auto mem = d.capacity.find(kMemoryCapacity);
  if (mem == d.capacity.end()) return;
  constexpr int64_t kStep = 1024 * 1024;
  const Quantity max = qty(mem->second.value.value() / kStep * kStep);
  const Quantity zero = Quantity::from_int(0);
  const Quantity step = qty(kStep);
  api::CapacityRequestPolicy policy;
  if (s.mode == ConsumableShares::Mode::kMemory) {
    policy.default_ = max;
    policy.validRange = api::CapacityRequestPolicyRange{step, max, step};
  } else {
    policy.default_ = zero;
    policy.validRange = api::CapacityRequestPolicyRange{zero, max, step};
  }
  mem->second = DeviceCapacity{max, policy};
  if (s.mode != ConsumableShares::Mode::kShares) return;
  const Quantity n = Quantity::from_int(s.shares);
  const Quantity one = Quantity::from_int(1);
  api::CapacityRequestPolicy shares;
  shares.default_ = one;
  shares.validRange = api::CapacityRequestPolicyRange{one, n, one};
  d.capacity[kSharesCapacity] = DeviceCapacity{n, shares};
}

// The flag, when set, decides for every device; else the device's own entry.
void apply_sharing(api::Device& d, const SliceOptions& o) {
  if (o.consumable_shares.enabled()) return apply_consumable_shares(d, o.consumable_shares);
  auto it = o.sharing.find(d.name);
  if (it != o.sharing.end()) apply_consumable_shares(d, it->second);
}

bool partitionable(const GpuInfo& g, const SliceOptions& o) { return o.dynamic_mig && !g.mig_profiles.empty(); }

api::Device full_gpu(const GpuInfo& g, const SliceOptions& o) {
  api::Device d;
  d.name = gpu_device_name(g.minor);
  d.attributes = common_attributes(g);
  d.attributes["type"] = str("gpu");
  d.attributes["uuid"] = str(g.uuid);
  if (partitionable(g, o)) {
    MigProfile m = max_profile(g);
    d.capacity = capacities(m);
    d.consumesCounters.push_back({counter_set_name(g.minor), counters(m, 0, g.memory_slice_count)});
  } else {
    d.capacity["memory"] = DeviceCapacity{qty(g.memory_bytes), std::nullopt};
  }
  apply_sharing(d, o);
  return d;
}

api::Device mig_device(const GpuInfo& g, const MigProfile& p, const MigPlacement& pl, const SliceOptions& o) {
  api::Device d;
  d.name = mig_device_name(g.minor, p, pl.start);
  d.attributes = common_attributes(g);
  d.attributes["type"] = str("mig");
  d.attributes["profile"] = str(p.name);
  d.attributes["parentUUID"] = str(g.uuid);
  d.capacity = capacities(p);
  d.consumesCounters.push_back({counter_set_name(g.minor), counters(p, pl.start, pl.size)});
  apply_sharing(d, o);
  return d;
}

api::ResourceSlice new_slice(const SliceOptions& o) {
  api::ResourceSlice s;
  s.typeMeta = {api::kResourceV1, "ResourceSlice"};
  s.spec.driver = kDriverName;
  s.spec.pool.name = o.node_name;
  s.spec.pool.generation = o.generation;
  s.spec.nodeName = o.node_name;
  return s;
}

// Appends `devices` to `out` in chunks of at most `limit`.
void chunk_devices(std::vector<api::Device> devices, size_t limit, const SliceOptions& o,
                   std::vector<api::ResourceSlice>& out) {
  for (api::Device& d : devices) {
    auto t = o.taints.find(d.name);
    if (t != o.taints.end()) d.taints = t->second;
  }
  bool tainted = std::any_of(devices.begin(), devices.end(), [](const api::Device& d) { return !d.taints.empty(); });
  if (tainted) limit = std::min(limit, static_cast<size_t>(o.max_counter_devices_per_slice));
  for (size_t i = 0; i < devices.size(); i += limit) {
    api::ResourceSlice s = new_slice(o);
    size_t end = std::min(devices.size(), i + limit);
    s.spec.devices.assign(std::make_move_iterator(devices.begin() + static_cast<long>(i)),
                          std::make_move_iterator(devices.begin() + static_cast<long>(end)));
    out.push_back(std::move(s));
  }
}

// What one class asks its devices to publish: the sharing of its last config
// for this driver (the one prepare applies), with the config's device kind
// ("gpu" or "mig"); nullopt when it asks for none.
struct ClassWants {
  std::string type;
  ConsumableShares shares;
};
Result<std::optional<ClassWants>> class_wants(const api::DeviceClass& c) {
  ASSIGN_OR_RETURN(std::optional<DeviceConfig> last, class_device_config(c));
  if (!last || !last->sharing) return std::optional<ClassWants>();
  ClassWants w;
  w.type = last->kind == "MigDeviceConfig" ? "mig" : "gpu";
  const Sharing& sh = *last->sharing;
  if (sh.strategy == "MPS") {
    w.shares.mode = ConsumableShares::Mode::kMemory;
  } else if (sh.time_slicing && sh.time_slicing->replicas) {
    w.shares = {ConsumableShares::Mode::kShares, *sh.time_slicing->replicas};
  } else {
    return std::optional<ClassWants>();  // time-slicing among one claim's containers only
  }
  return std::optional<ClassWants>(w);
}

}  // namespace

Result<ConsumableShares> parse_consumable_shares(std::string_view value) {
  if (value == "disabled") return ConsumableShares{};
  if (value == "unlimited") return ConsumableShares{ConsumableShares::Mode::kUnlimited, 0};
  if (value == "memory") return ConsumableShares{ConsumableShares::Mode::kMemory, 0};
  int64_t n = 0;
  bool digits = !value.empty() && value.size() <= 9;
  for (char c : value) {
    digits = digits && c >= '0' && c <= '9';
    n = n * 10 + (c - '0');
  }
  if (!digits || n <= 0) {
    return invalid_error(fmt::format(
        "invalid value for --consumable-shares: \"{}\" (must be 'disabled', 'memory', 'unlimited', or a positive integer)",
        value));
  }
  return ConsumableShares{ConsumableShares::Mode::kShares, n};
}

std::string to_string(const ConsumableShares& s) {
  switch (s.mode) {
    case ConsumableShares::Mode::kDisabled: return "disabled";
    case ConsumableShares::Mode::kUnlimited: return "unlimited";
    case ConsumableShares::Mode::kMemory: return "memory";
    case ConsumableShares::Mode::kShares: break;
  }
  return std::to_string(s.shares);
}

Result<ClassSharing> class_sharing(const std::vector<GpuInfo>& gpus, const SliceOptions& options,
                                   const std::vector<api::DeviceClass>& classes) {
  ClassSharing out;
  std::map<std::string, ClassWants> wanted;  // by class name: the first name wins a device
  std::vector<api::DeviceClass> sharing_classes;
  for (const api::DeviceClass& c : classes) {
    auto w = class_wants(c);
    if (!w.has_value()) {
      out.warnings.push_back(fmt::format("DeviceClass {}: {}", c.metadata.name, w.error().message()));
    } else if (*w) {
      wanted.emplace(c.metadata.name, **w);
      sharing_classes.push_back(c);
    }
  }
  if (wanted.empty()) return out;
  SliceOptions plain = options;  // selectors see the devices as published without sharing
  plain.sharing.clear();
  plain.consumable_shares = {};
  ASSIGN_OR_RETURN(std::vector<api::ResourceSlice> slices, build_slices(gpus, plain));
  auto snap = alloc::Snapshot::build(std::move(slices), std::move(sharing_classes));
  for (const auto& [name, w] : wanted) {
    const alloc::Snapshot::ClassEntry* entry = snap->find_class(name);
    if (!entry) continue;
    bool reported = false;  // one selector error per class is enough to fix it
    for (uint32_t d = 0; d < snap->devices().size(); ++d) {
      const api::Device& dev = snap->device(d);
      if (entry->match[d] == alloc::Snapshot::kError && !reported) {
        reported = true;
        auto e = entry->errors.find(d);
        out.warnings.push_back(fmt::format("DeviceClass {}: device {}: {}", name, dev.name,
                                           e == entry->errors.end() ? "selector error" : e->second));
      }
      if (entry->match[d] != alloc::Snapshot::kYes) continue;
      auto type = dev.attributes.find("type");
      if (type == dev.attributes.end() || type->second.string_.value_or("") != w.type) continue;
      auto [it, inserted] = out.by_class.emplace(dev.name, name);
      if (!inserted) {
        out.warnings.push_back(fmt::format("DeviceClass {}: device {} is already shared as DeviceClass {} says",
                                           name, dev.name, it->second));
        continue;
      }
      out.devices[dev.name] = w.shares;
    }
  }
  return out;
}

std::string gpu_device_name(int minor) { return fmt::format("gpu-{}", minor); }
std::string counter_set_name(int minor) { return fmt::format("gpu-{}-counter-set", minor); }
std::string mig_device_name(int minor, const MigProfile& profile, int start) {
  return fmt::format("gpu-{}-mig-{}-{}-{}", minor, mig_profile_label(profile.name), profile.id, start);
}

Result<std::vector<api::ResourceSlice>> build_slices(const std::vector<GpuInfo>& gpus, const SliceOptions& o) {
  if (o.node_name.empty()) return invalid_error("building ResourceSlices: node name is empty");
  std::vector<const GpuInfo*> ordered;
  std::set<int> minors;
  for (const GpuInfo& g : gpus) {
    if (!minors.insert(g.minor).second) {
      return invalid_error(fmt::format("building ResourceSlices: two GPUs have minor {}", g.minor));
    }
    ordered.push_back(&g);
  }
  std::sort(ordered.begin(), ordered.end(),
            [](const GpuInfo* a, const GpuInfo* b) { return a->pci_bus_id < b->pci_bus_id; });
  for (const auto& [name, sharing] : o.sharing) {
    if (!resolve_device(gpus, name).has_value()) {
      return invalid_error(fmt::format("sharing of {}: no such device", name));
    }
    if (sharing.mode == ConsumableShares::Mode::kShares && sharing.shares < 1) {
      return invalid_error(fmt::format("sharing of {}: shares {} must be at least 1", name, sharing.shares));
    }
  }
  if (o.consumable_shares.mode == ConsumableShares::Mode::kShares && o.consumable_shares.shares < 1) {
    return invalid_error(fmt::format("consumable shares {} must be at least 1", o.consumable_shares.shares));
  }

  std::vector<api::ResourceSlice> out;
  bool any_partitionable = std::any_of(gpus.begin(), gpus.end(), [&](const GpuInfo& g) { return partitionable(g, o); });
  if (!any_partitionable) {
    std::vector<api::Device> devices;
    for (const GpuInfo* g : ordered) devices.push_back(full_gpu(*g, o));
    chunk_devices(std::move(devices), static_cast<size_t>(o.max_devices_per_slice), o, out);
    if (out.empty()) out.push_back(new_slice(o));  // an empty pool still says "no devices here"
  } else {
    // Counter sets first: since Kubernetes 1.35 devices may consume counter sets of
    // another slice of the same pool, which lets each GPU's devices fill a slice.
    std::vector<api::CounterSet> sets;
    for (const GpuInfo* g : ordered) {
      if (partitionable(*g, o)) {
        sets.push_back({counter_set_name(g->minor), counters(max_profile(*g), 0, g->memory_slice_count)});
      }
    }
    for (size_t i = 0; i < sets.size(); i += static_cast<size_t>(o.max_counter_sets_per_slice)) {
      api::ResourceSlice s = new_slice(o);
      size_t end = std::min(sets.size(), i + static_cast<size_t>(o.max_counter_sets_per_slice));
      s.spec.sharedCounters.assign(sets.begin() + static_cast<long>(i), sets.begin() + static_cast<long>(end));
      out.push_back(std::move(s));
    }
    for (const GpuInfo* g : ordered) {
      std::vector<api::Device> devices;
      devices.push_back(full_gpu(*g, o));
      if (partitionable(*g, o)) {
        for (const MigProfile& p : g->mig_profiles) {
          for (const MigPlacement& pl : p.placements) devices.push_back(mig_device(*g, p, pl, o));
        }
      }
      std::sort(devices.begin(), devices.end(),
                [](const api::Device& a, const api::Device& b) { return a.name < b.name; });
      size_t limit = partitionable(*g, o) ? static_cast<size_t>(o.max_counter_devices_per_slice)
                                          : static_cast<size_t>(o.max_devices_per_slice);
      chunk_devices(std::move(devices), limit, o, out);
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].metadata.name = fmt::format("{}-{}-{}", o.node_name, kDriverName, i);
    out[i].spec.pool.resourceSliceCount = static_cast<int64_t>(out.size());
  }
  return out;
}

Result<DeviceRef> resolve_device(const std::vector<GpuInfo>& gpus, const std::string& device_name) {
  for (const GpuInfo& g : gpus) {
    std::string full = gpu_device_name(g.minor);
    if (device_name == full) return DeviceRef{&g, nullptr, {}};
    if (device_name.rfind(full + "-mig-", 0) != 0) continue;
    for (const MigProfile& p : g.mig_profiles) {
      for (const MigPlacement& pl : p.placements) {
        if (mig_device_name(g.minor, p, pl.start) == device_name) return DeviceRef{&g, &p, pl};
      }
    }
  }
  return not_found_error(fmt::format("device {} is not a device of this node", device_name));
}

std::vector<api::DeviceClass> device_classes() {
  auto make = [](const char* name, const char* type) {
    api::DeviceClass c;
    c.typeMeta = {api::kResourceV1, "DeviceClass"};
    c.metadata.name = name;
    c.spec.selectors.push_back(api::DeviceSelector{api::CELDeviceSelector{fmt::format(
        "device.driver == '{}' && device.attributes['{}'].type == '{}'", kDriverName, kDriverName, type)}});
    return c;
  };
  std::vector<api::DeviceClass> out = {make(kGpuClassName, "gpu"), make(kMigClassName, "mig")};
  out[0].spec.extendedResourceName = "nvidia.com/gpu";
  return out;
}

}  // namespace draplane::node
