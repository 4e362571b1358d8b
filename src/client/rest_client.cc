#include "client/rest_client.h"

#include <poll.h>
#include <rapidjson/document.h>

#include <fstream>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <mutex>
#include <optional>
#include <vector>

#include "common/cloexec.h"
#include "common/split.h"

namespace draplane::client {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

constexpr auto kRequestTimeout = std::chrono::seconds(30);
// Watch streams: the socket buffer and the body chunk handed to the parser.
constexpr size_t kWatchBuffer = 256 * 1024;

struct Endpoint {
  bool tls = true;
  std::string host;
  std::string port;
  std::string prefix;  // path prefix of the server URL, without trailing '/'
};

Result<Endpoint> parse_server(const std::string& url) {
  Endpoint ep;
  std::string_view rest = url;
  if (rest.rfind("https://", 0) == 0) {
    rest.remove_prefix(8);
  } else if (rest.rfind("http://", 0) == 0) {
    ep.tls = false;
    rest.remove_prefix(7);
  } else {
    return invalid_error("server URL must start with https:// or http://: " + url);
  }
  auto slash = rest.find('/');
  std::string_view hostport = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    ep.prefix = std::string(rest.substr(slash));
    while (!ep.prefix.empty() && ep.prefix.back() == '/') ep.prefix.pop_back();
  }
  if (!hostport.empty() && hostport.front() == '[') {  // [::1]:6443
    auto close = hostport.find(']');
    if (close == std::string_view::npos) return invalid_error("bad IPv6 host in server URL: " + url);
    ep.host = std::string(hostport.substr(1, close - 1));
    if (close + 1 < hostport.size() && hostport[close + 1] == ':') ep.port = std::string(hostport.substr(close + 2));
  } else {
    auto colon = hostport.rfind(':');
    ep.host = std::string(hostport.substr(0, colon));
    if (colon != std::string_view::npos) ep.port = std::string(hostport.substr(colon + 1));
  }
  if (ep.host.empty()) return invalid_error("server URL has no host: " + url);
  if (ep.port.empty()) ep.port = ep.tls ? "443" : "80";
  return ep;
}

Code code_for(int http_status, std::string_view reason) {
  switch (http_status) {
    case 400: return Code::kBadRequest;
    case 401: return Code::kUnauthorized;
    case 403: return Code::kForbidden;
    case 404: return Code::kNotFound;
    case 409: return reason == "AlreadyExists" ? Code::kAlreadyExists : Code::kConflict;
    case 410: return Code::kGone;
    case 422: return Code::kInvalid;
    case 504: return Code::kDeadlineExceeded;
    default: return http_status >= 500 ? Code::kUnavailable : Code::kInvalid;
  }
}

// One connection (TLS or plain) with its own io_context, driven synchronously by
// running the context until the operation completes or times out.
class Connection {
 public:
  Connection(const Endpoint& ep, ssl::context* tls) : ep_(ep), tls_(tls) {}

  Result<void> connect() {
    beast::error_code ec;
    tcp::resolver resolver(ioc_);
    auto results = resolver.resolve(ep_.host, ep_.port, ec);
    if (ec) return Status(Code::kUnavailable, "resolve " + ep_.host + ": " + ec.message());
    if (tls_) {
      ssl_.emplace(ioc_, *tls_);
      beast::get_lowest_layer(*ssl_).expires_after(kRequestTimeout);
      beast::get_lowest_layer(*ssl_).connect(results, ec);
      if (ec) return unavailable("connect", ec);
      set_cloexec(beast::get_lowest_layer(*ssl_).socket().native_handle());  // Asio opens sockets without it
      if (!SSL_set_tlsext_host_name(ssl_->native_handle(), ep_.host.c_str())) {
        return Status(Code::kUnavailable, "TLS: cannot set SNI host name");
      }
      ssl_->set_verify_callback(ssl::host_name_verification(ep_.host));
      ssl_->handshake(ssl::stream_base::client, ec);
      if (ec) return unavailable("TLS handshake", ec);
    } else {
      plain_.emplace(ioc_);
      plain_->expires_after(kRequestTimeout);
      plain_->connect(results, ec);
      if (ec) return unavailable("connect", ec);
      set_cloexec(plain_->socket().native_handle());  // Asio opens sockets without it
    }
    return {};
  }

  template <typename F>
  auto with_stream(F&& f) {
    if (ssl_) return f(*ssl_);
    return f(*plain_);
  }

  void expires_after(std::chrono::steady_clock::duration d) {
    if (ssl_) beast::get_lowest_layer(*ssl_).expires_after(d);
    else plain_->expires_after(d);
  }
  void expires_never() {
    if (ssl_) beast::get_lowest_layer(*ssl_).expires_never();
    else plain_->expires_never();
  }
  void close() {
    beast::error_code ec;
    if (ssl_) beast::get_lowest_layer(*ssl_).socket().close(ec);
    if (plain_) plain_->socket().close(ec);
  }
  asio::io_context& ioc() { return ioc_; }

  // An idle kept-alive connection with something to read has been closed by
  // the server (or carries bytes nobody asked for): a request written on it
  // would be lost, and one that is not idempotent could not be sent again.
  bool closed_while_idle() {
    pollfd p{};
    p.fd = ssl_ ? beast::get_lowest_layer(*ssl_).socket().native_handle() : plain_->socket().native_handle();
    p.events = POLLIN;
    return ::poll(&p, 1, 0) != 0;
  }

  Status unavailable(const char* what, const beast::error_code& ec) {
    return Status(Code::kUnavailable, std::string(what) + " " + ep_.host + ":" + ep_.port + ": " + ec.message());
  }

 private:
  Endpoint ep_;
  ssl::context* tls_;
  asio::io_context ioc_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> ssl_;
  std::optional<beast::tcp_stream> plain_;
};

class BeastRestClient final : public RestClient {
 public:
  BeastRestClient(Endpoint ep, std::unique_ptr<ssl::context> tls, std::string token, std::string token_file)
      : ep_(std::move(ep)), tls_(std::move(tls)), token_(std::move(token)), token_file_(std::move(token_file)),
        token_read_(std::chrono::steady_clock::now()) {}

  Result<Response> request(std::string_view method, std::string_view target, std::string_view body,
                           std::string_view content_type) override {
    bool may_resend = false;
    return request_tracked(method, target, body, content_type, may_resend);
  }

  Result<void> watch(std::string_view target, const std::function<bool(std::string_view)>& on_event,
                     const std::atomic<bool>* stop, int poll_ms) override {
    bool may_resend = false;
    return watch_tracked(target, on_event, stop, poll_ms, may_resend);
  }

  // As request() and watch(). On an error `may_resend` tells whether the call
  // may be sent to another server: when no byte of it reached this one, or
  // when it is an idempotent request (GET, HEAD, OPTIONS) whose answer was
  // lost. A POST, PUT, PATCH or DELETE that was written may have been applied
  // and is never sent again (Go's net/http transport rule, which client-go
  // follows).
  Result<Response> request_tracked(std::string_view method, std::string_view target, std::string_view body,
                                   std::string_view content_type, bool& may_resend) {
    may_resend = false;
    const bool idempotent = method == "GET" || method == "HEAD" || method == "OPTIONS";
    // A kept-alive connection may have been closed by the server: retry once on a
    // fresh connection when the failure happened on a reused one, as far as
    // the rule above allows.
    for (int attempt = 0; attempt < 2; ++attempt) {
      std::unique_ptr<Connection> conn = take_idle();
      bool reused = conn != nullptr;
      if (!conn) {
        conn = std::make_unique<Connection>(ep_, tls_.get());
        auto st = conn->connect();
        if (!st) {
          may_resend = true;  // nothing was sent
          return st.error();
        }
      }
      auto req = make_request(method, target, body, content_type);
      bool keep = true;
      bool written = false;  // some of the request reached the socket
      auto res = conn->with_stream([&](auto& stream) -> Result<Response> {
        beast::error_code ec;
        conn->expires_after(kRequestTimeout);
        written = http::write(stream, req, ec) > 0;
        if (ec) return conn->unavailable("write", ec);
        written = true;
        beast::flat_buffer buffer;
        http::response_parser<http::string_body> parser;
        parser.body_limit(512ull * 1024 * 1024);
        http::read(stream, buffer, parser, ec);
        if (ec) return conn->unavailable("read", ec);
        auto& msg = parser.get();
        Response out;
        out.status = static_cast<int>(msg.result_int());
        out.body = std::move(msg.body());
        out.content_type = std::string(msg[http::field::content_type]);
        if (!msg.keep_alive()) keep = false;
        return out;
      });
      if (res.has_value()) {
        if (keep) put_idle(std::move(conn));
        return res;
      }
      may_resend = !written || idempotent;
      // Go's transport retries on the same server only on a reused connection
      // (a fresh one that fails says the server is in trouble).
      if (reused && attempt == 0 && may_resend) continue;
      return res;
    }
    return Status(Code::kUnavailable, "request failed");
  }

  Result<void> watch_tracked(std::string_view target, const std::function<bool(std::string_view)>& on_event,
                             const std::atomic<bool>* stop, int poll_ms, bool& may_resend) {
    may_resend = false;
    Connection conn(ep_, tls_.get());
    if (auto st = conn.connect(); !st) {
      may_resend = true;  // nothing was sent
      return st.error();
    }
    auto req = make_request("GET", target, {}, {});
    return conn.with_stream([&](auto& stream) -> Result<void> {
      beast::error_code ec;
      may_resend = http::write(stream, req, ec) == 0;
      if (ec) return conn.unavailable("write", ec);
      may_resend = false;  // events may have been delivered: the caller resumes
      conn.expires_never();
      // Bounded: a burst of events (thousands of pods created) would otherwise be
      // read into one growing buffer whose unread rest is moved to its front on
      // every read of a chunk (quadratic copying).
      beast::flat_buffer buffer(kWatchBuffer);
      http::response_parser<http::buffer_body> parser;
      parser.body_limit(boost::none);
      std::string pending;  // bytes of an incomplete event line
      std::string error_body;
      bool header_done = false;
      int status = 0;
      std::vector<char> chunk_storage(kWatchBuffer);
      char* chunk = chunk_storage.data();
      const size_t chunk_size = chunk_storage.size();
      while (!parser.is_done()) {
        if (stop && stop->load()) return Result<void>();
        parser.get().body().data = chunk;
        parser.get().body().size = chunk_size;
        bool finished = false;
        beast::error_code rec;
        auto on_read = [&](beast::error_code e, std::size_t) {
          rec = e;
          finished = true;
        };
        if (!header_done) {
          http::async_read_header(stream, buffer, parser, on_read);
        } else {
          // read_some: return with whatever part of the body arrived (one event is
          // often a few hundred bytes), not when the 64 KiB buffer is full.
          http::async_read_some(stream, buffer, parser, on_read);
        }
        conn.ioc().restart();
        while (!finished) {
          conn.ioc().run_for(std::chrono::milliseconds(poll_ms));
          if (!finished && stop && stop->load()) {
            conn.close();
            conn.ioc().restart();
            conn.ioc().run();  // let the cancelled operation complete
            return Result<void>();
          }
        }
        if (rec == http::error::need_buffer) rec = {};
        if (rec == http::error::end_of_stream || rec == asio::error::eof) break;
        if (rec) return conn.unavailable("watch read", rec);
        if (!header_done && parser.is_header_done()) {
          header_done = true;
          status = static_cast<int>(parser.get().result_int());
          continue;
        }
        size_t got = chunk_size - parser.get().body().size;
        if (status < 200 || status >= 300) {
          error_body.append(chunk, got);
          continue;
        }
        pending.append(chunk, got);
        size_t start = 0;
        for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
          std::string_view line(pending.data() + start, nl - start);
          if (line.empty()) continue;
          if (!on_event(line)) return Result<void>();
        }
        pending.erase(0, start);
      }
      if (status < 200 || status >= 300) {
        Response r{status, error_body, ""};
        return status_from_response(r);
      }
      if (!pending.empty()) on_event(pending);
      return Result<void>();
    });
  }

 private:
  http::request<http::string_body> make_request(std::string_view method, std::string_view target,
                                                std::string_view body, std::string_view content_type) {
    http::request<http::string_body> req;
    req.method(http::string_to_verb(beast::string_view(method.data(), method.size())));
    req.target(ep_.prefix + std::string(target));
    req.version(11);
    req.set(http::field::host, ep_.host);
    req.set(http::field::user_agent, "draplane/client");
    req.set(http::field::accept, "application/json");
    if (std::string token = current_token(); !token.empty()) {
      req.set(http::field::authorization, "Bearer " + token);
    }
    if (!body.empty()) {
      req.set(http::field::content_type, std::string(content_type));
      req.body() = std::string(body);
    }
    req.keep_alive(true);
    req.prepare_payload();
    return req;
  }

  // The bearer token, read again from token_file_ once a minute (client-go's
  // cached file token source); a failed read keeps the last one.
  std::string current_token() {
    std::lock_guard<std::mutex> lock(token_mu_);
    const auto now = std::chrono::steady_clock::now();
    if (!token_file_.empty() && now - token_read_ >= std::chrono::minutes(1)) {
      token_read_ = now;
      std::ifstream in(token_file_, std::ios::binary);
      std::string t((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
      if (in.good() || in.eof()) {
        if (!t.empty()) token_ = std::move(t);
      }
    }
    return token_;
  }

  Endpoint ep_;
  std::unique_ptr<ssl::context> tls_;
  std::mutex token_mu_;
  std::string token_;
  const std::string token_file_;
  std::chrono::steady_clock::time_point token_read_;
  // Concurrent requests each take a connection: an idle kept-alive one, else a
  // new one; at most kMaxIdle stay open between requests.
  static constexpr size_t kMaxIdle = 16;
  std::unique_ptr<Connection> take_idle() {
    std::lock_guard<std::mutex> lock(mu_);
    while (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      if (!c->closed_while_idle()) return c;
    }
    return nullptr;
  }
  void put_idle(std::unique_ptr<Connection> c) {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.size() < kMaxIdle) idle_.push_back(std::move(c));
  }

  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;
};

// Several API servers of one cluster: each call goes to the server that
// answered last. A call that reached no server (it could not connect, or not
// one byte was written) goes to the next one, and so does an idempotent
// request (GET) whose answer was lost. A POST, PUT, PATCH or DELETE that was
// written is not sent again anywhere (it may have been applied: the caller
// decides), but the next call starts at the next server.
class FailoverRestClient final : public RestClient {
 public:
  explicit FailoverRestClient(std::vector<std::unique_ptr<BeastRestClient>> servers) : servers_(std::move(servers)) {}

  Result<Response> request(std::string_view method, std::string_view target, std::string_view body,
                           std::string_view content_type) override {
    return over_servers<Response>([&](BeastRestClient& c, bool& may_resend) {
      return c.request_tracked(method, target, body, content_type, may_resend);
    });
  }

  Result<void> watch(std::string_view target, const std::function<bool(std::string_view)>& on_event,
                     const std::atomic<bool>* stop, int poll_ms) override {
    return over_servers<void>([&](BeastRestClient& c, bool& may_resend) {
      return c.watch_tracked(target, on_event, stop, poll_ms, may_resend);
    });
  }

 private:
  template <typename T, typename F>
  Result<T> over_servers(F&& call) {
    const size_t n = servers_.size();
    const size_t first = current_.load();
    Result<T> last = Status(Code::kUnavailable, "no API server");
    for (size_t i = 0; i < n; ++i) {
      const size_t at = (first + i) % n;
      bool may_resend = false;
      last = call(*servers_[at], may_resend);
      if (!last.has_value() && may_resend) continue;
      // A request that may have been applied: not resent, but the next call
      // tries the next server.
      size_t expected = first;
      current_.compare_exchange_strong(expected, last.has_value() ? at : (at + 1) % n);
      return last;
    }
    current_.store((first + 1) % n);
    return last;
  }

  std::vector<std::unique_ptr<BeastRestClient>> servers_;
  std::atomic<size_t> current_{0};
};

Result<std::unique_ptr<BeastRestClient>> create_one(const KubeConfig& config);

}  // namespace

Result<std::unique_ptr<RestClient>> RestClient::create(const KubeConfig& config) {
  if (config.server.find(',') == std::string::npos) {
    ASSIGN_OR_RETURN(auto one, create_one(config));
    return std::unique_ptr<RestClient>(std::move(one));
  }
  std::vector<std::unique_ptr<BeastRestClient>> servers;
  for (std::string_view url : common::split(config.server, ',')) {
    if (url.empty()) continue;
    KubeConfig c = config;
    c.server = std::string(url);
    ASSIGN_OR_RETURN(auto one, create_one(c));
    servers.push_back(std::move(one));
  }
  if (servers.empty()) return invalid_error("no server URL in \"" + config.server + "\"");
  if (servers.size() == 1) return std::unique_ptr<RestClient>(std::move(servers.front()));
  return std::unique_ptr<RestClient>(new FailoverRestClient(std::move(servers)));
}

namespace {

Result<std::unique_ptr<BeastRestClient>> create_one(const KubeConfig& config) {
  ASSIGN_OR_RETURN(Endpoint ep, parse_server(config.server));
  std::unique_ptr<ssl::context> tls;
  if (ep.tls) {
    tls = std::make_unique<ssl::context>(ssl::context::tls_client);
    beast::error_code ec;
    if (config.insecure_skip_tls_verify) {
      tls->set_verify_mode(ssl::verify_none);
    } else {
      tls->set_verify_mode(ssl::verify_peer);
      if (!config.ca_pem.empty()) {
        tls->add_certificate_authority(asio::buffer(config.ca_pem), ec);
        if (ec) return invalid_error("kubeconfig: certificate authority: " + ec.message());
      } else {
        tls->set_default_verify_paths(ec);
      }
    }
    if (!config.client_cert_pem.empty()) {
      tls->use_certificate_chain(asio::buffer(config.client_cert_pem), ec);
      if (ec) return invalid_error("kubeconfig: client certificate: " + ec.message());
      tls->use_private_key(asio::buffer(config.client_key_pem), ssl::context::pem, ec);
      if (ec) return invalid_error("kubeconfig: client key: " + ec.message());
    }
  }
  return std::make_unique<BeastRestClient>(std::move(ep), std::move(tls), config.token, config.token_file);
}

}  // namespace

Status status_from_response(const Response& r) {
  std::string reason, message;
  rapidjson::Document doc;
  doc.Parse(r.body.data(), r.body.size());
  if (!doc.HasParseError() && doc.IsObject()) {
    if (doc.HasMember("reason") && doc["reason"].IsString()) reason = doc["reason"].GetString();
    if (doc.HasMember("message") && doc["message"].IsString()) message = doc["message"].GetString();
  }
  if (message.empty()) message = r.body.empty() ? "HTTP " + std::to_string(r.status) : r.body;
  return Status(code_for(r.status, reason), message);
}

namespace {
Result<std::string> body_or_error(Result<Response> r) {
  if (!r.has_value()) return r.error();
  if (r->status >= 200 && r->status < 300) return std::move(r->body);
  return status_from_response(*r);
}
}  // namespace

Result<std::string> RestClient::get(std::string_view target) { return body_or_error(request("GET", target)); }
Result<std::string> RestClient::post(std::string_view target, std::string_view json) {
  return body_or_error(request("POST", target, json));
}
Result<std::string> RestClient::put(std::string_view target, std::string_view json) {
  return body_or_error(request("PUT", target, json));
}
Result<std::string> RestClient::patch(std::string_view target, std::string_view body, std::string_view ct) {
  return body_or_error(request("PATCH", target, body, ct));
}
Result<std::string> RestClient::del(std::string_view target) { return body_or_error(request("DELETE", target)); }

}  // namespace draplane::client
