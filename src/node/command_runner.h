// CommandRunner: how the driver runs nvidia-smi and nvidia-cuda-mps-control to
// apply sharing. Injected so that tests and simulated GPUs record the commands
// instead of running them (FoundationDB-style: the outside world behind an
// interface).
//
// Thread-safety: implementations are safe for concurrent calls.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "common/result.h"

namespace draplane::node {

struct Command {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // extra "NAME=value" on top of the inherited environment
  std::string stdin_text;        // written to the command's stdin, then closed
  bool operator==(const Command&) const = default;
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs the command to completion. OK with its stdout; error kUnavailable when it
  // cannot be started or exits non-zero (message names the command and status).
  virtual Result<std::string> run(const Command& command) = 0;
};

// Records commands and succeeds (or fails on demand); for simulated GPUs and tests.
class RecordingRunner final : public CommandRunner {
 public:
  Result<std::string> run(const Command& command) override;
  // Commands run so far, each rendered "ENV=.. argv0 argv1 ... [<<< stdin]".
  std::vector<std::string> log() const;
  // Makes every later command whose argv[0] equals `program` fail.
  void fail_program(std::string program);

 private:
  mutable std::mutex mu_;
  std::vector<std::string> log_;
  std::vector<std::string> failing_;
};

// Runs commands with posix_spawn (argv[0] looked up in PATH, the environment
// built before the spawn: safe in a threaded process). The command gets stdin
// and stdout pipes, the agent's stderr and no other descriptor of the agent.
class ProcessRunner final : public CommandRunner {
 public:
  Result<std::string> run(const Command& command) override;
};

// "A=1 prog arg <<< text" rendering used in logs and errors.
std::string render_command(const Command& command);

}  // namespace draplane::node
