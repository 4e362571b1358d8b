// Flags that `draplane server` and `draplane up` share (both run a
// cluster::LocalCluster).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>

#include "cluster/local_cluster.h"

namespace draplane::cmd {

// --event-ttl DURATION (kube-apiserver's flag, a Go duration) into `ttl_s` seconds.
void add_event_ttl_option(CLI::App& sub, int64_t& ttl_s);

// kube-apiserver's --max-requests-inflight, --max-mutating-requests-inflight
// and --request-timeout.
void add_request_limit_options(CLI::App& sub, cluster::LocalClusterOptions& o);

// --store and, for an etcd store, kube-apiserver's --etcd-prefix, --etcd-cafile,
// --etcd-certfile, --etcd-keyfile and --etcd-compaction-interval.
void add_store_options(CLI::App& sub, cluster::LocalClusterOptions& o);

}  // namespace draplane::cmd
