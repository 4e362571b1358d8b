#include "node/cdi.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "test_dir.h"

namespace draplane::node {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

TEST(Cdi, NamesAndPaths) {
  EXPECT_EQ(cdi_spec_path("/var/run/cdi", "uid-1"), "/var/run/cdi/k8s.gpu.nvidia.com-claim_uid-1.yaml");
  EXPECT_EQ(cdi_device_name("uid-1", "gpu-0"), "uid-1-gpu-0");
  EXPECT_EQ(cdi_device_id("uid-1", "gpu-0"), "k8s.gpu.nvidia.com/claim=uid-1-gpu-0");
}

TEST(Cdi, EncodeSimulatedSpec) {
  CdiSpec spec;
  spec.devices.push_back({"uid-1-gpu-0", {{"NVIDIA_VISIBLE_DEVICES=GPU-a,GPU-b"}, {}, {}, {}}});
  EXPECT_EQ(encode_cdi_spec(spec),
            "cdiVersion: \"0.5.0\"\n"
            "kind: k8s.gpu.nvidia.com/claim\n"
            "devices:\n"
            "  - name: uid-1-gpu-0\n"
            "    containerEdits:\n"
            "      env:\n"
            "        - \"NVIDIA_VISIBLE_DEVICES=GPU-a,GPU-b\"\n");
}

TEST(Cdi, RoundTripFullSpec) {
  CdiSpec spec;
  spec.edits = nvidia_common_edits();
  CdiDevice d;
  d.name = "uid-1-gpu-0-mig-1g10gb-19-0";
  d.edits.env = {"CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps"};
  d.edits.device_nodes = {{"/dev/nvidia0", "", std::nullopt, std::nullopt, std::nullopt},
                          {"/dev/nvidia-caps/nvidia-cap21", "c", 237, 21, 0444u}};
  d.edits.mounts = {{"/plugins/mps/uid-1/pipe", "/tmp/nvidia-mps", {"rw", "nosuid", "nodev", "bind"}}};
  spec.devices.push_back(d);
  std::string yaml = encode_cdi_spec(spec);
  auto back = decode_cdi_spec(yaml);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(*back, spec);
  EXPECT_NE(yaml.find("  env:\n    - \"NVIDIA_VISIBLE_DEVICES=void\"\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("hookName: createContainer"), std::string::npos);
  EXPECT_EQ(decode_cdi_spec("kind: x").error().message(), "CDI spec: cdiVersion: Required value");
  EXPECT_EQ(decode_cdi_spec("[").error().code(), Code::kInvalid);
}

// The driver's libraries are those of libcuda.so.<version>'s directory with the
// same version suffix, mounted read-only from the host's driver root; the
// hooks link libcuda.so and refresh the ld cache in that directory.
TEST(Cdi, DriverFilesAreMountedFromTheHostDriverRoot) {
  TempDir root("drvroot");
  const std::string lib = "usr/lib64";
  for (const char* f : {"libcuda.so.550.54.15", "libnvidia-ml.so.550.54.15", "libnvidia-ptxjitcompiler.so.550.54.15",
                        "libnvidia-ml.so.1", "libcuda.so.535.1.1", "libz.so.1"}) {
    std::filesystem::create_directories(root.file(lib));
    write_file(root.file(lib + "/" + f), "x");
  }
  std::filesystem::create_directories(root.file("usr/bin"));
  write_file(root.file("usr/bin/nvidia-smi"), "x");
  write_file(root.file("usr/bin/nvidia-cuda-mps-control"), "x");

  DriverFiles files = find_driver_files(root.str(), "550.54.15");
  EXPECT_EQ(files.lib_dir, "/usr/lib64");
  EXPECT_EQ(files.libraries, (std::vector<std::string>{"usr/lib64/libcuda.so.550.54.15",
                                                       "usr/lib64/libnvidia-ml.so.550.54.15",
                                                       "usr/lib64/libnvidia-ptxjitcompiler.so.550.54.15"}));
  EXPECT_EQ(files.binaries, (std::vector<std::string>{"usr/bin/nvidia-smi", "usr/bin/nvidia-cuda-mps-control"}));

  CdiEdits e = nvidia_common_edits(files, "/run/nvidia/driver");
  ASSERT_EQ(e.mounts.size(), 5u);
  EXPECT_EQ(e.mounts[0], (CdiMount{"/run/nvidia/driver/usr/lib64/libcuda.so.550.54.15",
                                   "/usr/lib64/libcuda.so.550.54.15", {"ro", "nosuid", "nodev", "bind"}}));
  EXPECT_EQ(e.mounts[4].container_path, "/usr/bin/nvidia-cuda-mps-control");
  ASSERT_EQ(e.hooks.size(), 2u);
  EXPECT_EQ(e.hooks[0].args.back(), "libcuda.so.1::/usr/lib64/libcuda.so");
  EXPECT_EQ(e.hooks[1].args.back(), "/usr/lib64");
  EXPECT_EQ(nvidia_common_edits(files, "/").mounts[0].host_path, "/usr/lib64/libcuda.so.550.54.15");

  // Another driver version, or none found: no mounts.
  EXPECT_TRUE(find_driver_files(root.str(), "560.1.1").libraries.empty());
  EXPECT_TRUE(find_driver_files(root.str(), "").lib_dir.empty());
  EXPECT_TRUE(nvidia_common_edits(find_driver_files(root.str(), "560.1.1")).mounts.empty());
}

TEST(Cdi, WriteAndRemove) {
  TempDir dir("cdi");
  CdiSpec spec;
  spec.devices.push_back({"u-gpu-0", {{"A=1"}, {}, {}, {}}});
  ASSERT_TRUE(write_cdi_spec(dir.str(), "u", spec).ok());
  EXPECT_EQ(read_file(cdi_spec_path(dir.str(), "u")), encode_cdi_spec(spec));
  ASSERT_TRUE(remove_cdi_spec(dir.str(), "u").ok());
  EXPECT_TRUE(remove_cdi_spec(dir.str(), "u").ok());  // idempotent
  EXPECT_EQ(read_file(cdi_spec_path(dir.str(), "u")), "");
}

TEST(Cdi, MigCapabilityNodes) {
  TempDir proc("proc");
  write_file(proc.file("devices"), "Character devices:\n  1 mem\n195 nvidia-frontend\n237 nvidia-caps\n");
  write_file(proc.file("driver/nvidia/capabilities/gpu2/mig/gi3/access"), "DeviceFileMinor: 30\nDeviceFileMode: 292\n");
  write_file(proc.file("driver/nvidia/capabilities/gpu2/mig/gi3/ci0/access"), "DeviceFileMinor: 31\n");
  auto nodes = mig_capability_nodes(proc.str(), 2, 3, 0);
  ASSERT_TRUE(nodes.has_value()) << nodes.error().message();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0], (CdiDeviceNode{"/dev/nvidia-caps/nvidia-cap30", "c", 237, 30, 0444u}));
  EXPECT_EQ((*nodes)[1], (CdiDeviceNode{"/dev/nvidia-caps/nvidia-cap31", "c", 237, 31, 0444u}));
  auto missing = mig_capability_nodes(proc.str(), 2, 4, 0);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), Code::kNotFound);
  EXPECT_NE(missing.error().message().find("gpu2/mig/gi4/access is missing"), std::string::npos);
}

}  // namespace
}  // namespace draplane::node
