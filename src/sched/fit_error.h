// The PodScheduled=False message for a pod no node fits, in kube-scheduler's
// FitError shape: "0/3 nodes are available: 1 node(s) didn't match Pod's node
// affinity/selector, 2 cannot allocate all claims." The histogram keys are
// kube-scheduler's reason strings; for device allocation failures the
// allocator's explanations follow, counted per distinct text, so a person
// sees why ("2 node(s): claim default/c: request gpu: 2 devices needed; ...").
//
// Thread-safety: a plain value type.
#pragma once

#include <map>
#include <string>

namespace draplane::sched {

inline constexpr const char* kReasonCannotAllocate = "cannot allocate all claims";

class FitError {
 public:
  explicit FitError(int num_nodes) : num_nodes_(num_nodes) {}
  // One node failed for `reason` (a kube-scheduler reason string); `detail`,
  // when non-empty, is the explanation shown after the histogram.
  void add(const std::string& reason, const std::string& detail = {});
  // The whole pod failed before node filtering (a claim missing, ...).
  void set_pre_filter(std::string message) { pre_filter_ = std::move(message); }
  // The message; at most `max_details` distinct explanations are listed.
  std::string message(int max_details = 3) const;

 private:
  int num_nodes_ = 0;
  std::string pre_filter_;
  std::map<std::string, int> reasons_;
  std::map<std::string, int> details_;
};

}  // namespace draplane::sched
