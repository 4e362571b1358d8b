#include "alloc/snapshot.h"

#include <utility>

#include "alloc/capacity.h"

namespace draplane::alloc {
namespace {

const std::vector<uint32_t> kNone;

std::string key_of(std::string_view driver, std::string_view pool, std::string_view device) {
  std::string k;
  k.reserve(driver.size() + pool.size() + device.size() + 2);
  k.append(driver).push_back('\0');
  k.append(pool).push_back('\0');
  k.append(device);
  return k;
}

std::string pool_key(std::string_view driver, std::string_view pool) {
  std::string k(driver);
  k.push_back('\0');
  k.append(pool);
  return k;
}

}  // namespace

std::shared_ptr<const Snapshot> Snapshot::build(std::vector<api::ResourceSlice> slices,
                                                std::vector<api::DeviceClass> classes,
                                                std::shared_ptr<cel::ProgramCache> programs) {
  std::shared_ptr<Snapshot> s(new Snapshot());
  s->slices_ = std::move(slices);
  s->programs_ = programs ? std::move(programs) : std::make_shared<cel::ProgramCache>();
  s->index_slices();
  for (auto& c : classes) {
    std::string name = c.metadata.name;
    ClassEntry e;
    e.cls = std::move(c);
    s->classes_.insert_or_assign(std::move(name), std::move(e));
  }
  s->evaluate_classes();
  return s;
}

void Snapshot::index_slices() {
  size_t total = 0;
  for (const auto& sl : slices_) total += sl.spec.devices.size();
  devices_.reserve(total);
  bindings_.reserve(total);
  first_device_.reserve(slices_.size());
  for (uint32_t si = 0; si < slices_.size(); ++si) {
    const auto& sl = slices_[si];
    first_device_.push_back(static_cast<uint32_t>(devices_.size()));
    const std::string& node = sl.spec.nodeName.value_or("");
    // Kubernetes 1.36 checks slices with shared counters on every node.
    if (node.empty() || !sl.spec.sharedCounters.empty()) {
      shared_slices_.push_back(si);
    } else {
      by_node_[node].push_back(si);
    }
    by_pool_[pool_key(sl.spec.driver, sl.spec.pool.name)].push_back(si);
    for (uint32_t di = 0; di < sl.spec.devices.size(); ++di) {
      const auto& dev = sl.spec.devices[di];
      auto [it, inserted] = keys_.try_emplace(key_of(sl.spec.driver, sl.spec.pool.name, dev.name),
                                              static_cast<uint32_t>(keys_.size()));
      devices_.push_back(DeviceEntry{si, di, it->second});
      bindings_.emplace_back(sl.spec.driver, dev);
      fits_unrequested_.push_back(capacity_fits(dev, nullptr, nullptr, nullptr) ? 1 : 0);
    }
  }
}

std::optional<uint32_t> Snapshot::find_key(std::string_view driver, std::string_view pool,
                                           std::string_view device) const {
  auto it = keys_.find(key_of(driver, pool, device));
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

void Snapshot::evaluate_classes() {
  // Classes with the same selectors match the same devices: evaluated once
  // (scheduler_perf's extended-resource workload has 2,500 classes of one selector).
  std::map<std::vector<std::string>, const ClassEntry*> by_selectors;
  for (auto& [name, entry] : classes_) {
    const auto& selectors = entry.cls.spec.selectors;
    std::vector<std::string> exprs;
    bool all_cel = true;
    for (const auto& s : selectors) {
      if (!s.cel) all_cel = false;
      else exprs.push_back(s.cel->expression);
    }
    if (all_cel) {
      auto [it, fresh] = by_selectors.try_emplace(exprs, &entry);
      // Errors name the class: only an error-free match is shared.
      if (!fresh && it->second->errors.empty()) {
        entry.match = it->second->match;
        continue;
      }
      if (!fresh) it->second = &entry;
    }
    // Compile once per class; a compile error fails every device on which that
    // selector is reached (upstream compiles lazily, per evaluation).
    std::vector<std::shared_ptr<const cel::Program>> progs(selectors.size());
    std::vector<std::string> compile_errors(selectors.size());
    for (size_t i = 0; i < selectors.size(); ++i) {
      if (!selectors[i].cel) {
        compile_errors[i] = "class " + name + ": selector #" + std::to_string(i) +
                            ": CEL expression empty (unsupported selector type?)";
        continue;
      }
      auto p = programs_->get(selectors[i].cel->expression);
      if (!p) {
        compile_errors[i] = "class " + name + ": selector #" + std::to_string(i) +
                            ": CEL compile error: " + p.error().message();
      } else {
        progs[i] = *p;
      }
    }
    entry.match.assign(devices_.size(), kYes);
    for (uint32_t d = 0; d < devices_.size(); ++d) {
      for (size_t i = 0; i < selectors.size(); ++i) {
        if (!progs[i]) {
          entry.match[d] = kError;
          entry.errors[d] = compile_errors[i];
          break;
        }
        cel::EvalResult r = progs[i]->eval(bindings_[d]);
        if (!r.ok()) {
          entry.match[d] = kError;
          // Kubernetes 1.36 wording (later releases add " on device D").
          entry.errors[d] = "class " + name + ": selector #" + std::to_string(i) + ": CEL runtime error: " + r.error +
                            cel_error_hint(d, r.error);
          break;
        }
        if (!r.value) {
          entry.match[d] = kNo;
          break;
        }
      }
    }
  }
}

const std::vector<uint32_t>& Snapshot::slices_with_node_name(std::string_view node) const {
  auto it = by_node_.find(std::string(node));
  return it == by_node_.end() ? kNone : it->second;
}

const std::vector<uint32_t>& Snapshot::slices_of_pool(std::string_view driver, std::string_view pool) const {
  auto it = by_pool_.find(pool_key(driver, pool));
  return it == by_pool_.end() ? kNone : it->second;
}

std::string Snapshot::device_id(uint32_t d) const {
  const auto& sl = slice_of(d);
  return sl.spec.driver + "/" + sl.spec.pool.name + "/" + device(d).name;
}

const Snapshot::ClassEntry* Snapshot::find_class(std::string_view name) const {
  auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : &it->second;
}

}  // namespace draplane::alloc

namespace draplane::alloc {

std::string Snapshot::cel_error_hint(uint32_t d, std::string_view error) const {
  constexpr std::string_view kNoSuchKey = "no such key: ";
  if (error.rfind(kNoSuchKey, 0) != 0) return {};
  std::string_view key = error.substr(kNoSuchKey.size());
  const api::Device& dev = device(d);
  if (dev.attributes.count(std::string(slice_of(d).spec.driver) + "/" + std::string(key)) ||
      dev.attributes.count(std::string(key))) {
    return {};  // the attribute exists: the missing key is something else
  }
  for (const auto& [name, cap] : dev.capacity) {
    size_t slash = name.find('/');
    std::string_view short_name = slash == std::string::npos ? std::string_view(name) : std::string_view(name).substr(slash + 1);
    if (short_name != key) continue;
    std::string domain = slash == std::string::npos ? slice_of(d).spec.driver : name.substr(0, slash);
    // Not naming the device keeps the message the same on every node, so the
    // scheduler's per-node summary folds it into one line.
    return " (" + std::string(key) + " is published as a capacity, not an attribute: use device.capacity['" + domain +
           "']." + std::string(key) + ")";
  }
  return {};
}

}  // namespace draplane::alloc
