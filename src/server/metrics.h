// Prometheus metrics of the API server: request counts and latencies by verb,
// resource and code, open watches, and store write latency; rendered in the
// Prometheus text exposition format at /metrics.
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace draplane::server {

class Metrics {
 public:
  void observe_request(const std::string& verb, const std::string& resource, int code, double seconds);
  void watch_opened() { ++watches_; }
  void watch_closed() { --watches_; }
  void observe_store(const std::string& op, double seconds);
  std::string render();

 private:
  struct Hist {
    uint64_t count = 0;
    double sum = 0;
    uint64_t buckets[8] = {};
  };
  static void add(Hist& h, double seconds);
  std::mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_;
  std::map<std::pair<std::string, std::string>, Hist> latency_;
  std::map<std::string, Hist> store_;
  std::atomic<int64_t> watches_{0};
};

}  // namespace draplane::server
