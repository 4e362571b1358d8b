#include "node/kubelet_logs.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "common/cloexec.h"

namespace draplane::node {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

std::map<std::string, std::string> parse_query(const std::string& q) {
  std::map<std::string, std::string> out;
  size_t pos = 0;
  while (pos < q.size()) {
    size_t amp = q.find('&', pos);
    std::string kv = q.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    size_t eq = kv.find('=');
    out[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  return out;
}

int64_t to_int(const std::map<std::string, std::string>& q, const char* key) {
  auto it = q.find(key);
  if (it == q.end() || it->second.empty()) return -1;
  try {
    return std::stoll(it->second);
  } catch (...) {
    return -1;
  }
}

}  // namespace

std::string select_log(const std::string& content, int64_t tail_lines, int64_t limit_bytes) {
  std::string out = content;
  if (tail_lines >= 0 && !out.empty()) {
    // Line starts; a final newline ends the last line rather than starting one.
    std::vector<size_t> starts = {0};
    for (size_t i = 0; i + 1 < out.size(); ++i) {
      if (out[i] == '\n') starts.push_back(i + 1);
    }
    const int64_t n = static_cast<int64_t>(starts.size());
    if (tail_lines == 0) {
      out.clear();
    } else if (tail_lines < n) {
      out = out.substr(starts[n - tail_lines]);
    }
  }
  if (limit_bytes >= 0 && static_cast<int64_t>(out.size()) > limit_bytes) out.resize(limit_bytes);
  return out;
}

struct LogServer::Impl {
  LogLocator locate;
  asio::io_context io;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::thread thread;
  std::atomic<bool> stopping{false};

  http::response<http::string_body> answer(const http::request<http::string_body>& req) {
    http::response<http::string_body> res;
    res.version(req.version());
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    std::string target(req.target());
    std::string path = target.substr(0, target.find('?'));
    auto q = parse_query(target.find('?') == std::string::npos ? "" : target.substr(target.find('?') + 1));
    const std::string prefix = "/containerLogs/";
    std::vector<std::string> parts;
    if (req.method() == http::verb::get && path.rfind(prefix, 0) == 0) {
      std::stringstream ss(path.substr(prefix.size()));
      for (std::string p; std::getline(ss, p, '/');) parts.push_back(p);
    }
    if (parts.size() < 2 || parts.size() > 3) {
      res.result(http::status::not_found);
      res.body() = "404 page not found\n";
      return res;
    }
    auto file = locate(parts[0], parts[1], parts.size() == 3 ? parts[2] : "", q["previous"] == "true");
    if (!file.has_value()) {
      res.result(file.error().code() == Code::kInvalid ? http::status::bad_request : http::status::not_found);
      res.body() = file.error().message() + "\n";
      return res;
    }
    std::ifstream in(*file);
    std::stringstream content;
    content << in.rdbuf();
    res.result(http::status::ok);
    res.body() = select_log(content.str(), to_int(q, "tailLines"), to_int(q, "limitBytes"));
    return res;
  }

  void serve() {
    while (!stopping) {
      boost::system::error_code ec;
      tcp::socket sock(io);
      acceptor->accept(sock, ec);
      if (ec || stopping) continue;
      set_cloexec(sock.native_handle());
      boost::beast::flat_buffer buf;
      http::request<http::string_body> req;
      http::read(sock, buf, req, ec);
      if (ec) continue;
      auto res = answer(req);
      res.keep_alive(false);
      res.prepare_payload();
      http::write(sock, res, ec);
      sock.shutdown(tcp::socket::shutdown_both, ec);
    }
  }
};

LogServer::LogServer(LogLocator locate) : impl_(std::make_unique<Impl>()) { impl_->locate = std::move(locate); }

LogServer::~LogServer() { stop(); }

Result<int> LogServer::start(const std::string& host, int port) {
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  if (ec) return invalid_error("log endpoint: bad address \"" + host + "\": " + ec.message());
  auto acc = std::make_unique<tcp::acceptor>(impl_->io);
  tcp::endpoint ep(addr, static_cast<uint16_t>(port));
  acc->open(ep.protocol(), ec);
  if (!ec) set_cloexec(acc->native_handle());  // Asio opens sockets without it
  if (!ec) acc->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acc->bind(ep, ec);
  if (!ec) acc->listen(64, ec);
  if (ec) return Status(Code::kUnavailable, "log endpoint: listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
  int bound = acc->local_endpoint().port();
  impl_->acceptor = std::move(acc);
  impl_->thread = std::thread([this] { impl_->serve(); });
  return bound;
}

void LogServer::stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  impl_->stopping = true;
  // Wake the blocking accept with a connection of our own.
  boost::system::error_code ec;
  tcp::socket s(impl_->io);
  s.connect(impl_->acceptor->local_endpoint(), ec);
  impl_->thread.join();
  impl_->acceptor->close(ec);
}

}  // namespace draplane::node
