#include "alloc/allocator.h"

#include "alloc/internal/search.h"

namespace draplane::alloc {

Result<Policy> parse_policy(std::string_view text) {
  if (text == "first-fit" || text.empty()) return Policy::kFirstFit;
  if (text == "packing") return Policy::kPacking;
  return invalid_error("unknown policy \"" + std::string(text) + "\": supported values: \"first-fit\", \"packing\"");
}

Result<Allocation> allocate(const NodeView& view, const std::vector<const api::ResourceClaim*>& claims,
                            const Options& options) {
  internal::Search search(view, claims, options);
  return search.run();
}

Result<Allocation> allocate(const Snapshot& snapshot, const AllocatedState& allocated,
                            const std::vector<const api::ResourceClaim*>& claims, const api::Node& node,
                            const Options& options) {
  ASSIGN_OR_RETURN(NodeView view, NodeView::build(snapshot, allocated, node));
  return allocate(view, claims, options);
}

}  // namespace draplane::alloc
