#include "node/cdi.h"

#include <algorithm>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "node/checkpoint.h"

namespace draplane::node {
namespace {

void emit_edits(YAML::Emitter& out, const CdiEdits& e) {
  out << YAML::BeginMap;
  if (!e.env.empty()) {
    out << YAML::Key << "env" << YAML::Value << YAML::BeginSeq;
    for (const auto& v : e.env) out << YAML::DoubleQuoted << v;
    out << YAML::EndSeq;
  }
  if (!e.device_nodes.empty()) {
    out << YAML::Key << "deviceNodes" << YAML::Value << YAML::BeginSeq;
    for (const auto& n : e.device_nodes) {
      out << YAML::BeginMap << YAML::Key << "path" << YAML::Value << n.path;
      if (!n.type.empty()) out << YAML::Key << "type" << YAML::Value << n.type;
      if (n.major) out << YAML::Key << "major" << YAML::Value << *n.major;
      if (n.minor) out << YAML::Key << "minor" << YAML::Value << *n.minor;
      if (n.file_mode) out << YAML::Key << "fileMode" << YAML::Value << *n.file_mode;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (!e.mounts.empty()) {
    out << YAML::Key << "mounts" << YAML::Value << YAML::BeginSeq;
    for (const auto& m : e.mounts) {
      out << YAML::BeginMap << YAML::Key << "hostPath" << YAML::Value << m.host_path << YAML::Key
          << "containerPath" << YAML::Value << m.container_path;
      if (!m.options.empty()) out << YAML::Key << "options" << YAML::Value << YAML::Flow << m.options;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (!e.hooks.empty()) {
    out << YAML::Key << "hooks" << YAML::Value << YAML::BeginSeq;
    for (const auto& h : e.hooks) {
      out << YAML::BeginMap << YAML::Key << "hookName" << YAML::Value << h.hook_name << YAML::Key << "path"
          << YAML::Value << h.path;
      if (!h.args.empty()) out << YAML::Key << "args" << YAML::Value << YAML::Flow << h.args;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

std::vector<std::string> strings(const YAML::Node& n) {
  std::vector<std::string> out;
  if (n) {
    for (const auto& v : n) out.push_back(v.as<std::string>());
  }
  return out;
}

CdiEdits parse_edits(const YAML::Node& n) {
  CdiEdits e;
  if (!n) return e;
  e.env = strings(n["env"]);
  if (n["deviceNodes"]) {
    for (const auto& d : n["deviceNodes"]) {
      CdiDeviceNode node;
      node.path = d["path"].as<std::string>();
      if (d["type"]) node.type = d["type"].as<std::string>();
      if (d["major"]) node.major = d["major"].as<int64_t>();
      if (d["minor"]) node.minor = d["minor"].as<int64_t>();
      if (d["fileMode"]) node.file_mode = d["fileMode"].as<uint32_t>();
      e.device_nodes.push_back(std::move(node));
    }
  }
  if (n["mounts"]) {
    for (const auto& m : n["mounts"]) {
      e.mounts.push_back({m["hostPath"].as<std::string>(), m["containerPath"].as<std::string>(), strings(m["options"])});
    }
  }
  if (n["hooks"]) {
    for (const auto& h : n["hooks"]) {
      e.hooks.push_back({h["hookName"].as<std::string>(), h["path"].as<std::string>(), strings(h["args"])});
    }
  }
  return e;
}

Result<int64_t> read_minor(const std::string& path) {
  std::ifstream in(path);
  if (!in) return not_found_error(fmt::format("MIG capability file {} is missing", path));
  std::string line;
  while (std::getline(in, line)) {
    int64_t v = 0;
    if (std::sscanf(line.c_str(), "DeviceFileMinor: %ld", &v) == 1) return v;
  }
  return not_found_error(fmt::format("{}: no DeviceFileMinor line", path));
}

}  // namespace

std::string encode_cdi_spec(const CdiSpec& spec) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "cdiVersion" << YAML::Value << YAML::DoubleQuoted << kCdiVersion;
  out << YAML::Key << "kind" << YAML::Value << spec.kind;
  if (!spec.edits.empty()) {
    out << YAML::Key << "containerEdits" << YAML::Value;
    emit_edits(out, spec.edits);
  }
  out << YAML::Key << "devices" << YAML::Value << YAML::BeginSeq;
  for (const CdiDevice& d : spec.devices) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << d.name << YAML::Key << "containerEdits"
        << YAML::Value;
    emit_edits(out, d.edits);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Result<CdiSpec> decode_cdi_spec(std::string_view text) {
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap()) return invalid_error("CDI spec: not a mapping");
    if (!root["cdiVersion"]) return invalid_error("CDI spec: cdiVersion: Required value");
    if (!root["kind"]) return invalid_error("CDI spec: kind: Required value");
    CdiSpec spec;
    spec.kind = root["kind"].as<std::string>();
    spec.edits = parse_edits(root["containerEdits"]);
    if (root["devices"]) {
      for (const auto& d : root["devices"]) {
        if (!d["name"]) return invalid_error("CDI spec: devices[].name: Required value");
        spec.devices.push_back({d["name"].as<std::string>(), parse_edits(d["containerEdits"])});
      }
    }
    return spec;
  } catch (const YAML::Exception& e) {
    return invalid_error(fmt::format("CDI spec: {}", e.what()));
  }
}

std::string cdi_spec_path(const std::string& dir, const std::string& claim_uid) {
  return fmt::format("{}/k8s.gpu.nvidia.com-claim_{}.yaml", dir, claim_uid);
}
std::string cdi_device_name(const std::string& claim_uid, const std::string& device) {
  return fmt::format("{}-{}", claim_uid, device);
}
std::string cdi_device_id(const std::string& claim_uid, const std::string& device) {
  return fmt::format("{}={}", kCdiKind, cdi_device_name(claim_uid, device));
}

Status write_cdi_spec(const std::string& dir, const std::string& claim_uid, const CdiSpec& spec) {
  // Not flushed: a spec names devices prepared in this boot, void after a reboot.
  return write_file_atomic(cdi_spec_path(dir, claim_uid), encode_cdi_spec(spec), FileSync::kUntilReboot);
}

Status remove_cdi_spec(const std::string& dir, const std::string& claim_uid) {
  std::error_code ec;
  std::filesystem::remove(cdi_spec_path(dir, claim_uid), ec);
  if (ec) return internal_error(fmt::format("removing {}: {}", cdi_spec_path(dir, claim_uid), ec.message()));
  return {};
}

DriverFiles find_driver_files(const std::string& root, const std::string& driver_version) {
  namespace fs = std::filesystem;
  DriverFiles out;
  if (driver_version.empty()) return out;
  const fs::path base(root.empty() ? "/" : root);
  const std::string suffix = ".so." + driver_version;
  std::error_code ec;
  for (const char* dir : {"usr/lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu", "usr/lib64", "lib/x86_64-linux-gnu",
                          "lib/aarch64-linux-gnu", "lib64", "usr/lib"}) {
    if (!fs::is_regular_file(base / dir / ("libcuda" + suffix), ec)) continue;
    out.lib_dir = std::string("/") + dir;
    for (const auto& entry : fs::directory_iterator(base / dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("lib", 0) == 0 && name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 && entry.is_regular_file(ec)) {
        out.libraries.push_back(std::string(dir) + "/" + name);
      }
    }
    std::sort(out.libraries.begin(), out.libraries.end());
    break;
  }
  if (out.lib_dir.empty()) return out;
  for (const char* bin : {"nvidia-smi", "nvidia-debugdump", "nvidia-persistenced", "nvidia-cuda-mps-control",
                          "nvidia-cuda-mps-server"}) {
    for (const char* dir : {"usr/bin", "usr/sbin", "bin", "sbin"}) {
      if (fs::is_regular_file(base / dir / bin, ec)) {
        out.binaries.push_back(std::string(dir) + "/" + bin);
        break;
      }
    }
  }
  return out;
}

CdiEdits nvidia_common_edits(const DriverFiles& files, const std::string& host_root) {
  CdiEdits e;
  e.env = {"NVIDIA_VISIBLE_DEVICES=void"};
  for (const char* p : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"}) {
    e.device_nodes.push_back({p, "", std::nullopt, std::nullopt, std::nullopt});
  }
  std::string host = host_root.empty() ? "/" : host_root;
  if (host.back() != '/') host += '/';
  for (const auto* list : {&files.libraries, &files.binaries}) {
    for (const std::string& rel : *list) {
      e.mounts.push_back({host + rel, "/" + rel, {"ro", "nosuid", "nodev", "bind"}});
    }
  }
  const std::string lib_dir = files.lib_dir.empty() ? "/usr/lib/x86_64-linux-gnu" : files.lib_dir;
  e.hooks.push_back({"createContainer", "/usr/bin/nvidia-cdi-hook",
                     {"nvidia-cdi-hook", "create-symlinks", "--link", "libcuda.so.1::" + lib_dir + "/libcuda.so"}});
  e.hooks.push_back({"createContainer", "/usr/bin/nvidia-cdi-hook", {"nvidia-cdi-hook", "update-ldcache", "--folder", lib_dir}});
  return e;
}

Result<std::vector<CdiDeviceNode>> mig_capability_nodes(const std::string& proc_root, int parent_minor, int gi,
                                                        int ci) {
  std::ifstream devices(proc_root + "/devices");
  std::optional<int64_t> major;
  std::string line;
  while (std::getline(devices, line)) {
    int64_t m = 0;
    char name[64] = {0};
    if (std::sscanf(line.c_str(), "%ld %63s", &m, name) == 2 && std::string(name) == "nvidia-caps") major = m;
  }
  if (!major) return not_found_error(fmt::format("{}/devices has no nvidia-caps line", proc_root));
  std::string base = fmt::format("{}/driver/nvidia/capabilities/gpu{}/mig/gi{}", proc_root, parent_minor, gi);
  ASSIGN_OR_RETURN(int64_t gi_minor, read_minor(base + "/access"));
  ASSIGN_OR_RETURN(int64_t ci_minor, read_minor(fmt::format("{}/ci{}/access", base, ci)));
  std::vector<CdiDeviceNode> out;
  for (int64_t m : {gi_minor, ci_minor}) {
    out.push_back({fmt::format("/dev/nvidia-caps/nvidia-cap{}", m), "c", major, m, 0444u});
  }
  return out;
}

}  // namespace draplane::node
