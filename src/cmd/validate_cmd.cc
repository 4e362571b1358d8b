// `draplane validate -f FILE|DIR|- ...`: decodes every document, applies the API
// server's defaults and validates it as the API server would on create (plus
// ResourceClaim status, which allocate inputs carry), with CEL selectors compiled.
//
// Output: `<Kind>/<name> valid` per object on stdout; each problem on stderr as
//   <file>: document <i>: <Kind>/<name>: <field error>
// (i counts from 0 within the file). Exit 0 when every object is valid, 2 otherwise
// (also for unreadable files and undecodable documents).
// A DIR is walked recursively for *.yaml, *.yml and *.json, in sorted path order.
// Admission: claims and templates asking for adminAccess are checked against the
// labels of their Namespace when that Namespace is part of the input.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include "api/codec.h"
#include "api/validation.h"
#include "api/validation_manifest.h"
#include "cel/cel.h"
#include "cmd/commands.h"
#include "cmd/input.h"

namespace draplane::cmd {
namespace {

namespace fs = std::filesystem;

struct Input {
  std::string path;  // as shown in messages ("-" for stdin)
  std::string text;
};

// Expands -f arguments into readable inputs; unreadable ones are reported and counted.
std::vector<Input> collect_inputs(const std::vector<std::string>& args, int& failures) {
  std::vector<Input> out;
  auto read_file = [&](const std::string& path) {
    auto text = read_input(path);
    if (!text.has_value()) {
      std::cerr << text.error().message() << "\n";
      ++failures;
      return;
    }
    out.push_back({path, std::move(*text)});
  };
  for (const auto& arg : args) {
    if (arg == "-") {
      read_file(arg);
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<std::string> files;
      for (auto it = fs::recursive_directory_iterator(arg, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec)) {
        if (!it->is_regular_file()) continue;
        std::string ext = it->path().extension().string();
        if (ext == ".yaml" || ext == ".yml" || ext == ".json") files.push_back(it->path().string());
      }
      if (ec) {
        std::cerr << arg << ": " << ec.message() << "\n";
        ++failures;
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) read_file(f);
    } else {
      read_file(arg);
    }
  }
  return out;
}

int run_validate(const std::vector<std::string>& args) {
  int failures = 0;
  std::vector<Input> inputs = collect_inputs(args, failures);

  api::ValidationOptions options;
  options.validate_claim_status = true;
  // The CEL module reports like the API server: "compilation failed: ..." (kInvalid),
  // "too complex, exceeds cost limit" (kForbidden).
  options.selector_checker = [](std::string_view expr) { return cel::check_selector(expr); };

  struct Decoded {
    const Input* input;
    api::DecodedDocument doc;
  };
  std::vector<Decoded> docs;
  api::NamespaceLabels namespace_labels;
  for (const auto& in : inputs) {
    for (auto& d : api::decode_stream(in.text)) {
      if (d.object.has_value()) {
        if (const auto* ns = std::get_if<api::Namespace>(&*d.object)) {
          namespace_labels[ns->metadata.name] = ns->metadata.labels;
        }
      }
      docs.push_back({&in, std::move(d)});
    }
  }

  for (auto& [input, doc] : docs) {
    std::string where = input->path + ": document " + std::to_string(doc.index) + ": ";
    if (!doc.object.has_value()) {
      std::string label = doc.kind.empty() ? "" : doc.kind + "/" + doc.name + ": ";
      std::cerr << where << label << doc.object.error().message() << "\n";
      ++failures;
      continue;
    }
    api::Object object = std::move(*doc.object);
    api::FieldErrorList errors = api::validate_manifest_object(object, options, namespace_labels);
    std::string label = api::object_label(object);
    if (errors.empty()) {
      std::cout << label << " valid\n";
      continue;
    }
    ++failures;
    for (const auto& e : errors) std::cerr << where << label << ": " << e.to_string() << "\n";
  }
  return failures == 0 ? 0 : 2;
}

}  // namespace

void add_validate(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "validate",
      "Decode, default and validate manifests as the API server would (exit 0 all valid, 2 otherwise)");
  auto files = std::make_shared<std::vector<std::string>>();
  cmd->add_option("-f,--filename", *files,
                  "File, directory (recursive: *.yaml, *.yml, *.json) or - for stdin; repeatable")
      ->required();
  cmd->footer(
      "Prints `<Kind>/<name> valid` per object; errors go to stderr as\n"
      "`<file>: document <i>: <Kind>/<name>: <field>: <reason>`.");
  cmd->callback([files, &exit_code] { exit_code = run_validate(*files); });
}

}  // namespace draplane::cmd
