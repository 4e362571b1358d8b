// The demo of `draplane up --demo`: applies manifests to a running cluster through
// its REST API (create, like `kubectl create -f`; Namespaces first; Nodes and
// ResourceSlices are left to the node agents), waits until every pod has settled
// and reports, per claim, where and what was allocated and, per pod, its state
// and its containers' output.
//
// Thread-safety: free functions; the RestClient serializes its requests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "api/types.h"
#include "client/rest_client.h"
#include "common/result.h"

namespace draplane::cluster {

struct ApplyOutcome {
  enum class Kind { kCreated, kExists, kSkipped, kFailed };
  Kind kind = Kind::kFailed;
  std::string file;
  int document = 0;
  std::string object;   // Kind/namespace/name or Kind/name
  std::string message;  // why skipped or failed
};

// Every *.yaml, *.yml and *.json below `path` (or `path` itself), in sorted order.
Result<std::vector<std::string>> manifest_files(const std::string& path);

// Decodes every document of `files` and creates its object. Documents that do
// not decode, and objects the server rejects, are reported with the server's
// message (field path and reason) and do not stop the others. Namespaces named by
// objects are created when missing.
std::vector<ApplyOutcome> apply_manifests(client::RestClient& rest, const std::vector<std::string>& files);

// Waits until every pod is Running, Succeeded or Failed, or nothing about the
// pods has changed for a few seconds (the rest are unschedulable), or
// `timeout_ms` passed. Returns the pods not started ("namespace/name").
std::vector<std::string> wait_pods_settled(client::RestClient& rest, int timeout_ms);

// The annotation that marks an example pod expected to stay Pending (the
// seeds' manifests as written); its value says why. examples/README.md.
inline constexpr const char* kExpectPendingAnnotation = "draplane.io/expect-pending";

struct PendingSummary {
  std::vector<std::pair<std::string, std::string>> expected;  // "namespace/name", the annotation's reason
  std::vector<std::string> unexpected;                        // pending without the annotation
  std::vector<std::string> started_anyway;                    // annotated but started
};

// Sorts the pods left pending (`pending`, "namespace/name", as
// wait_pods_settled returns them) by whether `pods` marks them with
// kExpectPendingAnnotation.
PendingSummary summarize_pending(const std::vector<std::string>& pending, const std::vector<api::Pod>& pods);

// The demo's closing lines: what waits as intended (with the reasons), then an
// "ERROR: ..." line for the pods that should have started; "" when every pod started.
std::string render_pending_summary(const PendingSummary& summary, int timeout_s);

// The pods of the cluster (for summarize_pending).
std::vector<api::Pod> list_pods(client::RestClient& rest);

// The report: one block per ResourceClaim (node and devices, with the devices'
// product names and UUIDs, or why it is pending) and per Pod (phase, node,
// container output).
std::string demo_report(client::RestClient& rest);

}  // namespace draplane::cluster
