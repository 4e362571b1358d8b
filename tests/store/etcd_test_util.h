// A real etcd member for tests (never a mock): `etcd` started on free loopback
// ports with its own data directory, stopped (SIGTERM, then SIGKILL) on
// destruction. Tests skip when the binary is absent (scripts/setup installs
// Debian's etcd-server). The data directory is on /dev/shm where it exists: etcd
// 3.4 has no --unsafe-no-fsync, and tmpfs makes its fsyncs free.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/etcd_store.h"
#include "store/store.h"

namespace draplane::store::testing {

// The etcd binary: $DRAPLANE_ETCD, else `etcd` on PATH; "" when there is none.
inline std::string etcd_binary() {
  if (const char* e = std::getenv("DRAPLANE_ETCD"); e && *e) return e;
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    std::string dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string cand = (dir.empty() ? "." : dir) + "/etcd";
    if (access(cand.c_str(), X_OK) == 0) return cand;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

inline constexpr const char* kNoEtcd = "etcd binary not found (scripts/setup installs Debian's etcd-server)";

// A loopback port nothing listens on now.
inline int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

class EtcdServer {
 public:
  EtcdServer() {
    std::string base = std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path().string();
    std::string tmpl = base + "/draplane-etcd-XXXXXX";
    dir_ = mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~EtcdServer() {
    stop();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  EtcdServer(const EtcdServer&) = delete;
  EtcdServer& operator=(const EtcdServer&) = delete;

  // Starts a one-member cluster; false when the binary is missing or it does not listen.
  bool start() {
    client_port_ = free_port();
    peer_port_ = free_port();
    return start_member("t", "t=" + peer_url());
  }
  // Starts the one-member cluster again after stop(), same ports, same data.
  bool restart() { return start_member("t", "t=" + peer_url()); }

  // Starts member `name` of the cluster `initial_cluster` (NAME=PEER_URL,...), on
  // the ports reserve() chose.
  void reserve() {
    client_port_ = free_port();
    peer_port_ = free_port();
  }
  std::string peer_url() const { return "http://127.0.0.1:" + std::to_string(peer_port_); }
  bool start_member(const std::string& name, const std::string& initial_cluster) {
    std::string bin = etcd_binary();
    if (bin.empty() || dir_.empty()) return false;
    bool multi = initial_cluster.find(',') != std::string::npos;
    std::string client = (tls_.empty() ? "http://127.0.0.1:" : "https://127.0.0.1:") + std::to_string(client_port_);
    std::vector<std::string> args = {bin,
                                     "--name=" + name,
                                     "--data-dir=" + dir_ + "/data",
                                     "--listen-client-urls=" + client,
                                     "--advertise-client-urls=" + client,
                                     "--listen-peer-urls=" + peer_url(),
                                     "--initial-advertise-peer-urls=" + peer_url(),
                                     "--initial-cluster=" + initial_cluster,
                                     // One member elects itself at once with short
                                     // ticks; several keep etcd's margin so a loaded
                                     // machine does not trigger elections.
                                     multi ? "--heartbeat-interval=50" : "--heartbeat-interval=10",
                                     multi ? "--election-timeout=500" : "--election-timeout=100",
                                     "--logger=zap",
                                     "--log-level=error"};
    args.insert(args.end(), tls_.begin(), tls_.end());
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // a crashed test leaves no etcd behind
      int log = open((dir_ + "/etcd.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (log >= 0) {
        dup2(log, 1);
        dup2(log, 2);
      }
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    // Listening is enough: the store's first request waits for a leader.
    for (int i = 0; i < 200; ++i) {
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(static_cast<uint16_t>(client_port_));
      bool up = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
      close(fd);
      if (up) return true;
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
  }

  void stop(int sig = SIGTERM) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    for (int i = 0; i < 200; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  // Serve clients over TLS with these files, asking for a client certificate
  // signed by `ca` (call before starting).
  void require_tls(const std::string& ca, const std::string& cert, const std::string& key) {
    tls_ = {"--trusted-ca-file=" + ca, "--cert-file=" + cert, "--key-file=" + key, "--client-cert-auth"};
  }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(client_port_); }
  int client_port() const { return client_port_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  pid_t pid_ = -1;
  int client_port_ = 0;
  int peer_port_ = 0;
  std::vector<std::string> tls_;
};

// A cluster of `n` members (each an EtcdServer with its own data directory).
class EtcdCluster {
 public:
  // Their data dies with them: no graceful stop (a member that lost its peers
  // takes seconds to leave politely).
  ~EtcdCluster() {
    for (auto& m : members_) m->stop(SIGKILL);
  }
  bool start(int n) {
    std::string initial;
    for (int i = 0; i < n; ++i) {
      members_.push_back(std::make_unique<EtcdServer>());
      members_.back()->reserve();
      initial += (i ? "," : "") + name(i) + "=" + members_.back()->peer_url();
    }
    for (int i = 0; i < n; ++i) {
      if (!members_[static_cast<size_t>(i)]->start_member(name(i), initial)) return false;
    }
    return true;
  }
  EtcdServer& member(int i) { return *members_[static_cast<size_t>(i)]; }
  std::vector<std::string> endpoints() const {
    std::vector<std::string> out;
    for (const auto& m : members_) out.push_back(m->endpoint());
    return out;
  }

 private:
  static std::string name(int i) { return "m" + std::to_string(i); }
  std::vector<std::unique_ptr<EtcdServer>> members_;
};

// A store that owns the etcd member it talks to (the store closes first).
class EtcdBackedStore final : public Store {
 public:
  EtcdBackedStore(std::unique_ptr<EtcdServer> server, std::unique_ptr<Store> inner)
      : server_(std::move(server)), inner_(std::move(inner)) {}
  ~EtcdBackedStore() override { inner_.reset(); }
  int64_t current_revision() override { return inner_->current_revision(); }
  int64_t compacted_revision() override { return inner_->compacted_revision(); }
  Result<KeyValue> get(std::string_view key, int64_t revision) override { return inner_->get(key, revision); }
  Result<ListResult> list(std::string_view prefix, const ListOptions& opts) override { return inner_->list(prefix, opts); }
  Result<KeyValue> create(std::string_view key, std::string_view value) override { return inner_->create(key, value); }
  Result<WriteResult> update(std::string_view key, std::string_view value, int64_t expected) override {
    return inner_->update(key, value, expected);
  }
  Result<WriteResult> remove(std::string_view key, int64_t expected) override { return inner_->remove(key, expected); }
  Result<std::unique_ptr<WatchHandle>> watch(std::string_view prefix, int64_t start, WatchCallback cb) override {
    return inner_->watch(prefix, start, std::move(cb));
  }
  Status compact(int64_t revision) override { return inner_->compact(revision); }
  EtcdServer& server() { return *server_; }

 private:
  std::unique_ptr<EtcdServer> server_;
  std::unique_ptr<Store> inner_;
};

// Store keys map to etcd under a prefix other than the store root, so the key
// translation is exercised by every contract test.
inline EtcdOptions test_etcd_options(const std::string& endpoint) {
  EtcdOptions o;
  o.endpoints = {endpoint};
  o.prefix = "/draplane-test";
  o.root = "";
  return o;
}

// A fresh etcd member and a store on it; nullptr when etcd is unavailable.
inline std::unique_ptr<Store> new_etcd_store() {
  auto server = std::make_unique<EtcdServer>();
  if (!server->start()) return nullptr;
  auto s = open_etcd_store(test_etcd_options(server->endpoint()));
  if (!s.has_value()) return nullptr;
  return std::make_unique<EtcdBackedStore>(std::move(server), std::move(s).value());
}

}  // namespace draplane::store::testing
