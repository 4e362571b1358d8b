// NodeSelector matching with the semantics of k8s.io/component-helpers
// scheduling/corev1/nodeaffinity (what the DRA allocator uses for slices and
// devices): terms are ORed, requirements in a term ANDed; a term without any
// requirement matches nothing. matchExpressions run against the Node's labels
// (In, NotIn, Exists, DoesNotExist, Gt, Lt); matchFields support only
// `metadata.name` with In/NotIn and exactly one value.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "common/result.h"

namespace draplane::alloc {

// True when `node` satisfies `selector`. Error (kInvalid) for a selector that
// nodeaffinity.NewNodeSelector rejects (unknown operator, In without values,
// Gt/Lt without exactly one integer, unsupported field key), naming the
// requirement, e.g. "nodeSelectorTerms[0].matchExpressions[1].values: ...".
// A null node matches nothing.
Result<bool> node_selector_matches(const api::Node* node, const api::NodeSelector& selector);

// Node selection of a slice or device: nodeName (exact name), allNodes, or a
// selector; none of them set matches nothing (upstream NodeMatches).
Result<bool> node_target_matches(const api::Node* node, std::string_view node_name, bool all_nodes,
                                 const api::NodeSelector* selector);

// The nodes `selector` can match at most, when each of its terms names them in
// a matchFields `metadata.name` In requirement (as allocations of node-local
// devices do), sorted and without repeats; nullopt when some term does not
// (it may match nodes by their labels). No node outside the list matches.
std::optional<std::vector<std::string>> nodes_named_by(const api::NodeSelector& selector);

}  // namespace draplane::alloc
