// Leader election on a coordination.k8s.io/v1 Lease, as client-go's
// tools/leaderelection does it for kube-scheduler and kube-controller-manager.
//
// Candidates share one Lease (default kube-system/<name>). Its spec is the
// election record: holderIdentity, leaseDurationSeconds, acquireTime,
// renewTime, leaseTransitions. A candidate may take the Lease when it has no
// holder, when it holds it already, or when the record has not changed for
// leaseDurationSeconds of the candidate's own (monotonic) clock since it last
// saw it change ("observed time"); the renewTime written in the Lease is never
// compared with the local clock, so the candidates' clocks need not agree.
// Every write is a PUT with the resourceVersion read (a POST when there is no
// Lease), so two candidates never both win: the second gets 409 Conflict.
//
// The leader renews every retry period; when no renewal succeeds within the
// renew deadline (measured while a request hangs too) it stops leading (run() returns "leader election lost"; the
// standalone scheduler and controllers exit, as upstream's do). The deadline
// is shorter than the lease duration, so the old leader has stopped acting
// before a standby may take over. On a clean stop the leader releases the Lease
// (release on cancel): holder "" and leaseDurationSeconds 1, so a standby takes
// over at its next retry instead of after the lease duration.
//
// Thread-safety: a LeaderElector is used from the thread that calls run() (or
// the test calling try_acquire_or_renew()); is_leader() and leader() may be
// read from any thread.
#pragma once

#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "client/rest_client.h"
#include "common/clock.h"
#include "common/result.h"

namespace draplane::client {

// The Lease's spec as the election reads and writes it (client-go's
// LeaderElectionRecord); times are metav1.MicroTime text.
struct LeaderElectionRecord {
  std::string holder_identity;
  int64_t lease_duration_seconds = 0;
  std::string acquire_time;
  std::string renew_time;
  int64_t lease_transitions = 0;
  bool operator==(const LeaderElectionRecord&) const = default;
};

struct LeaderElectionConfig {
  std::string lease_namespace = "kube-system";
  std::string lease_name;
  std::string identity;  // default_identity() when empty
  // kube-scheduler's and kube-controller-manager's defaults.
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  bool release_on_cancel = true;
  std::shared_ptr<const common::Clock> clock;  // real_clock() when null
  std::shared_ptr<spdlog::logger> logger;      // none when null
  // client-go's OnStoppedLeading (after the leading function has returned) and
  // OnNewLeader (the Lease shows another holder, "" once released); optional.
  // OnStartedLeading is run()'s leading function.
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string& identity)> on_new_leader;
};

// client-go's checks: every duration positive, lease duration above the renew
// deadline, renew deadline above 1.2 retry periods (the most a jittered retry
// waits). kInvalid naming the flag's quantity otherwise.
Status validate_leader_election(const LeaderElectionConfig& config);

// "<hostname>_<random UUID>", the identity kube-scheduler takes.
std::string default_leader_identity();

class LeaderElector {
 public:
  // While leading: called on its own thread; runs until `stop` turns true (lost
  // leadership or the elector's stop) and returns its error or OK.
  using LeadingFn = std::function<Status(const std::atomic<bool>& stop)>;

  LeaderElector(RestClient& rest, LeaderElectionConfig config);

  // Campaigns until `stop`; while it holds the Lease, runs `leading` and renews.
  // Returns OK once stopped (having released the Lease when release_on_cancel
  // and it led), kUnavailable "leader election lost" when renewing failed for
  // the renew deadline, or the error `leading` returned (the Lease released).
  Status run(const std::atomic<bool>& stop, const LeadingFn& leading);

  // One attempt (client-go's tryAcquireOrRenew): true when this candidate holds
  // the Lease afterwards.
  bool try_acquire_or_renew();
  // Gives up the Lease if this candidate holds it; true when it no longer does.
  bool release();

  bool is_leader() const;
  // The holder last seen in the Lease ("" when none).
  std::string leader() const;
  const std::string& identity() const { return config_.identity; }

 private:
  Status campaign(const std::atomic<bool>& stop);
  bool renew_until_deadline(const std::atomic<bool>& stop, const std::atomic<bool>& leading_done);
  void observe(const LeaderElectionRecord& record);
  // Sleeps `d`, waking early when either flag turns true; false if one did.
  bool sleep(std::chrono::milliseconds d, const std::atomic<bool>& a, const std::atomic<bool>* b = nullptr);

  RestClient& rest_;
  LeaderElectionConfig config_;
  mutable std::mutex mu_;
  LeaderElectionRecord observed_;
  common::Clock::TimePoint observed_time_{};
  std::string last_lease_;  // the Lease as this candidate last wrote it (release() writes over it)
};

// run()'s "leader election lost" (kDeadlineExceeded with that message; a 504
// the leading function returns is not it).
bool is_leader_election_lost(const Status& st);

// Runs `leading` only while this process holds the Lease. With
// `rejoin_after_loss` a lost election starts a new campaign (the components
// embedded in `draplane server`); without, run()'s error ends the call (the
// standalone commands exit 1, as upstream's do).
Status run_leader_elected(RestClient& rest, const LeaderElectionConfig& config, const LeaderElector::LeadingFn& leading,
                          const std::atomic<bool>& stop, bool rejoin_after_loss);

}  // namespace draplane::client
