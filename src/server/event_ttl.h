// EventTtl: Events expire, as kube-apiserver's --event-ttl makes them (default
// 1 h): an Event goes away once it has not been written for the TTL.
//
// kube-apiserver attaches an etcd lease of the TTL to every Event write, so
// etcd drops the key TTL after its last write. The embedded stores have no
// leases: a background sweep lists the events, notes when each one's
// mod_revision last changed (its last write), and deletes those unwritten for
// the TTL or longer (a conditional delete: a write racing the sweep wins). An
// Event expires up to one sweep interval late; those already stored when the
// server starts count from their own latest timestamp (docs/compat.md).
//
// Thread-safety: sweep() from one thread at a time; start()/stop() from the
// owner's thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "common/clock.h"
#include "store/store.h"

namespace draplane::server {

class EventTtl {
 public:
  // `clock` is injected: tests move it.
  EventTtl(store::Store& store, int64_t ttl_seconds, std::shared_ptr<const common::Clock> clock);
  ~EventTtl();  // stop()

  // One pass: deletes the expired events; returns how many.
  size_t sweep();

  // Sweeps every `interval_ms` on a background thread until stop().
  void start(int64_t interval_ms);
  void stop();

  // The sweep period used for a TTL: a tenth of it, between 1 s and 1 min.
  static int64_t default_interval_ms(int64_t ttl_seconds);

 private:
  struct Seen {
    int64_t mod_revision = 0;
    int64_t written_at = 0;  // seconds: when this mod_revision was first seen
  };
  // The latest time an event records (series, lastTimestamp, eventTime,
  // creationTimestamp); `fallback` when it has none.
  static int64_t last_recorded(const std::string& json, int64_t fallback);

  store::Store& store_;
  int64_t ttl_;
  std::shared_ptr<const common::Clock> clock_;
  std::unordered_map<std::string, Seen> seen_;
  bool first_ = true;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace draplane::server
