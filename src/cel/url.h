// URLs for the Kubernetes CEL URL library (k8s.io/apiserver/pkg/cel/library/
// urls.go) and the format library's "uri" format, with the semantics of the Go
// net/url functions they call: url.ParseRequestURI (validation: an absolute URI
// or an absolute path) and url.Parse (the value), URL.EscapedPath, Hostname,
// Port, Query and String. Bracketed hosts must hold an IPv6 address, as Go
// 1.24.8 and later require.
//
// Plain values and pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace draplane::cel {

struct Url {
  std::string scheme;  // lower-cased
  std::string opaque;  // "mailto:x@y" -> "x@y"
  std::string username, password;
  bool has_user = false, has_password = false;
  std::string host;  // unescaped, with the port: "example.com:80", "[::1]:80"
  std::string path, raw_path;
  bool omit_host = false, force_query = false;
  std::string raw_query;
  std::string fragment, raw_fragment;
};

namespace url {

// url.Parse. False with Go's message: `parse "https://a:b:c/": invalid port ":c" after host`.
bool parse(std::string_view s, Url& out, std::string& err);
// url.ParseRequestURI (no fragment splitting; relative references rejected).
bool parse_request_uri(std::string_view s, Url& out, std::string& err);

std::string escaped_path(const Url& u);
std::string hostname(const Url& u);  // without brackets: "::1"
std::string port(const Url& u);      // "" when absent
// URL.Query(): keys and values unescaped ('+' is a space), in first-seen key
// order; malformed pairs are skipped, as Go does.
std::vector<std::pair<std::string, std::vector<std::string>>> query(const Url& u);
// URL.String(), which the library's equality compares.
std::string to_string(const Url& u);

}  // namespace url
}  // namespace draplane::cel
