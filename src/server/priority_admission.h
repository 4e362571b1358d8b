// kube-apiserver's Priority admission plugin (plugin/pkg/admission/priority):
// - a pod being created gets spec.priority (and spec.preemptionPolicy) from the
//   PriorityClass its spec.priorityClassName names, or from the globalDefault
//   class (whose name it then gets) when it names none, or 0 and
//   PreemptLowerPriority when there is no default. A class that does not exist,
//   or a spec.priority / spec.preemptionPolicy that the class contradicts, is
//   Forbidden with upstream's messages.
// - a PriorityClass created or updated with globalDefault: true is Forbidden
//   while another class is the default.
// Of several defaults (a race upstream allows too) the lowest value wins.
//
// The decisions are pure functions of the classes; admit_priority reads them
// from the server's PriorityClassCache for pods, from the store (the classes'
// prefix) for PriorityClass writes.
//
// Thread-safety: free functions.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "server/api_error.h"
#include "server/json_util.h"
#include "server/resources.h"
#include "store/store.h"

namespace draplane::server {

class PriorityClassCache;

// What admission needs of one PriorityClass.
struct PriorityClassInfo {
  std::string name;
  int32_t value = 0;
  bool global_default = false;
  std::string preemption_policy;  // "" stored before defaulting: PreemptLowerPriority
};

// Mutates a pod being created (JSON); the Forbidden reason when it is refused.
std::optional<std::string> admit_pod_priority(const std::vector<PriorityClassInfo>& classes, Json& pod);
// Checks a PriorityClass being created (`update` false) or updated.
std::optional<std::string> admit_priority_class(const std::vector<PriorityClassInfo>& classes, const JsonValue& pc,
                                                bool update);

// One stored PriorityClass (JSON).
PriorityClassInfo priority_class_info(const JsonValue& pc);
// The stored classes.
Result<std::vector<PriorityClassInfo>> load_priority_classes(store::Store& store);

// The admission step for a create (`update` false) or an update of `r`
// (pods: on create only; priorityclasses): nothing for other resources.
// `cache` (may be null) serves pods; a pod naming a class it lacks, and
// every PriorityClass write, read the store.
std::optional<ApiError> admit_priority(store::Store& store, const PriorityClassCache* cache, const ResourceInfo& r,
                                       const std::string& name, Json& obj, bool update);

// kube-apiserver's start hook: the built-in classes system-node-critical and
// system-cluster-critical (api::system_priority_classes) are created when
// missing; existing ones are left as they are.
Status create_system_priority_classes(store::Store& store, const std::function<std::string()>& new_uid,
                                      const std::string& now);

}  // namespace draplane::server
