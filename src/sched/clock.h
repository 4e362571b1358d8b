// Clock: the scheduler's only source of time (backoff deadlines, condition
// timestamps), so tests drive time by hand and stay deterministic.
//
// Thread-safety: SystemClock is stateless; FakeClock is not synchronized (tests
// advance it from the thread that runs the scheduler).
#pragma once

#include <chrono>
#include <string>

namespace draplane::sched {

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  // Monotonic time for deadlines.
  virtual TimePoint now() const = 0;
  // Wall-clock time as RFC 3339 UTC with seconds ("2026-01-02T03:04:05Z"), for
  // API timestamps such as lastTransitionTime.
  virtual std::string rfc3339() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
  std::string rfc3339() const override;
};

// Starts at an arbitrary fixed point; advance() moves it.
class FakeClock final : public Clock {
 public:
  TimePoint now() const override { return now_; }
  std::string rfc3339() const override { return "2026-01-01T00:00:00Z"; }
  void advance(std::chrono::milliseconds d) { now_ += d; }

 private:
  TimePoint now_{std::chrono::hours(1)};
};

}  // namespace draplane::sched
