// IP addresses and prefixes for the Kubernetes CEL IP and CIDR libraries
// (k8s.io/apiserver/pkg/cel/library/{ip,cidr}.go), with the semantics of Go's
// net/netip, which those libraries use: parsing (no leading zeros in IPv4
// octets, RFC 4291 IPv6 text), canonical printing (RFC 5952), the address-class
// predicates, prefix containment and masking.
//
// Plain values and pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace draplane::cel {

struct IpAddr {
  std::array<uint8_t, 16> bytes{};  // IPv4 uses bytes[0..3]
  bool v4 = false;

  int bit_len() const { return v4 ? 32 : 128; }
  bool operator==(const IpAddr& o) const = default;
};

// A prefix keeps the address as written ("192.168.0.1/24" is not masked), as
// netip.Prefix does.
struct IpPrefix {
  IpAddr addr;
  int bits = 0;
  bool operator==(const IpPrefix& o) const = default;
};

namespace net {

// netip.ParseAddr itself: zones are accepted (`zoned` reports one) and
// IPv4-mapped addresses too. False with Go's message (`ParseAddr("1.2.3"): IPv4
// address too short`).
bool parse_addr(std::string_view s, IpAddr& out, bool& zoned, std::string& err);

// Kubernetes' parseIPAddr: netip.ParseAddr, then neither a zone nor an
// IPv4-mapped IPv6 address. False with the library's message, e.g.
//   IP Address "127.0.0.256" parse error during conversion from string:
//   ParseAddr("127.0.0.256"): IPv4 field has value >255
bool parse_ip(std::string_view s, IpAddr& out, std::string& err);

// Kubernetes' parseCIDR: netip.ParsePrefix, then no IPv4-mapped IPv6 address.
// False with the message cidr() reports ("network address parse error during
// conversion from string: ...").
bool parse_cidr(std::string_view s, IpPrefix& out, std::string& err);

// netip.Addr.String() / netip.Prefix.String().
std::string to_string(const IpAddr& a);
std::string to_string(const IpPrefix& p);

// The prefix with its host bits cleared (netip.Prefix.Masked).
IpPrefix masked(const IpPrefix& p);
// netip.Prefix.Contains: same family and the first `bits` bits equal.
bool contains(const IpPrefix& p, const IpAddr& a);
// The library's containsCIDR: p.Masked() == PrefixFrom(other.Addr(), p.Bits())
// && p.Bits() <= other.Bits(). PrefixFrom does not mask, so this is true only
// when `other`'s address equals p's network address bits-for-bits (Kubernetes'
// behaviour, kept: cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') is false).
bool contains_cidr(const IpPrefix& p, const IpPrefix& other);

bool is_unspecified(const IpAddr& a);
bool is_loopback(const IpAddr& a);
bool is_link_local_multicast(const IpAddr& a);
bool is_link_local_unicast(const IpAddr& a);
bool is_global_unicast(const IpAddr& a);

}  // namespace net
}  // namespace draplane::cel
