// `draplane convert -f FILE... --to resource.k8s.io/v1 [-o yaml|json]`: reads
// manifests of any served resource.k8s.io version (v1beta1, v1beta2, v1) plus
// core objects, and prints them as v1. Removed versions (v1alpha2, ...) fail with
// what to write instead. Exit 0 when every document converted, 2 otherwise (the
// documents that did convert are still printed).
#include <iostream>
#include <memory>

#include "api/codec.h"
#include "api/conversion.h"
#include "cmd/commands.h"
#include "cmd/input.h"

namespace draplane::cmd {
namespace {

struct ConvertFlags {
  std::vector<std::string> files;
  std::string to = std::string(api::kConvertTarget);
  std::string output = "yaml";
};

int run_convert(const ConvertFlags& flags) {
  if (Status st = api::check_conversion_target(flags.to); !st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return 2;
  }
  if (flags.output != "yaml" && flags.output != "json") {
    std::cerr << "error: unsupported output format \"" << flags.output << "\" (use yaml or json)\n";
    return 2;
  }
  bool ok = true;
  std::vector<api::Object> objects;
  for (const std::string& file : flags.files) {
    Result<std::string> text = read_input(file);
    if (!text.has_value()) {
      std::cerr << text.error().message() << "\n";
      ok = false;
      continue;
    }
    for (api::DecodedDocument& doc : api::convert_stream(*text)) {
      if (!doc.object.has_value()) {
        std::cerr << file << ": document " << doc.index << ": "
                  << (doc.kind.empty() ? "<unknown>" : doc.kind) << "/" << doc.name << ": "
                  << doc.object.error().message() << "\n";
        ok = false;
        continue;
      }
      objects.push_back(std::move(doc.object).value());
    }
  }
  if (flags.output == "json") {
    if (objects.size() == 1) {
      std::cout << api::to_json(objects[0], true) << "\n";
    } else if (!objects.empty()) {
      std::cout << api::to_json_list(objects, true) << "\n";
    }
  } else {
    std::cout << api::to_yaml_stream(objects);
  }
  return ok ? 0 : 2;
}

}  // namespace

void add_convert(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ConvertFlags>();
  auto* cmd = app.add_subcommand(
      "convert",
      "Convert resource.k8s.io v1beta1/v1beta2 manifests to v1 (exit 0 all converted, 2 otherwise)");
  cmd->add_option("-f,--filename", flags->files, "Manifest file (YAML or JSON), or - for stdin; repeatable")
      ->required();
  cmd->add_option("--to,--output-version", flags->to, "Target apiVersion")
      ->default_str(std::string(api::kConvertTarget));
  cmd->add_option("-o,--output", flags->output, "Output format: yaml or json")->default_str("yaml");
  cmd->footer(
      "Errors go to stderr as `<file>: document <i>: <Kind>/<name>: <reason>`;\n"
      "v1alpha2 objects (ResourceClass, pod claim source:) are rejected with what to write in v1.");
  cmd->callback([flags, &exit_code] { exit_code = run_convert(*flags); });
}

}  // namespace draplane::cmd
