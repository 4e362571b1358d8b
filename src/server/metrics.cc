#include "server/metrics.h"

#include <cstdio>

namespace draplane::server {
namespace {
// kube-apiserver's buckets for apiserver_request_duration_seconds and etcd_request_duration_seconds.
constexpr double kBounds[] = {0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2,
                              3,     4,     5,    6,   8,   10,  15,  20,  30,  45,   60};
constexpr size_t kBuckets = sizeof(kBounds) / sizeof(kBounds[0]);

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// A label value escaped as the text format wants (\\, \", \n).
std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string request_labels(const RequestLabels& l) {
  return "verb=\"" + esc(l.verb) + "\",dry_run=\"" + (l.dry_run ? "All" : "") + "\",group=\"" + esc(l.group) +
         "\",version=\"" + esc(l.version) + "\",resource=\"" + esc(l.resource) + "\",subresource=\"" +
         esc(l.subresource) + "\",scope=\"" + esc(l.scope) + "\",component=\"apiserver\"";
}
}  // namespace

void Metrics::add(Hist& h, double seconds) {
  if (h.buckets.empty()) h.buckets.assign(kBuckets, 0);
  ++h.count;
  h.sum += seconds;
  for (size_t i = 0; i < kBuckets; ++i) {
    if (seconds <= kBounds[i]) ++h.buckets[i];
  }
}

void Metrics::observe_request(const RequestLabels& labels, int code, double seconds) {
  std::lock_guard<std::mutex> l(mu_);
  ++requests_[{labels, code}];
  add(latency_[labels], seconds);
}

void Metrics::observe_store(const std::string& operation, const std::string& group, const std::string& resource,
                            double seconds, bool error) {
  std::lock_guard<std::mutex> l(mu_);
  StoreKey k{operation, group, resource};
  add(store_[k], seconds);
  if (error) ++store_errors_[k];
}

std::string Metrics::render() {
  std::lock_guard<std::mutex> l(mu_);
  std::string out;
  auto hist = [&](const std::string& name, const std::string& labels, const Hist& h) {
    for (size_t i = 0; i < kBuckets; ++i) {
      out += name + "_bucket{" + labels + ",le=\"" + num(kBounds[i]) + "\"} " + std::to_string(h.buckets[i]) + "\n";
    }
    out += name + "_bucket{" + labels + ",le=\"+Inf\"} " + std::to_string(h.count) + "\n";
    out += name + "_sum{" + labels + "} " + num(h.sum) + "\n";
    out += name + "_count{" + labels + "} " + std::to_string(h.count) + "\n";
  };
  out += "# HELP apiserver_request_total Counter of apiserver requests broken out for each verb, dry run value, "
         "group, version, resource, scope, component, and HTTP response code.\n";
  out += "# TYPE apiserver_request_total counter\n";
  for (const auto& [k, v] : requests_) {
    out += "apiserver_request_total{" + request_labels(k.first) + ",code=\"" + std::to_string(k.second) + "\"} " +
           std::to_string(v) + "\n";
  }
  out += "# HELP apiserver_request_duration_seconds Response latency distribution in seconds for each verb, dry run "
         "value, group, version, resource, subresource, scope and component.\n";
  out += "# TYPE apiserver_request_duration_seconds histogram\n";
  for (const auto& [k, h] : latency_) hist("apiserver_request_duration_seconds", request_labels(k), h);
  auto store_labels = [](const StoreKey& k) {
    return "operation=\"" + esc(std::get<0>(k)) + "\",group=\"" + esc(std::get<1>(k)) + "\",resource=\"" +
           esc(std::get<2>(k)) + "\"";
  };
  out += "# HELP etcd_request_duration_seconds Etcd request latency in seconds for each operation and object type.\n";
  out += "# TYPE etcd_request_duration_seconds histogram\n";
  for (const auto& [k, h] : store_) hist("etcd_request_duration_seconds", store_labels(k), h);
  out += "# HELP etcd_requests_total Etcd request counts for each operation and object type.\n";
  out += "# TYPE etcd_requests_total counter\n";
  for (const auto& [k, h] : store_) out += "etcd_requests_total{" + store_labels(k) + "} " + std::to_string(h.count) + "\n";
  out += "# HELP etcd_request_errors_total Etcd failed request counts for each operation and object type.\n";
  out += "# TYPE etcd_request_errors_total counter\n";
  for (const auto& [k, n] : store_errors_) out += "etcd_request_errors_total{" + store_labels(k) + "} " + std::to_string(n) + "\n";
  out += "# HELP apiserver_longrunning_requests Gauge of all active long-running apiserver requests broken out by "
         "verb, group, version, resource, scope and component. Not all requests are tracked this way.\n";
  out += "# TYPE apiserver_longrunning_requests gauge\n";
  out += "apiserver_longrunning_requests{verb=\"WATCH\",component=\"apiserver\"} " + std::to_string(watches_.load()) + "\n";
  for (const auto& source : sources_) out += source();
  return out;
}

}  // namespace draplane::server
