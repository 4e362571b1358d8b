#include "node/versions.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace draplane::node {
namespace {

TEST(Versions, ToSemver) {
  struct Case {
    const char* in;
    const char* want;  // nullptr: error
  } cases[] = {
      {"550.54.15", "550.54.15"}, {"535.104.05", "535.104.5"}, {"9.0", "9.0.0"},   {"12", "12.0.0"},
      {"00.01.00", "0.1.0"},      {"1.2.3.4", nullptr},         {"1.x", nullptr}, {"", nullptr},
      {"1..2", nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    auto r = to_semver(c.in);
    if (c.want == nullptr) {
      ASSERT_FALSE(r.has_value());
      EXPECT_EQ(r.error().code(), Code::kInvalid);
    } else {
      ASSERT_TRUE(r.has_value()) << r.error().message();
      EXPECT_EQ(*r, c.want);
    }
  }
}

TEST(Versions, CudaDriverVersion) {
  EXPECT_EQ(cuda_driver_version_semver(12040).value(), "12.4.0");
  EXPECT_EQ(cuda_driver_version_semver(11080).value(), "11.8.0");
  EXPECT_EQ(cuda_driver_version_semver(12090).value(), "12.9.0");
  EXPECT_FALSE(cuda_driver_version_semver(0).has_value());
  EXPECT_EQ(compute_capability_semver(9, 0), "9.0.0");
}

TEST(Versions, PciBusId) {
  struct Case {
    const char* in;
    const char* want;
  } cases[] = {
      {"00000000:65:00.0", "0000:65:00.0"}, {"00000000:AB:00.0", "0000:ab:00.0"}, {"0000:18:00.0", "0000:18:00.0"},
      {"00000001:1A:00.1", "0001:1a:00.1"}, {"10000000:65:00.0", nullptr},       {"65:00.0", nullptr},
      {"0000:65:00", nullptr},              {"0000:6g:00.0", nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    auto r = normalize_pci_bus_id(c.in);
    if (c.want == nullptr) {
      EXPECT_FALSE(r.has_value());
    } else {
      ASSERT_TRUE(r.has_value()) << r.error().message();
      EXPECT_EQ(*r, c.want);
    }
  }
}

TEST(Versions, PcieRoot) {
  EXPECT_EQ(pcie_root_from_sysfs_path("/sys/devices/pci0000:64/0000:64:01.0/0000:65:00.0").value(), "pci0000:64");
  EXPECT_EQ(pcie_root_from_sysfs_path("/sys/devices/virtual/foo").error().code(), Code::kNotFound);
  EXPECT_EQ(pcie_root_from_sysfs_path("/proc/x").error().code(), Code::kNotFound);

  // A fake sysfs tree: bus/pci/devices/<id> links into devices/pci0000:17/....
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("draplane-sysfs-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "devices/pci0000:17/0000:17:01.0/0000:18:00.0");
  fs::create_directories(root / "bus/pci/devices");
  fs::create_directory_symlink(root / "devices/pci0000:17/0000:17:01.0/0000:18:00.0",
                               root / "bus/pci/devices/0000:18:00.0");
  EXPECT_EQ(pcie_root_for_bus_id(root.string(), "0000:18:00.0").value(), "pci0000:17");
  EXPECT_EQ(pcie_root_for_bus_id(root.string(), "0000:99:00.0").error().code(), Code::kNotFound);
  fs::remove_all(root);
}

TEST(Versions, MigProfileLabelAndName) {
  EXPECT_EQ(mig_profile_label("1g.10gb"), "1g10gb");
  EXPECT_EQ(mig_profile_label("1g.10gb+me"), "1g10gb-me");
  EXPECT_EQ(mig_profile_label("7g.141gb"), "7g141gb");
  EXPECT_EQ(mig_profile_label("+1G.5GB+"), "1g5gb");
  const int64_t h100 = 81559LL << 20, h200 = 143771LL << 20, a100 = 40960LL << 20;
  EXPECT_EQ(mig_profile_name(1, 9984, h100, false), "1g.10gb");
  EXPECT_EQ(mig_profile_name(1, 9984, h100, true), "1g.10gb+me");
  EXPECT_EQ(mig_profile_name(3, 40448, h100, false), "3g.40gb");
  EXPECT_EQ(mig_profile_name(7, 81152, h100, false), "7g.80gb");
  EXPECT_EQ(mig_profile_name(1, 16384, h200, false), "1g.18gb");
  EXPECT_EQ(mig_profile_name(2, 33024, h200, false), "2g.35gb");
  EXPECT_EQ(mig_profile_name(3, 71168, h200, false), "3g.71gb");
  EXPECT_EQ(mig_profile_name(7, 143104, h200, false), "7g.141gb");
  EXPECT_EQ(mig_profile_name(1, 4864, a100, false), "1g.5gb");
  EXPECT_EQ(mig_profile_name(4, 19968, a100, false), "4g.20gb");
}

}  // namespace
}  // namespace draplane::node
