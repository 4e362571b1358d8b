// Name and value formats with upstream's exact messages
// (k8s.io/apimachinery/pkg/util/validation and pkg/api/validate/content).
// Hand-written matchers instead of regexes: the api module does not link RE2, and
// each grammar here is a few lines.
#include <string>

#include "api/validation_core.h"

namespace draplane::api::vcore {
namespace {

constexpr const char* kDns1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
constexpr const char* kDns1123LabelErrMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character";
constexpr const char* kDns1035LabelFmt = "[a-z]([-a-z0-9]*[a-z0-9])?";
constexpr const char* kDns1035LabelErrMsg =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character";
constexpr const char* kDns1123SubdomainFmt =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr const char* kDns1123SubdomainErrMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";
constexpr const char* kLabelKeyFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr const char* kLabelKeyErrMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr const char* kLabelValueFmt = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr const char* kLabelValueErrMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character";
constexpr const char* kCIdentifierFmt = "[A-Za-z_][A-Za-z0-9_]*";
constexpr const char* kCIdentifierErrMsg =
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_'";

std::string max_len_error(size_t n, bool bytes_unit) {
  return "must be no more than " + std::to_string(n) + (bytes_unit ? " bytes" : " characters");
}

std::string regex_error(std::string msg, const char* fmt, std::initializer_list<const char*> examples) {
  if (examples.size() == 0) return msg + " (regex used for validation is '" + fmt + "')";
  msg += " (e.g. ";
  bool first = true;
  for (const char* e : examples) {
    if (!first) msg += " or ";
    first = false;
    msg += std::string("'") + e + "', ";
  }
  msg += std::string("regex used for validation is '") + fmt + "')";
  return msg;
}

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool matches_dns_label(std::string_view v) {
  if (v.empty() || !is_lower_alnum(v.front()) || !is_lower_alnum(v.back())) return false;
  for (char c : v) {
    if (!is_lower_alnum(c) && c != '-') return false;
  }
  return true;
}

bool matches_dns_subdomain(std::string_view v) {
  size_t start = 0;
  while (true) {
    size_t dot = v.find('.', start);
    std::string_view part = v.substr(start, dot == std::string_view::npos ? v.npos : dot - start);
    if (!matches_dns_label(part)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool matches_label_key_name(std::string_view v) {
  if (v.empty() || !is_alnum(v.front()) || !is_alnum(v.back())) return false;
  for (char c : v) {
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// numeric identifier: 0|[1-9]\d*
bool numeric_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!is_digit(c)) return false;
  }
  return s.size() == 1 || s[0] != '0';
}

// pre-release identifier: 0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*
bool prerelease_identifier(std::string_view s) {
  if (s.empty()) return false;
  bool all_digits = true;
  for (char c : s) {
    if (!is_alnum(c) && c != '-') return false;
    if (!is_digit(c)) all_digits = false;
  }
  return all_digits ? numeric_identifier(s) : true;
}

bool build_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!is_alnum(c) && c != '-') return false;
  }
  return true;
}

template <typename Pred>
bool dot_separated(std::string_view s, Pred pred) {
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    if (!pred(s.substr(start, dot == std::string_view::npos ? s.npos : dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

std::vector<std::string> dns1123_label_errors(std::string_view value, bool bytes_unit) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back(max_len_error(63, bytes_unit));
  if (!matches_dns_label(value)) {
    if (matches_dns_subdomain(value)) {
      errs.push_back("must not contain dots");
    } else {
      errs.push_back(regex_error(kDns1123LabelErrMsg, kDns1123LabelFmt, {"my-name", "123-abc"}));
    }
  }
  return errs;
}

std::vector<std::string> dns1123_subdomain_errors(std::string_view value, bool bytes_unit) {
  std::vector<std::string> errs;
  if (value.size() > 253) errs.push_back(max_len_error(253, bytes_unit));
  if (!matches_dns_subdomain(value)) {
    errs.push_back(regex_error(kDns1123SubdomainErrMsg, kDns1123SubdomainFmt, {"example.com"}));
  }
  return errs;
}

std::vector<std::string> dns1035_label_errors(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back(max_len_error(63, false));
  if (!matches_dns_label(value) || is_digit(value.front())) {
    errs.push_back(regex_error(kDns1035LabelErrMsg, kDns1035LabelFmt, {"my-name", "abc-123"}));
  }
  return errs;
}

std::vector<std::string> qualified_name_errors(std::string_view value) {
  std::vector<std::string> errs;
  std::string_view name = value;
  size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      errs.push_back("a valid label key " +
                     regex_error(kLabelKeyErrMsg, kLabelKeyFmt, {"MyName", "my.name", "123-abc"}) +
                     " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
      return errs;
    }
    std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else {
      for (auto& m : dns1123_subdomain_errors(prefix, true)) errs.push_back("prefix part " + m);
    }
  }
  if (name.empty()) {
    errs.push_back("name part must be non-empty");
  } else if (name.size() > 63) {
    errs.push_back("name part " + max_len_error(63, true));
  }
  if (!matches_label_key_name(name)) {
    errs.push_back("name part " +
                   regex_error(kLabelKeyErrMsg, kLabelKeyFmt, {"MyName", "my.name", "123-abc"}));
  }
  return errs;
}

std::vector<std::string> label_value_errors(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back(max_len_error(63, true));
  if (!value.empty() && !matches_label_key_name(value)) {
    errs.push_back(regex_error(kLabelValueErrMsg, kLabelValueFmt, {"MyValue", "my_value", "12345"}));
  }
  return errs;
}

std::vector<std::string> c_identifier_errors(std::string_view value) {
  bool ok = !value.empty() && (std::isalpha(static_cast<unsigned char>(value[0])) || value[0] == '_');
  for (char c : value) {
    if (!is_alnum(c) && c != '_') ok = false;
  }
  if (ok) return {};
  return {regex_error(kCIdentifierErrMsg, kCIdentifierFmt, {"my_name", "MY_NAME", "MyName"})};
}

bool is_semver(std::string_view v) {
  std::string_view build;
  size_t plus = v.find('+');
  if (plus != std::string_view::npos) {
    build = v.substr(plus + 1);
    v = v.substr(0, plus);
    if (!dot_separated(build, build_identifier)) return false;
  }
  size_t dash = v.find('-');
  if (dash != std::string_view::npos) {
    if (!dot_separated(v.substr(dash + 1), prerelease_identifier)) return false;
    v = v.substr(0, dash);
  }
  int parts = 0;
  bool ok = dot_separated(v, [&](std::string_view p) {
    ++parts;
    return numeric_identifier(p);
  });
  return ok && parts == 3;
}

bool is_normalized_uuid(std::string_view v) {
  if (v.size() != 36) return false;
  for (size_t i = 0; i < v.size(); ++i) {
    char c = v[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!is_digit(c) && !(c >= 'a' && c <= 'f')) {
      return false;
    }
  }
  return true;
}

std::vector<std::string> name_is_dns_subdomain(std::string_view name) {
  return dns1123_subdomain_errors(name);
}
std::vector<std::string> name_is_dns_label(std::string_view name) { return dns1123_label_errors(name); }

std::string truncate_key(std::string_view key, size_t max_len) {
  if (max_len < 16) max_len = 16;
  if (key.size() <= max_len) return std::string(key);
  size_t remaining = max_len - 3;
  return std::string(key.substr(0, (remaining + 1) / 2)) + "..." +
         std::string(key.substr(key.size() - remaining / 2));
}

}  // namespace draplane::api::vcore
