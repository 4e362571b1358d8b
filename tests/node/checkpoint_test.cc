#include "node/checkpoint.h"

#include <chrono>
#include <filesystem>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <set>

#include "test_dir.h"

namespace draplane::node {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

Checkpoint sample() {
  Checkpoint c;
  c.boot_id = "boot-1";
  PreparedClaim a;
  a.namespace_ = "default";
  a.name = "gpu-claim";
  a.state = PrepareState::kPrepareCompleted;
  a.mps_pipe_dir = "/plugins/mps/uid-a/pipe";
  PreparedDevice d;
  d.requests = {"gpus/h100"};
  d.pool = "node-a";
  d.device = "gpu-0-mig-3g40gb-9-4";
  d.share_id = "share-1";
  d.cdi_device_ids = {"k8s.gpu.nvidia.com/claim=uid-a-gpu-0-mig-3g40gb-9-4"};
  d.uuid = "MIG-1";
  d.mig = MigInstance{"GPU-0", 0, 9, {4, 4}, 2, 0, "MIG-1"};
  d.consumed_capacity = {{"memory", *api::Quantity::parse("20Gi")}};
  d.sharing = AppliedSharing{"MPS", "", 20480, 26};
  a.devices.push_back(d);
  PreparedDevice t;
  t.pool = "node-a";
  t.device = "gpu-1";
  t.uuid = "GPU-1";
  t.sharing = AppliedSharing{"TimeSlicing", "Long", std::nullopt, std::nullopt};
  a.devices.push_back(t);
  PreparedClaim b;
  b.namespace_ = "ns";
  b.name = "other";
  b.state = PrepareState::kPrepareStarted;
  c.claims["uid-a"] = a;
  c.claims["uid-b"] = b;
  return c;
}

TEST(Checkpoint, RoundTrip) {
  Checkpoint c = sample();
  std::string json = encode_checkpoint(c);
  EXPECT_EQ(json.substr(0, 41), R"({"version":1,"bootID":"boot-1","claims":{)");
  EXPECT_NE(json.find(R"("shareID":"share-1","consumedCapacity":{"memory":"20Gi"},)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("sharing":{"strategy":"MPS","pinnedMemoryLimitMiB":20480,"activeThreadPercentage":26})"),
            std::string::npos);
  EXPECT_NE(json.find(R"("sharing":{"strategy":"TimeSlicing","interval":"Long"})"), std::string::npos);
  auto back = decode_checkpoint(json);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(*back, c);
  EXPECT_EQ(encode_checkpoint(*back), json);
}

TEST(Checkpoint, DecodeErrors) {
  struct Case {
    const char* json;
    Code code;
    const char* want;
  } cases[] = {
      {"nope", Code::kInternal, "checkpoint: not a JSON object"},
      {R"({"version":2,"bootID":"","claims":{}})", Code::kFailedPrecondition,
       "checkpoint: version 2 is not supported by this draplane (want 1)"},
      {R"({"version":1,"bootID":"","claims":{"u":{"namespace":"n","name":"c","state":"Weird","devices":[]}}})",
       Code::kInternal, "checkpoint: claims.u.state: unknown state \"Weird\""},
      {R"({"version":1,"bootID":"","claims":{"u":{"namespace":"n","name":"c","state":"PrepareStarted","devices":[{"pool":1}]}}})",
       Code::kInternal, "checkpoint: claims.u.devices[0].pool: expected string"},
      {R"({"version":1,"bootID":"","claims":{"u":{"namespace":"n","name":"c","state":"PrepareStarted","devices":[{"pool":"p","device":"d","sharing":{"strategy":"MPS","pinnedMemoryLimitMiB":"1G"}}]}}})",
       Code::kInternal, "checkpoint: claims.u.devices[0].sharing.pinnedMemoryLimitMiB: expected integer"},
      {R"({"version":1,"bootID":"","claims":{"u":{"namespace":"n","name":"c","state":"PrepareStarted","devices":[{"pool":"p","device":"d","consumedCapacity":{"memory":"lots"}}]}}})",
       Code::kInternal, "checkpoint: claims.u.devices[0].consumedCapacity.memory: expected quantity string"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    auto r = decode_checkpoint(c.json);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), c.code);
    EXPECT_EQ(r.error().message(), c.want);
  }
}

TEST(Checkpoint, ProcessRecordRoundTripAndErrors) {
  ProcessRecord r{"boot-1", 4242, 123456789012ull};
  const std::string json = encode_process_record(r);
  EXPECT_EQ(json, R"({"bootID":"boot-1","pid":4242,"startTime":123456789012})");
  auto back = decode_process_record(json);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(*back, r);
  struct Case {
    const char* json;
    const char* want;
  } cases[] = {
      {"", "process record: not a JSON object"},
      {R"({"pid":1,"startTime":1})", "process record: bootID: expected string"},
      {R"({"bootID":"b","pid":0,"startTime":1})", "process record: pid: expected positive integer"},
      {R"({"bootID":"b","pid":1,"startTime":-1})", "process record: startTime: expected unsigned integer"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    auto d = decode_process_record(c.json);
    ASSERT_FALSE(d.has_value());
    EXPECT_EQ(d.error().message(), c.want);
  }
}

TEST(Checkpoint, FileSaveLoadAndBootId) {
  TempDir dir("ckpt");
  CheckpointFile file(dir.file("plugin/checkpoint.json"), "boot-1");
  auto empty = file.load();
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->claims.empty());
  EXPECT_EQ(empty->boot_id, "boot-1");

  ASSERT_TRUE(file.save(sample()).ok());
  EXPECT_FALSE(std::filesystem::exists(dir.file("plugin/checkpoint.json.tmp")));
  auto loaded = file.load();
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->claims.size(), 2u);

  // A new boot: nothing prepared survives.
  CheckpointFile rebooted(dir.file("plugin/checkpoint.json"), "boot-2");
  EXPECT_TRUE(rebooted.load()->claims.empty());
}

TEST(Checkpoint, CrashLeavesTempFileBehind) {
  TempDir dir("crash");
  CheckpointFile file(dir.file("checkpoint.json"), "boot-1");
  ASSERT_TRUE(file.save(sample()).ok());
  // A crash between writing the temp file and the rename: a torn temp file.
  write_file(dir.file("checkpoint.json.tmp"), R"({"version":1,"bootID":"boot-1","cla)");
  auto loaded = file.load();
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message();
  EXPECT_EQ(loaded->claims.size(), 2u);  // the last complete save
  // The next save replaces the stale temp file and the checkpoint.
  Checkpoint one;
  one.claims["uid-z"] = PreparedClaim{};
  ASSERT_TRUE(file.save(one).ok());
  EXPECT_EQ(file.load()->claims.size(), 1u);
  // The temp file now holds the previous save, whole (swapped, not torn).
  auto previous = decode_checkpoint(read_file(dir.file("checkpoint.json.tmp")));
  ASSERT_TRUE(previous.has_value()) << previous.error().message();
  EXPECT_EQ(previous->claims.size(), 2u);
  // A corrupt checkpoint is an error, not an empty state.
  write_file(dir.file("checkpoint.json"), "{garbage");
  auto bad = file.load();
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), Code::kInternal);
}

// Each rewrite swaps the two files: the same two inodes hold the newest and
// the previous content, a shorter content cuts the old tail.
TEST(Checkpoint, RewriteSwapsTheSameTwoFiles) {
  TempDir dir("rewrite");
  const std::string path = dir.file("sub/state.json");
  auto inode = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
  };
  ASSERT_TRUE(rewrite_file_atomic(path, "first, the longest of all").ok());
  EXPECT_EQ(read_file(path), "first, the longest of all");
  ASSERT_TRUE(rewrite_file_atomic(path, "second", FileSync::kUntilReboot).ok());
  EXPECT_EQ(read_file(path), "second");
  EXPECT_EQ(read_file(path + ".tmp"), "first, the longest of all");
  const std::set<ino_t> inodes{inode(path), inode(path + ".tmp")};
  ASSERT_EQ(inodes.size(), 2u);
  ASSERT_TRUE(rewrite_file_atomic(path, "3rd").ok());
  EXPECT_EQ(read_file(path), "3rd");
  EXPECT_EQ(read_file(path + ".tmp"), "second");
  EXPECT_EQ((std::set<ino_t>{inode(path), inode(path + ".tmp")}), inodes);
}

// save() does not flush, so power loss may tear the file; what it recorded is
// gone after the reboot, so a torn file of an earlier boot reads as empty.
TEST(Checkpoint, TornFileOfAnEarlierBootIsEmpty) {
  TempDir dir("torn");
  CheckpointFile file(dir.file("checkpoint.json"), "boot-2");
  write_file(dir.file("checkpoint.json"), "");
  // Written in this boot: an error.
  ASSERT_FALSE(file.load().has_value());
  // Written long before this boot (26 years ago).
  std::filesystem::last_write_time(dir.file("checkpoint.json"),
                                   std::filesystem::file_time_type::clock::now() - std::chrono::hours(24 * 365 * 26));
  auto loaded = file.load();
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message();
  EXPECT_TRUE(loaded->claims.empty());
  EXPECT_EQ(loaded->boot_id, "boot-2");
}

TEST(Checkpoint, BootId) {
  TempDir dir("boot");
  write_file(dir.file("sys/kernel/random/boot_id"), "1234-abcd\n");
  EXPECT_EQ(read_boot_id(dir.str()), "1234-abcd");
  EXPECT_EQ(read_boot_id(dir.file("missing")), "");
}

}  // namespace
}  // namespace draplane::node
