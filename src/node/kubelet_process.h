// Containers as local processes: the node agent has no container runtime, so a
// container's `command` + `args` run as a child process in its own process group
// (so `sh -c` children are signalled too), with an explicit environment, stdin
// from /dev/null and stdout+stderr appended to the container's log file.
//
// ProcessLauncher is the seam (tests may substitute it); PosixLauncher uses
// posix_spawn (safe in a threaded process, unlike fork + exec of arbitrary code).
//
// Thread-safety: implementations are safe for concurrent calls.
#pragma once

#include <spawn.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace draplane::node {

// The executable `prog` names: itself when it has a slash, else the first
// executable match on the PATH of `env` ("NAME=value"; default
// /usr/local/bin:/usr/bin:/bin); "" when none.
std::string resolve_program(const std::string& prog, const std::vector<std::string>& env);

// The start time of process `pid` in clock ticks after boot (field 22 of
// /proc/<pid>/stat); nullopt when there is no such process.
std::optional<uint64_t> process_start_time(int pid, const std::string& proc_root = "/proc");

// Ends what is left of the process group `pgid` whose leader started at
// `start_time` (a container of an earlier run of the agent): SIGKILL to the
// group when its leader is still that process; when the leader is gone, to
// the processes still in the group (a pid is not reused while a group of that
// number exists). Leaves it alone when the pid now names another process.
// Waits up to `wait_ms` for them to be gone; returns how many it signalled.
int end_process_group(int pgid, uint64_t start_time, int wait_ms = 5000, const std::string& proc_root = "/proc");

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in the env's PATH
  std::vector<std::string> env;   // the complete environment, "NAME=value"
  std::string working_dir;        // "" = the agent's
  std::string log_path;           // stdout and stderr, appended
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Starts the process; returns its pid. Error kInvalid for an empty argv,
  // kUnavailable when it cannot be started (message names the program).
  virtual Result<int> start(const ProcessSpec& spec) = 0;
  // Blocks until the process ends; returns the exit code as the kubelet reports
  // it (the code, or 128 + signal number when killed).
  virtual int wait(int pid) = 0;
  // Sends `signal` to the process group of `pid`; a gone process is fine.
  virtual void kill(int pid, int signal) = 0;
  // What tells the running process `pid` from a later one with the same pid
  // (its start time), recorded so that a restarted agent can end it; nullopt
  // when this launcher cannot tell (then nothing is recorded).
  virtual std::optional<uint64_t> start_time(int pid) {
    (void)pid;
    return std::nullopt;
  }
  // Ends the process group of a container started by an earlier run of the
  // agent (see end_process_group); returns how many processes it signalled.
  virtual int end_previous(int pgid, uint64_t start_time) {
    (void)pgid;
    (void)start_time;
    return 0;
  }
};

class PosixLauncher final : public ProcessLauncher {
 public:
  Result<int> start(const ProcessSpec& spec) override;
  int wait(int pid) override;
  void kill(int pid, int signal) override;
  std::optional<uint64_t> start_time(int pid) override { return process_start_time(pid); }
  int end_previous(int pgid, uint64_t start_time) override { return end_process_group(pgid, start_time); }
};

// Sets `attr` so the child starts with an empty signal mask and default
// dispositions (the agent blocks SIGTERM/SIGINT for sigwait and ignores
// SIGPIPE; a child must not inherit that), in a process group of its own when
// `own_process_group` (containers: killed as a group).
void set_child_signal_defaults(posix_spawnattr_t& attr, bool own_process_group);

}  // namespace draplane::node
