#include "node/versions.h"

#include <cctype>
#include <cmath>
#include <filesystem>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "common/split.h"

namespace draplane::node {
namespace {

using common::split;

bool all_of(std::string_view s, int (*pred)(int)) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!pred(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Result<std::string> to_semver(std::string_view dotted) {
  std::vector<std::string_view> parts = split(dotted, '.');
  if (parts.size() > 3) {
    return invalid_error(fmt::format("version \"{}\": more than three dot-separated parts", dotted));
  }
  std::string out;
  for (size_t i = 0; i < 3; ++i) {
    std::string_view p = i < parts.size() ? parts[i] : std::string_view("0");
    if (!all_of(p, [](int c) { return std::isdigit(c); })) {
      return invalid_error(fmt::format("version \"{}\": part \"{}\" is not a decimal number", dotted, p));
    }
    size_t nz = p.find_first_not_of('0');
    std::string_view digits = nz == std::string_view::npos ? std::string_view("0") : p.substr(nz);
    if (i > 0) out += '.';
    out += digits;
  }
  return out;
}

Result<std::string> cuda_driver_version_semver(int version) {
  if (version <= 0) return invalid_error(fmt::format("CUDA driver version {} is not positive", version));
  // NVML_CUDA_DRIVER_VERSION_MAJOR/MINOR; upstream publishes "<major>.<minor>" as semver.
  return fmt::format("{}.{}.0", version / 1000, (version % 1000) / 10);
}

std::string compute_capability_semver(int major, int minor) { return fmt::format("{}.{}.0", major, minor); }

Result<std::string> normalize_pci_bus_id(std::string_view nvml_bus_id) {
  auto bad = [&] {
    return invalid_error(fmt::format("PCI bus id \"{}\": want DOMAIN:BUS:DEVICE.FUNCTION in hex", nvml_bus_id));
  };
  std::vector<std::string_view> parts = split(nvml_bus_id, ':');
  if (parts.size() != 3) return bad();
  std::vector<std::string_view> dev_fn = split(parts[2], '.');
  if (dev_fn.size() != 2) return bad();
  auto hex = [](std::string_view s) { return all_of(s, [](int c) { return std::isxdigit(c); }); };
  std::string_view domain = parts[0];
  if (!hex(domain) || domain.size() > 8 || !hex(parts[1]) || parts[1].size() != 2 || !hex(dev_fn[0]) ||
      dev_fn[0].size() != 2 || !hex(dev_fn[1]) || dev_fn[1].size() != 1) {
    return bad();
  }
  std::string dom(domain);
  if (dom.size() > 4) {
    // The upper digits of NVML's 32-bit domain are zero on every Linux system.
    if (dom.find_first_not_of('0') < dom.size() - 4) return bad();
    dom = dom.substr(dom.size() - 4);
  }
  while (dom.size() < 4) dom.insert(dom.begin(), '0');
  return lower(fmt::format("{}:{}:{}.{}", dom, parts[1], dev_fn[0], dev_fn[1]));
}

Result<std::string> pcie_root_from_sysfs_path(std::string_view resolved_path) {
  constexpr std::string_view kPrefix = "/sys/devices/";
  if (resolved_path.substr(0, kPrefix.size()) != kPrefix) {
    return Status(Code::kNotFound, fmt::format("sysfs path \"{}\" is not under /sys/devices", resolved_path));
  }
  std::string_view rest = resolved_path.substr(kPrefix.size());
  std::string_view first = rest.substr(0, rest.find('/'));
  if (first.substr(0, 3) != "pci") {
    return Status(Code::kNotFound, fmt::format("sysfs path \"{}\" has no pci root element", resolved_path));
  }
  return std::string(first);
}

Result<std::string> pcie_root_for_bus_id(std::string_view sysfs_root, std::string_view bus_id) {
  namespace fs = std::filesystem;
  fs::path link = fs::path(std::string(sysfs_root)) / "bus/pci/devices" / std::string(bus_id);
  std::error_code ec;
  fs::path resolved = fs::canonical(link, ec);
  if (ec) {
    return Status(Code::kNotFound, fmt::format("resolving {}: {}", link.string(), ec.message()));
  }
  // Strip the sysfs root so a test tree under /tmp reads like /sys.
  std::string path = resolved.string();
  fs::path root_resolved = fs::canonical(fs::path(std::string(sysfs_root)), ec);
  if (!ec && root_resolved.string() != "/sys" && path.rfind(root_resolved.string(), 0) == 0) {
    path = "/sys" + path.substr(root_resolved.string().size());
  }
  return pcie_root_from_sysfs_path(path);
}

std::string mig_profile_label(std::string_view profile_name) {
  std::string out;
  for (char c : profile_name) {
    if (c == '.') continue;
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool ok = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '-';
    out += ok ? l : '-';
  }
  size_t b = out.find_first_not_of('-');
  if (b == std::string::npos) return "";
  size_t e = out.find_last_not_of('-');
  return out.substr(b, e - b + 1);
}

}  // namespace draplane::node

namespace draplane::node {

std::string mig_profile_name(int slice_count, int64_t memory_mib, int64_t total_memory_bytes,
                             bool media_extensions) {
  constexpr double kOneMiB = 1024.0 * 1024.0;
  constexpr int64_t kOneGiB = 1024LL * 1024 * 1024;
  double fraction = total_memory_bytes > 0 ? (static_cast<double>(memory_mib) * kOneMiB) /
                                                 static_cast<double>(total_memory_bytes)
                                           : 0.0;
  fraction = std::ceil(fraction * 8.0) / 8.0;
  double total_gb = static_cast<double>((total_memory_bytes + kOneGiB - 1) / kOneGiB);
  auto gb = static_cast<int64_t>(std::llround(fraction * total_gb));
  return fmt::format("{}g.{}gb{}", slice_count, gb, media_extensions ? "+me" : "");
}

}  // namespace draplane::node
