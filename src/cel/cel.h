// Public API of draplane's CEL engine for DRA device selectors (the contract the
// allocator and validation use; the engine's internals live in the other cel/ files).
//
// Phases (after cel-cpp): compile = parse + type-check in the DRA environment
// (+ static cost estimate) -> immutable Program; bind a device once ->
// DeviceBinding; evaluate Program against a DeviceBinding many times.
//
// Thread-safety: Program and DeviceBinding are immutable after construction and may
// be shared across threads. ProgramCache is internally synchronized.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "api/types.h"
#include "cel/tz.h"
#include "common/result.h"

namespace draplane::cel {

using timeutil::TimeZoneDatabase;

// What a compiled program uses besides its expression: the services its owner
// injects. A program whose expression names a time zone (getHours('Europe/Paris'))
// keeps `time_zones`; left null, such a program gets a TimeZoneDatabase of its
// own over the system's zoneinfo directories.
struct CompileOptions {
  std::shared_ptr<const TimeZoneDatabase> time_zones;
};

// Limits Kubernetes applies to device selectors.
inline constexpr size_t kMaxExpressionLength = 10 * 1024;
inline constexpr uint64_t kCostLimit = 1000000;  // static estimate and runtime budget

// A device as a selector sees it: driver, attributes and capacities indexed by
// (domain, name) with bare names placed in the driver's domain. Built once per
// device (the allocator keeps one per device in its snapshot) so that evaluation
// copies no maps. Holds copies of what it needs; the source Device may go away.
class DeviceBinding {
 public:
  DeviceBinding(std::string_view driver, const api::Device& device);
  ~DeviceBinding();
  DeviceBinding(DeviceBinding&&) noexcept;
  DeviceBinding& operator=(DeviceBinding&&) noexcept;
  DeviceBinding(const DeviceBinding&) = delete;
  DeviceBinding& operator=(const DeviceBinding&) = delete;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Outcome of one evaluation: a bool, or a CEL runtime error (a value, not a
// failure of the machinery), e.g. "no such key: memory",
// "actual cost limit exceeded", "no such overload".
struct EvalResult {
  bool value = false;
  std::string error;  // non-empty when evaluation failed
  bool ok() const { return error.empty(); }
};

class Program {
 public:
  virtual ~Program() = default;
  // Evaluates the selector against one device. Never throws; does not allocate on
  // the common paths (attribute lookups, comparisons, quantity methods).
  virtual EvalResult eval(const DeviceBinding& device) const = 0;
  virtual const std::string& expression() const = 0;
  // Static worst-case cost estimate (cel-go's estimator semantics).
  virtual uint64_t estimated_cost() const = 0;
};

// Compiles a selector: parse, type-check (result must be bool), validate constant
// arguments (timestamp('...'), duration('...') and the patterns of matches, find
// and findAll, as Kubernetes' AST validators do), estimate cost.
// Errors (Code::kInvalid) carry cel-go-style messages, e.g.
//   "ERROR: <input>:1:5: undeclared reference to 'foo'\n | foo == 1\n | ....^"
// and "too complex, exceeds cost limit" style text is left to validation, which
// compares estimated_cost() with kCostLimit itself.
Result<std::shared_ptr<const Program>> compile(std::string_view expression, const CompileOptions& options = {});

// Validation of a device selector expression (DeviceClass and ResourceClaim
// selectors): OK; Code::kInvalid with "compilation failed: <cel-go style
// message>" (or the must-evaluate-to-bool message) when it does not compile or is
// longer than kMaxExpressionLength; Code::kForbidden "too complex, exceeds cost
// limit" when the static cost estimate exceeds kCostLimit.
// With `cache`, the compiled program comes from (and stays in) it: the API
// server checks the same few expressions on every write.
Status check_selector(std::string_view expression, class ProgramCache* cache = nullptr);

// Compiled programs keyed by expression text, shared by the allocator and
// validation. Compile errors are cached too. Holds at most kMaxPrograms
// expressions (emptied beyond: expressions come from API clients). Its programs
// share one TimeZoneDatabase: the given one, or one over the system's zoneinfo.
class ProgramCache {
 public:
  explicit ProgramCache(std::shared_ptr<const TimeZoneDatabase> time_zones = nullptr);
  Result<std::shared_ptr<const Program>> get(std::string_view expression);
  static constexpr size_t kMaxPrograms = 4096;

 private:
  CompileOptions options_;
  std::mutex mu_;
  std::unordered_map<std::string, Result<std::shared_ptr<const Program>>> cache_;
};

// General evaluation for `draplane cel eval` and tests: compiles `expression` in the
// DRA environment without requiring a bool result, evaluates it against `device`
// (or with no device bound: then referencing `device` is a runtime error), and
// returns the value in CEL literal form: true, 42, 3u, 1.5, "text", b"..", [1, 2],
// {"a": 1}, null, or a quantity/semver as quantity("1Gi") / semver("1.2.3").
// Compile errors and runtime errors are returned as Code::kInvalid. Named time
// zones come from options.time_zones (the system's zoneinfo when null).
Result<std::string> eval_to_string(std::string_view expression, const api::Device* device,
                                   std::string_view driver, const CompileOptions& options = {});

}  // namespace draplane::cel
