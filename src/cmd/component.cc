#include "cmd/component.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <iostream>

#include "cmd/signals.h"

namespace draplane::cmd {

std::shared_ptr<spdlog::logger> stderr_logger(const std::string& name, bool verbose) {
  auto log = std::make_shared<spdlog::logger>(name, std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  log->set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  return log;
}

int run_until_stopped(const std::function<Status(const std::atomic<bool>& stop)>& body) {
  sigset_t sigs = block_stop_signals();
  static std::atomic<bool> stop{false};  // outlives the detached signal thread
  stop_on_signal(sigs, stop);
  Status st = body(stop);
  if (st.ok()) return 0;
  std::cerr << "error: " << st.message() << "\n";
  return st.code() == Code::kInvalid ? 2 : 1;
}

}  // namespace draplane::cmd
