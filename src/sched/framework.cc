#include "sched/framework.h"

#include <algorithm>

namespace draplane::sched::framework {

void Framework::add(std::unique_ptr<Plugin> plugin) {
  Plugin* p = plugin.get();
  if (auto* q = dynamic_cast<QueueSortPlugin*>(p)) queue_sort_ = q;
  if (auto* x = dynamic_cast<PreEnqueuePlugin*>(p)) pre_enqueue_.push_back(x);
  if (auto* x = dynamic_cast<PreFilterPlugin*>(p)) pre_filter_.push_back(x);
  if (auto* x = dynamic_cast<FilterPlugin*>(p)) filter_.push_back(x);
  if (auto* x = dynamic_cast<PostFilterPlugin*>(p)) post_filter_.push_back(x);
  if (auto* x = dynamic_cast<ScorePlugin*>(p)) score_.push_back(x);
  if (auto* x = dynamic_cast<ReservePlugin*>(p)) reserve_.push_back(x);
  if (auto* x = dynamic_cast<PermitPlugin*>(p)) permit_.push_back(x);
  owned_.push_back(std::move(plugin));
}

Status Framework::run_pre_enqueue(const api::Pod& pod) {
  for (auto* p : pre_enqueue_) {
    Status s = p->pre_enqueue(pod);
    if (!s.ok()) return s;
  }
  return {};
}

Status Framework::run_pre_filter(CycleState& state) {
  skipped_.clear();
  for (auto* p : pre_filter_) {
    Status s = p->pre_filter(state);
    if (s.skip()) {
      skipped_.push_back(p);
      continue;
    }
    if (!s.ok()) return s;
  }
  return {};
}

Status Framework::run_filter(CycleState& state, const NodeInfo& node, NodeFit& fit) {
  for (auto* p : filter_) {
    if (!skipped_.empty() && std::find(skipped_.begin(), skipped_.end(), static_cast<const Plugin*>(p)) != skipped_.end()) {
      continue;
    }
    Status s = p->filter(state, node, fit);
    if (!s.ok()) return s;
  }
  return {};
}

PostFilterResult Framework::run_post_filter(CycleState& state, const NodeStatusMap& statuses) {
  PostFilterResult last{Status::unschedulable("no post-filter plugin made room"), ""};
  for (auto* p : post_filter_) {
    PostFilterResult r = p->post_filter(state, statuses);
    if (r.status.ok() || r.status.code() == Code::kError) return r;
    last = std::move(r);
  }
  return last;
}

void Framework::run_score(const CycleState& state, const NodeInfo& node, const NodeFit& fit,
                          std::vector<int64_t>& scores) {
  scores.resize(score_.size());
  for (size_t i = 0; i < score_.size(); ++i) scores[i] = score_[i]->score(state, node, fit);
}

bool Framework::better(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  return std::lexicographical_compare(b.begin(), b.end(), a.begin(), a.end());
}

Status Framework::run_reserve(CycleState& state, const NodeFit& fit, Reservation& r) {
  for (size_t i = 0; i < reserve_.size(); ++i) {
    Status s = reserve_[i]->reserve(state, fit, r);
    if (s.ok()) continue;
    for (size_t j = i; j-- > 0;) reserve_[j]->unreserve(state, fit, r);
    return s;
  }
  return {};
}

void Framework::run_unreserve(CycleState& state, const NodeFit& fit, Reservation& r) {
  for (size_t j = reserve_.size(); j-- > 0;) reserve_[j]->unreserve(state, fit, r);
}

Status Framework::run_permit(CycleState& state, const NodeFit& fit) {
  Status result;
  for (auto* p : permit_) {
    Status s = p->permit(state, fit);
    if (s.code() == Code::kWait) {
      result = std::move(s);
      continue;
    }
    if (!s.ok()) return s;
  }
  return result;
}

}  // namespace draplane::sched::framework
