#include "node/sim.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/split.h"
#include "node/catalogue.h"
#include "node/versions.h"

namespace draplane::node {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A UUID-shaped string from two hashes of (seed, salt).
std::string uuid_from(uint64_t seed, uint64_t salt) {
  uint64_t a = splitmix64(seed ^ splitmix64(salt));
  uint64_t b = splitmix64(a ^ 0x5bd1e995ULL);
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xffff,
                     b >> 48, b & 0xffffffffffffULL);
}

// PCI buses of the eight GPUs of a DGX H100 board; further GPUs go to later domains.
constexpr int kBuses[8] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};

GpuInfo make_gpu(const GpuModel& m, int index, int total, const SimOptions& o, const std::string& clique) {
  GpuInfo g;
  g.index = index;
  g.minor = index;
  g.uuid = "GPU-" + uuid_from(o.seed, static_cast<uint64_t>(index) + 1);
  g.product_name = m.product_name;
  g.brand = m.brand;
  g.architecture = m.architecture;
  g.cuda_compute_capability = compute_capability_semver(m.cc_major, m.cc_minor);
  g.driver_version = to_semver(o.driver_version).value_or(std::string("550.54.15"));
  g.cuda_driver_version = cuda_driver_version_semver(o.cuda_driver_version).value_or(std::string("12.4.0"));
  int domain = index / 8;
  int bus = kBuses[index % 8];
  g.pci_bus_id = fmt::format("{:04x}:{:02x}:00.0", domain, bus);
  g.pcie_root = fmt::format("pci{:04x}:{:02x}", domain, bus & 0xf0);
  g.numa_node = total > 1 && index >= total / 2 ? 1 : 0;
  g.clique_id = clique;
  g.memory_bytes = m.memory_mib * 1024 * 1024;
  g.mig_capable = !m.mig_profiles.empty();
  g.mig_profiles = m.mig_profiles;
  return g;
}

Status validate_options(const SimOptions& o) {
  auto dv = to_semver(o.driver_version);
  if (!dv) return invalid_error("driverVersion: " + dv.error().message());
  auto cv = cuda_driver_version_semver(o.cuda_driver_version);
  if (!cv) return invalid_error("cudaDriverVersion: " + cv.error().message());
  return {};
}

// One group of GPUs of one model (a spec item or an inventory entry).
struct Group {
  const GpuModel* model = nullptr;
  int count = 1;
};

std::vector<GpuInfo> expand(const std::vector<Group>& groups, const SimOptions& o) {
  int total = 0;
  for (const Group& g : groups) total += g.count;
  std::vector<GpuInfo> out;
  int index = 0;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const Group& g = groups[gi];
    // One NVLink island per group of fabric-attached GPUs.
    std::string clique =
        g.model->nvlink_fabric ? fmt::format("{}.{}", uuid_from(o.seed, 0xc11c0e00ULL), gi) : std::string();
    for (int i = 0; i < g.count; ++i) out.push_back(make_gpu(*g.model, index++, total, o, clique));
  }
  return out;
}

}  // namespace

Result<std::vector<GpuInfo>> parse_sim_spec(std::string_view spec, const SimOptions& options) {
  RETURN_IF_ERROR(validate_options(options));
  if (spec.empty()) return invalid_error("sim spec is empty: want e.g. sim:8xH100 or sim:4xA100-40GB,2xH200");
  std::vector<Group> groups;
  for (std::string_view item : common::split(spec, ',')) {
    Group g;
    std::string_view model = item;
    size_t x = item.find('x');
    if (x != std::string_view::npos && x > 0 &&
        std::all_of(item.begin(), item.begin() + x, [](char c) { return c >= '0' && c <= '9'; })) {
      if (x > 4) return invalid_error(fmt::format("sim spec item \"{}\": count too large", item));
      g.count = std::stoi(std::string(item.substr(0, x)));
      model = item.substr(x + 1);
    }
    if (g.count <= 0 || g.count > 256) {
      return invalid_error(fmt::format("sim spec item \"{}\": count must be between 1 and 256", item));
    }
    g.model = find_gpu_model(model);
    if (g.model == nullptr) {
      return invalid_error(
          fmt::format("sim spec item \"{}\": unknown GPU model \"{}\" (known: {})", item, model, gpu_model_names()));
    }
    groups.push_back(g);
  }
  return expand(groups, options);
}

Result<std::vector<GpuInfo>> parse_inventory(std::string_view yaml_text, const SimOptions& options) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return invalid_error(fmt::format("inventory: {}", e.what()));
  }
  if (!root.IsMap()) return invalid_error("inventory: must be a mapping with a gpus list");
  SimOptions o = options;
  try {
    for (const auto& kv : root) {
      std::string key = kv.first.as<std::string>();
      if (key == "driverVersion") {
        o.driver_version = kv.second.as<std::string>();
      } else if (key == "cudaDriverVersion") {
        o.cuda_driver_version = kv.second.as<int>();
      } else if (key != "gpus") {
        return invalid_error(fmt::format("inventory: {}: unknown field", key));
      }
    }
  } catch (const YAML::Exception& e) {
    return invalid_error(fmt::format("inventory: {}", e.what()));
  }
  RETURN_IF_ERROR(validate_options(o));
  YAML::Node list = root["gpus"];
  if (!list || !list.IsSequence() || list.size() == 0) {
    return invalid_error("inventory: gpus: Required value: a non-empty list of GPUs");
  }
  // First pass: groups; second: per-GPU overrides once indices are known.
  std::vector<Group> groups;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node& e = list[i];
    std::string path = fmt::format("gpus[{}]", i);
    if (!e.IsMap()) return invalid_error(path + ": must be a mapping");
    Group g;
    try {
      if (!e["model"]) return invalid_error(path + ".model: Required value");
      std::string model = e["model"].as<std::string>();
      g.model = find_gpu_model(model);
      if (g.model == nullptr) {
        return invalid_error(fmt::format("{}.model: Unsupported value: \"{}\": supported values: {}", path, model,
                                         gpu_model_names()));
      }
      if (e["count"]) g.count = e["count"].as<int>();
    } catch (const YAML::Exception& ex) {
      return invalid_error(fmt::format("{}: {}", path, ex.what()));
    }
    if (g.count <= 0 || g.count > 256) {
      return invalid_error(fmt::format("{}.count: Invalid value: {}: must be between 1 and 256", path, g.count));
    }
    groups.push_back(g);
  }
  std::vector<GpuInfo> gpus = expand(groups, o);
  static const std::set<std::string> kSingle = {"uuid", "pciBusID", "pcieRoot", "minor"};
  static const std::set<std::string> kKnown = {"model",        "count",      "numaNode",    "cliqueID",
                                               "addressingMode", "migCapable", "productName", "uuid",
                                               "pciBusID",     "pcieRoot",   "minor"};
  size_t first = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node& e = list[i];
    std::string path = fmt::format("gpus[{}]", i);
    try {
      for (const auto& kv : e) {
        std::string key = kv.first.as<std::string>();
        if (!kKnown.count(key)) return invalid_error(fmt::format("{}.{}: unknown field", path, key));
        if (kSingle.count(key) && groups[i].count != 1) {
          return invalid_error(fmt::format("{}.{}: Forbidden: only allowed when count is 1", path, key));
        }
        for (int k = 0; k < groups[i].count; ++k) {
          GpuInfo& g = gpus[first + k];
          if (key == "numaNode") {
            g.numa_node = kv.second.as<int64_t>();
          } else if (key == "cliqueID") {
            g.clique_id = kv.second.as<std::string>();
          } else if (key == "addressingMode") {
            std::string m = kv.second.as<std::string>();
            if (m != "ATS" && m != "HMM" && m != "None") {
              return invalid_error(fmt::format(
                  "{}.addressingMode: Unsupported value: \"{}\": supported values: \"ATS\", \"HMM\", \"None\"", path, m));
            }
            g.addressing_mode = m;
          } else if (key == "migCapable") {
            g.mig_capable = kv.second.as<bool>();
            if (!g.mig_capable) g.mig_profiles.clear();
          } else if (key == "productName") {
            g.product_name = kv.second.as<std::string>();
          } else if (key == "uuid") {
            g.uuid = kv.second.as<std::string>();
          } else if (key == "pciBusID") {
            auto b = normalize_pci_bus_id(kv.second.as<std::string>());
            if (!b) return invalid_error(fmt::format("{}.pciBusID: Invalid value: {}", path, b.error().message()));
            g.pci_bus_id = *b;
          } else if (key == "pcieRoot") {
            g.pcie_root = kv.second.as<std::string>();
          } else if (key == "minor") {
            g.minor = kv.second.as<int>();
            if (g.minor < 0) return invalid_error(fmt::format("{}.minor: Invalid value: {}: must be >= 0", path, g.minor));
          }
        }
      }
    } catch (const YAML::Exception& ex) {
      return invalid_error(fmt::format("{}: {}", path, ex.what()));
    }
    first += groups[i].count;
  }
  // Identities must stay unique or the slice would be rejected.
  std::set<std::string> uuids, buses;
  std::set<int> minors;
  for (const GpuInfo& g : gpus) {
    if (!uuids.insert(g.uuid).second) return invalid_error(fmt::format("inventory: duplicate uuid \"{}\"", g.uuid));
    if (!buses.insert(g.pci_bus_id).second)
      return invalid_error(fmt::format("inventory: duplicate pciBusID \"{}\"", g.pci_bus_id));
    if (!minors.insert(g.minor).second) return invalid_error(fmt::format("inventory: duplicate minor {}", g.minor));
  }
  return gpus;
}

Result<std::vector<GpuInfo>> load_inventory_file(const std::string& path, const SimOptions& options) {
  std::ifstream in(path);
  if (!in) return Status(Code::kNotFound, fmt::format("inventory file {}: cannot be read", path));
  std::stringstream ss;
  ss << in.rdbuf();
  auto r = parse_inventory(ss.str(), options);
  if (!r) return invalid_error(fmt::format("{}: {}", path, r.error().message()));
  return r;
}

// ------------------------------------------------------------ injected events

std::string format_injected_event(const GpuEvent& event) {
  const std::string uuid = event.uuid.empty() ? "*" : event.uuid;
  switch (event.kind) {
    case GpuEvent::Kind::kXid: return fmt::format("xid {} {}", uuid, event.xid);
    case GpuEvent::Kind::kGpuLost: return "gpu-lost " + uuid;
    case GpuEvent::Kind::kRecovered: return "recover " + uuid;
  }
  return "";
}

Result<GpuEvent> parse_injected_event(std::string_view line) {
  std::vector<std::string> words;
  for (std::string_view w : common::split(line, ' ')) {
    if (!w.empty()) words.emplace_back(w);
  }
  auto bad = [&](const std::string& why) {
    return invalid_error(fmt::format("injected event \"{}\": {}", line, why));
  };
  if (words.size() < 2) return bad("want \"xid <uuid> <code>\", \"gpu-lost <uuid>\" or \"recover <uuid>\"");
  GpuEvent e;
  e.uuid = words[1] == "*" ? "" : words[1];
  if (words[0] == "xid") {
    if (words.size() != 3) return bad("want \"xid <uuid> <code>\"");
    const std::string& code = words[2];
    if (code.empty() || code.size() > 9 || !std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoull(code) == 0) {
      return bad("the XID must be a positive number");
    }
    e.kind = GpuEvent::Kind::kXid;
    e.xid = std::stoull(code);
  } else if (words[0] == "gpu-lost" || words[0] == "recover") {
    if (words.size() != 2) return bad(fmt::format("want \"{} <uuid>\"", words[0]));
    e.kind = words[0] == "recover" ? GpuEvent::Kind::kRecovered : GpuEvent::Kind::kGpuLost;
  } else {
    return bad(fmt::format("unknown event \"{}\"", words[0]));
  }
  return e;
}

std::string format_injected_gpus(const std::vector<GpuInfo>& gpus) {
  std::string out;
  for (const GpuInfo& g : gpus) out += fmt::format("gpu-{} {}\n", g.minor, g.uuid);
  return out;
}

Result<std::string> resolve_injected_gpu(std::string_view gpus_text, std::string_view gpu) {
  if (gpu == "all") return std::string();
  std::string known;
  for (std::string_view line : common::split(gpus_text, '\n')) {
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos) continue;
    std::string_view name = line.substr(0, sp), uuid = line.substr(sp + 1);
    if (gpu == name || gpu == uuid) return std::string(uuid);
    known += fmt::format("{}{} ({})", known.empty() ? "" : ", ", name, uuid);
  }
  return not_found_error(fmt::format("no GPU \"{}\" on this node; its GPUs: {}", gpu, known.empty() ? "none" : known));
}

Status append_injected_event(const std::string& dir, const GpuEvent& event) {
  const std::string path = dir + "/" + kInjectedEventsFile;
  const std::string line = format_injected_event(event) + "\n";
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status(Code::kUnavailable, fmt::format("open {}: {}", path, std::strerror(errno)));
  ssize_t n = ::write(fd, line.data(), line.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size())) {
    return Status(Code::kUnavailable, fmt::format("write {}: {}", path, std::strerror(err)));
  }
  return {};
}

// ------------------------------------------------------------------ SimBackend

SimBackend::SimBackend(std::vector<GpuInfo> gpus, uint64_t seed) : seed_(seed), gpus_(std::move(gpus)) {}

const GpuInfo* SimBackend::find_gpu(const std::string& uuid) const {
  for (const GpuInfo& g : gpus_) {
    if (g.uuid == uuid) return &g;
  }
  return nullptr;
}

Result<std::vector<GpuInfo>> SimBackend::discover() {
  std::lock_guard<std::mutex> lock(mu_);
  return gpus_;
}

Result<MigInstance> SimBackend::create_mig_device(const std::string& parent_uuid, int profile_id,
                                                  int placement_start) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fail_next_create_) {
    fail_next_create_ = false;
    return Status(Code::kUnavailable, "sim: injected failure creating GPU instance");
  }
  GpuInfo* gpu = nullptr;
  for (GpuInfo& g : gpus_) {
    if (g.uuid == parent_uuid) gpu = &g;
  }
  if (gpu == nullptr) return not_found_error(fmt::format("GPU {} not found", parent_uuid));
  if (!gpu->mig_capable) {
    return Status(Code::kFailedPrecondition, fmt::format("GPU {} does not support MIG", parent_uuid));
  }
  const MigProfile* profile = nullptr;
  for (const MigProfile& p : gpu->mig_profiles) {
    if (p.id == profile_id) profile = &p;
  }
  if (profile == nullptr) {
    return not_found_error(fmt::format("GPU {}: no MIG profile with id {}", parent_uuid, profile_id));
  }
  auto pl = std::find_if(profile->placements.begin(), profile->placements.end(),
                         [&](const MigPlacement& p) { return p.start == placement_start; });
  if (pl == profile->placements.end()) {
    return not_found_error(
        fmt::format("GPU {}: profile {} has no placement starting at {}", parent_uuid, profile->name, placement_start));
  }
  std::vector<MigInstance>& existing = mig_[parent_uuid];
  int same_profile = 0;
  int next_gi = 1;
  for (const MigInstance& m : existing) {
    bool overlap = m.placement.start < pl->start + pl->size && pl->start < m.placement.start + m.placement.size;
    if (overlap) {
      return Status(Code::kFailedPrecondition,
                    fmt::format("GPU {}: placement {}:{} of {} overlaps GPU instance {}", parent_uuid, pl->start,
                                pl->size, profile->name, m.gi_id));
    }
    if (m.profile_id == profile_id) ++same_profile;
    next_gi = std::max(next_gi, m.gi_id + 1);
  }
  if (same_profile >= profile->instance_count) {
    return Status(Code::kFailedPrecondition, fmt::format("GPU {}: at most {} instances of {}", parent_uuid,
                                                         profile->instance_count, profile->name));
  }
  gpu->mig_enabled = true;
  MigInstance inst;
  inst.parent_uuid = parent_uuid;
  inst.parent_minor = gpu->minor;
  inst.profile_id = profile_id;
  inst.placement = *pl;
  inst.gi_id = next_gi;
  inst.ci_id = 0;
  inst.uuid = "MIG-" + uuid_from(seed_ ^ 0x4d4947ULL, ++mig_serial_ + (static_cast<uint64_t>(gpu->index) << 32));
  existing.push_back(inst);
  std::sort(existing.begin(), existing.end(),
            [](const MigInstance& a, const MigInstance& b) { return a.gi_id < b.gi_id; });
  return inst;
}

Status SimBackend::destroy_mig_device(const MigInstance& instance) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = mig_.find(instance.parent_uuid);
  if (it == mig_.end()) return {};
  auto& v = it->second;
  v.erase(std::remove_if(v.begin(), v.end(), [&](const MigInstance& m) { return m.gi_id == instance.gi_id; }),
          v.end());
  if (v.empty()) {
    mig_.erase(it);
    for (GpuInfo& g : gpus_) {
      if (g.uuid == instance.parent_uuid) g.mig_enabled = false;
    }
  }
  return {};
}

Result<std::vector<MigInstance>> SimBackend::list_mig_devices(const std::string& parent_uuid) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<MigInstance> out;
  for (const GpuInfo& g : gpus_) {  // GPU order, then GI id
    if (!parent_uuid.empty() && g.uuid != parent_uuid) continue;
    auto it = mig_.find(g.uuid);
    if (it != mig_.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  }
  return out;
}

Result<std::optional<GpuEvent>> SimBackend::wait_event(int timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (events_unavailable_) return Status(Code::kUnavailable, "sim: GPU events cannot be registered");
    read_injected_events();
    if (!events_.empty()) {
      GpuEvent e = events_.front();
      events_.pop_front();
      return std::optional<GpuEvent>(e);
    }
    const auto now = Clock::now();
    if (now >= deadline) return std::optional<GpuEvent>();
    // The events file is polled (every 100 ms) while waiting; inject_event wakes at once.
    auto until = events_path_.empty() ? deadline : std::min(deadline, now + std::chrono::milliseconds(100));
    cv_.wait_until(lock, until);
  }
}

Status SimBackend::watch_injected_events(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status(Code::kUnavailable, fmt::format("create {}: {}", dir, ec.message()));
  const std::string events = dir + "/" + kInjectedEventsFile;
  std::lock_guard<std::mutex> lock(mu_);
  {
    // Written then renamed: the command never reads half a list.
    const std::string tmp = dir + "/" + kInjectedGpusFile + ".tmp";
    std::ofstream(tmp, std::ios::trunc) << format_injected_gpus(gpus_);
    std::filesystem::rename(tmp, dir + "/" + kInjectedGpusFile, ec);
    if (ec) return Status(Code::kUnavailable, fmt::format("write {}/{}: {}", dir, kInjectedGpusFile, ec.message()));
  }
  auto size = std::filesystem::file_size(events, ec);
  events_offset_ = ec ? 0 : size;
  events_path_ = events;
  return {};
}

void SimBackend::read_injected_events() {
  if (events_path_.empty()) return;
  std::ifstream in(events_path_, std::ios::binary);
  if (!in) return;
  in.seekg(0, std::ios::end);
  const std::streamoff end_pos = in.tellg();
  if (end_pos < 0) return;
  const uint64_t size = static_cast<uint64_t>(end_pos);
  if (size < events_offset_) events_offset_ = 0;  // truncated by hand: read it anew
  if (size == events_offset_) return;
  in.seekg(static_cast<std::streamoff>(events_offset_));
  std::string text(size - events_offset_, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  size_t end = text.rfind('\n');
  if (end == std::string::npos) return;  // a line still being written
  events_offset_ += end + 1;
  for (std::string_view line : common::split(std::string_view(text).substr(0, end), '\n')) {
    // Lines that do not parse were not written by inject-xid (which checks
    // them first); they are skipped rather than stopping the monitor.
    if (auto e = parse_injected_event(line)) events_.push_back(*e);
  }
}

void SimBackend::inject_event(GpuEvent event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(event));
  }
  cv_.notify_all();
}

void SimBackend::set_events_unavailable(bool unavailable) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_unavailable_ = unavailable;
  }
  cv_.notify_all();
}

void SimBackend::fail_next_mig_create() {
  std::lock_guard<std::mutex> lock(mu_);
  fail_next_create_ = true;
}

}  // namespace draplane::node
