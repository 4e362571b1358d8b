#include "alloc/capacity.h"

namespace draplane::alloc {
namespace {

using api::Quantity;

Quantity round_up_range(const Quantity& requested, const api::CapacityRequestPolicyRange& range) {
  if (requested < *range.min) return *range.min;
  if (!range.step) return requested;
  // Upstream works on Value() (integers rounded up) and returns a BinarySI integer.
  int64_t req = requested.value();
  int64_t step = range.step->value();
  int64_t min = range.min->value();
  if (step <= 0) return requested;
  int64_t added = req - min;
  int64_t n = added / step + (added % step != 0 ? 1 : 0);
  return Quantity::from_int(min + step * n, Quantity::Format::kBinarySI);
}

Quantity round_up_values(const Quantity& requested, const std::vector<Quantity>& values) {
  for (const auto& v : values) {
    if (requested <= v) return v;
  }
  return requested;
}

Quantity consumed_one(const Quantity* requested, const api::DeviceCapacity& cap) {
  const auto& policy = cap.requestPolicy;
  if (requested == nullptr) {
    if (policy && policy->default_) return *policy->default_;
    return cap.value;
  }
  if (!policy) return *requested;
  if (policy->validRange && policy->validRange->min) return round_up_range(*requested, *policy->validRange);
  if (!policy->validValues.empty()) return round_up_values(*requested, policy->validValues);
  return *requested;
}

bool violates_policy(const Quantity& v, const std::optional<api::CapacityRequestPolicy>& policy) {
  if (!policy) return false;
  if (policy->default_ && v == *policy->default_) return false;
  if (policy->validRange) {
    const auto& r = *policy->validRange;
    if (r.max && v > *r.max) return true;
    if (r.step && r.min) {
      int64_t step = r.step->value();
      if (step > 0 && (v.value() - r.min->value()) % step != 0) return true;
    }
    return false;
  }
  if (!policy->validValues.empty()) {
    for (const auto& x : policy->validValues) {
      if (v == x) return false;
    }
    return true;
  }
  return false;
}

const Quantity* requested_of(const api::CapacityRequirements* requests, const std::string& name) {
  if (requests == nullptr) return nullptr;
  auto it = requests->requests.find(name);
  return it == requests->requests.end() ? nullptr : &it->second;
}

__int128 lookup(const std::map<std::string, __int128>* m, const std::string& name) {
  if (m == nullptr) return 0;
  auto it = m->find(name);
  return it == m->end() ? 0 : it->second;
}

}  // namespace

std::map<std::string, Quantity> consumed_capacity(const api::Device& device,
                                                  const api::CapacityRequirements* requests) {
  std::map<std::string, Quantity> out;
  for (const auto& [name, cap] : device.capacity) out.emplace(name, consumed_one(requested_of(requests, name), cap));
  return out;
}

bool capacity_fits(const api::Device& device, const api::CapacityRequirements* requests,
                   const std::map<std::string, __int128>* allocated,
                   const std::map<std::string, __int128>* allocating) {
  if (requests != nullptr) {
    for (const auto& [name, q] : requests->requests) {
      if (!device.capacity.count(name)) return false;
    }
  }
  for (const auto& [name, cap] : device.capacity) {
    Quantity consumed = consumed_one(requested_of(requests, name), cap);
    if (violates_policy(consumed, cap.requestPolicy)) return false;
    __int128 total = consumed.nanos() + lookup(allocated, name) + lookup(allocating, name);
    if (total > cap.value.nanos()) return false;
  }
  return true;
}

}  // namespace draplane::alloc
