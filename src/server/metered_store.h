// A store::Store decorator that times every call of the API server into its
// store for Metrics (etcd_request_duration_seconds, etcd_requests_total and
// etcd_request_errors_total, as kube-apiserver's storage layer records them):
// operation get/list/create/update/delete/compact, and the group and resource
// taken from the key (/registry/<resource>/...). Watches are passed through
// untimed (kube-apiserver does not time them either). A revision mismatch of
// update/remove is an outcome, not an error.
//
// Thread-safety: as the wrapped store; Metrics is thread-safe.
#pragma once

#include <memory>

#include "server/metrics.h"
#include "store/store.h"

namespace draplane::server {

std::unique_ptr<store::Store> metered_store(store::Store& inner, Metrics& metrics);

}  // namespace draplane::server
