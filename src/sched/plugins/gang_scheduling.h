// GangScheduling's Permit (SPEC §6, KEP-4671): in a gang's cycle
// (Scheduler::schedule_group) each member reserved waits until `needed`
// members are reserved against the same cache state; then all are allowed
// together. A group cycle that ends with members still waiting unreserves
// them all, so a gang that does not fit holds nothing and two gangs after the
// same devices cannot each keep part of them. Pods outside a group cycle are
// allowed at once.
//
// Thread-safety: scheduling thread only.
#pragma once

#include "sched/framework.h"

namespace draplane::sched::plugins {

class GangScheduling final : public framework::PermitPlugin {
 public:
  static constexpr std::string_view kName = "GangScheduling";
  std::string_view name() const override { return kName; }

  // A group cycle starts: `needed` more members must be reserved before any
  // is allowed (<= 0: the gang is already admitted, members pass).
  void begin_group(int needed) {
    in_group_ = true;
    needed_ = needed;
    reserved_ = 0;
  }
  void end_group() { in_group_ = false; }
  // Members reserved so far in this group cycle.
  int reserved() const { return reserved_; }

  framework::Status permit(framework::CycleState& state, const framework::NodeFit& fit) override;

 private:
  bool in_group_ = false;
  int needed_ = 0;
  int reserved_ = 0;
};

}  // namespace draplane::sched::plugins
