// Every manifest under examples/ decodes, defaults and validates (CEL selectors are
// compiled by the CLI test in tests/validate.cmake), except the seeds' examples kept
// as written: examples/v1alpha2 must fail with the migration hint, and
// examples/seed-000-as-written with the decoding error that explains it.
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

struct Outcome {
  int objects = 0;
  std::vector<std::string> errors;
};

Outcome check_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  Outcome out;
  ValidationOptions options;
  options.validate_claim_status = true;
  for (auto& d : decode_stream(ss.str())) {
    ++out.objects;
    if (!d.object.has_value()) {
      out.errors.push_back(d.object.error().message());
      continue;
    }
    Object object = *d.object;
    for (const auto& e : validate_manifest_object(object, options, {})) out.errors.push_back(e.to_string());
  }
  return out;
}

std::vector<fs::path> yaml_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

const fs::path kExamples = fs::path(DRAPLANE_SOURCE_DIR) / "examples";

TEST(Examples, ValidOnesValidate) {
  int files = 0;
  for (const char* sub : {"seed-000", "seed-004", "gpu"}) {
    for (const auto& f : yaml_files(kExamples / sub)) {
      SCOPED_TRACE(f.string());
      Outcome o = check_file(f);
      EXPECT_GT(o.objects, 0);
      EXPECT_EQ(o.errors, std::vector<std::string>{});
      ++files;
    }
  }
  EXPECT_GE(files, 16);
}

TEST(Examples, V1alpha2FailsWithMigrationHint) {
  struct Case {
    const char* file;
    const char* want;
  } cases[] = {
      {"deviceclass-nvidia-a100.yaml",
       "resource.k8s.io/v1alpha2 was removed in Kubernetes 1.31: use apiVersion resource.k8s.io/v1; "
       "spec.selectors[0].cel.expression: a device has no memory field: the driver publishes memory as a "
       "capacity, compared as a quantity: device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) > 0 "
       "(with your driver's domain and the amount with its unit)"},
      {"resourceclaim-claim-gpu-a100.yaml",
       "resource.k8s.io/v1alpha2 was removed in Kubernetes 1.31: use apiVersion resource.k8s.io/v1; move the "
       "request fields under exactly: spec.devices.requests[0].exactly.deviceClassName: nvidia-a100; name the "
       "request (required in v1, a DNS label): spec.devices.requests[0].name: gpu"},
      {"pod-training-job.yaml",
       "spec.resourceClaims[0].source: field was removed in Kubernetes 1.31 (pod claim sources are gone since "
       "resource.k8s.io/v1alpha3): write spec.resourceClaims[0].resourceClaimName: claim-gpu-a100 directly on the "
       "pod claim instead of under source"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    Outcome o = check_file(kExamples / "v1alpha2" / c.file);
    EXPECT_EQ(o.errors, std::vector<std::string>{c.want});
  }
  EXPECT_EQ(yaml_files(kExamples / "v1alpha2").size(), std::size(cases));
}

TEST(Examples, SeedAsWrittenFailsToDecode) {
  Outcome o = check_file(kExamples / "seed-000-as-written" / "resourceclaim-gpu-40gi.yaml");
  EXPECT_EQ(o.errors, std::vector<std::string>{
                          "strict decoding error: unknown field \"spec.devices.requests[0].deviceClassName\", unknown "
                          "field \"spec.devices.requests[0].count\", unknown field \"spec.devices.requests[0].selectors\""});
  o = check_file(kExamples / "seed-000-as-written" / "resourceclaim-first-available-fragment.yaml");
  ASSERT_EQ(o.errors.size(), 1u);
  EXPECT_EQ(o.errors[0].rfind("Object 'Kind' is missing in ", 0), 0u) << o.errors[0];
}

}  // namespace
}  // namespace draplane::api
