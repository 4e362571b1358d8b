// Tiny builders for allocator tests (after upstream allocator_testing.go).
#pragma once

#include <string>
#include <vector>

#include "api/types.h"

namespace draplane::alloc::testing {

inline api::Node node(const std::string& name, std::map<std::string, std::string> labels = {}) {
  api::Node n;
  n.metadata.name = name;
  n.metadata.labels = std::move(labels);
  return n;
}

inline api::DeviceClass device_class(const std::string& name, std::vector<std::string> selectors = {}) {
  api::DeviceClass c;
  c.metadata.name = name;
  for (auto& s : selectors) c.spec.selectors.push_back(api::DeviceSelector{api::CELDeviceSelector{s}});
  return c;
}

inline api::Device device(const std::string& name) {
  api::Device d;
  d.name = name;
  return d;
}

inline api::Device with_attr(api::Device d, const std::string& key, const std::string& value) {
  api::DeviceAttribute a;
  a.string_ = value;
  d.attributes[key] = a;
  return d;
}

inline api::Device with_int(api::Device d, const std::string& key, int64_t value) {
  api::DeviceAttribute a;
  a.int_ = value;
  d.attributes[key] = a;
  return d;
}

inline api::Device with_taint(api::Device d, const std::string& key, const std::string& value,
                              const std::string& effect) {
  d.taints.push_back(api::DeviceTaint{key, value, effect, ""});
  return d;
}

inline api::Device with_counters(api::Device d, const std::string& set,
                                 std::map<std::string, int64_t> counters) {
  api::DeviceCounterConsumption c;
  c.counterSet = set;
  for (auto& [k, v] : counters) c.counters[k] = api::Counter{api::Quantity::from_int(v)};
  d.consumesCounters.push_back(std::move(c));
  return d;
}

inline api::Device with_capacity(api::Device d, const std::string& name, int64_t value) {
  d.capacity[name] = api::DeviceCapacity{api::Quantity::from_int(value), std::nullopt};
  return d;
}

inline api::Device shareable(api::Device d) {
  d.allowMultipleAllocations = true;
  return d;
}

inline api::ResourceSlice slice(const std::string& name, const std::string& node_name, const std::string& pool,
                                std::vector<api::Device> devices, int64_t generation = 1, int64_t count = 1,
                                const std::string& driver = "driver-a") {
  api::ResourceSlice s;
  s.metadata.name = name;
  s.spec.driver = driver;
  s.spec.pool = api::ResourcePool{pool, generation, count};
  if (!node_name.empty()) s.spec.nodeName = node_name;
  else s.spec.allNodes = true;
  s.spec.devices = std::move(devices);
  return s;
}

inline api::ResourceSlice counter_slice(const std::string& name, const std::string& node_name, const std::string& pool,
                                        const std::string& set, std::map<std::string, int64_t> counters,
                                        int64_t count = 2) {
  api::ResourceSlice s = slice(name, node_name, pool, {}, 1, count);
  api::CounterSet cs;
  cs.name = set;
  for (auto& [k, v] : counters) cs.counters[k] = api::Counter{api::Quantity::from_int(v)};
  s.spec.sharedCounters.push_back(std::move(cs));
  return s;
}

inline api::DeviceRequest request(const std::string& name, const std::string& cls, int64_t count = 1,
                                  std::vector<std::string> selectors = {}) {
  api::DeviceRequest r;
  r.name = name;
  api::ExactDeviceRequest e;
  e.deviceClassName = cls;
  e.allocationMode = api::kAllocationModeExactCount;
  e.count = count;
  for (auto& s : selectors) e.selectors.push_back(api::DeviceSelector{api::CELDeviceSelector{s}});
  r.exactly = std::move(e);
  return r;
}

inline api::DeviceRequest all_request(const std::string& name, const std::string& cls) {
  api::DeviceRequest r = request(name, cls);
  r.exactly->allocationMode = api::kAllocationModeAll;
  r.exactly->count.reset();
  return r;
}

inline api::ResourceClaim claim(const std::string& name, std::vector<api::DeviceRequest> requests,
                                std::vector<api::DeviceConstraint> constraints = {}) {
  api::ResourceClaim c;
  c.metadata.name = name;
  c.metadata.namespace_ = "default";
  c.spec.devices.requests = std::move(requests);
  c.spec.devices.constraints = std::move(constraints);
  return c;
}

inline api::DeviceConstraint match_attribute(const std::string& attr, std::vector<std::string> requests = {}) {
  api::DeviceConstraint c;
  c.requests = std::move(requests);
  c.matchAttribute = attr;
  return c;
}

inline api::DeviceConstraint distinct_attribute(const std::string& attr, std::vector<std::string> requests = {}) {
  api::DeviceConstraint c;
  c.requests = std::move(requests);
  c.distinctAttribute = attr;
  return c;
}

inline api::ResourceClaim allocated(const std::string& name, std::vector<std::string> devices,
                                    const std::string& pool = "pool-1") {
  api::ResourceClaim c = claim(name, {request("req-0", "class-a", static_cast<int64_t>(devices.size()))});
  api::AllocationResult ar;
  for (auto& d : devices) {
    api::DeviceRequestAllocationResult r;
    r.request = "req-0";
    r.driver = "driver-a";
    r.pool = pool;
    r.device = d;
    ar.devices.results.push_back(r);
  }
  c.status.allocation = ar;
  return c;
}

// "request pool/device" per result, for compact expectations.
inline std::vector<std::string> picks(const api::AllocationResult& ar) {
  std::vector<std::string> out;
  for (const auto& r : ar.devices.results) out.push_back(r.request + " " + r.pool + "/" + r.device);
  return out;
}

}  // namespace draplane::alloc::testing
