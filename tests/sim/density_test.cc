// `draplane simulate --density` (sim/density.h): pods of 10-16 GiB on 32 H100 80GB.
#include "sim/density.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

namespace draplane::sim {
namespace {

std::map<std::string, size_t> by_key(const std::vector<DensityRow>& rows) {
  std::map<std::string, size_t> out;
  for (const auto& r : rows) out[r.sharing + " " + r.pod] = r.pods;
  return out;
}

// Worked out by hand, GPU memory 81559 MiB (79.65 GiB), 32 GPUs:
//  whole: one pod per GPU, 32.
//  mig: every size from 10 GiB needs 1g.20gb (1g.10gb has 9.75 GiB), 4 per GPU: 128.
//  time-slicing: floor(81559 / (M x 1024)) replicas: 10 -> 7.96 -> 7 (224),
//    11 -> 7.24 -> 7 (224), 12 -> 6.64 -> 6 (192), 13 -> 6.13 -> 6 (192),
//    14 -> 5.69 -> 5 (160), 15 -> 5.31 -> 5 (160), 16 -> 4.98 -> 4 (128);
//    the mix holds 16 GiB pods, so 4 replicas: 128.
//  mps: ceil(M x 1024 x 1000 / 81559) milli each: 10 -> 126 (7 per GPU: 882;
//    8 would be 1008), 11 -> 139 (7), 12 -> 151 (6), 13 -> 164 (6), 14 -> 176
//    (5), 15 -> 189 (5), 16 -> 201 (4: 804; 5 would be 1005): as time-slicing.
TEST(Density, PodsPerSharingModeWorkedByHand) {
  auto rows = density(DensityOptions{});
  ASSERT_TRUE(rows.has_value()) << rows.error().message();
  auto got = by_key(*rows);
  const size_t per_size[] = {224, 224, 192, 192, 160, 160, 128};
  for (int gib = 10; gib <= 16; ++gib) {
    const std::string g = std::to_string(gib);
    EXPECT_EQ(got["whole " + g], 32u) << g;
    EXPECT_EQ(got["mig " + g], 128u) << g;
    EXPECT_EQ(got["time-slicing " + g], per_size[gib - 10]) << g;
    EXPECT_EQ(got["mps " + g], per_size[gib - 10]) << g;
  }
  EXPECT_EQ(got["whole mix"], 32u);
  EXPECT_EQ(got["mig mix"], 128u);
  EXPECT_EQ(got["time-slicing mix"], 128u);
  // MPS packs each pod by its own memory: more than time-slicing's 128, at
  // most what 10 GiB pods alone would give (224).
  EXPECT_GT(got["mps mix"], 128u);
  EXPECT_LE(got["mps mix"], 224u);
}

TEST(Density, TableNamesModesAndSizes) {
  auto rows = density(DensityOptions{});
  ASSERT_TRUE(rows.has_value());
  std::ostringstream out;
  write_density(out, *rows, false);
  EXPECT_NE(out.str().find("pods that fit on 32 H100 80GB"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("time-slicing"), std::string::npos);
  EXPECT_NE(out.str().find("mix"), std::string::npos);
}

}  // namespace
}  // namespace draplane::sim
