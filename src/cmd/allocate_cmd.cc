// `draplane allocate`: allocates the pending ResourceClaims of the input for one
// node (or the first Node that fits), through alloc::allocate.
//
// Input: Node, DeviceClass, ResourceSlice, DeviceTaintRule and ResourceClaim
// objects (other kinds are ignored); the rules' taints apply to the devices they
// select as if the driver had published them (alloc::apply_taint_rules).
// Claims with status.allocation are in use; the others are pending and are
// allocated together, all or nothing, in input order.
// Output: the pending claims with status.allocation (YAML stream or a JSON List).
// Without --node the Nodes are tried in input order and the chosen one is
// reported on stderr as "node: NAME" (stdout stays a plain object stream).
// Exit codes: 0 allocated, 1 does not fit (reasons on stderr), 2 invalid input or
// allocation error. Invalid objects are reported and still handed to the
// allocator (bounded by --timeout), whose error, if any, is printed too.
#include <chrono>
#include <iostream>
#include <random>

#include "alloc/allocator.h"
#include "alloc/taint_rules.h"
#include "api/codec.h"
#include "api/validation.h"
#include "cmd/commands.h"
#include "cmd/input.h"
#if __has_include("api/defaults.h")
#include "api/defaults.h"
#define DRAPLANE_HAVE_DEFAULTS 1
#endif

namespace draplane::cmd {
namespace {

struct AllocateFlags {
  std::string node;
  std::string policy = "first-fit";
  std::vector<std::string> files;
  std::string output = "yaml";
  double timeout_s = 30;
};

#ifndef DRAPLANE_HAVE_DEFAULTS
// Minimal defaulting until api/defaults.h exists: what the allocator and
// validation rely on (allocationMode, count, toleration operator).
void default_tolerations(std::vector<api::DeviceToleration>& ts) {
  for (auto& t : ts) {
    if (t.operator_.empty()) t.operator_ = "Equal";
  }
}
void local_defaults(api::Object& o) {
  auto* claim = std::get_if<api::ResourceClaim>(&o);
  if (claim == nullptr) return;
  for (auto& r : claim->spec.devices.requests) {
    if (r.exactly) {
      if (r.exactly->allocationMode.empty()) r.exactly->allocationMode = api::kAllocationModeExactCount;
      if (r.exactly->allocationMode == api::kAllocationModeExactCount && !r.exactly->count) r.exactly->count = 1;
      default_tolerations(r.exactly->tolerations);
    }
    for (auto& s : r.firstAvailable) {
      if (s.allocationMode.empty()) s.allocationMode = api::kAllocationModeExactCount;
      if (s.allocationMode == api::kAllocationModeExactCount && !s.count) s.count = 1;
      default_tolerations(s.tolerations);
    }
  }
}
#endif

struct Inputs {
  std::vector<api::Node> nodes;
  std::vector<api::DeviceClass> classes;
  std::vector<api::ResourceSlice> slices;
  std::vector<api::DeviceTaintRule> rules;
  std::vector<api::ResourceClaim> allocated;
  std::vector<api::ResourceClaim> pending;
};

// Decodes, defaults and validates every document; prints problems to stderr.
bool load(const AllocateFlags& flags, Inputs& in) {
  bool ok = true;
  api::ValidationOptions vopts;
  vopts.validate_claim_status = true;
  for (const auto& file : flags.files) {
    auto text = read_input(file);
    if (!text) {
      std::cerr << text.error().message() << "\n";
      ok = false;
      continue;
    }
    for (auto& doc : api::decode_stream(*text)) {
      std::string who = doc.kind + "/" + doc.name;
      if (!doc.object) {
        std::cerr << file << ": document " << doc.index << ": " << who << ": " << doc.object.error().message() << "\n";
        ok = false;
        continue;
      }
      api::Object obj = std::move(doc.object).value();
#ifdef DRAPLANE_HAVE_DEFAULTS
      api::apply_defaults(obj);
#else
      local_defaults(obj);
#endif
      api::FieldErrorList errs = api::validate(obj, vopts);
      if (!errs.empty()) {
        // Reported (exit 2), but the object is kept so that the allocator can
        // add its own verdict on the input (see run_allocate).
        for (const auto& e : errs) std::cerr << file << ": document " << doc.index << ": " << who << ": " << e.to_string() << "\n";
        ok = false;
      }
      if (auto* n = std::get_if<api::Node>(&obj)) {
        in.nodes.push_back(std::move(*n));
      } else if (auto* c = std::get_if<api::DeviceClass>(&obj)) {
        in.classes.push_back(std::move(*c));
      } else if (auto* s = std::get_if<api::ResourceSlice>(&obj)) {
        in.slices.push_back(std::move(*s));
      } else if (auto* r = std::get_if<api::DeviceTaintRule>(&obj)) {
        in.rules.push_back(std::move(*r));
      } else if (auto* rc = std::get_if<api::ResourceClaim>(&obj)) {
        (rc->status.allocation ? in.allocated : in.pending).push_back(std::move(*rc));
      }
    }
  }
  return ok;
}

int run_allocate(const AllocateFlags& flags) {
  if (flags.output != "yaml" && flags.output != "json") {
    std::cerr << "invalid value \"" << flags.output << "\" for -o: supported values: \"yaml\", \"json\"\n";
    return 2;
  }
  auto policy = alloc::parse_policy(flags.policy);
  if (!policy) {
    std::cerr << "--policy: " << policy.error().message() << "\n";
    return 2;
  }
  Inputs in;
  bool valid = load(flags, in);

  auto snapshot = alloc::Snapshot::build(alloc::apply_taint_rules(std::move(in.slices), in.rules),
                                         std::move(in.classes));
  const alloc::AllocatedState allocated(*snapshot, in.allocated);
  std::vector<const api::ResourceClaim*> claims;
  for (const auto& c : in.pending) claims.push_back(&c);

  alloc::Options opts;
  opts.policy = *policy;
  opts.max_steps = 0;
  std::random_device rd;
  opts.share_id_seed = (uint64_t{rd()} << 32) ^ rd();

  std::vector<const api::Node*> targets;
  api::Node named;
  if (!flags.node.empty()) {
    for (const auto& n : in.nodes) {
      if (n.metadata.name == flags.node) targets.push_back(&n);
    }
    if (targets.empty()) {
      // A node that is not in the input has no labels; slices still match by name.
      named.metadata.name = flags.node;
      targets.push_back(&named);
    }
  } else {
    for (const auto& n : in.nodes) targets.push_back(&n);
    if (targets.empty()) {
      std::cerr << "no Node in the input: pass --node NAME or add Node objects\n";
      return 2;
    }
  }

  if (!valid) {
    // Invalid input is exit 2 whatever the allocator says; its error (for
    // example "invalid resource pools were encountered") is added because it
    // is what the scheduler would report for the same objects.
    alloc::Options quick = opts;
    quick.max_steps = 1'000'000;
    for (const api::Node* node : targets) {
      auto result = alloc::allocate(*snapshot, allocated, claims, *node, quick);
      if (!result) {
        std::cerr << "allocation error: " << result.error().message() << "\n";
        break;
      }
    }
    return 2;
  }

  std::vector<std::string> reasons;
  std::optional<Status> first_error;
  for (const api::Node* node : targets) {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(flags.timeout_s));
    opts.should_stop = [deadline] { return std::chrono::steady_clock::now() > deadline; };
    auto result = alloc::allocate(*snapshot, allocated, claims, *node, opts);
    if (!result) {
      if (!first_error) first_error = result.error();
      if (targets.size() > 1) reasons.push_back("node " + node->metadata.name + ": " + result.error().message());
      continue;
    }
    if (!result->fits) {
      for (const auto& r : result->reasons) {
        reasons.push_back(targets.size() > 1 ? "node " + node->metadata.name + ": " + r : r);
      }
      if (result->reasons.empty()) reasons.push_back("node " + node->metadata.name + ": claims do not fit");
      continue;
    }
    std::vector<api::Object> out;
    for (size_t i = 0; i < in.pending.size(); ++i) {
      api::ResourceClaim c = in.pending[i];
      c.status.allocation = result->results[i];
      out.emplace_back(std::move(c));
    }
    if (flags.node.empty()) std::cerr << "node: " << node->metadata.name << "\n";
    std::cout << (flags.output == "json" ? api::to_json_list(out, true) + "\n" : api::to_yaml_stream(out));
    return 0;
  }
  if (first_error && (targets.size() == 1 || reasons.size() == targets.size())) {
    if (targets.size() == 1) {
      std::cerr << "error: " << first_error->message() << "\n";
    } else {
      for (const auto& r : reasons) std::cerr << "error: " << r << "\n";
    }
    return 2;
  }
  std::cerr << "claims do not fit:\n";
  for (const auto& r : reasons) std::cerr << "  " << r << "\n";
  return 1;
}

}  // namespace

void add_allocate(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<AllocateFlags>();
  CLI::App* sub = app.add_subcommand("allocate", "Allocate devices for the pending ResourceClaims of the input on a node");
  sub->add_option("--node", flags->node, "node to allocate for (default: try every Node of the input)");
  sub->add_option("--policy", flags->policy, "first-fit (upstream's choice) or packing")->capture_default_str();
  sub->add_option("-f,--filename", flags->files, "YAML/JSON input files ('-' for stdin)")->required();
  sub->add_option("-o,--output", flags->output, "yaml or json")->capture_default_str();
  sub->add_option("--timeout", flags->timeout_s, "seconds of search per node before answering 'does not fit'")
      ->capture_default_str();
  sub->callback([flags, &exit_code] { exit_code = run_allocate(*flags); });
}

}  // namespace draplane::cmd
