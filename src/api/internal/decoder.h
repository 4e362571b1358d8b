// Typed decoding of JsonValue trees into the object model, with field paths.
//
// A Decoder collects strict-decoding problems (unknown and duplicate fields) and
// stops at the first type error. Paths are written as Kubernetes' strict decoder
// writes them: "spec.devices.requests[0].exactly.cout"; map keys join with '.'.
//
// Thread-compatible; one Decoder per document.
#pragma once

#include <map>
#include <optional>
#include <tuple>
#include <type_traits>
#include <unordered_set>
#include <string>
#include <string_view>
#include <vector>

#include "api/internal/json_value.h"
#include "api/internal/fields_core.h"
#include "api/internal/fields_resource.h"
#include "api/types.h"

namespace draplane::api::internal {

// Decodes one parsed root value as decode_object (dropped null) or
// decode_object_lenient (unknown and duplicate fields listed in *dropped) decode
// a text holding only that value: List expansion, kind dispatch, conversion.
Result<Object> decode_single(JsonValue root, std::vector<std::string>* dropped);

// A field path ("spec.devices.requests[0].exactly"), spelled out only when a
// message needs it: decoding builds one per member, so each level is a link to
// its parent on the caller's stack instead of a string (an allocation per field
// of every object decoded). A FieldPath must not outlive its parent or the key it
// views; the decoder's recursion guarantees both.
class FieldPath {
 public:
  // A root: "" for a whole document, or a named start ("spec").
  FieldPath(const char* root = "") : key_(root) {}
  FieldPath(const FieldPath& parent, std::string_view key) : parent_(&parent), key_(key) {}
  FieldPath(const FieldPath& parent, size_t index) : parent_(&parent), index_(index), is_index_(true) {}

  bool empty() const { return parent_ == nullptr && key_.empty(); }
  std::string str() const {
    std::string out;
    append_to(out);
    return out;
  }

 private:
  void append_to(std::string& out) const {
    if (parent_ != nullptr) parent_->append_to(out);
    if (is_index_) {
      out += '[';
      out += std::to_string(index_);
      out += ']';
      return;
    }
    if (!out.empty()) out += '.';
    out.append(key_);
  }

  const FieldPath* parent_ = nullptr;
  std::string_view key_;
  size_t index_ = 0;
  bool is_index_ = false;
};

inline std::string operator+(const FieldPath& path, std::string_view text) {
  std::string out = path.str();
  out.append(text);
  return out;
}
inline std::string operator+(std::string_view text, const FieldPath& path) {
  std::string out(text);
  out += path.str();
  return out;
}

class Decoder {
 public:
  // A member that the target type does not have (resource kinds are strict).
  void unknown_field(const FieldPath& path) { strict("unknown field \"" + path + "\""); }
  // True when the problem was added (not already listed).
  bool duplicate_field(const FieldPath& path) { return strict("duplicate field \"" + path + "\""); }
  // Takes back the problem just added (a repeated key that turns out unknown is
  // reported as unknown only, as sigs.k8s.io/json reports it).
  void retract_last() { strict_.pop_back(); }
  // A hard error (wrong type, bad quantity): the first one wins.
  void fail(std::string message) {
    if (!error_) error_ = Status(Code::kBadRequest, std::move(message));
  }
  void type_error(const FieldPath& path, std::string_view expected, const JsonValue& got);
  bool failed() const { return error_.has_value(); }

  // OK, the first hard error, or "strict decoding error: unknown field ..., ...".
  Status status() const;
  // The unknown and duplicate fields seen (`unknown field "spec.x"`), in order.
  const std::vector<std::string>& strict_problems() const { return strict_; }

 private:
  // As sigs.k8s.io/json collects them: each problem once, at most 100.
  bool strict(std::string problem) {
    if (strict_.size() >= 100) return false;
    for (const std::string& seen : strict_) {
      if (seen == problem) return false;
    }
    strict_.push_back(std::move(problem));
    return true;
  }

  std::vector<std::string> strict_;
  std::optional<Status> error_;
};

namespace detail {
// Whether members[i]'s key appeared before it. Objects are small (a linear scan
// beats building a set); only big maps (labels, attributes) use the index.
class DuplicateKeys {
 public:
  explicit DuplicateKeys(const std::vector<JsonMember>& members) : members_(members) {
    if (members.size() > kLinearLimit) {
      seen_.reserve(members.size());
    }
  }
  // Inlined into each object reader: it runs once per member of every object.
  [[gnu::always_inline]] bool seen_before(size_t i) {
    std::string_view key = members_[i].first;
    if (members_.size() <= kLinearLimit) {
      for (size_t j = 0; j < i; ++j) {
        if (members_[j].first == key) return true;
      }
      return false;
    }
    return !seen_.insert(key).second;
  }

 private:
  static constexpr size_t kLinearLimit = 24;
  const std::vector<JsonMember>& members_;
  std::unordered_set<std::string_view> seen_;
};
}  // namespace detail

// Calls f(key, value, path) for each member of an object (null: nothing), in
// order; f returns false for a member it does not know, which
// `on_unknown(member, path, duplicate_reported)` then gets. A key given twice is
// reported as a duplicate (before its value's problems) and still read, so
// that the last value wins as in Go's decoder (which decodes a repeated struct
// field into the same value: objects merge, scalars and arrays are replaced).
template <typename F, typename U>
void for_members(Decoder& d, const JsonValue& v, const FieldPath& path, F&& f, U&& on_unknown) {
  if (v.is_null()) return;
  if (!v.is_object()) {
    d.type_error(path, "object", v);
    return;
  }
  detail::DuplicateKeys duplicates(v.members);
  for (size_t i = 0; i < v.members.size(); ++i) {
    if (d.failed()) return;
    const JsonMember& member = v.members[i];
    FieldPath child(path, member.first);
    bool reported = duplicates.seen_before(i) && d.duplicate_field(child);
    if (!f(std::string_view(member.first), member.second, child)) on_unknown(member, child, reported);
  }
}

// Strict: unknown members are errors.
template <typename F>
void fields(Decoder& d, const JsonValue& v, const FieldPath& path, F&& f) {
  for_members(d, v, path, f, [&](const JsonMember&, const FieldPath& child, bool duplicate_reported) {
    if (duplicate_reported) d.retract_last();
    d.unknown_field(child);
  });
}

// Lenient: unknown members are kept in `extra` as a canonical JSON object (a
// repeated one by its last value).
template <typename F>
void fields_with_extra(Decoder& d, const JsonValue& v, const FieldPath& path, RawJson& extra,
                       F&& f) {
  std::vector<const JsonMember*> rest;
  // (A repeated one stays reported: the full Kubernetes type knows it.)
  for_members(d, v, path, f, [&](const JsonMember& member, const FieldPath&, bool) {
    for (const JsonMember*& kept : rest) {
      if (kept->first == member.first) {
        kept = &member;
        return;
      }
    }
    rest.push_back(&member);
  });
  extra.text = rest.empty() ? std::string() : canonical_json_object(std::move(rest));
}

// Scalars.
void read(Decoder& d, const JsonValue& v, const FieldPath& path, std::string& out);
void read(Decoder& d, const JsonValue& v, const FieldPath& path, int64_t& out);
void read(Decoder& d, const JsonValue& v, const FieldPath& path, int32_t& out);
void read(Decoder& d, const JsonValue& v, const FieldPath& path, bool& out);
void read(Decoder& d, const JsonValue& v, const FieldPath& path, Quantity& out);
void read(Decoder& d, const JsonValue& v, const FieldPath& path, RawJson& out);
// A metav1.Time: an RFC 3339 string (Go's time.Parse error otherwise), null unsets.
void read_time(Decoder& d, const JsonValue& v, const FieldPath& path, std::string& out);

// Structs: generic over their field tables (fields_*.h), defined below.
template <Described T>
void read(Decoder& d, const JsonValue& v, const FieldPath& path, T& out);

// Containers read as Go's encoding/json reads into a value that a repeated key
// already set (a fresh object's are empty): a pointer is decoded into, a
// slice's first elements are decoded into and the rest dropped, a map keeps
// the keys the new object does not give; null empties each.
template <typename T>
void read(Decoder& d, const JsonValue& v, const FieldPath& path, std::optional<T>& out) {
  if (v.is_null()) {
    out.reset();
    return;
  }
  if (!out) out.emplace();
  read(d, v, path, *out);
}

template <typename T>
void read(Decoder& d, const JsonValue& v, const FieldPath& path, std::vector<T>& out) {
  if (v.is_null()) {
    out.clear();
    return;
  }
  if (!v.is_array()) {
    d.type_error(path, "array", v);
    return;
  }
  out.resize(v.items.size());
  for (size_t i = 0; i < v.items.size() && !d.failed(); ++i) {
    read(d, v.items[i], FieldPath(path, i), out[i]);
  }
}

template <typename T>
void read(Decoder& d, const JsonValue& v, const FieldPath& path, std::map<std::string, T>& out) {
  if (v.is_null()) {
    out.clear();
    return;
  }
  for_members(
      d, v, path,
      [&](std::string_view key, const JsonValue& value, const FieldPath& child) {
        T& slot = out[std::string(key)];
        slot = T{};  // a map value is decoded fresh (Go: mapElem.SetZero)
        read(d, value, child, slot);
        return true;
      },
      [](const JsonMember&, const FieldPath&, bool) {});
}

// The descriptors' readers below are forced inline into each struct's reader:
// the name each one compares against is then a constant, and a struct's
// reader is the chain of `if (k == "name")` tests a hand-written one would be
// (codec_bench: no slower than the per-type functions it replaced).
namespace detail {

// One descriptor's reading of member `k` of an object of T at `parent`; false
// when `k` is not the descriptor's name.
template <typename T, typename M, bool OmitEmpty>
[[gnu::always_inline]] inline bool read_field(Decoder& d, const MemberField<T, M, OmitEmpty>& f,
                                              std::string_view k, const JsonValue& x,
                                              const FieldPath&, const FieldPath& c, T& out) {
  if (!is_name(k, f.name)) return false;
  M& slot = out.*(f.member);
  if constexpr (std::is_same_v<M, std::string>) {
    if (f.flags & kTime) {
      read_time(d, x, c, slot);
      return true;
    }
  }
  if constexpr (std::is_same_v<M, RawJson>) {
    if ((f.flags & kArray) && !x.is_null() && !x.is_array()) {
      d.type_error(c, "array", x);
      return true;
    }
  }
  read(d, x, c, slot);
  return true;
}

template <typename T>
[[gnu::always_inline]] inline bool read_field(Decoder&, const IgnoredField& f, std::string_view k,
                                              const JsonValue&, const FieldPath&, const FieldPath&,
                                              T&) {
  return is_name(k, f.name);
}

template <typename T, auto Read>
[[gnu::always_inline]] inline bool read_field(Decoder& d, const HookField<T, Read>& f,
                                              std::string_view k, const JsonValue& x,
                                              const FieldPath& parent, const FieldPath& c, T& out) {
  if (!is_name(k, f.name)) return false;
  Read(d, x, parent, c, out);
  return true;
}

template <typename... F, typename T>
bool read_field(Decoder& d, const NestedField<F...>& f, std::string_view k, const JsonValue& x,
                const FieldPath&, const FieldPath& c, T& out);

// Reads member `k` by the first descriptor of `table` that names it.
template <typename Table, typename T>
[[gnu::always_inline]] inline bool read_member(Decoder& d, const Table& table, std::string_view k,
                                               const JsonValue& x, const FieldPath& parent,
                                               const FieldPath& c, T& out) {
  return std::apply(
      [&](const auto&... f) __attribute__((always_inline)) {
        return (read_field(d, f, k, x, parent, c, out) || ...);
      },
      table);
}

// A nested object holds members of T itself; it is read strictly.
template <typename... F, typename T>
bool read_field(Decoder& d, const NestedField<F...>& f, std::string_view k, const JsonValue& x,
                const FieldPath&, const FieldPath& c, T& out) {
  if (!is_name(k, f.name)) return false;
  fields(d, x, c, [&](std::string_view nk, const JsonValue& nx, const FieldPath& nc) {
    return read_member(d, f.fields, nk, nx, c, nc, out);
  });
  return true;
}

}  // namespace detail

// Strict unless T keeps unknown members in `extra`.
template <Described T>
void read(Decoder& d, const JsonValue& v, const FieldPath& path, T& out) {
  auto member = [&](std::string_view k, const JsonValue& x, const FieldPath& c)
      __attribute__((always_inline)) {
    return detail::read_member(d, FieldTable<T>::fields, k, x, path, c, out);
  };
  if constexpr (HasExtra<T>) {
    fields_with_extra(d, v, path, out.extra, member);
  } else {
    fields(d, v, path, member);
  }
}

// A top-level kind: metadata/spec/status (typeMeta is read by the caller).
template <TopLevel T>
void read_object(Decoder& d, const JsonValue& v, T& out) {
  read(d, v, FieldPath(""), out);
}

}  // namespace draplane::api::internal
