// LeaderElector against an in-memory Lease endpoint with the API server's
// optimistic concurrency (404, 409 AlreadyExists on create, 409 Conflict on a
// stale resourceVersion): one leader among candidates, takeover after the
// lease duration on the standby's clock, immediate takeover after a release,
// the loser of a write race, and run() stopping and handing over.
#include "client/leader_election.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <thread>

namespace draplane::client {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kLeasePath = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/test-lock";
constexpr std::string_view kCollection = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";

// One Lease, stored as JSON with a resourceVersion counter.
class FakeLeaseServer {
 public:
  Response handle(std::string_view method, std::string_view target, std::string_view body) {
    std::function<void()> hook;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (method == "PUT" && before_put) hook = std::exchange(before_put, nullptr);
    }
    if (hook) hook();  // another candidate writes between this one's read and write
    std::lock_guard<std::mutex> l(mu_);
    ++requests;
    if (method == "GET" && target == kLeasePath) {
      if (lease_.empty()) return status(404, "NotFound");
      return {200, lease_, "application/json"};
    }
    if (method == "POST" && target == kCollection) {
      if (!lease_.empty()) return status(409, "AlreadyExists");
      return store(body);
    }
    if (method == "PUT" && target == kLeasePath) {
      rapidjson::Document d;
      d.Parse(body.data(), body.size());
      std::string rv = d["metadata"].HasMember("resourceVersion") ? d["metadata"]["resourceVersion"].GetString() : "";
      if (lease_.empty()) return status(404, "NotFound");
      if (rv != std::to_string(rv_)) return status(409, "Conflict");
      return store(body);
    }
    return status(400, "BadRequest");
  }

  rapidjson::Document lease() {
    std::lock_guard<std::mutex> l(mu_);
    rapidjson::Document d;
    d.Parse(lease_.c_str());
    return d;
  }

  std::function<void()> before_put;
  int requests = 0;

 private:
  Response status(int code, const char* reason) {
    return {code, std::string("{\"kind\":\"Status\",\"reason\":\"") + reason + "\",\"message\":\"" + reason + "\"}",
            "application/json"};
  }
  Response store(std::string_view body) {
    rapidjson::Document d;
    d.Parse(body.data(), body.size());
    auto& md = d["metadata"];
    md.RemoveMember("resourceVersion");
    md.AddMember("resourceVersion", rapidjson::Value(std::to_string(++rv_).c_str(), d.GetAllocator()),
                 d.GetAllocator());
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    d.Accept(w);
    lease_ = b.GetString();
    return {200, lease_, "application/json"};
  }

  std::mutex mu_;
  std::string lease_;
  int64_t rv_ = 0;
};

// One candidate's connection; `down` makes every request a transport error.
class FakeLeaseClient final : public RestClient {
 public:
  explicit FakeLeaseClient(FakeLeaseServer& s) : server_(s) {}
  Result<Response> request(std::string_view method, std::string_view target, std::string_view body,
                           std::string_view) override {
    if (down.load()) return Status(Code::kUnavailable, "connect: Connection refused");
    // A server that stopped answering: the request waits (for the transport's
    // timeout in real life) and then fails.
    bool hung = false;
    while (hang.load()) {
      hung = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (hung) return Status(Code::kUnavailable, "read: timed out");
    return server_.handle(method, target, body);
  }
  Result<void> watch(std::string_view, const std::function<bool(std::string_view)>&, const std::atomic<bool>*,
                     int) override {
    return Status(Code::kInternal, "no watch");
  }
  std::atomic<bool> down{false};
  std::atomic<bool> hang{false};

 private:
  FakeLeaseServer& server_;
};

LeaderElectionConfig config(const std::string& id, std::shared_ptr<common::FakeClock> clock = nullptr) {
  LeaderElectionConfig c;
  c.lease_name = "test-lock";
  c.identity = id;
  c.clock = clock;
  return c;
}

std::string holder(FakeLeaseServer& s) {
  auto d = s.lease();
  return d["spec"].HasMember("holderIdentity") ? d["spec"]["holderIdentity"].GetString() : "";
}

// Candidates a and b on one Lease endpoint and one fake clock.
class LeaderElectionTwoCandidates : public ::testing::Test {
 protected:
  FakeLeaseServer server;
  FakeLeaseClient ca{server}, cb{server};
  std::shared_ptr<common::FakeClock> clock = std::make_shared<common::FakeClock>();
  LeaderElector a{ca, config("a", clock)}, b{cb, config("b", clock)};
};

TEST_F(LeaderElectionTwoCandidates, OneLeads) {
  EXPECT_TRUE(a.try_acquire_or_renew());
  EXPECT_FALSE(b.try_acquire_or_renew());
  EXPECT_TRUE(a.is_leader());
  EXPECT_FALSE(b.is_leader());
  EXPECT_EQ(b.leader(), "a");
  auto lease = server.lease();
  EXPECT_EQ(holder(server), "a");
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"].GetInt(), 15);
  EXPECT_EQ(lease["spec"]["leaseTransitions"].GetInt(), 0);
  EXPECT_STREQ(lease["spec"]["acquireTime"].GetString(), "2026-01-01T00:00:00.000000Z");
  // Renewing keeps acquireTime and moves renewTime.
  clock->advance(2s);
  EXPECT_TRUE(a.try_acquire_or_renew());
  lease = server.lease();
  EXPECT_STREQ(lease["spec"]["acquireTime"].GetString(), "2026-01-01T00:00:00.000000Z");
  EXPECT_STREQ(lease["spec"]["renewTime"].GetString(), "2026-01-01T00:00:02.000000Z");
}

TEST_F(LeaderElectionTwoCandidates, StandbyTakesOverOnlyAfterTheLeaseDurationOnItsOwnClock) {
  ASSERT_TRUE(a.try_acquire_or_renew());
  EXPECT_FALSE(b.try_acquire_or_renew());  // b sees the record now
  // The leader stops renewing; the record stays as it was.
  clock->advance(14s);
  EXPECT_FALSE(b.try_acquire_or_renew());
  clock->advance(1100ms);
  EXPECT_TRUE(b.try_acquire_or_renew());
  EXPECT_EQ(holder(server), "b");
  EXPECT_EQ(server.lease()["spec"]["leaseTransitions"].GetInt(), 1);
  // The old leader finds it lost the lease.
  EXPECT_FALSE(a.try_acquire_or_renew());
  EXPECT_FALSE(a.is_leader());
  EXPECT_EQ(a.leader(), "b");
}

TEST_F(LeaderElectionTwoCandidates, RenewalsSeenByTheStandbyRestartItsWait) {
  ASSERT_TRUE(a.try_acquire_or_renew());
  EXPECT_FALSE(b.try_acquire_or_renew());
  clock->advance(10s);
  ASSERT_TRUE(a.try_acquire_or_renew());
  EXPECT_FALSE(b.try_acquire_or_renew());  // a new record: b's wait starts again
  clock->advance(10s);
  EXPECT_FALSE(b.try_acquire_or_renew());
  EXPECT_EQ(holder(server), "a");
}

TEST_F(LeaderElectionTwoCandidates, ReleaseLetsTheStandbyTakeOverAtOnce) {
  ASSERT_TRUE(a.try_acquire_or_renew());
  EXPECT_FALSE(b.try_acquire_or_renew());
  EXPECT_TRUE(a.release());
  EXPECT_FALSE(a.is_leader());
  auto lease = server.lease();
  EXPECT_FALSE(lease["spec"].HasMember("holderIdentity"));
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"].GetInt(), 1);
  EXPECT_TRUE(b.try_acquire_or_renew());  // no wait for the lease duration
  EXPECT_EQ(holder(server), "b");
  EXPECT_EQ(server.lease()["spec"]["leaseTransitions"].GetInt(), 1);
}

TEST_F(LeaderElectionTwoCandidates, TheLoserOfAWriteRaceDoesNotLead) {
  FakeLeaseClient cc(server);
  LeaderElector c(cc, config("c", clock));
  ASSERT_TRUE(c.try_acquire_or_renew());
  EXPECT_FALSE(a.try_acquire_or_renew());
  EXPECT_FALSE(b.try_acquire_or_renew());
  clock->advance(16s);  // c is gone; a and b both see the lease expired
  bool b_won = false;
  server.before_put = [&] { b_won = b.try_acquire_or_renew(); };
  EXPECT_FALSE(a.try_acquire_or_renew());  // its PUT carries the stale resourceVersion: 409
  EXPECT_TRUE(b_won);
  EXPECT_FALSE(a.is_leader());
  EXPECT_TRUE(b.is_leader());
  EXPECT_EQ(holder(server), "b");
  // a's next attempt sees b's fresh record and waits.
  EXPECT_FALSE(a.try_acquire_or_renew());
  EXPECT_EQ(a.leader(), "b");
}

TEST(LeaderElectionTest, RejectsDurationsClientGoRejects) {
  auto c = config("a");
  EXPECT_TRUE(validate_leader_election(c).ok());
  c.renew_deadline = 15s;
  EXPECT_EQ(validate_leader_election(c).message(), "leaseDuration must be greater than renewDeadline");
  c = config("a");
  c.retry_period = 9s;
  EXPECT_EQ(validate_leader_election(c).message(), "renewDeadline must be greater than retryPeriod*JitterFactor");
  c = config("a");
  c.retry_period = 0s;
  EXPECT_EQ(validate_leader_election(c).message(), "retryPeriod must be greater than zero");
}

TEST(LeaderElectionTest, DefaultIdentityIsHostnameUnderscoreUuid) {
  std::string id = default_leader_identity();
  auto us = id.rfind('_');
  ASSERT_NE(us, std::string::npos);
  EXPECT_EQ(id.size() - us - 1, 36u);
  EXPECT_NE(default_leader_identity(), id);
}

// Real time, short durations: lease 1 s, renew deadline 500 ms, retry 100 ms.
LeaderElectionConfig fast(const std::string& id) {
  LeaderElectionConfig c = config(id);
  c.lease_duration = 1s;
  c.renew_deadline = 500ms;
  c.retry_period = 100ms;
  return c;
}

// Runs one candidate on a thread; `acting` counts candidates inside their
// leading function (never above 1).
struct Candidate {
  Candidate(FakeLeaseServer& s, const std::string& id, std::atomic<int>& acting, std::atomic<int>& max_acting)
      : client(s), elector(client, fast(id)) {
    thread = std::thread([&, this] {
      result = elector.run(stop, [&, this](const std::atomic<bool>& leading_stop) {
        int now = ++acting;
        int seen = max_acting.load();
        while (now > seen && !max_acting.compare_exchange_weak(seen, now)) {
        }
        led = true;
        while (!leading_stop.load()) std::this_thread::sleep_for(10ms);
        --acting;
        return Status();
      });
      done = true;
    });
  }
  ~Candidate() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
  FakeLeaseClient client;
  LeaderElector elector;
  std::atomic<bool> stop{false}, led{false}, done{false};
  Status result;
  std::thread thread;
};

bool wait_for(const std::function<bool()>& cond) {
  for (int i = 0; i < 1000; ++i) {  // 20 s
    if (cond()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return cond();
}

TEST(LeaderElectionTest, RunHandsOverOnStopAndOnLostConnection) {
  FakeLeaseServer server;
  std::atomic<int> acting{0}, max_acting{0};
  auto a = std::make_unique<Candidate>(server, "a", acting, max_acting);
  ASSERT_TRUE(wait_for([&] { return a->led.load(); }));
  auto b = std::make_unique<Candidate>(server, "b", acting, max_acting);
  ASSERT_TRUE(wait_for([&] { return b->elector.leader() == "a"; }));
  EXPECT_FALSE(b->led.load());
  // A clean stop releases the lease: b leads.
  a->stop = true;
  a->thread.join();
  EXPECT_TRUE(a->result.ok()) << a->result.message();
  ASSERT_TRUE(wait_for([&] { return b->led.load(); }));
  EXPECT_EQ(holder(server), "b");
  // b loses its connection: it stops leading after the renew deadline and its
  // run() says so; c, which sees the lease stop changing, takes over.
  auto c = std::make_unique<Candidate>(server, "c", acting, max_acting);
  ASSERT_TRUE(wait_for([&] { return c->elector.leader() == "b"; }));
  b->client.down = true;
  ASSERT_TRUE(wait_for([&] { return b->done.load(); }));
  EXPECT_EQ(b->result.code(), Code::kDeadlineExceeded);
  EXPECT_EQ(b->result.message(), "leader election lost");
  ASSERT_TRUE(wait_for([&] { return c->led.load(); }));
  EXPECT_EQ(holder(server), "c");
  EXPECT_EQ(server.lease()["spec"]["leaseTransitions"].GetInt(), 2);
  EXPECT_EQ(max_acting.load(), 1);
}

// The leader's renewal hangs (its server stopped answering but keeps the
// connection): it must stop acting by its renew deadline, not when the request
// gives up, since the standby takes over after the lease duration.
TEST(LeaderElectionTest, HangingRenewalStopsLeadingAtTheRenewDeadline) {
  FakeLeaseServer server;
  std::atomic<int> acting{0}, max_acting{0};
  auto a = std::make_unique<Candidate>(server, "a", acting, max_acting);
  ASSERT_TRUE(wait_for([&] { return a->led.load(); }));
  auto b = std::make_unique<Candidate>(server, "b", acting, max_acting);
  ASSERT_TRUE(wait_for([&] { return b->elector.leader() == "a"; }));
  a->client.hang = true;
  ASSERT_TRUE(wait_for([&] { return b->led.load(); }));
  EXPECT_EQ(holder(server), "b");
  EXPECT_EQ(max_acting.load(), 1) << "a acted while b did";
  EXPECT_FALSE(a->done.load()) << "a's request is still hanging";
  a->client.hang = false;
  ASSERT_TRUE(wait_for([&] { return a->done.load(); }));
  EXPECT_TRUE(is_leader_election_lost(a->result)) << a->result.message();
  EXPECT_FALSE(is_leader_election_lost(Status(Code::kDeadlineExceeded, "504 Gateway Timeout")));
}

TEST(LeaderElectionTest, RunLeadingErrorReleasesTheLease) {
  FakeLeaseServer server;
  FakeLeaseClient client(server);
  LeaderElector e(client, fast("a"));
  std::atomic<bool> stop{false};
  Status st = e.run(stop, [](const std::atomic<bool>&) { return Status(Code::kInternal, "informer failed"); });
  EXPECT_EQ(st.message(), "informer failed");
  EXPECT_EQ(holder(server), "");
}

TEST(LeaderElectionTest, CallbacksSeeNewLeadersAndTheEndOfLeading) {
  FakeLeaseServer server;
  FakeLeaseClient client(server);
  std::vector<std::string> leaders;
  int stopped = 0;
  LeaderElectionConfig c = fast("a");
  c.on_new_leader = [&](const std::string& id) { leaders.push_back(id); };
  c.on_stopped_leading = [&] { ++stopped; };
  LeaderElector e(client, c);
  std::atomic<bool> stop{false};
  Status st = e.run(stop, [&](const std::atomic<bool>&) {
    EXPECT_EQ(stopped, 0);
    stop = true;
    return Status();
  });
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(stopped, 1);
  EXPECT_EQ(leaders, (std::vector<std::string>{"a", ""}));  // acquired, then released
}

}  // namespace
}  // namespace draplane::client
