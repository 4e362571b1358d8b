// EtcdStore: the Store on an etcd v3 cluster, through etcd's gRPC API (as
// kube-apiserver keeps its objects), so several API servers can share one cluster.
//
// The Store contract maps onto etcd one to one: the revision is etcd's cluster
// revision, a KeyValue's mod_revision is etcd's; create is a Txn on
// create_revision == 0, update/remove a Txn on mod_revision == expected (a failed
// compare reads the current value in the same Txn); list is a Range at a revision
// with a limit; watch is an etcd Watch with prev_kv; compaction is etcd's Compact,
// and etcd's "required revision has been compacted" becomes Code::kGone.
//
// Keys: a store key under `root` ("/registry/pods/ns/x") is kept in etcd under
// `prefix` in its place ("<prefix>/pods/ns/x"), so with the defaults the layout is
// kube-apiserver's with --etcd-prefix=/registry.
//
// Failures: the channel reconnects with backoff and fails over between the
// endpoints (gRPC pick_first over all of them). Reads are retried while no member
// answers; a write whose outcome is unknown (the connection broke in flight) is
// reported kUnavailable, never retried, so no write is applied twice. Watches
// resume from the revision after the last delivered event on another member: no
// gap, no duplicate; kGone when that revision was compacted meanwhile.
//
// Thread-safety: as Store. Watch callbacks run on gRPC's threads, one at a time
// per watch and in revision order.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace draplane::store {

struct EtcdOptions {
  std::vector<std::string> endpoints;  // HOST:PORT, at least one
  std::string prefix = "/registry";    // etcd key prefix (kube-apiserver's --etcd-prefix)
  std::string root = "/registry";      // the store keys' root that `prefix` replaces
  // TLS to etcd (kube-apiserver's --etcd-cafile/--etcd-certfile/--etcd-keyfile):
  // used when ca_file or cert_file is set.
  std::string ca_file, cert_file, key_file;
  std::chrono::milliseconds request_timeout{10000};  // one request, reconnect waits included
};

// Connects to etcd and checks that it answers. kUnavailable when no endpoint
// answers within request_timeout; kInvalid for bad options.
Result<std::unique_ptr<Store>> open_etcd_store(const EtcdOptions& options);

// "etcd://HOST:PORT[,HOST:PORT...]" -> the endpoints. kInvalid names what is wrong.
Result<std::vector<std::string>> parse_etcd_url(std::string_view url);

}  // namespace draplane::store
