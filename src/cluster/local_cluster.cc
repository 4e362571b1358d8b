#include "cluster/local_cluster.h"

#include <fcntl.h>
#include <rapidjson/document.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "alloc/allocator.h"
#include "sched/policy_flag.h"
#include "api/codec.h"
#include "client/resource_path.h"
#include "common/split.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "cluster/loopback_client.h"
#include "controllers/claim_controller.h"
#include "node/agent.h"
#include "node/agent_node.h"
#include "sched/runner.h"
#include "server/api_server.h"
#include "server/credentials.h"
#include "server/event_ttl.h"
#include "server/http_server.h"
#include "server/object_ids.h"
#include "server/pki.h"
#include "store/etcd_store.h"
#include "store/memory_store.h"
#include "store/sqlite_store.h"

namespace draplane::cluster {
namespace {

// A log file opened with O_CLOEXEC: spdlog's basic_file_sink opens its file
// without it (Debian's libspdlog is built without SPDLOG_PREVENT_CHILD_FD), so
// an exec'd child would keep it open. Unbuffered: the loggers flush each line
// at info anyway.
class AppendFileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit AppendFileSink(const std::string& path) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) throw spdlog::spdlog_ex("open " + path, errno);
  }
  ~AppendFileSink() override { ::close(fd_); }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    const char* p = line.data();
    size_t left = line.size();
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // a full disk loses log lines, not the process
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  void flush_() override {}

 private:
  int fd_ = -1;
};

bool valid_node_name(const std::string& n) {
  if (n.empty() || n.size() > 253) return false;
  for (char c : n) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return n.front() != '-' && n.front() != '.' && n.back() != '-' && n.back() != '.';
}

}  // namespace

std::vector<SimNode> default_sim_nodes() {
  return {{"node-1", "sim:8xH100"}, {"node-2", "sim:8xH100"}, {"node-3", "sim:4xA100-40GB"}};
}

Result<std::chrono::milliseconds> parse_duration(const std::string& text) {
  auto bad = [&] { return Status(Code::kInvalid, "invalid duration \"" + text + "\" (want e.g. 1m0s, 30s, 500ms)"); };
  if (text == "0") return std::chrono::milliseconds(0);
  double total_ms = 0;
  size_t i = 0;
  if (text.empty()) return bad();
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    if (i == start) return bad();
    double v = 0;
    try {
      v = std::stod(text.substr(start, i - start));
    } catch (const std::exception&) {
      return bad();
    }
    size_t u = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string unit = text.substr(u, i - u);
    static const std::map<std::string, double> kUnitMs = {{"ns", 1e-6}, {"us", 1e-3}, {"ms", 1},
                                                          {"s", 1e3},   {"m", 6e4},   {"h", 3.6e6}};
    auto it = kUnitMs.find(unit);
    if (it == kUnitMs.end()) return bad();
    total_ms += v * it->second;
  }
  return std::chrono::milliseconds(static_cast<int64_t>(total_ms));
}

std::string node_state_dir(const std::string& data_dir, const std::string& node) {
  return data_dir + "/nodes/" + node;
}

namespace {

// Moves the "?mig=...&consumable-shares=..." tail of n.gpus into n's flags.
Status take_agent_flags(SimNode& n) {
  size_t q = n.gpus.find('?');
  if (q == std::string::npos) return {};
  const std::string query = n.gpus.substr(q + 1);
  n.gpus.resize(q);
  for (std::string_view piece : common::split(query, '&')) {
    const std::string kv(piece);
    size_t eq = kv.find('=');
    const std::string key = kv.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (key == "mig" && (value == "dynamic" || value == "none")) {
      n.dynamic_mig = value == "dynamic";
    } else if (auto shares = node::parse_consumable_shares(value); key == "consumable-shares" && shares.has_value()) {
      n.consumable_shares = *shares;
    } else {
      return Status(Code::kInvalid, "--nodes: " + n.name + ": \"" + kv +
                                        "\": expected mig=dynamic|none or consumable-shares=disabled|unlimited|memory|N");
    }
  }
  return {};
}

}  // namespace

Result<std::vector<SimNode>> parse_sim_nodes(const std::string& text) {
  std::vector<SimNode> out;
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    int n = std::atoi(text.c_str());
    if (n < 0 || n > 5000) return Status(Code::kInvalid, "--nodes: count must be between 0 and 5000, got " + text);
    for (int i = 1; i <= n; ++i) out.push_back({"node-" + std::to_string(i), "sim:8xH100"});
    return out;
  }
  std::set<std::string> seen;
  for (std::string_view piece : common::split(text, ';')) {
    const std::string part(piece);
    if (part.empty()) continue;
    size_t eq = part.find('=');
    if (eq == std::string::npos) {
      return Status(Code::kInvalid, "--nodes: \"" + part + "\": expected NAME=GPUS (e.g. node-1=sim:8xH100)");
    }
    SimNode n{part.substr(0, eq), part.substr(eq + 1)};
    if (!valid_node_name(n.name)) {
      return Status(Code::kInvalid, "--nodes: \"" + n.name + "\": a node name must be a lowercase RFC 1123 subdomain");
    }
    if (auto st = take_agent_flags(n); !st.ok()) return st;
    if (n.gpus.empty()) return Status(Code::kInvalid, "--nodes: " + n.name + ": GPUS must not be empty");
    if (!seen.insert(n.name).second) return Status(Code::kInvalid, "--nodes: duplicate node " + n.name);
    out.push_back(std::move(n));
  }
  return out;
}

struct LocalCluster::Impl {
  LocalClusterOptions options;
  std::string dir;
  std::string url;
  std::string kubeconfig;
  std::string ca_pem;
  std::unique_ptr<store::Store> store;
  server::Metrics metrics;
  std::unique_ptr<server::ApiServer> api;
  std::optional<server::TokenTable> tokens;
  std::unique_ptr<server::HttpServer> http;
  std::unique_ptr<server::EventTtl> event_ttl;

  std::atomic<bool> stop_nodes{false};
  std::atomic<bool> stop_control{false};
  std::vector<std::unique_ptr<client::RestClient>> clients;  // outlive the threads
  std::vector<std::thread> node_threads;
  std::vector<std::thread> control_threads;
  std::thread compactor;
  std::mutex mu;
  std::condition_variable cv;
  bool compactor_done = false;
  std::string failure;
  bool stopped = false;

  std::shared_ptr<spdlog::logger> logger(const std::string& name, const std::string& file) {
    auto sink = std::make_shared<AppendFileSink>(dir + "/logs/" + file + ".log");
    auto l = std::make_shared<spdlog::logger>(name, sink);
    l->set_level(options.verbose ? spdlog::level::debug : spdlog::level::info);
    l->flush_on(spdlog::level::info);
    return l;
  }

  void fail(const std::string& component, const std::string& message) {
    std::lock_guard<std::mutex> l(mu);
    if (failure.empty()) failure = component + ": " + message;
  }

  // The admin's client of the scheduler and controllers run here: the API
  // server in process, no HTTP (loopback_client.h).
  Result<client::RestClient*> new_loopback_client(const std::string& token) {
    const server::Identity* id = tokens->find(token);
    if (id == nullptr) return Status(Code::kInternal, "the loopback client's token is unknown");
    clients.push_back(std::make_unique<LoopbackClient>(*api, *id));
    return clients.back().get();
  }

  Result<client::RestClient*> new_client(const std::string& token) {
    client::KubeConfig cfg;
    cfg.server = url;
    cfg.ca_pem = ca_pem;
    cfg.token = token;
    ASSIGN_OR_RETURN(auto c, client::RestClient::create(cfg));
    clients.push_back(std::move(c));
    return clients.back().get();
  }

  // Runs `body` until stop_control; with leader election only while this
  // process holds the Lease `name`, campaigning again after a loss.
  Status leader_elected(client::RestClient& rest, const std::string& name, std::shared_ptr<spdlog::logger> log,
                        const client::LeaderElector::LeadingFn& body) {
    if (!options.leader_elect.value_or(options.store.rfind("etcd://", 0) == 0)) return body(stop_control);
    client::LeaderElectionConfig c = options.leader_election;
    c.lease_name = name;
    c.logger = std::move(log);
    return client::run_leader_elected(rest, c, body, stop_control, true);
  }

  Result<server::PkiFiles> serving_pki(const std::string& host, const std::string& advertise);
  Result<void> start_server();
  Result<void> start_components();
};

// The data dir's PKI (created on first start), with the files named by
// --tls-cert-file/--tls-private-key-file and --client-ca-file in place of its
// own: servers of one cluster share one CA and serving certificate.
Result<server::PkiFiles> LocalCluster::Impl::serving_pki(const std::string& host, const std::string& advertise) {
  if (options.tls_cert_file.empty() != options.tls_private_key_file.empty()) {
    return Status(Code::kInvalid, "--tls-cert-file and --tls-private-key-file must be given together");
  }
  // The kubeconfig names the CA its clients verify the server with: the data
  // dir's own CA did not sign a certificate from elsewhere.
  if (!options.tls_cert_file.empty() && options.client_ca_file.empty()) {
    return Status(Code::kInvalid,
                  "--tls-cert-file needs --client-ca-file: the CA that signed it, written into the kubeconfig");
  }
  server::PkiFiles pki;
  if (options.tls_cert_file.empty() || options.client_ca_file.empty()) {
    ASSIGN_OR_RETURN(pki, server::ensure_pki(dir + "/pki", {host, advertise}));
  }
  if (!options.tls_cert_file.empty()) {
    for (const auto& [flag, path] : {std::pair{"--tls-cert-file", options.tls_cert_file},
                                     std::pair{"--tls-private-key-file", options.tls_private_key_file}}) {
      if (::access(path.c_str(), R_OK) != 0) return Status(Code::kInvalid, std::string(flag) + ": cannot read " + path);
    }
    pki.server_cert = options.tls_cert_file;
    pki.server_key = options.tls_private_key_file;
  }
  if (!options.client_ca_file.empty()) {
    std::ifstream in(options.client_ca_file);
    std::stringstream text;
    text << in.rdbuf();
    if (!in || text.str().find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
      return Status(Code::kInvalid, "--client-ca-file: " + options.client_ca_file + " holds no PEM certificate");
    }
    pki.ca_cert = options.client_ca_file;
    pki.ca_pem = text.str();
  }
  return pki;
}

Result<void> LocalCluster::Impl::start_server() {
  size_t colon = options.listen.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return Status(Code::kInvalid, "--listen must be HOST:PORT, got \"" + options.listen + "\"");
  }
  std::string host = options.listen.substr(0, colon);
  std::string port_text = options.listen.substr(colon + 1);
  if (port_text.empty() || port_text.find_first_not_of("0123456789") != std::string::npos ||
      std::atoi(port_text.c_str()) > 65535) {
    return Status(Code::kInvalid, "--listen: invalid port \"" + port_text + "\"");
  }
  std::error_code ec;
  std::filesystem::create_directories(options.data_dir + "/logs", ec);
  if (ec) return Status(Code::kUnavailable, "cannot create data dir " + options.data_dir + ": " + ec.message());
  dir = std::filesystem::absolute(options.data_dir).lexically_normal().string();
  if (!dir.empty() && dir.back() == '/') dir.pop_back();

  if (options.store == "memory") {
    store = store::new_memory_store();
  } else if (options.store == "sqlite") {
    ASSIGN_OR_RETURN(store, store::open_sqlite_store({dir + "/state.db", true}));
  } else if (options.store.rfind("etcd://", 0) == 0) {
    store::EtcdOptions eo;
    ASSIGN_OR_RETURN(eo.endpoints, store::parse_etcd_url(options.store));
    eo.prefix = options.etcd_prefix;
    eo.ca_file = options.etcd_cafile;
    eo.cert_file = options.etcd_certfile;
    eo.key_file = options.etcd_keyfile;
    auto s = store::open_etcd_store(eo);
    if (!s.has_value()) return Status(s.error().code(), "--store " + options.store + ": " + s.error().message());
    store = std::move(s).value();
  } else {
    return Status(Code::kInvalid,
                  "--store must be sqlite, memory or etcd://HOST:PORT[,HOST:PORT...], got \"" + options.store + "\"");
  }
  std::string advertise = options.advertise.empty() ? (host == "0.0.0.0" ? "127.0.0.1" : host) : options.advertise;
  ASSIGN_OR_RETURN(server::PkiFiles pki, serving_pki(host, advertise));
  ca_pem = pki.ca_pem;
  std::vector<std::string> node_names = options.node_tokens;
  for (const auto& n : options.nodes) node_names.push_back(n.name);
  const std::string token_file = options.token_auth_file.empty() ? dir + "/tokens.csv" : options.token_auth_file;
  auto t = server::TokenTable::ensure_file(token_file, node_names);
  if (!t.has_value()) return Status(t.error().code(), "--token-auth-file " + token_file + ": " + t.error().message());
  tokens = std::move(t).value();

  server::ApiServerOptions ao;
  ao.new_uid = server::new_object_uid;
  ao.random_suffix = server::new_name_suffix;
  // The scheduler's, controllers' and agents' informers run in this process.
  metrics.add_source(client::render_informer_metrics);
  api = std::make_unique<server::ApiServer>(*store, ao, &metrics);
  if (Status b = api->bootstrap(); !b.ok()) return Status(b.code(), "bootstrap: " + b.message());
  event_ttl = std::make_unique<server::EventTtl>(*store, options.event_ttl_s, ao.clock);
  event_ttl->start(server::EventTtl::default_interval_ms(options.event_ttl_s));

  server::HttpServerOptions ho;
  ho.host = host;
  ho.port = static_cast<uint16_t>(std::atoi(port_text.c_str()));
  ho.threads = options.server_threads;
  ho.tls = !options.insecure_http;
  ho.cert_file = pki.server_cert;
  ho.key_file = pki.server_key;
  ho.log_requests = options.log_requests;
  ho.max_requests_inflight = options.max_requests_inflight;
  ho.max_mutating_requests_inflight = options.max_mutating_requests_inflight;
  auto timeout = parse_duration(options.request_timeout);
  if (!timeout.has_value()) return Status(Code::kInvalid, "--request-timeout: " + timeout.error().message());
  ho.request_timeout = *timeout;
  http = std::make_unique<server::HttpServer>(*api, *tokens, metrics, ho);
  ASSIGN_OR_RETURN(uint16_t bound, http->start());
  url = std::string(options.insecure_http ? "http://" : "https://") + advertise + ":" + std::to_string(bound);
  ASSIGN_OR_RETURN(kubeconfig, server::write_kubeconfig(dir, url, pki.ca_pem, *tokens));

  // History older than one compaction interval is dropped (kube-apiserver asks
  // etcd to compact every 5 minutes likewise).
  compactor = std::thread([this] {
    int64_t mark = store->current_revision();
    std::unique_lock<std::mutex> l(mu);
    while (!cv.wait_for(l, std::chrono::seconds(std::max(1, options.compact_interval_s)),
                        [&] { return compactor_done; })) {
      (void)store->compact(mark);
      mark = store->current_revision();
    }
  });
  return {};
}

Result<void> LocalCluster::Impl::start_components() {
  const std::string& admin = tokens->admin_token();
  if (options.scheduler) {
    ASSIGN_OR_RETURN(client::RestClient * watch, new_loopback_client(admin));
    ASSIGN_OR_RETURN(client::RestClient * write, new_loopback_client(admin));
    sched::RunnerOptions ro;
    RETURN_IF_ERROR(sched::apply_policy(options.policy, ro.scheduler));
    ro.scheduler.bind_workers = 16;
    ro.logger = logger("scheduler", "scheduler");
    ASSIGN_OR_RETURN(client::RestClient * lease, new_loopback_client(admin));
    control_threads.emplace_back([this, watch, write, ro, lease] {
      Status st = leader_elected(*lease, "draplane-scheduler", ro.logger, [&](const std::atomic<bool>& stop) {
        return sched::run_scheduler(*watch, *write, ro, stop).status();
      });
      if (!st.ok()) {
        ro.logger->error("scheduler stopped: {}", st.to_string());
        fail("scheduler", st.to_string());
      }
    });
  }
  if (options.controllers) {
    ASSIGN_OR_RETURN(client::RestClient * rest, new_loopback_client(admin));
    ASSIGN_OR_RETURN(client::RestClient * lease, new_loopback_client(admin));
    controllers::ControllerOptions co;
    co.logger = logger("controllers", "controllers");
    control_threads.emplace_back([this, rest, co, lease] {
      Status st = leader_elected(*lease, "draplane-controllers", co.logger, [&](const std::atomic<bool>& stop) {
        return controllers::run_controllers(*rest, co, stop);
      });
      if (!st.ok()) {
        co.logger->error("controllers stopped: {}", st.to_string());
        fail("controllers", st.to_string());
      }
    });
  }
  if (!options.nodes.empty()) {
    // The driver's DeviceClasses, as an admin would install them with the driver
    // (the agents' node identities may not create classes).
    ASSIGN_OR_RETURN(client::RestClient * rest, new_client(admin));
    auto log = logger("setup", "setup");
    if (Status st = node::ensure_device_classes(*rest, *log); !st.ok()) {
      return Status(st.code(), "creating the DeviceClasses: " + st.message());
    }
  }
  std::map<std::string, std::string> node_tokens;
  for (const auto& [token, id] : tokens->all()) {
    if (!id.node.empty()) node_tokens[id.node] = token;
  }
  for (const auto& n : options.nodes) {
    ASSIGN_OR_RETURN(client::RestClient * rest, new_client(node_tokens.at(n.name)));
    node::AgentOptions ao;
    ao.node_name = n.name;
    ao.gpus = n.gpus;
    ao.dynamic_mig = n.dynamic_mig;
    ao.consumable_shares = n.consumable_shares;
    ao.state_dir = node_state_dir(dir, n.name);
    ao.heartbeat_seconds = options.heartbeat_seconds;
    ao.logger = logger("agent/" + n.name, "agent-" + n.name);
    node_threads.emplace_back([this, rest, ao] {
      auto r = node::run_agent(*rest, ao, stop_nodes);
      if (!r.has_value()) {
        ao.logger->error("agent stopped: {}", r.error().to_string());
        fail("agent " + ao.node_name, r.error().to_string());
      }
    });
  }
  return {};
}

Result<int64_t> parse_duration_seconds(const std::string& text) {
  auto bad = [&] { return Status(Code::kInvalid, "invalid duration \"" + text + "\" (e.g. 1h, 30m, 1h30m, 90s)"); };
  if (text.empty()) return bad();
  double total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    if (i == start) return bad();
    double n = std::atof(text.substr(start, i - start).c_str());
    size_t u = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string unit = text.substr(u, i - u);
    if (unit == "h") total += n * 3600;
    else if (unit == "m") total += n * 60;
    else if (unit == "s") total += n;
    else if (unit == "ms") total += n / 1000;
    else if (unit.empty() && text == "0") total += 0;
    else return bad();
  }
  return static_cast<int64_t>(total);
}

LocalCluster::LocalCluster() : impl_(std::make_unique<Impl>()) {}

LocalCluster::~LocalCluster() { stop(); }

Result<std::unique_ptr<LocalCluster>> LocalCluster::start(const LocalClusterOptions& options) {
  std::unique_ptr<LocalCluster> c(new LocalCluster());
  c->impl_->options = options;
  std::set<std::string> names;
  for (const auto& n : options.nodes) {
    if (!valid_node_name(n.name)) return Status(Code::kInvalid, "node name \"" + n.name + "\" is not a DNS subdomain");
    if (!names.insert(n.name).second) return Status(Code::kInvalid, "duplicate node name " + n.name);
  }
  if (options.scheduler) {
    sched::SchedulerOptions check;
    RETURN_IF_ERROR(sched::apply_policy(options.policy, check));
  }
  client::LeaderElectionConfig election = options.leader_election;
  election.lease_name = "draplane-scheduler";
  if (Status st = client::validate_leader_election(election); !st.ok()) {
    return Status(Code::kInvalid, "leader election: " + st.message());
  }
  if (options.event_ttl_s <= 0) return Status(Code::kInvalid, "--event-ttl must be positive");
  RETURN_IF_ERROR(c->impl_->start_server());
  if (Result<void> r = c->impl_->start_components(); !r.has_value()) {
    c->stop();
    return r.error();
  }
  return c;
}

void LocalCluster::stop() {
  Impl& m = *impl_;
  if (m.stopped) return;
  m.stopped = true;
  // Agents first (they unprepare and stop their containers), while the server
  // still answers; then the control plane; then the server.
  m.stop_nodes.store(true);
  for (auto& t : m.node_threads) t.join();
  m.stop_control.store(true);
  for (auto& t : m.control_threads) t.join();
  {
    std::lock_guard<std::mutex> l(m.mu);
    m.compactor_done = true;
  }
  m.cv.notify_all();
  if (m.compactor.joinable()) m.compactor.join();
  if (m.event_ttl) m.event_ttl->stop();
  if (m.http) m.http->stop();
}

const std::string& LocalCluster::url() const { return impl_->url; }
const std::string& LocalCluster::kubeconfig_path() const { return impl_->kubeconfig; }
const std::string& LocalCluster::data_dir() const { return impl_->dir; }

client::KubeConfig LocalCluster::admin_config() const {
  client::KubeConfig cfg;
  cfg.server = impl_->url;
  cfg.ca_pem = impl_->ca_pem;
  cfg.token = impl_->tokens->admin_token();
  return cfg;
}

std::string LocalCluster::failure() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->failure;
}

Result<void> LocalCluster::wait_nodes_ready(int timeout_ms) {
  ASSIGN_OR_RETURN(auto rest, client::RestClient::create(admin_config()));
  std::set<std::string> missing;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    missing.clear();
    for (const auto& n : impl_->options.nodes) missing.insert(n.name);
    std::set<std::string> ready, published;
    if (auto nodes = rest->get(client::resources::kNodes.all()); nodes.has_value()) {
      rapidjson::Document d;
      d.Parse(nodes->data(), nodes->size());
      if (!d.HasParseError() && d.IsObject() && d.HasMember("items") && d["items"].IsArray()) {
        for (const auto& item : d["items"].GetArray()) {
          if (!item.HasMember("metadata") || !item["metadata"].HasMember("name")) continue;
          std::string name = item["metadata"]["name"].GetString();
          if (!item.HasMember("status") || !item["status"].HasMember("conditions")) continue;
          for (const auto& c : item["status"]["conditions"].GetArray()) {
            if (c.HasMember("type") && c.HasMember("status") && std::string(c["type"].GetString()) == "Ready" &&
                std::string(c["status"].GetString()) == "True") {
              ready.insert(name);
            }
          }
        }
      }
    }
    if (auto slices = rest->get(client::resources::kResourceSlices.all()); slices.has_value()) {
      // A pool is published once all slices of its newest generation are there.
      struct Pool {
        int64_t generation = -1;
        int64_t want = 0, have = 0;
      };
      std::map<std::string, Pool> pools;
      for (auto& doc : api::decode_stream(*slices)) {
        if (!doc.object.has_value()) continue;
        const auto* s = std::get_if<api::ResourceSlice>(&doc.object.value());
        if (!s) continue;
        Pool& p = pools[s->spec.pool.name];
        if (s->spec.pool.generation > p.generation) p = {s->spec.pool.generation, s->spec.pool.resourceSliceCount, 0};
        if (s->spec.pool.generation == p.generation) ++p.have;
      }
      for (const auto& [name, p] : pools) {
        if (p.have >= p.want) published.insert(name);
      }
    }
    for (auto it = missing.begin(); it != missing.end();) {
      it = (ready.count(*it) && published.count(*it)) ? missing.erase(it) : std::next(it);
    }
    if (missing.empty()) return {};
    std::string f = failure();
    if (!f.empty()) return Status(Code::kUnavailable, f);
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::string names;
  for (const auto& n : missing) names += (names.empty() ? "" : ", ") + n;
  return Status(Code::kUnavailable, "nodes not ready with their ResourceSlices in time: " + names);
}

}  // namespace draplane::cluster
