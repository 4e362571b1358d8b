#include "store/etcd_store.h"

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netdb.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "rpc.grpc.pb.h"

namespace draplane::store {
namespace {

namespace pb = etcdserverpb;
using Clock = std::chrono::steady_clock;

Status gone(int64_t rev) { return Status(Code::kGone, "too old resource version: " + std::to_string(rev)); }

// etcd's errors arrive as gRPC statuses; the two revision errors are told apart
// by their message (etcd's ErrGRPCCompacted / ErrGRPCFutureRev share OutOfRange).
Status to_status(const grpc::Status& s, const std::string& what, int64_t rev) {
  const std::string& m = s.error_message();
  if (m.find("required revision has been compacted") != std::string::npos) return gone(rev);
  if (m.find("required revision is a future revision") != std::string::npos) {
    return Status(Code::kInvalid, "revision " + std::to_string(rev) + " is in the future");
  }
  Code c = Code::kUnavailable;
  if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) c = Code::kDeadlineExceeded;
  if (s.error_code() == grpc::StatusCode::INVALID_ARGUMENT) c = Code::kInvalid;
  return Status(c, "etcd " + what + ": " + m);
}

Result<std::string> read_file(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kInvalid, std::string(flag) + ": cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// HOST:PORT -> "a.b.c.d:PORT" or "[v6]:PORT", resolved once: gRPC's static
// ipv4:/ipv6: targets take a list of addresses to fail over between.
Result<std::pair<bool, std::string>> resolve(const std::string& endpoint) {
  size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == endpoint.size()) {
    return Status(Code::kInvalid, "etcd endpoint must be HOST:PORT, got \"" + endpoint + "\"");
  }
  std::string host = endpoint.substr(0, colon), port = endpoint.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0 || res == nullptr) {
    return Status(Code::kInvalid, "etcd endpoint \"" + endpoint + "\": cannot resolve " + host);
  }
  char buf[INET6_ADDRSTRLEN] = {};
  bool v6 = res->ai_family == AF_INET6;
  const void* addr = v6 ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(res->ai_addr)->sin6_addr)
                        : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr);
  inet_ntop(res->ai_family, addr, buf, sizeof(buf));
  freeaddrinfo(res);
  return std::make_pair(v6, v6 ? "[" + std::string(buf) + "]:" + port : std::string(buf) + ":" + port);
}

// An etcd key range: [key, end); end "\0" = no upper bound (etcd's convention).
struct KeyRange {
  std::string key, end;
  bool empty = false;  // nothing of the store's keyspace can match
};

class EtcdStore;

// One store watch: its callback and where it resumes. Outlives its reactors.
struct WatchState {
  EtcdStore* store = nullptr;
  uint64_t id = 0;
  KeyRange range;
  WatchCallback cb;
  std::mutex mu;  // held while the callback runs
  std::atomic<std::thread::id> delivering{};
  bool cancelled = false;  // by the handle: deliver nothing more
  bool ended = false;      // an end status was delivered
  bool store_closed = false;  // the store is gone: a handle must not call it
  int64_t next_rev = 0;    // the revision the stream resumes from
  int retries = 0;
  std::shared_ptr<grpc::ClientContext> ctx;  // the current stream's
  // The first stream's outcome, awaited by watch().
  std::condition_variable created_cv;
  bool created = false;
  std::optional<Status> create_error;
};

class WatchReactor;

class EtcdStore final : public Store {
 public:
  ~EtcdStore() override { close(); }

  Result<void> open(const EtcdOptions& o) {
    if (o.endpoints.empty()) return Status(Code::kInvalid, "etcd: no endpoints");
    prefix_ = o.prefix;
    root_ = o.root;
    timeout_ = o.request_timeout;
    std::string target;
    bool any_v4 = false, any_v6 = false;
    for (const auto& e : o.endpoints) {
      ASSIGN_OR_RETURN(auto addr, resolve(e));
      (addr.first ? any_v6 : any_v4) = true;
      target += (target.empty() ? "" : ",") + addr.second;
    }
    if (any_v4 && any_v6) return Status(Code::kInvalid, "etcd endpoints mix IPv4 and IPv6 addresses");
    target = (any_v6 ? "ipv6:" : "ipv4:") + target;

    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);  // a list of 10,000 slices exceeds gRPC's 4 MiB default
    args.SetMaxSendMessageSize(-1);
    args.SetLoadBalancingPolicyName("pick_first");
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
    // Detect a member that vanished without closing its connections (etcd allows
    // pings every 5 s while streams are open).
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
    std::shared_ptr<grpc::ChannelCredentials> creds;
    if (!o.ca_file.empty() || !o.cert_file.empty()) {
      grpc::SslCredentialsOptions ssl;
      if (!o.ca_file.empty()) {
        ASSIGN_OR_RETURN(ssl.pem_root_certs, read_file(o.ca_file, "--etcd-cafile"));
      }
      if (!o.cert_file.empty()) {
        ASSIGN_OR_RETURN(ssl.pem_cert_chain, read_file(o.cert_file, "--etcd-certfile"));
      }
      if (!o.key_file.empty()) {
        ASSIGN_OR_RETURN(ssl.pem_private_key, read_file(o.key_file, "--etcd-keyfile"));
      }
      creds = grpc::SslCredentials(ssl);
      // The certificate names the endpoint's host, not the resolved address.
      std::string host = o.endpoints.front().substr(0, o.endpoints.front().rfind(':'));
      args.SetSslTargetNameOverride(host);
    } else {
      creds = grpc::InsecureChannelCredentials();
    }
    channel_ = grpc::CreateCustomChannel(target, creds, args);
    kv_ = pb::KV::NewStub(channel_);
    watch_ = pb::Watch::NewStub(channel_);
    resumer_ = std::thread([this] { resume_loop(); });

    // Answering at all proves the endpoint is etcd; then learn the compacted revision.
    auto now = fetch_revision();
    if (!now.has_value()) {
      return Status(Code::kUnavailable, "no etcd endpoint answered (" + now.error().message() + ")");
    }
    ASSIGN_OR_RETURN(int64_t compacted, probe_compacted(*now));
    compacted_ = compacted;
    return {};
  }

  int64_t current_revision() override {
    auto r = fetch_revision();
    return r.has_value() ? *r : last_rev_.load();
  }
  int64_t compacted_revision() override { return compacted_; }

  Result<KeyValue> get(std::string_view key, int64_t revision) override {
    ASSIGN_OR_RETURN(std::string k, to_etcd(key));
    pb::RangeRequest req;
    req.set_key(k);
    req.set_revision(revision);
    pb::RangeResponse resp;
    RETURN_IF_ERROR(range(req, &resp, revision));
    if (resp.kvs_size() == 0) return Status(Code::kNotFound, "key not found: " + std::string(key));
    return from_pb(resp.kvs(0));
  }

  Result<ListResult> list(std::string_view prefix, const ListOptions& opts) override {
    KeyRange r = key_range(prefix);
    if (!opts.start_after.empty() && !r.empty && opts.start_after >= prefix) {
      auto after = to_etcd(opts.start_after);
      if (!after.has_value()) {
        r.empty = true;
      } else if (*after + '\0' > r.key) {
        r.key = *after + '\0';  // strictly after
        if (r.end != std::string(1, '\0') && r.key >= r.end) r.empty = true;
      }
    }
    pb::RangeRequest req;
    // An empty range is still read, at a key nobody has, for its header revision
    // and its revision errors.
    req.set_key(r.empty ? prefix_ + '\xff' + "empty" : r.key);
    if (!r.empty) req.set_range_end(r.end);
    req.set_revision(opts.revision);
    req.set_limit(opts.limit);
    pb::RangeResponse resp;
    RETURN_IF_ERROR(range(req, &resp, opts.revision));
    ListResult out;
    out.revision = opts.revision != 0 ? opts.revision : resp.header().revision();
    if (!r.empty) {
      out.items.reserve(static_cast<size_t>(resp.kvs_size()));
      for (const auto& kv : resp.kvs()) out.items.push_back(from_pb(kv));
      out.more = resp.more();
      if (out.more) out.remaining = resp.count() - resp.kvs_size();
    }
    return out;
  }

  Result<KeyValue> create(std::string_view key, std::string_view value) override {
    ASSIGN_OR_RETURN(std::string k, to_etcd(key));
    pb::TxnRequest req;
    auto* cmp = req.add_compare();
    cmp->set_key(k);
    cmp->set_target(pb::Compare::CREATE);
    cmp->set_result(pb::Compare::EQUAL);
    cmp->set_create_revision(0);
    auto* put = req.add_success()->mutable_request_put();
    put->set_key(k);
    put->set_value(std::string(value));
    req.add_failure()->mutable_request_range()->set_key(k);
    pb::TxnResponse resp;
    RETURN_IF_ERROR(txn(req, &resp));
    if (!resp.succeeded()) return Status(Code::kAlreadyExists, "key already exists: " + std::string(key));
    int64_t rev = resp.header().revision();
    return KeyValue{std::string(key), std::string(value), rev, rev, 1};
  }

  Result<WriteResult> update(std::string_view key, std::string_view value, int64_t expected) override {
    ASSIGN_OR_RETURN(std::string k, to_etcd(key));
    pb::TxnRequest req;
    add_expectation(req, k, expected);
    auto* put = req.add_success()->mutable_request_put();
    put->set_key(k);
    put->set_value(std::string(value));
    put->set_prev_kv(true);
    req.add_failure()->mutable_request_range()->set_key(k);
    pb::TxnResponse resp;
    RETURN_IF_ERROR(txn(req, &resp));
    if (!resp.succeeded()) return mismatch(key, resp);
    int64_t rev = resp.header().revision();
    const auto& prev = resp.responses(0).response_put().prev_kv();
    return WriteResult{true, KeyValue{std::string(key), std::string(value), prev.create_revision(), rev, prev.version() + 1}, rev};
  }

  Result<WriteResult> remove(std::string_view key, int64_t expected) override {
    ASSIGN_OR_RETURN(std::string k, to_etcd(key));
    pb::TxnRequest req;
    add_expectation(req, k, expected);
    auto* del = req.add_success()->mutable_request_delete_range();
    del->set_key(k);
    del->set_prev_kv(true);
    req.add_failure()->mutable_request_range()->set_key(k);
    pb::TxnResponse resp;
    RETURN_IF_ERROR(txn(req, &resp));
    if (!resp.succeeded()) return mismatch(key, resp);
    const auto& prevs = resp.responses(0).response_delete_range().prev_kvs();
    if (prevs.empty()) return Status(Code::kNotFound, "key not found: " + std::string(key));
    return WriteResult{true, from_pb(prevs[0]), resp.header().revision()};
  }

  Result<std::unique_ptr<WatchHandle>> watch(std::string_view prefix, int64_t start, WatchCallback cb) override;

  Status compact(int64_t revision) override {
    if (revision <= compacted_) return Status();
    pb::CompactionRequest req;
    req.set_revision(revision);
    pb::CompactionResponse resp;
    grpc::ClientContext ctx;
    prepare(ctx);
    grpc::Status s = kv_->Compact(&ctx, req, &resp);
    if (!s.ok()) {
      Status st = to_status(s, "compact", revision);
      if (st.code() == Code::kInvalid) {
        return Status(Code::kInvalid, "compact revision " + std::to_string(revision) + " is in the future");
      }
      if (st.code() != Code::kGone) return st;  // kGone: compacted there already, by another server
    }
    learn_compacted(revision);
    return Status();
  }

  // Called by a watch stream's reactor when the stream ended: resumes it, or
  // reports why it could not start.
  void stream_done(const std::shared_ptr<WatchState>& st, const grpc::Status& s);
  // The reactor's last act, after it dropped its references: close() waits for it.
  void stream_released() {
    std::lock_guard<std::mutex> l(wmu_);
    --streams_;
    wcv_.notify_all();
  }
  // Runs the callback unless the watch was cancelled or ended.
  static void deliver(WatchState& st, const std::vector<Event>& events, const Status& end);
  Event event_from_pb(const mvccpb::Event& e) const {
    Event ev;
    ev.type = e.type() == mvccpb::Event::DELETE ? EventType::kDelete : EventType::kPut;
    ev.kv = from_pb(e.kv());
    if (ev.type == EventType::kDelete) ev.kv.value.clear();
    if (e.has_prev_kv()) ev.prev = from_pb(e.prev_kv());
    return ev;
  }
  pb::Watch::Stub* watch_stub() { return watch_.get(); }
  void learn_compacted(int64_t rev) {
    int64_t cur = compacted_.load();
    while (rev > cur && !compacted_.compare_exchange_weak(cur, rev)) {
    }
  }

 private:
  void close();
  void resume_loop();
  void start_stream(const std::shared_ptr<WatchState>& st);

  void prepare(grpc::ClientContext& ctx) const {
    ctx.set_wait_for_ready(true);  // wait through a reconnect instead of failing at once
    ctx.set_deadline(std::chrono::system_clock::now() + timeout_);
  }
  void saw(const pb::ResponseHeader& h) {
    int64_t cur = last_rev_.load();
    while (h.revision() > cur && !last_rev_.compare_exchange_weak(cur, h.revision())) {
    }
  }

  // Reads are idempotent: retried while the cluster is unreachable, in the deadline.
  Status range(const pb::RangeRequest& req, pb::RangeResponse* resp, int64_t rev) {
    auto deadline = Clock::now() + timeout_;
    for (int attempt = 0;; ++attempt) {
      grpc::ClientContext ctx;
      prepare(ctx);
      grpc::Status s = kv_->Range(&ctx, req, resp);
      if (s.ok()) {
        saw(resp->header());
        return Status();
      }
      Status st = to_status(s, "range", rev);
      if (st.code() == Code::kGone) learn_compacted(rev + 1);
      if (s.error_code() != grpc::StatusCode::UNAVAILABLE || Clock::now() >= deadline) return st;
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(1000, 50 << std::min(attempt, 5))));
    }
  }
  // A write is sent once: after a broken connection its outcome is unknown.
  Status txn(const pb::TxnRequest& req, pb::TxnResponse* resp) {
    grpc::ClientContext ctx;
    prepare(ctx);
    grpc::Status s = kv_->Txn(&ctx, req, resp);
    if (!s.ok()) return to_status(s, "txn", 0);
    saw(resp->header());
    return Status();
  }
  // The cheapest read at `rev` (0 = now): one key's count. Its header carries the
  // current revision; it fails as any read at `rev` would (compacted, future).
  Result<int64_t> read_at(int64_t rev) {
    pb::RangeRequest req;
    req.set_key(prefix_.empty() ? std::string(1, '\0') : prefix_);
    req.set_count_only(true);
    req.set_revision(rev);
    pb::RangeResponse resp;
    RETURN_IF_ERROR(range(req, &resp, rev));
    return resp.header().revision();
  }
  Result<int64_t> fetch_revision() { return read_at(0); }
  // etcd does not report its compacted revision; reads at a revision fail exactly
  // below it, so a binary search over [1, now] finds it (a few cheap Ranges, once).
  Result<int64_t> probe_compacted(int64_t now) {
    int64_t lo = 1, hi = now;  // the answer: the lowest readable revision
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      auto r = read_at(mid);
      if (r.has_value()) {
        hi = mid;
      } else if (r.error().code() == Code::kGone) {
        lo = mid + 1;
      } else {
        return r.error();
      }
    }
    return lo > 1 ? lo : 0;
  }

  static void add_expectation(pb::TxnRequest& req, const std::string& k, int64_t expected) {
    auto* cmp = req.add_compare();
    cmp->set_key(k);
    if (expected != 0) {
      cmp->set_target(pb::Compare::MOD);
      cmp->set_result(pb::Compare::EQUAL);
      cmp->set_mod_revision(expected);
    } else {  // any revision, but the key must exist
      cmp->set_target(pb::Compare::CREATE);
      cmp->set_result(pb::Compare::GREATER);
      cmp->set_create_revision(0);
    }
  }
  Result<WriteResult> mismatch(std::string_view key, const pb::TxnResponse& resp) const {
    const auto& kvs = resp.responses(0).response_range().kvs();
    if (kvs.empty()) return Status(Code::kNotFound, "key not found: " + std::string(key));
    return WriteResult{false, from_pb(kvs[0]), 0};
  }

  Result<std::string> to_etcd(std::string_view key) const {
    if (key.substr(0, root_.size()) != root_) {
      return Status(Code::kInvalid, "key " + std::string(key) + " is outside " + root_);
    }
    return prefix_ + std::string(key.substr(root_.size()));
  }
  KeyValue from_pb(const mvccpb::KeyValue& kv) const {
    return KeyValue{root_ + kv.key().substr(std::min(prefix_.size(), kv.key().size())), kv.value(), kv.create_revision(),
                    kv.mod_revision(), kv.version()};
  }

  // The etcd range holding the store keys that start with `prefix`.
  KeyRange key_range(std::string_view prefix) const {
    KeyRange r;
    if (prefix.substr(0, root_.size()) == root_) {
      r.key = prefix_ + std::string(prefix.substr(root_.size()));
    } else if (root_.substr(0, prefix.size()) == prefix) {
      r.key = prefix_;  // a prefix of the root: the whole keyspace
    } else {
      r.empty = true;
      return r;
    }
    r.end = prefix_end(r.key);
    if (r.key.empty()) r.key = std::string(1, '\0');
    if (r.end.empty()) r.end = std::string(1, '\0');
    return r;
  }

  std::string prefix_, root_;
  std::chrono::milliseconds timeout_{10000};
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::KV::Stub> kv_;
  std::unique_ptr<pb::Watch::Stub> watch_;
  std::atomic<int64_t> last_rev_{1};
  std::atomic<int64_t> compacted_{0};

  // Watches: every live one, the streams running, and those waiting to resume.
  std::mutex wmu_;
  std::condition_variable wcv_;
  std::map<uint64_t, std::shared_ptr<WatchState>> watches_;
  int streams_ = 0;
  std::multimap<Clock::time_point, std::shared_ptr<WatchState>> resume_at_;
  bool closing_ = false;
  uint64_t next_id_ = 1;
  std::thread resumer_;

  friend class WatchReactor;
  friend class EtcdWatchHandle;
  void forget(uint64_t id) {
    std::lock_guard<std::mutex> l(wmu_);
    watches_.erase(id);
  }
};

// One etcd Watch stream for one store watch (gRPC's callback API: no thread of
// its own). Deletes itself when the stream is done.
class WatchReactor final : public grpc::ClientBidiReactor<pb::WatchRequest, pb::WatchResponse> {
 public:
  WatchReactor(std::shared_ptr<WatchState> st, std::shared_ptr<grpc::ClientContext> ctx)
      : st_(std::move(st)), ctx_(std::move(ctx)) {
    auto* c = req_.mutable_create_request();
    c->set_key(st_->range.key);
    c->set_range_end(st_->range.end);
    c->set_start_revision(st_->next_rev);
    c->set_prev_kv(true);
    st_->store->watch_stub()->async()->Watch(ctx_.get(), this);
    StartWrite(&req_);
    StartRead(&resp_);
    StartCall();
  }

  void OnWriteDone(bool) override {}

  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream is ending; OnDone follows
    if (resp_.created()) {
      std::lock_guard<std::mutex> l(st_->mu);
      st_->created = true;
      st_->retries = 0;
      st_->created_cv.notify_all();
    }
    if (resp_.compact_revision() != 0) {
      st_->store->learn_compacted(resp_.compact_revision());
      finish(gone(st_->next_rev));
      return;
    }
    if (resp_.canceled()) {
      finish(Status(Code::kUnavailable, "etcd canceled the watch: " + resp_.cancel_reason()));
      return;
    }
    if (resp_.events_size() > 0) {
      std::vector<Event> batch;
      batch.reserve(static_cast<size_t>(resp_.events_size()));
      for (const auto& e : resp_.events()) {
        Event ev = st_->store->event_from_pb(e);
        if (ev.kv.mod_revision >= st_->next_rev) batch.push_back(std::move(ev));
      }
      if (!batch.empty()) {
        {
          std::lock_guard<std::mutex> l(st_->mu);
          st_->next_rev = batch.back().kv.mod_revision + 1;
        }
        EtcdStore::deliver(*st_, batch, Status());
      }
    }
    StartRead(&resp_);
  }

  void OnDone(const grpc::Status& s) override {
    EtcdStore* store = st_->store;
    std::shared_ptr<WatchState> st = std::move(st_);
    grpc::Status status = finished_ ? grpc::Status(grpc::StatusCode::CANCELLED, "finished") : s;
    delete this;
    store->stream_done(st, status);
    // The state (and with it a ClientContext, which holds the channel) may go
    // here: while the store, and so its channel, still exists. A channel's last
    // reference must not drop on its own callback thread after the store closed.
    st.reset();
    store->stream_released();
  }

 private:
  // Ends the watch with `end` (delivered once) and closes the stream.
  void finish(const Status& end) {
    finished_ = true;
    EtcdStore::deliver(*st_, {}, end);
    ctx_->TryCancel();
  }

  std::shared_ptr<WatchState> st_;
  std::shared_ptr<grpc::ClientContext> ctx_;
  pb::WatchRequest req_;
  pb::WatchResponse resp_;
  bool finished_ = false;
};

class EtcdWatchHandle final : public WatchHandle {
 public:
  explicit EtcdWatchHandle(std::shared_ptr<WatchState> st) : st_(std::move(st)) {}
  ~EtcdWatchHandle() override {
    std::shared_ptr<grpc::ClientContext> ctx;
    bool closed;
    if (st_->delivering.load() == std::this_thread::get_id()) {
      st_->cancelled = true;  // inside the callback: its thread holds mu already
      ctx = st_->ctx;
      closed = st_->store_closed;
    } else {
      std::lock_guard<std::mutex> l(st_->mu);
      st_->cancelled = true;
      ctx = st_->ctx;
      closed = st_->store_closed;
    }
    if (ctx) ctx->TryCancel();
    if (!closed) st_->store->forget(st_->id);
  }

 private:
  std::shared_ptr<WatchState> st_;
};

void EtcdStore::deliver(WatchState& st, const std::vector<Event>& events, const Status& end) {
  std::lock_guard<std::mutex> l(st.mu);
  if (st.cancelled || st.ended) return;
  if (!end.ok()) st.ended = true;
  st.delivering = std::this_thread::get_id();
  st.cb(events, end);
  st.delivering = std::thread::id();
}

Result<std::unique_ptr<WatchHandle>> EtcdStore::watch(std::string_view prefix, int64_t start, WatchCallback cb) {
  if (start == 0) {
    ASSIGN_OR_RETURN(int64_t now, fetch_revision());
    start = now + 1;
  } else if (start == 1) {
    if (compacted_ >= 1) return gone(start);
  } else {
    // etcd reads at start-1 fail exactly when start-1 is compacted (the watch
    // would miss the events at start-1's compaction point) or in the future.
    auto r = read_at(start - 1);
    if (!r.has_value()) {
      if (r.error().code() == Code::kGone) return gone(start);
      if (r.error().code() == Code::kInvalid) {
        return Status(Code::kInvalid, "watch revision " + std::to_string(start) + " is in the future");
      }
      return r.error();
    }
  }
  auto st = std::make_shared<WatchState>();
  st->store = this;
  st->range = key_range(prefix);
  st->cb = std::move(cb);
  st->next_rev = start;
  if (st->range.empty) st->range = KeyRange{prefix_ + '\xff' + "none", "", false};  // matches nothing
  {
    std::lock_guard<std::mutex> l(wmu_);
    if (closing_) return Status(Code::kUnavailable, "etcd store is closed");
    st->id = next_id_++;
    watches_[st->id] = st;
  }
  start_stream(st);
  std::unique_lock<std::mutex> l(st->mu);
  if (!st->created_cv.wait_for(l, timeout_, [&] { return st->created || st->create_error.has_value(); }) ||
      !st->created) {
    Status err = st->create_error.value_or(Status(Code::kUnavailable, "etcd watch: no answer"));
    st->cancelled = true;
    auto ctx = st->ctx;
    l.unlock();
    if (ctx) ctx->TryCancel();
    forget(st->id);
    return err;
  }
  return std::unique_ptr<WatchHandle>(new EtcdWatchHandle(st));
}

void EtcdStore::start_stream(const std::shared_ptr<WatchState>& st) {
  auto ctx = std::make_shared<grpc::ClientContext>();
  ctx->set_wait_for_ready(true);
  {
    std::lock_guard<std::mutex> l(st->mu);
    st->ctx = ctx;
    if (st->cancelled) return;
  }
  {
    std::lock_guard<std::mutex> l(wmu_);
    ++streams_;
  }
  new WatchReactor(st, ctx);
}

void EtcdStore::stream_done(const std::shared_ptr<WatchState>& st, const grpc::Status& s) {
  bool resume = false;
  {
    std::lock_guard<std::mutex> l(st->mu);
    if (!st->created) {
      st->create_error = to_status(s, "watch", st->next_rev);
      st->created_cv.notify_all();
    } else {
      resume = !st->cancelled && !st->ended;
    }
  }
  std::unique_lock<std::mutex> l(wmu_);
  if (resume && closing_) {
    l.unlock();
    deliver(*st, {}, Status(Code::kUnavailable, "etcd store closed"));
    l.lock();
  } else if (resume) {
    // The member went away (or the stream broke): resume on the channel, which
    // fails over, from the revision after the last delivered event.
    int n = std::min(st->retries++, 5);
    resume_at_.emplace(Clock::now() + std::chrono::milliseconds(100 << n), st);
    wcv_.notify_all();
  }
}

void EtcdStore::resume_loop() {
  std::unique_lock<std::mutex> l(wmu_);
  while (!closing_) {
    if (resume_at_.empty()) {
      wcv_.wait(l);
      continue;
    }
    auto when = resume_at_.begin()->first;
    if (Clock::now() < when) {
      wcv_.wait_until(l, when);
      continue;
    }
    auto st = resume_at_.begin()->second;
    resume_at_.erase(resume_at_.begin());
    l.unlock();
    start_stream(st);
    l.lock();
  }
}

void EtcdStore::close() {
  std::vector<std::shared_ptr<WatchState>> pending;
  std::vector<std::shared_ptr<grpc::ClientContext>> ctxs;
  {
    std::lock_guard<std::mutex> l(wmu_);
    if (closing_) return;
    closing_ = true;
    wcv_.notify_all();
  }
  if (resumer_.joinable()) resumer_.join();  // no stream starts after this
  {
    std::lock_guard<std::mutex> l(wmu_);
    for (auto& [when, st] : resume_at_) pending.push_back(st);
    resume_at_.clear();
    for (auto& [id, st] : watches_) {
      std::lock_guard<std::mutex> sl(st->mu);
      st->store_closed = true;
      if (st->ctx) ctxs.push_back(st->ctx);
    }
  }
  for (auto& st : pending) deliver(*st, {}, Status(Code::kUnavailable, "etcd store closed"));
  for (auto& c : ctxs) c->TryCancel();
  std::unique_lock<std::mutex> l(wmu_);
  wcv_.wait(l, [&] { return streams_ == 0; });
}

}  // namespace

Result<std::unique_ptr<Store>> open_etcd_store(const EtcdOptions& options) {
  auto s = std::make_unique<EtcdStore>();
  RETURN_IF_ERROR(s->open(options));
  return std::unique_ptr<Store>(std::move(s));
}

Result<std::vector<std::string>> parse_etcd_url(std::string_view url) {
  constexpr std::string_view kScheme = "etcd://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    return Status(Code::kInvalid, "--store: an etcd store is etcd://HOST:PORT[,HOST:PORT...], got \"" + std::string(url) + "\"");
  }
  std::vector<std::string> out;
  std::string_view rest = url.substr(kScheme.size());
  while (true) {
    size_t comma = rest.find(',');
    std::string_view ep = rest.substr(0, comma);
    size_t colon = ep.rfind(':');
    if (ep.empty() || colon == std::string_view::npos || colon == 0 || colon + 1 == ep.size() ||
        ep.substr(colon + 1).find_first_not_of("0123456789") != std::string_view::npos) {
      return Status(Code::kInvalid, "--store: etcd endpoint must be HOST:PORT, got \"" + std::string(ep) + "\"");
    }
    out.emplace_back(ep);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return out;
}

}  // namespace draplane::store
