#include "client/leader_election.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <random>
#include <thread>

#include "client/resource_path.h"
#include "common/rfc3339.h"

namespace draplane::client {
namespace {

using std::chrono::milliseconds;
constexpr ResourcePath kLeases{"coordination.k8s.io", "v1", "leases"};
// client-go's JitterFactor: the acquire loop waits retry * (1 + rand[0, 1.2)).
constexpr double kJitterFactor = 1.2;

const char* k_lost = "leader election lost";

std::string str_member(const rapidjson::Value& o, const char* key) {
  if (!o.IsObject()) return "";
  auto it = o.FindMember(key);
  return it != o.MemberEnd() && it->value.IsString() ? std::string(it->value.GetString(), it->value.GetStringLength())
                                                      : "";
}

int64_t int_member(const rapidjson::Value& o, const char* key) {
  if (!o.IsObject()) return 0;
  auto it = o.FindMember(key);
  return it != o.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : 0;
}

LeaderElectionRecord record_of(const rapidjson::Value& lease) {
  LeaderElectionRecord r;
  auto spec = lease.IsObject() ? lease.FindMember("spec") : rapidjson::Value::ConstMemberIterator();
  if (!lease.IsObject() || spec == lease.MemberEnd()) return r;
  const rapidjson::Value& s = spec->value;
  r.holder_identity = str_member(s, "holderIdentity");
  r.lease_duration_seconds = int_member(s, "leaseDurationSeconds");
  r.acquire_time = str_member(s, "acquireTime");
  r.renew_time = str_member(s, "renewTime");
  r.lease_transitions = int_member(s, "leaseTransitions");
  return r;
}

std::string resource_version_of(const rapidjson::Value& lease) {
  auto md = lease.IsObject() ? lease.FindMember("metadata") : rapidjson::Value::ConstMemberIterator();
  return lease.IsObject() && md != lease.MemberEnd() ? str_member(md->value, "resourceVersion") : "";
}

void set_string(rapidjson::Value& o, const char* key, const std::string& v, rapidjson::Document::AllocatorType& a) {
  o.RemoveMember(key);
  o.AddMember(rapidjson::Value(key, a), rapidjson::Value(v.c_str(), static_cast<rapidjson::SizeType>(v.size()), a), a);
}

// The Lease `doc` (a fetched one, or {} for a new one) with `record` as its
// spec and `resource_version` as the precondition of the write.
std::string lease_json(rapidjson::Document& doc, const LeaderElectionConfig& c, const LeaderElectionRecord& record,
                       const std::string& resource_version) {
  auto& a = doc.GetAllocator();
  if (!doc.IsObject()) doc.SetObject();
  set_string(doc, "apiVersion", "coordination.k8s.io/v1", a);
  set_string(doc, "kind", "Lease", a);
  if (!doc.HasMember("metadata") || !doc["metadata"].IsObject()) {
    doc.RemoveMember("metadata");
    doc.AddMember("metadata", rapidjson::Value(rapidjson::kObjectType), a);
  }
  rapidjson::Value& md = doc["metadata"];
  set_string(md, "name", c.lease_name, a);
  set_string(md, "namespace", c.lease_namespace, a);
  md.RemoveMember("resourceVersion");
  if (!resource_version.empty()) set_string(md, "resourceVersion", resource_version, a);
  rapidjson::Value spec(rapidjson::kObjectType);
  // An empty holder is left out, as client-go's omitempty does on release.
  if (!record.holder_identity.empty()) {
    spec.AddMember("holderIdentity", rapidjson::Value(record.holder_identity.c_str(), a), a);
  }
  spec.AddMember("leaseDurationSeconds", record.lease_duration_seconds, a);
  spec.AddMember("acquireTime", rapidjson::Value(record.acquire_time.c_str(), a), a);
  spec.AddMember("renewTime", rapidjson::Value(record.renew_time.c_str(), a), a);
  spec.AddMember("leaseTransitions", record.lease_transitions, a);
  doc.RemoveMember("spec");
  doc.AddMember("spec", spec, a);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  doc.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

std::string random_uuid() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  uint64_t hi = gen(), lo = gen();
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // RFC 4122 variant
  char out[37];
  std::snprintf(out, sizeof out, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0xffff),
                static_cast<unsigned>(lo >> 48), static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return out;
}

}  // namespace

Status validate_leader_election(const LeaderElectionConfig& c) {
  auto bad = [](const std::string& m) { return Status(Code::kInvalid, m); };
  if (c.lease_duration <= milliseconds(0)) return bad("leaseDuration must be greater than zero");
  if (c.renew_deadline <= milliseconds(0)) return bad("renewDeadline must be greater than zero");
  if (c.retry_period <= milliseconds(0)) return bad("retryPeriod must be greater than zero");
  if (c.lease_duration <= c.renew_deadline) return bad("leaseDuration must be greater than renewDeadline");
  if (static_cast<double>(c.renew_deadline.count()) <= kJitterFactor * static_cast<double>(c.retry_period.count())) {
    return bad("renewDeadline must be greater than retryPeriod*JitterFactor");
  }
  if (c.lease_duration < std::chrono::seconds(1)) {
    // The Lease stores whole seconds.
    return bad("leaseDuration must be at least 1s (the Lease's leaseDurationSeconds)");
  }
  if (c.lease_name.empty()) return bad("the lease name must not be empty");
  if (c.lease_namespace.empty()) return bad("the lease namespace must not be empty");
  return {};
}

std::string default_leader_identity() {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host) + "_" + random_uuid();
}

LeaderElector::LeaderElector(RestClient& rest, LeaderElectionConfig config) : rest_(rest), config_(std::move(config)) {
  if (config_.identity.empty()) config_.identity = default_leader_identity();
  if (!config_.clock) config_.clock = common::real_clock();
}

bool LeaderElector::is_leader() const {
  std::lock_guard<std::mutex> l(mu_);
  return observed_.holder_identity == config_.identity;
}

std::string LeaderElector::leader() const {
  std::lock_guard<std::mutex> l(mu_);
  return observed_.holder_identity;
}

void LeaderElector::observe(const LeaderElectionRecord& record) {
  bool new_leader = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    new_leader = record.holder_identity != observed_.holder_identity;
    observed_ = record;
    observed_time_ = config_.clock->now();
  }
  if (!new_leader) return;
  if (config_.logger) {
    config_.logger->info("new leader of lease {}/{}: \"{}\"", config_.lease_namespace, config_.lease_name,
                         record.holder_identity);
  }
  if (config_.on_new_leader) config_.on_new_leader(record.holder_identity);
}

bool LeaderElector::try_acquire_or_renew() {
  const common::WallTime now = config_.clock->wall();
  LeaderElectionRecord mine;
  mine.holder_identity = config_.identity;
  mine.lease_duration_seconds = std::chrono::duration_cast<std::chrono::seconds>(config_.lease_duration).count();
  mine.acquire_time = mine.renew_time = common::format_rfc3339_micro(now);
  const Path path = kLeases.ns(config_.lease_namespace).name(config_.lease_name);

  rapidjson::Document doc;
  auto got = rest_.get(path);
  Result<std::string> written = Status();
  if (!got.has_value()) {
    if (got.error().code() != Code::kNotFound) {
      if (config_.logger) config_.logger->warn("error retrieving lease {}: {}", path.str(), got.error().message());
      return false;
    }
    written = rest_.post(kLeases.ns(config_.lease_namespace), lease_json(doc, config_, mine, ""));
  } else {
    doc.Parse(got->data(), got->size());
    if (doc.HasParseError() || !doc.IsObject()) return false;
    const LeaderElectionRecord old = record_of(doc);
    bool changed;
    {
      std::lock_guard<std::mutex> l(mu_);
      changed = !(old == observed_) || observed_time_ == common::Clock::TimePoint{};
    }
    if (changed) observe(old);
    common::Clock::TimePoint observed_at;
    {
      std::lock_guard<std::mutex> l(mu_);
      observed_at = observed_time_;
    }
    const bool held_by_other = !old.holder_identity.empty() && old.holder_identity != config_.identity;
    if (held_by_other && observed_at + std::chrono::seconds(old.lease_duration_seconds) > config_.clock->now()) {
      return false;  // the holder's lease has not run out on our clock
    }
    if (old.holder_identity == config_.identity) {
      mine.acquire_time = old.acquire_time;
      mine.lease_transitions = old.lease_transitions;
    } else {
      mine.lease_transitions = old.lease_transitions + 1;
    }
    written = rest_.put(path, lease_json(doc, config_, mine, resource_version_of(doc)));
  }
  if (!written.has_value()) {
    // 409: another candidate wrote first; it wins this round.
    if (config_.logger) config_.logger->info("lease {} not taken: {}", path.str(), written.error().message());
    return false;
  }
  rapidjson::Document back;
  back.Parse(written->data(), written->size());
  observe(back.HasParseError() ? mine : record_of(back));
  std::lock_guard<std::mutex> l(mu_);
  last_lease_ = *written;
  return observed_.holder_identity == config_.identity;
}

bool LeaderElector::release() {
  std::string lease;
  LeaderElectionRecord old;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (observed_.holder_identity != config_.identity) return true;
    lease = last_lease_;
    old = observed_;
  }
  rapidjson::Document doc;
  doc.Parse(lease.data(), lease.size());
  if (doc.HasParseError()) return false;
  const std::string now = common::format_rfc3339_micro(config_.clock->wall());
  LeaderElectionRecord empty;
  empty.lease_duration_seconds = 1;
  empty.acquire_time = empty.renew_time = now;
  empty.lease_transitions = old.lease_transitions;
  // The resourceVersion this candidate last wrote: a Lease taken over since
  // is not cleared (409).
  auto written = rest_.put(kLeases.ns(config_.lease_namespace).name(config_.lease_name),
                           lease_json(doc, config_, empty, resource_version_of(doc)));
  if (!written.has_value()) {
    if (config_.logger) config_.logger->error("failed to release lease: {}", written.error().message());
    return false;
  }
  observe(empty);
  return true;
}

bool LeaderElector::sleep(milliseconds d, const std::atomic<bool>& a, const std::atomic<bool>* b) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
    if (a.load() || (b && b->load())) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        milliseconds(20), until - std::chrono::steady_clock::now()));
  }
  return !(a.load() || (b && b->load()));
}

Status LeaderElector::campaign(const std::atomic<bool>& stop) {
  if (config_.logger) {
    config_.logger->info("attempting to acquire leader lease {}/{} as {}...", config_.lease_namespace,
                         config_.lease_name, config_.identity);
  }
  std::mt19937 gen(std::random_device{}());
  std::uniform_real_distribution<double> jitter(0.0, kJitterFactor);
  while (!stop.load()) {
    if (try_acquire_or_renew()) {
      if (config_.logger) {
        config_.logger->info("successfully acquired lease {}/{}", config_.lease_namespace, config_.lease_name);
      }
      return {};
    }
    auto wait = milliseconds(static_cast<int64_t>(static_cast<double>(config_.retry_period.count()) * (1 + jitter(gen))));
    sleep(wait, stop);
  }
  return Status(Code::kUnavailable, "stopped before acquiring the lease");
}

// client-go's renew step: tries at once, then every retry period, until a try
// succeeds or the renew deadline has passed. A try that finds another holder
// ends it at once: that one acts already.
bool LeaderElector::renew_until_deadline(const std::atomic<bool>& stop, const std::atomic<bool>& leading_done) {
  const auto deadline = config_.clock->now() + config_.renew_deadline;
  while (true) {
    if (try_acquire_or_renew()) return true;
    if (stop.load() || leading_done.load()) return true;  // ending anyway; release decides
    std::string holder = leader();
    if (!holder.empty() && holder != config_.identity) return false;
    if (config_.clock->now() + config_.retry_period > deadline) return false;
    sleep(config_.retry_period, stop, &leading_done);
  }
}

Status LeaderElector::run(const std::atomic<bool>& stop, const LeadingFn& leading) {
  if (Status st = validate_leader_election(config_); !st.ok()) return st;
  if (!campaign(stop).ok()) return {};
  std::atomic<bool> stop_leading{false};
  std::atomic<bool> leading_done{false};
  std::atomic<bool> lost{false};
  // The last successful renewal on this candidate's clock. The renewals run on
  // their own thread so that one hanging request (a server that stopped
  // answering keeps its socket open for the request timeout) cannot hold the
  // leader past its renew deadline while a standby, seeing the Lease unchanged
  // for the lease duration, takes over.
  std::atomic<common::Clock::TimePoint> renewed_at{config_.clock->now()};
  Status leading_status;
  std::thread body([&] {
    leading_status = leading(stop_leading);
    leading_done.store(true);
  });
  std::thread renewer([&] {
    while (!stop.load() && !leading_done.load() && !lost.load()) {
      if (!renew_until_deadline(stop, leading_done)) {
        lost.store(true);
        break;
      }
      if (lost.load()) break;  // a renewal that succeeded after the watchdog gave up does not count
      renewed_at.store(config_.clock->now());
      sleep(config_.retry_period, stop, &leading_done);
    }
  });
  while (!stop.load() && !leading_done.load() && !lost.load()) {
    if (config_.clock->now() - renewed_at.load() > config_.renew_deadline) {
      lost.store(true);
      break;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  // Stop acting before anything else: when the lease was lost, a standby may
  // take over once it runs out on its clock.
  stop_leading.store(true);
  body.join();
  if (config_.on_stopped_leading) config_.on_stopped_leading();
  // A renewal in flight ends within the request timeout; leading has stopped.
  renewer.join();
  if (lost.load()) {
    if (config_.logger) {
      config_.logger->error("failed to renew lease {}/{} within {} ms: {}", config_.lease_namespace,
                            config_.lease_name, config_.renew_deadline.count(), k_lost);
    }
    return Status(Code::kDeadlineExceeded, k_lost);
  }
  if (config_.release_on_cancel) release();
  if (config_.logger) config_.logger->info("stopped leading lease {}/{}", config_.lease_namespace, config_.lease_name);
  return leading_status;
}

bool is_leader_election_lost(const Status& st) { return st.code() == Code::kDeadlineExceeded && st.message() == k_lost; }

Status run_leader_elected(RestClient& rest, const LeaderElectionConfig& config, const LeaderElector::LeadingFn& leading,
                          const std::atomic<bool>& stop, bool rejoin_after_loss) {
  if (Status st = validate_leader_election(config); !st.ok()) return st;
  LeaderElectionConfig c = config;
  if (c.identity.empty()) c.identity = default_leader_identity();
  while (true) {
    LeaderElector elector(rest, c);
    Status st = elector.run(stop, leading);
    if (stop.load() || !is_leader_election_lost(st) || !rejoin_after_loss) return st;
    if (c.logger) c.logger->warn("{}; campaigning again", st.message());
  }
}

}  // namespace draplane::client
