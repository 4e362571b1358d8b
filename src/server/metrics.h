// Prometheus metrics of the API server, rendered in the Prometheus text
// exposition format (0.0.4) at /metrics, named and labelled as kube-apiserver's:
//   apiserver_request_total{verb,dry_run,group,version,resource,subresource,scope,component,code}
//   apiserver_request_duration_seconds{verb,dry_run,group,version,resource,subresource,scope,component}
//   apiserver_longrunning_requests{verb="WATCH",...}  (open watches)
//   etcd_request_duration_seconds{operation,group,resource}, etcd_requests_total,
//   etcd_request_errors_total  (store latency; the store need not be etcd)
// Histograms use kube-apiserver's buckets (5 ms ... 60 s). Verbs are
// kube-apiserver's reported verbs: GET, LIST, WATCH, POST, PUT, PATCH, APPLY,
// DELETE, DELETECOLLECTION; scope is resource (a named object), namespace or
// cluster (a collection); component is "apiserver".
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace draplane::server {

struct RequestLabels {
  std::string verb;  // LIST, GET, ... (see above)
  bool dry_run = false;
  std::string group, version, resource, subresource;
  std::string scope;  // "resource", "namespace", "cluster", "" for non-resource paths
  auto key() const { return std::tie(verb, dry_run, group, version, resource, subresource, scope); }
  bool operator<(const RequestLabels& o) const { return key() < o.key(); }
};

class Metrics {
 public:
  void observe_request(const RequestLabels& labels, int code, double seconds);
  void watch_opened() { ++watches_; }
  void watch_closed() { --watches_; }
  // One store call: operation get/list/create/update/delete/compact.
  void observe_store(const std::string& operation, const std::string& group, const std::string& resource,
                     double seconds, bool error);
  // Metrics of other parts of the process (e.g. client::render_informer_metrics),
  // appended to render()'s text. Add before serving.
  void add_source(std::function<std::string()> render) { sources_.push_back(std::move(render)); }
  std::string render();

 private:
  struct Hist {
    uint64_t count = 0;
    double sum = 0;
    std::vector<uint64_t> buckets;  // cumulative counts per bound
  };
  static void add(Hist& h, double seconds);
  std::mutex mu_;
  std::map<std::pair<RequestLabels, int>, uint64_t> requests_;
  std::map<RequestLabels, Hist> latency_;
  using StoreKey = std::tuple<std::string, std::string, std::string>;  // operation, group, resource
  std::map<StoreKey, Hist> store_;
  std::map<StoreKey, uint64_t> store_errors_;
  std::atomic<int64_t> watches_{0};
  std::vector<std::function<std::string()>> sources_;
};

}  // namespace draplane::server
