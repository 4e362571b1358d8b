#include "server/metrics.h"

#include <cstdio>

namespace draplane::server {
namespace {
constexpr double kBounds[8] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5};

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
}  // namespace

void Metrics::add(Hist& h, double seconds) {
  ++h.count;
  h.sum += seconds;
  for (int i = 0; i < 8; ++i) {
    if (seconds <= kBounds[i]) ++h.buckets[i];
  }
}

void Metrics::observe_request(const std::string& verb, const std::string& resource, int code, double seconds) {
  std::lock_guard<std::mutex> l(mu_);
  ++requests_[{verb, resource, code}];
  add(latency_[{verb, resource}], seconds);
}

void Metrics::observe_store(const std::string& op, double seconds) {
  std::lock_guard<std::mutex> l(mu_);
  add(store_[op], seconds);
}

std::string Metrics::render() {
  std::lock_guard<std::mutex> l(mu_);
  std::string out;
  out += "# HELP apiserver_request_total Counter of apiserver requests broken out by verb, resource and code.\n";
  out += "# TYPE apiserver_request_total counter\n";
  for (const auto& [k, v] : requests_) {
    out += "apiserver_request_total{verb=\"" + std::get<0>(k) + "\",resource=\"" + std::get<1>(k) + "\",code=\"" +
           std::to_string(std::get<2>(k)) + "\"} " + std::to_string(v) + "\n";
  }
  auto hist = [&](const std::string& name, const std::string& labels, const Hist& h) {
    for (int i = 0; i < 8; ++i) {
      out += name + "_bucket{" + labels + ",le=\"" + num(kBounds[i]) + "\"} " + std::to_string(h.buckets[i]) + "\n";
    }
    out += name + "_bucket{" + labels + ",le=\"+Inf\"} " + std::to_string(h.count) + "\n";
    out += name + "_sum{" + labels + "} " + num(h.sum) + "\n";
    out += name + "_count{" + labels + "} " + std::to_string(h.count) + "\n";
  };
  out += "# HELP apiserver_request_duration_seconds Response latency distribution in seconds for each verb and resource.\n";
  out += "# TYPE apiserver_request_duration_seconds histogram\n";
  for (const auto& [k, h] : latency_) {
    hist("apiserver_request_duration_seconds", "verb=\"" + k.first + "\",resource=\"" + k.second + "\"", h);
  }
  out += "# HELP apiserver_storage_duration_seconds Store operation latency in seconds.\n";
  out += "# TYPE apiserver_storage_duration_seconds histogram\n";
  for (const auto& [k, h] : store_) hist("apiserver_storage_duration_seconds", "operation=\"" + k + "\"", h);
  out += "# HELP apiserver_longrunning_requests Number of open watch requests.\n";
  out += "# TYPE apiserver_longrunning_requests gauge\n";
  out += "apiserver_longrunning_requests{verb=\"WATCH\"} " + std::to_string(watches_.load()) + "\n";
  return out;
}

}  // namespace draplane::server
