// run_driver on its own thread, stopped and joined however the test ends (a
// joinable std::thread destroyed by a failed ASSERT aborts the binary). Shared
// by the node and cluster tests (header-only: tests/<module> compiles only
// *_test.cc files).
#pragma once

#include <atomic>
#include <thread>

#include "client/rest_client.h"
#include "common/result.h"
#include "node/driver.h"

namespace draplane::node::testing {

class DriverThread {
 public:
  DriverThread(client::RestClient& rest, const DriverOptions& options)
      : thread_([this, &rest, options] { status_ = run_driver(rest, options, stop_).status(); }) {}
  ~DriverThread() { join(); }
  DriverThread(const DriverThread&) = delete;
  DriverThread& operator=(const DriverThread&) = delete;
  // Stops the driver; its result.
  Status join() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return status_;
  }

 private:
  std::atomic<bool> stop_{false};
  Status status_;
  std::thread thread_;
};

}  // namespace draplane::node::testing
