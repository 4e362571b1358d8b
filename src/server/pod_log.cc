// GET pods/<name>/log: kube-apiserver proxies it to the kubelet of the pod's
// node; draplane does the same to the node agent's log endpoint
// (node/kubelet_logs.h), found in the Node's status: the InternalIP address and
// status.daemonEndpoints.kubeletEndpoint.Port. Errors are worded as Kubernetes
// words them (a pod without a node, a container that must be named, ...).
#include <algorithm>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "common/cloexec.h"
#include "server/internal/impl_class.h"

namespace draplane::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

std::string q(const Request& req, const char* k) {
  auto it = req.query.find(k);
  return it == req.query.end() ? std::string() : it->second;
}

bool all_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

// One plain-HTTP GET with a deadline; the status code and body, or a transport error.
Result<std::pair<int, std::string>> http_get(const std::string& host, const std::string& port,
                                             const std::string& target) {
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  beast::error_code ec;
  asio::ip::tcp::resolver resolver(ioc);
  auto endpoints = resolver.resolve(host, port, ec);
  if (ec) return Status(Code::kUnavailable, "resolve " + host + ": " + ec.message());
  stream.expires_after(std::chrono::seconds(10));
  stream.connect(endpoints, ec);
  if (ec) return Status(Code::kUnavailable, "dial tcp " + host + ":" + port + ": " + ec.message());
  set_cloexec(stream.socket().native_handle());  // Asio opens sockets without it
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, host);
  http::write(stream, req, ec);
  if (ec) return Status(Code::kUnavailable, "write: " + ec.message());
  beast::flat_buffer buf;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 * 1024 * 1024);
  http::read(stream, buf, parser, ec);
  if (ec) return Status(Code::kUnavailable, "read: " + ec.message());
  return std::make_pair(static_cast<int>(parser.get().result_int()), parser.get().body());
}

}  // namespace

Reply ApiServer::Impl::pod_log(const Request& req, const Target& t) {
  if (auto e = authorize(req, t, "get", nullptr, nullptr)) return error_reply(*e);
  auto pod = load(t.key());
  if (!pod.has_value()) {
    if (pod.error().code() == Code::kNotFound) return error_reply(not_found(*t.resource, t.name));
    return error_reply(from_code(pod.error().code(), pod.error().message()));
  }
  for (const char* k : {"tailLines", "limitBytes", "sinceSeconds"}) {
    std::string v = q(req, k);
    if (!v.empty() && !all_digits(v)) {
      return error_reply(bad_request(std::string(k) + ": Invalid value: \"" + v + "\": must be a non-negative integer"));
    }
  }
  std::string container = q(req, "container");
  std::vector<std::string> names;
  if (const JsonValue* cs = find(pod->object, {"spec", "containers"}); cs && cs->IsArray()) {
    for (const auto& c : cs->GetArray()) names.push_back(get_string(c, {"name"}));
  }
  if (container.empty()) {
    if (names.size() != 1) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : " ") + n;
      return error_reply(bad_request("a container name must be specified for pod " + t.name + ", choose one of: [" +
                                     list + "]"));
    }
    container = names[0];
  } else if (std::find(names.begin(), names.end(), container) == names.end()) {
    return error_reply(bad_request("container " + container + " is not valid for pod " + t.name));
  }
  std::string node = get_string(pod->object, {"spec", "nodeName"});
  if (node.empty()) return error_reply(bad_request("pod " + t.name + " does not have a host assigned"));
  const ResourceInfo* nodes = find_resource("", "v1", "nodes");
  auto n = load(nodes->key_prefix() + node);
  if (!n.has_value()) {
    return error_reply(bad_request("pod " + t.name + ": node " + node + " not found: " + n.error().message()));
  }
  std::string host;
  if (const JsonValue* as = find(n->object, {"status", "addresses"}); as && as->IsArray()) {
    for (const auto& a : as->GetArray()) {
      if (get_string(a, {"type"}) == "InternalIP" && host.empty()) host = get_string(a, {"address"});
    }
  }
  const JsonValue* port = find(n->object, {"status", "daemonEndpoints", "kubeletEndpoint", "Port"});
  if (host.empty() || !port || !port->IsInt() || port->GetInt() <= 0) {
    return error_reply(bad_request("node " + node + " publishes no log endpoint (status.addresses InternalIP and "
                                   "status.daemonEndpoints.kubeletEndpoint.Port)"));
  }
  std::string target = "/containerLogs/" + t.namespace_ + "/" + t.name + "/" + container;
  std::string sep = "?";
  for (const char* k : {"tailLines", "limitBytes", "previous"}) {
    std::string v = q(req, k);
    if (!v.empty()) {
      target += sep + k + "=" + v;
      sep = "&";
    }
  }
  auto r = http_get(host, std::to_string(port->GetInt()), target);
  if (!r.has_value()) {
    ApiError e = from_code(Code::kUnavailable, "Get \"http://" + host + ":" + std::to_string(port->GetInt()) + target +
                                                   "\": " + r.error().message());
    return error_reply(e);
  }
  auto [code, body] = *r;
  if (code == 200) {
    Reply out;
    out.code = 200;
    out.content_type = "text/plain";
    out.body = std::move(body);
    return out;
  }
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
  if (code == 404) {
    ApiError e = from_code(Code::kNotFound, body.empty() ? "container log not found" : body);
    return error_reply(e);
  }
  return error_reply(bad_request(body.empty() ? "the node answered " + std::to_string(code) : body));
}

}  // namespace draplane::server
