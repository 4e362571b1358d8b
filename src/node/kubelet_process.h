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

#include <string>
#include <vector>

#include "common/result.h"

namespace draplane::node {

// The executable `prog` names: itself when it has a slash, else the first
// executable match on the PATH of `env` ("NAME=value"; default
// /usr/local/bin:/usr/bin:/bin); "" when none.
std::string resolve_program(const std::string& prog, const std::vector<std::string>& env);

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
};

class PosixLauncher final : public ProcessLauncher {
 public:
  Result<int> start(const ProcessSpec& spec) override;
  int wait(int pid) override;
  void kill(int pid, int signal) override;
};

}  // namespace draplane::node
