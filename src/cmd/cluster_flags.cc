#include "cmd/cluster_flags.h"

namespace draplane::cmd {

void add_event_ttl_option(CLI::App& sub, int64_t& ttl_s) {
  sub.add_option_function<std::string>(
         "--event-ttl",
         [&ttl_s](const std::string& text) {
           auto d = cluster::parse_duration_seconds(text);
           if (!d.has_value()) throw CLI::ValidationError("--event-ttl", d.error().message());
           ttl_s = *d;
         },
         "Amount of time to retain events (as kube-apiserver's --event-ttl)")
      ->default_str("1h0m0s");
}

void add_request_limit_options(CLI::App& sub, cluster::LocalClusterOptions& o) {
  sub.add_option("--max-requests-inflight", o.max_requests_inflight,
                 "Most non-mutating requests served at once (watches and logs not counted); over it 429. 0: no limit")
      ->capture_default_str();
  sub.add_option("--max-mutating-requests-inflight", o.max_mutating_requests_inflight,
                 "Most mutating requests served at once; over it 429. 0: no limit")
      ->capture_default_str();
  sub.add_option("--request-timeout", o.request_timeout,
                 "Longest a request's body may take to arrive and its reply to be read (Go duration)")
      ->capture_default_str();
}

void add_store_options(CLI::App& sub, cluster::LocalClusterOptions& o) {
  sub.add_option("--store", o.store,
                 "sqlite (durable, default), memory, or etcd://HOST:PORT[,HOST:PORT...] (an etcd v3 cluster)")
      ->capture_default_str();
  sub.add_option("--etcd-prefix", o.etcd_prefix, "The prefix of every key in etcd")->capture_default_str();
  sub.add_option("--etcd-cafile", o.etcd_cafile, "CA bundle that verifies the etcd servers (enables TLS)");
  sub.add_option("--etcd-certfile", o.etcd_certfile, "Client certificate presented to etcd");
  sub.add_option("--etcd-keyfile", o.etcd_keyfile, "Private key of --etcd-certfile");
  sub.add_option_function<std::string>(
         "--etcd-compaction-interval",
         [&o](const std::string& text) {
           auto d = cluster::parse_duration_seconds(text);
           if (!d.has_value() || *d <= 0) {
             throw CLI::ValidationError("--etcd-compaction-interval",
                                        d.has_value() ? "must be positive" : d.error().message());
           }
           o.compact_interval_s = static_cast<int>(*d);
         },
         "Interval between compactions of the store's history (Go duration; any store)")
      ->default_str("5m0s");
}

}  // namespace draplane::cmd
