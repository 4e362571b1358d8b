// NodeSelector matching with the semantics of k8s.io/component-helpers
// scheduling/corev1/nodeaffinity (what the DRA allocator uses for slices and
// devices): terms are ORed, requirements in a term ANDed; a term without any
// requirement matches nothing. matchExpressions run against the Node's labels
// (In, NotIn, Exists, DoesNotExist, Gt, Lt); matchFields support only
// `metadata.name` with In/NotIn and exactly one value.
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

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

}  // namespace draplane::alloc
