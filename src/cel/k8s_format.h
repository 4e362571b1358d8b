// The named formats of the Kubernetes CEL format library
// (k8s.io/apiserver/pkg/cel/library/format.go): format.named(name) and
// format.<name>() return one of these; <format>.validate(s) runs its check and
// returns the list of problems (empty when valid), with the messages of the
// Kubernetes validation functions each format calls (apimachinery's
// NameIsDNSLabel, IsQualifiedName, IsValidLabelValue, ... and kube-openapi's
// strfmt uuid/byte/date/datetime, url.ParseRequestURI for uri).
//
// The table is static and immutable; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace draplane::cel {

struct NamedFormat {
  const char* key;   // the format.named() key and function suffix: "dns1123Label"
  const char* name;  // upstream Format.Name: "DNS1123Label"
  std::vector<std::string> (*validate)(std::string_view s);
};

namespace format {

// All formats, in upstream's documentation order.
const std::vector<NamedFormat>& all();
// The format with key `key`, or null.
const NamedFormat* find(std::string_view key);

}  // namespace format
}  // namespace draplane::cel
