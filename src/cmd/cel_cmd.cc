// `draplane cel eval EXPR [--device FILE]`: compiles EXPR in the DRA selector
// environment and evaluates it, against the device described in FILE when given.
// Prints the value in CEL literal form on stdout and exits 0; a compile or runtime
// error goes to stderr with exit 2 (DESIGN.md's CLI contract). The result need
// not be a bool here.
//
// The device file is YAML (or JSON): a ResourceSlice device plus its driver,
//   {driver, name?, attributes: {NAME: {int|bool|string|version: V}},
//    capacity: {NAME: {value: QUANTITY}}, allowMultipleAllocations?}
#include <fstream>
#include <iostream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "cel/cel.h"
#include "cmd/commands.h"

namespace draplane::cmd {
namespace {

struct DeviceFile {
  std::string driver;
  api::Device device;
};

Result<std::string> scalar(const YAML::Node& n, const std::string& path) {
  if (!n.IsScalar()) return invalid_error(path + ": must be a scalar");
  return n.as<std::string>();
}

// Reads the small device shape with yaml-cpp, converting its exceptions to errors.
Result<DeviceFile> parse_device(const std::string& text) {
  DeviceFile out;
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return invalid_error("device file: must be a mapping");
    for (const auto& kv : root) {
      std::string key = kv.first.as<std::string>();
      const YAML::Node& v = kv.second;
      if (key == "driver") {
        ASSIGN_OR_RETURN(out.driver, scalar(v, "driver"));
      } else if (key == "name") {
        ASSIGN_OR_RETURN(out.device.name, scalar(v, "name"));
      } else if (key == "allowMultipleAllocations") {
        out.device.allowMultipleAllocations = v.as<bool>();
      } else if (key == "attributes") {
        for (const auto& a : v) {
          std::string name = a.first.as<std::string>();
          std::string path = "attributes[" + name + "]";
          api::DeviceAttribute attr;
          if (!a.second.IsMap() || a.second.size() != 1) {
            return invalid_error(path + ": must have exactly one of int, bool, string, version");
          }
          for (const auto& t : a.second) {
            std::string kind = t.first.as<std::string>();
            if (kind == "int") attr.int_ = t.second.as<int64_t>();
            else if (kind == "bool") attr.bool_ = t.second.as<bool>();
            else if (kind == "string") attr.string_ = t.second.as<std::string>();
            else if (kind == "version") attr.version = t.second.as<std::string>();
            else return invalid_error(path + "." + kind + ": unknown field");
          }
          out.device.attributes[name] = attr;
        }
      } else if (key == "capacity") {
        for (const auto& c : v) {
          std::string name = c.first.as<std::string>();
          std::string path = "capacity[" + name + "]";
          YAML::Node value = c.second.IsMap() ? c.second["value"] : c.second;
          if (!value || !value.IsScalar()) return invalid_error(path + ".value: Required value");
          auto q = api::Quantity::parse(value.as<std::string>());
          if (!q) return invalid_error(path + ".value: " + q.error().message());
          out.device.capacity[name].value = *q;
        }
      } else {
        return invalid_error("device file: unknown field \"" + key + "\"");
      }
    }
  } catch (const YAML::Exception& e) {
    return invalid_error(std::string("device file: ") + e.what());
  }
  if (out.driver.empty()) return invalid_error("driver: Required value");
  return out;
}

}  // namespace

void add_cel(CLI::App& app, int& exit_code) {
  auto* cel = app.add_subcommand("cel", "Evaluate CEL device selectors");
  cel->require_subcommand(1);
  auto* eval = cel->add_subcommand("eval", "Evaluate EXPR (against a device) and print the value");
  auto expr = std::make_shared<std::string>();
  auto device_file = std::make_shared<std::string>();
  eval->add_option("EXPR", *expr, "CEL expression")->required();
  eval->add_option("--device", *device_file, "YAML file: {driver, attributes, capacity} of one device");
  eval->callback([&exit_code, expr, device_file] {
    std::optional<DeviceFile> dev;
    if (!device_file->empty()) {
      std::ifstream in(*device_file, std::ios::binary);
      if (!in) {
        std::cerr << *device_file << ": cannot open file\n";
        exit_code = 2;
        return;
      }
      std::ostringstream ss;
      ss << in.rdbuf();
      auto parsed = parse_device(ss.str());
      if (!parsed) {
        std::cerr << *device_file << ": " << parsed.error().message() << "\n";
        exit_code = 2;
        return;
      }
      dev = std::move(*parsed);
    }
    auto r = cel::eval_to_string(*expr, dev ? &dev->device : nullptr, dev ? dev->driver : "");
    if (!r) {
      std::cerr << r.error().message() << "\n";
      exit_code = 2;
      return;
    }
    std::cout << *r << "\n";
    exit_code = 0;
  });
}

}  // namespace draplane::cmd
