// The Kubernetes CEL IP, CIDR and URL libraries (k8s.io/apiserver/pkg/cel/
// library/{ip,cidr,urls}.go), which the base environment enables for DRA
// selectors: ip(), isIP(), ip.isCanonical(), the address predicates, cidr(),
// isCIDR(), containsIP/containsCIDR/ip/masked/prefixLength, url(), isURL() and
// the URL accessors, plus string() of IPs and CIDRs.
#include "cel/functions.h"
#include "cel/overload_adder.h"
#include "cel/net.h"
#include "cel/url.h"

namespace draplane::cel::lib {

namespace {

const Type kB(TypeKind::kBool), kI(TypeKind::kInt), kS(TypeKind::kString), kIP(TypeKind::kIP),
    kCIDR(TypeKind::kCIDR), kURL(TypeKind::kURL);

// `make` applied to string `s` parsed with `Parse`, or the parse error.
template <typename T, bool (*Parse)(std::string_view, T&, std::string&), typename Make>
Value with_parsed(const Value& s, Make make) {
  T v;
  std::string err;
  if (!Parse(s.str(), v, err)) return Value::error(err);
  return make(v);
}
// Whether string a[0] parses with `Parse` (isIP, isCIDR).
template <typename T, bool (*Parse)(std::string_view, T&, std::string&)>
Value parses(const Value* a) {
  T v;
  std::string err;
  return Value::boolean(Parse(a[0].str(), v, err));
}
constexpr auto parse_ip = net::parse_ip;
constexpr auto parse_cidr = net::parse_cidr;

Value ip(const Value* a) {
  return with_parsed<IpAddr, parse_ip>(a[0], [](const IpAddr& v) { return Value::ip(v); });
}
Value ip_is_canonical(const Value* a) {
  return with_parsed<IpAddr, parse_ip>(a[0], [&](const IpAddr& v) {
    return Value::boolean(net::to_string(v) == a[0].str());
  });
}
Value ip_string(const Value* a) { return Value::string(net::to_string(a[0].ip_data())); }
Value family(const Value* a) { return Value::integer(a[0].ip_data().v4 ? 4 : 6); }
Value is_unspecified(const Value* a) { return Value::boolean(net::is_unspecified(a[0].ip_data())); }
Value is_loopback(const Value* a) { return Value::boolean(net::is_loopback(a[0].ip_data())); }
Value is_ll_multicast(const Value* a) { return Value::boolean(net::is_link_local_multicast(a[0].ip_data())); }
Value is_ll_unicast(const Value* a) { return Value::boolean(net::is_link_local_unicast(a[0].ip_data())); }
Value is_global_unicast(const Value* a) { return Value::boolean(net::is_global_unicast(a[0].ip_data())); }

Value cidr(const Value* a) {
  return with_parsed<IpPrefix, parse_cidr>(a[0], [](const IpPrefix& p) { return Value::cidr(p); });
}
Value cidr_string(const Value* a) { return Value::string(net::to_string(a[0].cidr_data())); }
Value contains_ip(const Value* a) { return Value::boolean(net::contains(a[0].cidr_data(), a[1].ip_data())); }
// Upstream reports "no such overload" when the string does not parse; the
// parse error says more (docs/compat.md).
Value contains_ip_string(const Value* a) {
  return with_parsed<IpAddr, parse_ip>(a[1], [&](const IpAddr& v) {
    return Value::boolean(net::contains(a[0].cidr_data(), v));
  });
}
Value contains_cidr(const Value* a) {
  return Value::boolean(net::contains_cidr(a[0].cidr_data(), a[1].cidr_data()));
}
Value contains_cidr_string(const Value* a) {
  return with_parsed<IpPrefix, parse_cidr>(a[1], [&](const IpPrefix& p) {
    return Value::boolean(net::contains_cidr(a[0].cidr_data(), p));
  });
}
Value cidr_ip(const Value* a) { return Value::ip(a[0].cidr_data().addr); }
Value masked(const Value* a) { return Value::cidr(net::masked(a[0].cidr_data())); }
Value prefix_length(const Value* a) { return Value::integer(a[0].cidr_data().bits); }

// url(): validated with url.ParseRequestURI, then parsed with url.Parse (which
// keeps a fragment out of the path and query).
Value url_of(const Value* a) {
  Url checked, u;
  std::string err;
  if (!url::parse_request_uri(a[0].str(), checked, err) || !url::parse(a[0].str(), u, err)) {
    return Value::error("URL parse error during conversion from string: " + err);
  }
  return Value::url(std::move(u));
}
Value is_url(const Value* a) {
  Url u;
  std::string err;
  return Value::boolean(url::parse_request_uri(a[0].str(), u, err));
}
Value get_scheme(const Value* a) { return Value::string(a[0].url_data().scheme); }
Value get_host(const Value* a) { return Value::string(a[0].url_data().host); }
Value get_hostname(const Value* a) { return Value::string(url::hostname(a[0].url_data())); }
Value get_port(const Value* a) { return Value::string(url::port(a[0].url_data())); }
Value get_escaped_path(const Value* a) { return Value::string(url::escaped_path(a[0].url_data())); }
Value get_query(const Value* a) {
  MapData m;
  for (auto& [k, vs] : url::query(a[0].url_data())) {
    ListData l;
    for (auto& v : vs) l.push_back(Value::string(std::move(v)));
    m.entries.emplace_back(Value::string(k), Value::list(std::move(l)));
  }
  return Value::map(std::move(m));
}

}  // namespace

void register_net(std::vector<Overload>& out) {
  const OverloadAdder add(out);
  add("string_to_ip", "ip", false, {kS}, kIP, ip, true);
  add("is_ip", "isIP", false, {kS}, kB, parses<IpAddr, parse_ip>, true);
  add("ip_is_canonical", "ip.isCanonical", false, {kS}, kB, ip_is_canonical, true);
  add("ip_to_string", "string", false, {kIP}, kS, ip_string);
  add("ip_family", "family", true, {kIP}, kI, family);
  add("ip_is_unspecified", "isUnspecified", true, {kIP}, kB, is_unspecified);
  add("ip_is_loopback", "isLoopback", true, {kIP}, kB, is_loopback);
  add("ip_is_link_local_multicast", "isLinkLocalMulticast", true, {kIP}, kB, is_ll_multicast);
  add("ip_is_link_local_unicast", "isLinkLocalUnicast", true, {kIP}, kB, is_ll_unicast);
  add("ip_is_global_unicast", "isGlobalUnicast", true, {kIP}, kB, is_global_unicast);

  add("string_to_cidr", "cidr", false, {kS}, kCIDR, cidr, true);
  add("is_cidr", "isCIDR", false, {kS}, kB, parses<IpPrefix, parse_cidr>, true);
  add("cidr_to_string", "string", false, {kCIDR}, kS, cidr_string);
  add("cidr_contains_ip_string", "containsIP", true, {kCIDR, kS}, kB, contains_ip_string);
  add("cidr_contains_ip_ip", "containsIP", true, {kCIDR, kIP}, kB, contains_ip);
  add("cidr_contains_cidr_string", "containsCIDR", true, {kCIDR, kS}, kB, contains_cidr_string);
  add("cidr_contains_cidr", "containsCIDR", true, {kCIDR, kCIDR}, kB, contains_cidr);
  add("cidr_ip", "ip", true, {kCIDR}, kIP, cidr_ip);
  add("cidr_prefix_length", "prefixLength", true, {kCIDR}, kI, prefix_length);
  add("cidr_masked", "masked", true, {kCIDR}, kCIDR, masked);

  add("string_to_url", "url", false, {kS}, kURL, url_of, true);
  add("is_url_string", "isURL", false, {kS}, kB, is_url, true);
  add("url_get_scheme", "getScheme", true, {kURL}, kS, get_scheme);
  add("url_get_host", "getHost", true, {kURL}, kS, get_host);
  add("url_get_hostname", "getHostname", true, {kURL}, kS, get_hostname);
  add("url_get_port", "getPort", true, {kURL}, kS, get_port);
  add("url_get_escaped_path", "getEscapedPath", true, {kURL}, kS, get_escaped_path);
  add("url_get_query", "getQuery", true, {kURL}, Type::map(kS, Type::list(kS)), get_query);
}

}  // namespace draplane::cel::lib
