// The invalid manifests of tests/api/testdata/invalid: each file is decoded,
// defaulted and validated like `draplane validate` does (without the CEL checker,
// which the api module cannot use), and must produce exactly the error lines of its
// `# want: <Kind>/<name>: <error>` header comments, in order. Files marked `# cel:`
// need the CEL checker and are covered by the CLI test (tests/validate.cmake).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/codec.h"
#include "api/validation_manifest.h"

namespace draplane::api {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What `draplane validate` prints for a stream, minus the "<file>: document <i>: " prefix.
std::vector<std::string> validate_text(const std::string& text) {
  std::vector<DecodedDocument> docs = decode_stream(text);
  NamespaceLabels namespaces;
  for (const auto& d : docs) {
    if (!d.object.has_value()) continue;
    if (const auto* ns = std::get_if<Namespace>(&*d.object)) namespaces[ns->metadata.name] = ns->metadata.labels;
  }
  ValidationOptions options;
  options.validate_claim_status = true;
  std::vector<std::string> out;
  for (auto& d : docs) {
    if (!d.object.has_value()) {
      out.push_back((d.kind.empty() ? "" : d.kind + "/" + d.name + ": ") + d.object.error().message());
      continue;
    }
    Object object = *d.object;
    for (const auto& e : validate_manifest_object(object, options, namespaces)) {
      out.push_back(object_label(object) + ": " + e.to_string());
    }
  }
  return out;
}

TEST(InvalidManifests, ExactErrors) {
  fs::path dir = fs::path(DRAPLANE_SOURCE_DIR) / "tests/api/testdata/invalid";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 40u);
  int checked = 0;
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    std::string text = read_all(f);
    std::vector<std::string> want;
    bool needs_cel = false;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("# want: ", 0) == 0) want.push_back(line.substr(8));
      if (line.rfind("# cel:", 0) == 0) needs_cel = true;
    }
    ASSERT_FALSE(want.empty()) << "no `# want:` line";
    if (needs_cel) continue;
    EXPECT_EQ(validate_text(text), want);
    ++checked;
  }
  EXPECT_GE(checked, 40);
}

}  // namespace
}  // namespace draplane::api
