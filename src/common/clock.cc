#include "common/clock.h"

#include "common/rfc3339.h"

namespace draplane::common {

int64_t Clock::unix_seconds() const { return unix_seconds_of(wall()); }

std::string Clock::rfc3339() const { return format_rfc3339(wall()); }

std::string Clock::rfc3339_micro() const { return format_rfc3339_micro(wall()); }

std::shared_ptr<const Clock> real_clock() {
  static const auto clock = std::make_shared<const RealClock>();
  return clock;
}

Clock::TimePoint FakeClock::now() const {
  std::lock_guard<std::mutex> lock(mu_);
  return now_;
}

Clock::WallTime FakeClock::wall() const {
  std::lock_guard<std::mutex> lock(mu_);
  return wall_;
}

void FakeClock::advance(std::chrono::microseconds d) {
  std::lock_guard<std::mutex> lock(mu_);
  now_ += d;
  wall_ += d;
}

void FakeClock::set_wall(WallTime t) {
  std::lock_guard<std::mutex> lock(mu_);
  wall_ = t;
}

}  // namespace draplane::common
