#include "server/http_server.h"

#include <pthread.h>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "common/cloexec.h"

namespace draplane::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using net::use_awaitable;

namespace {

std::string url_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else if (s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

void split_target(std::string_view target, Request& r) {
  size_t q = target.find('?');
  r.path = std::string(target.substr(0, q));
  if (q == std::string_view::npos) return;
  std::string_view qs = target.substr(q + 1);
  while (!qs.empty()) {
    size_t amp = qs.find('&');
    std::string_view kv = qs.substr(0, amp);
    size_t eq = kv.find('=');
    std::string k = url_decode(kv.substr(0, eq));
    std::string v = eq == std::string_view::npos ? "" : url_decode(kv.substr(eq + 1));
    if (!k.empty()) r.query[k] = v;
    if (amp == std::string_view::npos) break;
    qs = qs.substr(amp + 1);
  }
}

}  // namespace

std::string warning_header(std::string_view text) {
  std::string out = "299 - \"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

class HttpServer::Impl {
 public:
  Impl(ApiServer& api, const TokenTable& tokens, Metrics& metrics, HttpServerOptions o)
      : api_(api), tokens_(tokens), metrics_(metrics), opts_(std::move(o)), ssl_(ssl::context::tls_server) {}

  Result<uint16_t> start() {
    if (opts_.tls) {
      boost::system::error_code ec;
      ssl_.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                       ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
      ssl_.use_certificate_chain_file(opts_.cert_file, ec);
      if (!ec) ssl_.use_private_key_file(opts_.key_file, ssl::context::pem, ec);
      if (ec) return Status(Code::kUnavailable, "tls: " + ec.message());
      // kubectl and client-go negotiate HTTP/2 with ALPN when offered; offering
      // only http/1.1 keeps them on HTTP/1.1.
      SSL_CTX_set_alpn_select_cb(
          ssl_.native_handle(),
          [](SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned int inlen,
             void*) -> int {
            static const unsigned char kH1[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
            unsigned char* sel = nullptr;
            if (SSL_select_next_proto(&sel, outlen, kH1, sizeof kH1, in, inlen) != OPENSSL_NPN_NEGOTIATED) {
              return SSL_TLSEXT_ERR_NOACK;
            }
            *out = sel;
            return SSL_TLSEXT_ERR_OK;
          },
          nullptr);
    }
    boost::system::error_code ec;
    auto addr = net::ip::make_address(opts_.host, ec);
    if (ec) return Status(Code::kInvalid, "listen address " + opts_.host + ": " + ec.message());
    tcp::endpoint ep(addr, opts_.port);
    acceptor_.open(ep.protocol(), ec);
    if (!ec) set_cloexec(acceptor_.native_handle());  // Asio opens sockets without it
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) return Status(Code::kUnavailable, "listen on " + opts_.host + ":" + std::to_string(opts_.port) + ": " + ec.message());
    uint16_t port = acceptor_.local_endpoint().port();
    net::co_spawn(acceptor_.get_executor(), accept_loop(), net::detached);
    for (auto& loop : loops_) {
      threads_.emplace_back([&loop] {
        pthread_setname_np(pthread_self(), "apiserver");
        loop->ctx.run();
      });
    }
    return port;
  }

  void stop() {
    if (threads_.empty()) return;
    net::post(ioc_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
    });
    ioc_.stop();
    for (auto& loop : loops_) loop->ctx.stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  net::awaitable<void> accept_loop() {
    for (;;) {
      try {
        // Each connection lives on one thread's loop (round robin), so its
        // requests never hand over between threads.
        auto& loop = loops_[next_loop_++ % loops_.size()]->ctx;
        tcp::socket sock = co_await acceptor_.async_accept(loop.get_executor(), use_awaitable);
        set_cloexec(sock.native_handle());
        sock.set_option(tcp::no_delay(true));
        auto ex = sock.get_executor();
        if (opts_.tls) {
          net::co_spawn(ex, tls_session(std::move(sock)), net::detached);
        } else {
          net::co_spawn(ex, session(beast::tcp_stream(std::move(sock))), net::detached);
        }
      } catch (const std::exception&) {
        if (!acceptor_.is_open()) co_return;
      }
    }
  }

  net::awaitable<void> tls_session(tcp::socket sock) {
    beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(sock)), ssl_);
    try {
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
      co_await stream.async_handshake(ssl::stream_base::server, use_awaitable);
    } catch (const std::exception&) {
      co_return;
    }
    co_await session(std::move(stream));
  }

  template <typename Stream>
  net::awaitable<void> session(Stream stream) {
    beast::flat_buffer buf;
    try {
      for (;;) {
        beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(300));
        http::request_parser<http::string_body> parser;
        parser.body_limit(64 * 1024 * 1024);
        co_await http::async_read(stream, buf, parser, use_awaitable);
        beast::get_lowest_layer(stream).expires_never();
        auto req = parser.release();
        auto start = std::chrono::steady_clock::now();
        Request r;
        r.method = std::string(req.method_string());
        split_target(std::string_view(req.target().data(), req.target().size()), r);
        r.accept = std::string(req[http::field::accept]);
        r.content_type = std::string(req[http::field::content_type]);
        r.if_none_match = std::string(req[http::field::if_none_match]);
        r.user_agent = std::string(req[http::field::user_agent]);
        r.body = std::move(req.body());
        std::string auth(req[http::field::authorization]);
        bool bad_token = false;
        if (auth.rfind("Bearer ", 0) == 0) {
          const Identity* id = tokens_.find(auth.substr(7));
          if (id) r.identity = *id;
          else bad_token = true;
        }
        ApiServer::Outcome out;
        if (bad_token) {
          out.response.code = 401;
          out.response.body = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})";
        } else {
          out = api_.handle(r);
        }
        if (out.watch) {
          co_await stream_watch(stream, req.version(), std::move(out.watch));
          break;
        }
        http::response<http::string_body> res{static_cast<http::status>(out.response.code), req.version()};
        res.set(http::field::content_type, out.response.content_type);
        res.set(http::field::cache_control, "no-cache, private");
        for (const auto& w : out.response.warnings) res.insert(http::field::warning, warning_header(w));
        for (const auto& [k, v] : out.response.headers) res.set(k, v);
        res.keep_alive(req.keep_alive());
        res.body() = std::move(out.response.body);
        res.prepare_payload();
        if (opts_.log_requests) log(r, out.response.code, start);
        co_await http::async_write(stream, res, use_awaitable);
        if (!req.keep_alive()) break;
      }
    } catch (const std::exception&) {
      // Client went away or sent garbage: drop the connection.
    }
    beast::error_code ec;
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ec);
  }

  template <typename Stream>
  net::awaitable<void> stream_watch(Stream& stream, unsigned version, std::unique_ptr<WatchStream> watch) {
    metrics_.watch_opened();
    struct Closer {
      Metrics& m;
      ~Closer() { m.watch_closed(); }
    } closer{metrics_};
    auto timer = std::make_shared<net::steady_timer>(co_await net::this_coro::executor);
    auto signaled = std::make_shared<std::atomic<bool>>(false);
    auto ex = co_await net::this_coro::executor;
    watch->set_notify([timer, signaled, ex] {
      signaled->store(true);
      net::post(ex, [timer] { timer->cancel(); });
    });
    http::response<http::empty_body> res{http::status::ok, version};
    res.set(http::field::content_type, "application/json");
    res.set(http::field::cache_control, "no-cache, private");
    res.chunked(true);
    http::response_serializer<http::empty_body> sr{res};
    co_await http::async_write_header(stream, sr, use_awaitable);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(watch->timeout_seconds());
    std::vector<std::string> lines;
    for (;;) {
      signaled->store(false);
      lines.clear();
      bool alive = watch->take(lines);
      if (!lines.empty()) {
        std::string data;
        for (auto& l : lines) data += l;
        co_await net::async_write(stream, http::make_chunk(net::buffer(data)), use_awaitable);
      }
      if (!alive || std::chrono::steady_clock::now() >= deadline) break;
      if (signaled->load()) continue;
      timer->expires_at(deadline);
      boost::system::error_code ec;
      co_await timer->async_wait(net::redirect_error(use_awaitable, ec));
    }
    co_await net::async_write(stream, http::make_chunk_last(), use_awaitable);
  }

  void log(const Request& r, int code, std::chrono::steady_clock::time_point start) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "{\"verb\":\"%s\",\"path\":\"%s\",\"type\":\"%s\",\"user\":\"%s\",\"code\":%d,\"ms\":%.3f}\n",
                 r.method.c_str(), r.path.c_str(), r.content_type.c_str(), r.identity.user.c_str(), code, ms);
  }

  ApiServer& api_;
  const TokenTable& tokens_;
  Metrics& metrics_;
  HttpServerOptions opts_;
  struct Loop {
    net::io_context ctx{1};  // a hint: one thread runs it (posts from other threads stay safe)
    net::executor_work_guard<net::io_context::executor_type> busy = net::make_work_guard(ctx);  // run() waits when idle
  };
  static std::vector<std::unique_ptr<Loop>> make_loops(int n) {
    std::vector<std::unique_ptr<Loop>> out;
    for (int i = 0; i < std::max(1, n); ++i) out.push_back(std::make_unique<Loop>());
    return out;
  }
  std::vector<std::unique_ptr<Loop>> loops_ = make_loops(opts_.threads);
  size_t next_loop_ = 0;  // accept_loop only
  net::io_context& ioc_ = loops_[0]->ctx;
  ssl::context ssl_;
  tcp::acceptor acceptor_{ioc_};
  std::vector<std::thread> threads_;
};

HttpServer::HttpServer(ApiServer& api, const TokenTable& tokens, Metrics& metrics, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(api, tokens, metrics, std::move(options))) {}
HttpServer::~HttpServer() { stop(); }
Result<uint16_t> HttpServer::start() { return impl_->start(); }
void HttpServer::stop() { impl_->stop(); }

}  // namespace draplane::server
