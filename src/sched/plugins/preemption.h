// DefaultPreemption (kube-scheduler's PostFilter plugin of that name) with
// DRA devices: when no node passes Filter, it searches victims with
// sched/preemption.h, checking each candidate set by running the real filters
// (DynamicResources' allocator included) on the cache with the victims taken
// out: their pods removed (pod slots, extended resources) and the claims only
// they use deallocated (devices, counters, shares). A claim that some pod
// outside the set still uses stays allocated.
//
// Eviction, as upstream's prepareCandidate: each victim gets the condition
// DisruptionTarget=True (reason PreemptionByScheduler) through the status
// subresource and an event "Preempted", then is deleted with its own grace
// period; the claim controller drops the gone pods from the claims'
// reservedFor and deallocates them. The preemptor gets status.nominatedNodeName.
//
// Nominations: a pending pod with status.nominatedNodeName (set here or seen in
// its status) is held on that node while other pods of lower or equal priority
// are filtered (hold_nominated): its claims are allocated and reserved there
// for the duration of their Filter, as kube-scheduler adds nominated pods to
// the filter of others, so the devices its victims free are not given away.
//
// Gangs (gang.h): a victim's whole gang is evicted, members on other nodes too,
// or none of it.
//
// Thread-safety: scheduling thread only (as the framework).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/framework.h"
#include "sched/preemption.h"

namespace draplane::sched::plugins {

inline constexpr const char* kPreemptionByScheduler = "PreemptionByScheduler";

class DefaultPreemption final : public framework::PostFilterPlugin {
 public:
  static constexpr std::string_view kName = "DefaultPreemption";
  // `fw` runs the filters of the what-if checks; it owns this plugin.
  explicit DefaultPreemption(framework::Framework& fw) : fw_(fw) {}
  std::string_view name() const override { return kName; }

  framework::PostFilterResult post_filter(framework::CycleState& state,
                                          const framework::NodeStatusMap& statuses) override;

  struct Nomination {
    std::string node;
    int32_t priority = 0;
  };
  // Keeps the nomination of pod `key` from its latest object (null: gone or
  // no longer pending): status.nominatedNodeName of a pending pod.
  void track(const std::string& key, const api::Pod* pending_pod);
  const std::map<std::string, Nomination>& nominations() const { return nominations_; }

  // While alive, the nominated pods of priority >= `priority` other than
  // `pod_key` are reserved on their nominated nodes (those that still fit
  // there). Create it before the cycle's PreFilter: holding a pod runs the
  // framework's PreFilter for it.
  class Hold {
   public:
    ~Hold();
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    friend class DefaultPreemption;
    explicit Hold(framework::Framework& fw) : fw_(fw) {}
    struct Held {
      framework::CycleState cs;
      framework::NodeFit fit;
      framework::Reservation r;
    };
    framework::Framework& fw_;
    std::vector<std::unique_ptr<Held>> held_;
  };
  // Null when no nomination applies (the common case costs a map lookup).
  std::unique_ptr<Hold> hold_nominated(const std::string& pod_key, int32_t priority);

  // The victim search alone, nothing evicted: the node and victims post_filter
  // would choose for `state`'s pod, or why there are none.
  Result<preemption::PostFilterResult> search(framework::CycleState& state, const framework::NodeStatusMap& statuses);

  // Pods taken out of the cache as the what-if checks take them (their claims
  // no remaining pod uses deallocated) until the object is destroyed: a gang's
  // later members are searched with the earlier members' victims gone.
  class Removal {
   public:
    virtual ~Removal() = default;
  };
  std::unique_ptr<Removal> remove(const std::vector<std::string>& pod_keys);

  // A gang as preemptor (KEP-5710: victims chosen so that the whole group
  // fits): evicts `victims`, nominates each member for its node (pod key ->
  // node) and has the gang wait (gang_waiting) until the victims are gone and
  // the claims only they held are released, instead of choosing more.
  // The scheduler's groups of interchangeable nodes (sched/node_classes.h),
  // brought up to date: the group of `node` for `state`'s pod, nullopt when
  // the pod reads what the groups leave out. Set: the victim search examines
  // one node of a group whose victims look alike (same priorities order, pod
  // requests, devices at the same places) and reuses its outcome on the others.
  using NodeGroupFn = std::function<std::optional<uint64_t>(const framework::CycleState& state, const std::string& node)>;
  void set_node_groups(NodeGroupFn fn) { node_group_ = std::move(fn); }

  void evict_for_gang(const std::string& gang_id, const std::vector<std::pair<std::string, std::string>>& members,
                      const std::vector<std::string>& victims);
  bool gang_waiting(const std::string& gang_id);

 private:
  // Victims chosen: evicts them and nominates the node for the preemptor.
  void evict(const framework::CycleState& state, const std::string& node, const std::vector<std::string>& victims);
  // Marks and deletes the victims for `preemptor` (events name `node`);
  // returns the claims (key -> UID) only they held.
  std::map<std::string, std::string> evict_pods(const api::Pod& preemptor, const std::string& preemptor_key,
                                                const std::string& node, const std::vector<std::string>& victims);
  void nominate(const std::string& key, const std::string& node);

  framework::Framework& fw_;
  NodeGroupFn node_group_;
  std::map<std::string, Nomination> nominations_;
  // Per preemptor: the claims (key -> UID) its victims alone held. Until they
  // are deallocated the preemptor waits instead of choosing more victims (the
  // victims are gone before the claim controller releases their claims).
  std::map<std::string, std::map<std::string, std::string>> awaiting_release_;
  // Per gang that preempted: its victims (key -> UID) and the claims only they
  // held (key -> UID), until all are gone.
  struct GangWait {
    std::map<std::string, std::string> pods, claims;
  };
  std::map<std::string, GangWait> gang_awaiting_;
};

}  // namespace draplane::sched::plugins
