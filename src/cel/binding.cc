#include "cel/binding.h"

namespace draplane::cel {

uint64_t attribute_hash(std::string_view domain, std::string_view name) {
  uint64_t h = 1469598103934665603ull;
  for (char c : domain) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  h ^= 0;
  h *= 1099511628211ull;
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

std::string attribute_key(std::string_view domain, std::string_view name) {
  std::string k;
  k.reserve(domain.size() + 1 + name.size());
  k.append(domain);
  k.push_back('\0');
  k.append(name);
  return k;
}

namespace {

using Impl = DeviceBinding::Impl;

std::string_view keep(Impl& impl, std::string s) {
  impl.strings.push_back(std::move(s));
  return impl.strings.back();
}

// Splits a qualified name into (domain, id), placing bare names in the driver's domain.
std::pair<std::string, std::string> split_name(const std::string& qualified, const std::string& driver) {
  size_t slash = qualified.find('/');
  if (slash == std::string::npos) return {driver, qualified};
  return {qualified.substr(0, slash), qualified.substr(slash + 1)};
}

MapData* domain_map(Impl& impl, MapData& outer, const std::string& domain) {
  for (auto& [k, v] : outer.entries) {
    if (k.str() == domain) return const_cast<MapData*>(&v.map_data());
  }
  impl.inner_maps.emplace_back();
  MapData* m = &impl.inner_maps.back();
  outer.entries.emplace_back(Value::borrowed_string(keep(impl, domain)), Value::borrowed_map(m));
  return m;
}

void build_index(const MapData& outer, std::vector<Impl::IndexEntry>& index, std::string& keys) {
  size_t n = 0, bytes = 0;
  for (const auto& [k, v] : outer.entries) {
    n += v.map_data().entries.size();
    for (const auto& [nk, nv] : v.map_data().entries) bytes += k.n + 1 + nk.n;
  }
  keys.reserve(bytes);  // exact: the views below stay valid
  size_t cap = 4;
  while (cap < n * 2) cap <<= 1;
  index.assign(cap, {});
  for (const auto& [dk, dv] : outer.entries) {
    for (const auto& [nk, nv] : dv.map_data().entries) {
      uint64_t h = attribute_hash(dk.str(), nk.str());
      size_t k = h & (cap - 1);
      while (index[k].value) k = (k + 1) & (cap - 1);
      size_t at = keys.size();
      keys.append(dk.str());
      keys.push_back('\0');
      keys.append(nk.str());
      index[k] = {h, std::string_view(keys).substr(at), &nv};
    }
  }
}

}  // namespace

DeviceBinding::DeviceBinding(std::string_view driver, const api::Device& device) : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  impl.driver = std::string(driver);
  impl.allow_multiple_allocations = device.allowMultipleAllocations.value_or(false);
  impl.attributes.default_empty = true;
  impl.capacity.default_empty = true;
  for (const auto& [qualified, attr] : device.attributes) {
    auto [domain, id] = split_name(qualified, impl.driver);
    Value v;
    if (attr.int_) {
      v = Value::integer(*attr.int_);
    } else if (attr.bool_) {
      v = Value::boolean(*attr.bool_);
    } else if (attr.string_) {
      v = Value::borrowed_string(keep(impl, *attr.string_));
    } else if (attr.version) {
      auto sv = Semver::parse(*attr.version);
      if (!sv) {
        if (impl.bind_error.empty()) {
          impl.bind_error = "attribute " + qualified + ": parse semantic version: " + *attr.version;
        }
        continue;
      }
      impl.semvers.push_back(std::move(*sv));
      v = Value::borrowed_semver(&impl.semvers.back());
    } else {
      if (impl.bind_error.empty()) impl.bind_error = "attribute " + qualified + ": unsupported attribute value";
      continue;
    }
    MapData* m = domain_map(impl, impl.attributes, domain);
    m->entries.emplace_back(Value::borrowed_string(keep(impl, id)), std::move(v));
  }
  for (const auto& [qualified, cap] : device.capacity) {
    auto [domain, id] = split_name(qualified, impl.driver);
    impl.quantities.push_back(cap.value);
    MapData* m = domain_map(impl, impl.capacity, domain);
    m->entries.emplace_back(Value::borrowed_string(keep(impl, id)), Value::borrowed_quantity(&impl.quantities.back()));
  }
  build_index(impl.attributes, impl.attr_index, impl.attr_keys);
  build_index(impl.capacity, impl.cap_index, impl.cap_keys);
}

DeviceBinding::~DeviceBinding() = default;
DeviceBinding::DeviceBinding(DeviceBinding&&) noexcept = default;
DeviceBinding& DeviceBinding::operator=(DeviceBinding&&) noexcept = default;

}  // namespace draplane::cel
