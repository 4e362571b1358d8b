// Clock: the one source of time for node, server, controllers and sched, so
// that tests drive time by hand (FakeClock) and stay deterministic.
//
// now() is monotonic (deadlines, backoff, durations); wall() is the calendar
// time written into API objects (creationTimestamp, lastTransitionTime, event
// times). The helpers format wall() as metav1.Time / MicroTime.
//
// Thread-safety: RealClock is stateless; FakeClock is synchronized, so a test
// may advance it while server or agent threads read it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace draplane::common {

// Adds the seconds from its construction to its destruction to `*total`
// (nothing when null): the time of a scope, in a counter of seconds.
class ScopedSeconds {
 public:
  explicit ScopedSeconds(double* total) : total_(total) {}
  ~ScopedSeconds() {
    if (total_ != nullptr) *total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  ScopedSeconds(const ScopedSeconds&) = delete;
  ScopedSeconds& operator=(const ScopedSeconds&) = delete;

 private:
  double* total_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using WallTime = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;
  // Monotonic time, for deadlines and durations.
  virtual TimePoint now() const = 0;
  // Calendar time, for API timestamps.
  virtual WallTime wall() const = 0;

  // wall() as Unix seconds (rounded down).
  int64_t unix_seconds() const;
  // wall() as metav1.Time ("2006-01-02T15:04:05Z").
  std::string rfc3339() const;
  // wall() as metav1.MicroTime ("2006-01-02T15:04:05.000000Z").
  std::string rfc3339_micro() const;
};

class RealClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
  WallTime wall() const override { return std::chrono::system_clock::now(); }
};

// The process's real clock (stateless, so sharing one is not shared state).
std::shared_ptr<const Clock> real_clock();

// Starts at monotonic 1h and wall 2026-01-01T00:00:00Z; advance() moves both.
class FakeClock final : public Clock {
 public:
  static constexpr int64_t kStartUnixSeconds = 1767225600;  // 2026-01-01T00:00:00Z

  TimePoint now() const override;
  WallTime wall() const override;
  void advance(std::chrono::microseconds d);
  // Sets the calendar time only; the monotonic time never goes back.
  void set_wall(WallTime t);
  void set_unix_seconds(int64_t s) { set_wall(WallTime(std::chrono::seconds(s))); }

 private:
  mutable std::mutex mu_;
  TimePoint now_{std::chrono::hours(1)};
  WallTime wall_{std::chrono::seconds(kStartUnixSeconds)};
};

}  // namespace draplane::common
