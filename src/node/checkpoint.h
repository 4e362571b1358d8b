// The driver's checkpoint: which claims are prepared on this node and what was
// done for them (MIG devices created, CDI ids handed out), so that prepare and
// unprepare are idempotent and an agent restart neither leaks nor double-prepares
// (after dra-example-driver's checkpoint.go).
//
// File: <plugin dir>/checkpoint.json, JSON with a schema version:
//   {"version":1,"bootID":"...","claims":{"<uid>":{"namespace":..,"name":..,
//    "state":"PrepareStarted|PrepareCompleted","mpsPipeDir":..,"devices":[{...,
//    "consumedCapacity":{"memory":"20Gi"},"sharing":{"strategy":"MPS",
//    "pinnedMemoryLimitMiB":20480,"activeThreadPercentage":26}}]}}}
// Which GPU-level setup (time-slicing, MPS daemon, shared MIG device) is in use
// is derived from all claims' entries, so it survives an agent restart.
// Saving is atomic: rewrite <path>.tmp, swap it with <path> (not flushed:
// see FileSync::kUntilReboot); a crash leaves either the old or the new file
// (and a .tmp with an older or torn copy, which load ignores). A checkpoint written under another boot ID is
// discarded on load: MIG devices and /var/run/cdi do not survive a reboot.
//
// Thread-safety: CheckpointFile is not synchronised; DeviceState (prepare.h)
// serialises access.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/quantity.h"
#include "common/result.h"
#include "node/gpu_info.h"

namespace draplane::node {

inline constexpr int kCheckpointVersion = 1;

enum class PrepareState { kPrepareStarted, kPrepareCompleted };

// The sharing a claim applied to one of its devices (its effective opaque
// config, reduced to what prepare acts on). Claims sharing a device must agree
// on strategy and interval; the MPS numbers are the claim's own.
struct AppliedSharing {
  std::string strategy;  // TimeSlicing | MPS
  std::string interval;  // TimeSlicing of a full GPU: Default | Short | Medium | Long
  // MPS: the client limits the claim's containers get (CDI env).
  std::optional<int64_t> pinned_memory_limit_mib;
  std::optional<int64_t> active_thread_percentage;
  bool operator==(const AppliedSharing&) const = default;
};

struct PreparedDevice {
  std::vector<std::string> requests;  // "req" or "req/sub"
  std::string pool;
  std::string device;
  std::optional<std::string> share_id;
  std::map<std::string, api::Quantity> consumed_capacity;  // of a shared device's allocation result
  std::vector<std::string> cdi_device_ids;
  std::string uuid;                // GPU or MIG device UUID, once known
  std::optional<MigInstance> mig;  // the MIG device created for it (or reused: another claim's share)
  std::optional<AppliedSharing> sharing;
  bool operator==(const PreparedDevice&) const = default;
};

struct PreparedClaim {
  std::string namespace_;
  std::string name;
  PrepareState state = PrepareState::kPrepareStarted;
  std::vector<PreparedDevice> devices;
  // The pipe directory of the MPS control daemon the claim's MPS devices use
  // (<plugin dir>/mps/<id>/pipe); claims on the same GPUs share one daemon.
  std::optional<std::string> mps_pipe_dir;
  bool operator==(const PreparedClaim&) const = default;
};

struct Checkpoint {
  std::string boot_id;
  std::map<std::string, PreparedClaim> claims;  // by claim UID
  bool operator==(const Checkpoint&) const = default;
};

// JSON encoding (compact, keys sorted as written above).
std::string encode_checkpoint(const Checkpoint& checkpoint);
// Decoding. Errors: kInternal for malformed JSON or fields ("checkpoint: claims.<uid>.state:
// ..."), kFailedPrecondition for a version this build does not understand.
Result<Checkpoint> decode_checkpoint(std::string_view json);

class CheckpointFile {
 public:
  CheckpointFile(std::string path, std::string boot_id);

  // The stored checkpoint; an empty one (with this boot ID) when the file is
  // missing or was written under another boot ID, or cannot be decoded but was
  // last written before this boot (save() does not flush: power loss may tear
  // it, and nothing it recorded exists after the reboot). Errors: kInternal
  // when the file cannot be read, or cannot be decoded and is of this boot
  // (the caller must not guess what was prepared).
  Result<Checkpoint> load() const;

  // Atomically replaces the file (FileSync::kUntilReboot: a prepare must not
  // wait for the disk; the record is void after a reboot). Errors: kInternal
  // with the failing syscall.
  Status save(const Checkpoint& checkpoint) const;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string boot_id_;
};

// A container process the kubelet started, recorded beside its log
// (<pod dir>/<container>/process.json) until it exits, so that an agent
// restarted after a crash (kill -9: its containers outlive it) finds and ends
// them: {"bootID":"...","pid":N,"startTime":T}. pid is also the process group
// (each container leads its own); startTime is the process's start in clock
// ticks after boot (/proc/<pid>/stat), so a reused pid is never taken for it.
struct ProcessRecord {
  std::string boot_id;
  int pid = 0;
  uint64_t start_time = 0;
  bool operator==(const ProcessRecord&) const = default;
};

std::string encode_process_record(const ProcessRecord& record);
// Errors: kInternal naming the field ("process record: pid: expected integer").
Result<ProcessRecord> decode_process_record(std::string_view json);

// The current boot ID (/proc/sys/kernel/random/boot_id, trimmed); "" when absent.
std::string read_boot_id(const std::string& proc_root = "/proc");

// How far a write_file_atomic survives. Both keep the file whole (the old or
// the new content, never a mix) across a crash of the process.
enum class FileSync {
  // Also across power loss and a kernel crash: fsync of the file and of its
  // directory (two disk flushes).
  kDurable,
  // Not flushed: after power loss the file may hold the old content or (on
  // file systems without rename-replace ordering) be empty or torn. For what
  // is void after a reboot anyway: the prepare checkpoint (load() ignores a
  // file of an earlier boot) and CDI specs of claims prepared in this boot.
  kUntilReboot,
};

// Writes `data` to `path` atomically (temp file, rename; with kDurable the
// flushes above). For the CDI writer.
Status write_file_atomic(const std::string& path, std::string_view data, FileSync sync = FileSync::kDurable);

// The same for a file rewritten again and again (the checkpoint): <path>.tmp
// is rewritten in place and swapped with <path> (renameat2 RENAME_EXCHANGE),
// so it then holds the previous content and no inode is created or freed per
// write (on ext4, creating files where many were just deleted costs more than
// the write). Falls back to a rename where the file system cannot swap.
Status rewrite_file_atomic(const std::string& path, std::string_view data, FileSync sync = FileSync::kDurable);

}  // namespace draplane::node
