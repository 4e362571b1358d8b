// The long-running components started on their own (agent, scheduler,
// controllers): their stderr logger and their run until SIGINT/SIGTERM.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "common/result.h"

namespace draplane::cmd {

// A logger named `name` writing to stderr, at debug level when `verbose`.
std::shared_ptr<spdlog::logger> stderr_logger(const std::string& name, bool verbose);

// Blocks the stop signals, runs `body` with a flag that SIGINT/SIGTERM set,
// and prints its error. Returns the exit code: 0, 2 for kInvalid, else 1.
int run_until_stopped(const std::function<Status(const std::atomic<bool>& stop)>& body);

}  // namespace draplane::cmd
