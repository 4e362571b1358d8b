// A loopback TCP proxy a test can cut: cut() closes every proxied connection and
// refuses new ones (closes them on accept) until restore(). It stands for a
// network partition between a client and its server.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace draplane::store::testing {

class TcpProxy {
 public:
  explicit TcpProxy(int target_port) : target_port_(target_port) {
    signal(SIGPIPE, SIG_IGN);  // a write to a cut connection must not end the test
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = loopback(0);
    socklen_t len = sizeof(a);
    bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    listen(listen_fd_, 64);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~TcpProxy() {
    stopping_ = true;
    shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    close(listen_fd_);
    cut();
    for (auto& t : pipes_) t.join();
  }
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }

  void cut() {
    std::lock_guard<std::mutex> l(mu_);
    cut_ = true;
    for (int fd : fds_) shutdown(fd, SHUT_RDWR);
  }
  void restore() {
    std::lock_guard<std::mutex> l(mu_);
    cut_ = false;
  }

 private:
  static sockaddr_in loopback(int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    return a;
  }
  void accept_loop() {
    while (!stopping_) {
      int c = accept(listen_fd_, nullptr, nullptr);
      if (c < 0) return;
      std::lock_guard<std::mutex> l(mu_);
      if (cut_ || stopping_) {
        close(c);
        continue;
      }
      int s = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a = loopback(target_port_);
      if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
        close(c);
        close(s);
        continue;
      }
      fds_.insert(c);
      fds_.insert(s);
      pipes_.emplace_back([this, c, s] { pipe(c, s); });
    }
  }
  // Copies both ways until either side closes.
  void pipe(int a, int b) {
    char buf[16384];
    pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
    bool open = true;
    while (open && poll(p, 2, -1) > 0) {
      for (int i = 0; i < 2 && open; ++i) {
        if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t n = read(p[i].fd, buf, sizeof(buf));
        if (n <= 0 || send(p[1 - i].fd, buf, static_cast<size_t>(n), MSG_NOSIGNAL) != n) open = false;
      }
    }
    std::lock_guard<std::mutex> l(mu_);
    fds_.erase(a);
    fds_.erase(b);
    close(a);
    close(b);
  }

  int target_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  bool cut_ = false;
  std::set<int> fds_;
  std::vector<std::thread> pipes_;  // joined on destruction (only accept_loop appends)
  std::thread acceptor_;
};

}  // namespace draplane::store::testing
