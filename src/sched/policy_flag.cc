#include "sched/policy_flag.h"

namespace draplane::sched {

namespace {
constexpr std::string_view kPacking = "packing";
}  // namespace

std::string policy_names() {
  std::string out;
  for (placement::PolicyKind kind : placement::all_policies()) {
    out += out.empty() ? "" : ", ";
    out += placement::policy_name(kind);
  }
  return out + ", " + std::string(kPacking);
}

Result<void> apply_policy(std::string_view name, SchedulerOptions& options) {
  if (name == kPacking) {
    options.policy = alloc::Policy::kPacking;
    options.node_policy.reset();
    return {};
  }
  auto kind = placement::parse_policy(name);
  if (!kind.has_value()) {
    return Status(Code::kInvalid, "--policy: unknown policy \"" + std::string(name) + "\"; valid names: " + policy_names());
  }
  options.policy = *kind == placement::PolicyKind::kFirstFit ? alloc::Policy::kFirstFit : alloc::Policy::kPacking;
  options.node_policy = *kind;
  return {};
}

}  // namespace draplane::sched
