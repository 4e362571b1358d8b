// PrioritySort (kube-scheduler's queue sort plugin): higher priority first,
// then the pod that became active first; the key breaks what is left.
#include "sched/plugins/plugins.h"

namespace draplane::sched::plugins {
namespace {

class PrioritySort final : public framework::QueueSortPlugin {
 public:
  std::string_view name() const override { return "PrioritySort"; }
  bool less(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) const override {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.seq != b.seq) return a.seq < b.seq;
    return *a.key < *b.key;
  }
};

}  // namespace

std::unique_ptr<framework::Plugin> new_priority_sort() { return std::make_unique<PrioritySort>(); }

}  // namespace draplane::sched::plugins
