// ResourceClaim status validation (upstream validateResourceClaimStatusUpdate):
// reservedFor, allocation results and config, and driver-written device status.
#include <arpa/inet.h>

#include <set>

#include "api/validation_core.h"
#include "api/validation_kinds.h"

namespace draplane::api {
namespace {

// structured.SharedDeviceID's String(): driver/pool/device[/shareID].
std::string shared_device_id(const std::string& driver, const std::string& pool, const std::string& device,
                             const std::optional<std::string>& share_id) {
  std::string s = driver + "/" + pool + "/" + device;
  if (share_id) s += "/" + *share_id;
  return s;
}

FieldErrorList validate_consumer_ref(const ResourceClaimConsumerReference& ref, const FieldPath& path) {
  FieldErrorList errs;
  if (ref.resource.empty()) errs.push_back(field_required(path.child("resource")));
  if (ref.name.empty()) errs.push_back(field_required(path.child("name")));
  if (ref.uid.empty()) errs.push_back(field_required(path.child("uid")));
  return errs;
}

bool is_condition_reason(std::string_view r) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  auto alnum_us = [&](char c) { return alpha(c) || (c >= '0' && c <= '9') || c == '_'; };
  if (r.empty() || !alpha(r.front())) return false;
  if (r.size() > 1 && !alnum_us(r.back())) return false;
  for (char c : r) {
    if (!alnum_us(c) && c != ',' && c != ':') return false;
  }
  return true;
}

}  // namespace

// metav1validation.ValidateConditions.
FieldErrorList vcore::validate_conditions(const std::vector<Condition>& conditions, const FieldPath& path) {
  FieldErrorList errs;
  std::set<std::string> types;
  for (size_t i = 0; i < conditions.size(); ++i) {
    const auto& c = conditions[i];
    FieldPath p = path.index(i);
    append_errors(errs, vcore::validate_label_name(c.type, p.child("type")));
    if (c.status != "True" && c.status != "False" && c.status != "Unknown") {
      errs.push_back(field_not_supported(p.child("status"), c.status, {"False", "True", "Unknown"}));
    }
    if (c.observedGeneration < 0) {
      errs.push_back(field_invalid(p.child("observedGeneration"), c.observedGeneration,
                                   "must be greater than or equal to zero"));
    }
    if (c.lastTransitionTime.empty()) errs.push_back(field_required(p.child("lastTransitionTime"), "must be set"));
    if (c.reason.empty()) {
      errs.push_back(field_required(p.child("reason"), "must be set"));
    } else {
      if (!is_condition_reason(c.reason)) {
        errs.push_back(field_invalid(
            p.child("reason"), c.reason,
            "a condition reason must start with alphabetic character, optionally followed by a string of "
            "alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. "
            "'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used "
            "for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"));
      }
      if (c.reason.size() > 1024) errs.push_back(field_too_long(p.child("reason"), 1024));
    }
    if (c.message.size() > 32 * 1024) errs.push_back(field_too_long(p.child("message"), 32 * 1024));
    if (!types.insert(c.type).second) errs.push_back(field_duplicate(p.child("type"), c.type));
  }
  return errs;
}

namespace {

bool is_cidr(std::string_view s) {
  size_t slash = s.find('/');
  if (slash == std::string_view::npos) return false;
  std::string ip(s.substr(0, slash)), bits(s.substr(slash + 1));
  if (bits.empty() || bits.size() > 3) return false;
  for (char c : bits) {
    if (c < '0' || c > '9') return false;
  }
  int n = std::stoi(bits);
  unsigned char buf[16];
  if (inet_pton(AF_INET, ip.c_str(), buf) == 1) return n <= 32;
  if (inet_pton(AF_INET6, ip.c_str(), buf) == 1) return n <= 128;
  return false;
}

FieldErrorList validate_network_data(const std::optional<NetworkDeviceData>& nd, const FieldPath& path) {
  FieldErrorList errs;
  if (!nd) return errs;
  if (nd->interfaceName.size() > static_cast<size_t>(kNetworkDeviceDataInterfaceNameMaxLength)) {
    errs.push_back(field_too_long(path.child("interfaceName"), kNetworkDeviceDataInterfaceNameMaxLength));
  }
  if (nd->hardwareAddress.size() > static_cast<size_t>(kNetworkDeviceDataHardwareAddressMaxLength)) {
    errs.push_back(field_too_long(path.child("hardwareAddress"), kNetworkDeviceDataHardwareAddressMaxLength));
  }
  FieldPath ip = path.child("ips");
  if (nd->ips.size() > static_cast<size_t>(kNetworkDeviceDataMaxIPs)) {
    errs.push_back(field_too_many(ip, static_cast<int64_t>(nd->ips.size()), kNetworkDeviceDataMaxIPs));
    return errs;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < nd->ips.size(); ++i) {
    if (!is_cidr(nd->ips[i])) {
      errs.push_back(field_invalid(ip.index(i), nd->ips[i],
                                   "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)"));
    }
  }
  for (size_t i = 0; i < nd->ips.size(); ++i) {
    if (!seen.insert(nd->ips[i]).second) errs.push_back(field_duplicate(ip.index(i), nd->ips[i]));
  }
  return errs;
}

FieldErrorList validate_result(const DeviceRequestAllocationResult& r, const FieldPath& path,
                               const vcore::RequestNames& names) {
  FieldErrorList errs = vcore::validate_request_name_ref(r.request, path.child("request"), names);
  append_errors(errs, vcore::validate_driver_name(r.driver, path.child("driver")));
  append_errors(errs, vcore::validate_pool_name(r.pool, path.child("pool")));
  append_errors(errs, vcore::validate_device_name(r.device, path.child("device")));
  append_errors(errs, vcore::validate_binding_parameters(r.bindingConditions, r.bindingFailureConditions, path));
  for (size_t i = 0; i < r.tolerations.size(); ++i) {
    append_errors(errs, vcore::validate_device_toleration(r.tolerations[i], path.child("tolerations").index(i)));
  }
  if (r.shareID) append_errors(errs, vcore::validate_uid(*r.shareID, path.child("shareID")));
  return errs;
}

FieldErrorList validate_allocation(const AllocationResult& a, const FieldPath& path, const vcore::RequestNames& names) {
  FieldErrorList errs;
  FieldPath dp = path.child("devices");
  FieldPath rp = dp.child("results");
  const auto& results = a.devices.results;
  if (results.size() > static_cast<size_t>(kAllocationResultsMaxSize)) {
    errs.push_back(field_too_many(rp, static_cast<int64_t>(results.size()), kAllocationResultsMaxSize));
  } else {
    for (size_t i = 0; i < results.size(); ++i) append_errors(errs, validate_result(results[i], rp.index(i), names));
  }
  FieldPath cp = dp.child("config");
  const auto& config = a.devices.config;
  const size_t max_config = 2 * kDeviceConfigMaxSize;  // class + claim
  if (config.size() > max_config) {
    errs.push_back(field_too_many(cp, static_cast<int64_t>(config.size()), static_cast<int64_t>(max_config)));
  } else {
    for (size_t i = 0; i < config.size(); ++i) {
      FieldPath p = cp.index(i);
      const auto& source = config[i].source;
      if (source.empty()) {
        errs.push_back(field_required(p.child("source")));
      } else if (source != "FromClaim" && source != "FromClass") {
        errs.push_back(field_not_supported(p.child("source"), source, {"FromClaim", "FromClass"}));
      }
      append_errors(errs, vcore::validate_request_refs(config[i].requests, p.child("requests"), names));
      append_errors(errs, vcore::validate_opaque_config(config[i].opaque, p, false));
    }
  }
  if (a.nodeSelector) append_errors(errs, vcore::validate_node_selector(*a.nodeSelector, path.child("nodeSelector")));
  return errs;
}

FieldErrorList validate_device_status(const AllocatedDeviceStatus& d, const FieldPath& path,
                                      const std::set<std::string>& allocated) {
  FieldErrorList errs = vcore::validate_driver_name(d.driver, path.child("driver"));
  append_errors(errs, vcore::validate_pool_name(d.pool, path.child("pool")));
  append_errors(errs, vcore::validate_device_name(d.device, path.child("device")));
  if (d.shareID) append_errors(errs, vcore::validate_uid(*d.shareID, path.child("shareID")));
  std::string id = shared_device_id(d.driver, d.pool, d.device, d.shareID);
  if (!allocated.count(id)) {
    errs.push_back(field_invalid(path, BadValue::raw(id), "must be an allocated device in the claim"));
  }
  if (d.conditions.size() > static_cast<size_t>(kAllocatedDeviceStatusMaxConditions)) {
    errs.push_back(field_too_many(path.child("conditions"), static_cast<int64_t>(d.conditions.size()),
                                  kAllocatedDeviceStatusMaxConditions));
  }
  append_errors(errs, vcore::validate_conditions(d.conditions, path.child("conditions")));
  if (!d.data.empty()) {
    append_errors(errs, vcore::validate_raw_json_object(d.data, path.child("data"), false,
                                                        kAllocatedDeviceStatusDataMaxLength));
  }
  append_errors(errs, validate_network_data(d.networkData, path.child("networkData")));
  return errs;
}

}  // namespace

FieldErrorList validate_claim_status(const ResourceClaimStatus& status, const ResourceClaimStatus& old_status,
                                     bool claim_deleted, const DeviceClaim& spec_devices, const FieldPath& path) {
  FieldErrorList errs;
  vcore::RequestNames names = vcore::gather_request_names(spec_devices);
  FieldPath rp = path.child("reservedFor");
  const auto& reserved = status.reservedFor;
  if (reserved.size() > static_cast<size_t>(kResourceClaimReservedForMaxSize)) {
    errs.push_back(field_too_many(rp, static_cast<int64_t>(reserved.size()), kResourceClaimReservedForMaxSize));
  } else {
    for (size_t i = 0; i < reserved.size(); ++i) append_errors(errs, validate_consumer_ref(reserved[i], rp.index(i)));
    std::set<std::string> uids;
    for (size_t i = 0; i < reserved.size(); ++i) {
      if (!uids.insert(reserved[i].uid).second) errs.push_back(field_duplicate(rp.index(i), reserved[i].uid));
    }
  }

  std::set<std::string> allocated;
  if (status.allocation) {
    for (const auto& r : status.allocation->devices.results) {
      allocated.insert(shared_device_id(r.driver, r.pool, r.device, r.shareID));
    }
  }
  FieldPath dp = path.child("devices");
  std::set<std::string> device_ids;
  for (size_t i = 0; i < status.devices.size(); ++i) {
    append_errors(errs, validate_device_status(status.devices[i], dp.index(i), allocated));
  }
  for (size_t i = 0; i < status.devices.size(); ++i) {
    const auto& d = status.devices[i];
    std::string id = shared_device_id(d.driver, d.pool, d.device, d.shareID);
    if (!device_ids.insert(id).second) errs.push_back(field_duplicate(dp.index(i), BadValue::raw(id)));
  }

  if (!reserved.empty()) {
    if (!status.allocation) {
      errs.push_back(field_forbidden(rp, "may not be specified when `allocated` is not set"));
    } else if (claim_deleted) {
      // Entries may be removed while the claim is being deleted, not added.
      for (const auto& r : reserved) {
        bool existed = false;
        for (const auto& o : old_status.reservedFor) existed = existed || o == r;
        if (!existed) {
          errs.push_back(field_forbidden(
              rp, "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"));
          break;
        }
      }
    }
  }

  if (old_status.allocation && status.allocation) {
    if (!(*old_status.allocation == *status.allocation)) {
      errs.push_back(field_invalid(path.child("allocation"), BadValue::raw("resource.AllocationResult{...}"),
                                   "field is immutable"));
    }
  } else if (status.allocation) {
    append_errors(errs, validate_allocation(*status.allocation, path.child("allocation"), names));
  }
  return errs;
}

FieldErrorList validate_claim_status_update(const ResourceClaim& new_claim, const ResourceClaim& old_claim) {
  FieldErrorList errs =
      vcore::validate_object_meta_update(new_claim.metadata, old_claim.metadata, FieldPath("metadata"));
  append_errors(errs, validate_claim_status(new_claim.status, old_claim.status,
                                            !new_claim.metadata.deletionTimestamp.empty(), new_claim.spec.devices,
                                            FieldPath("status")));
  return errs;
}

}  // namespace draplane::api
