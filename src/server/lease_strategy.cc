// Lease (coordination.k8s.io/v1): untyped; kubectl's Holder column.
#include "server/strategies.h"

namespace draplane::server {
namespace {

class LeaseStrategy final : public Strategy {
 public:
  std::vector<TableColumn> table_columns() const override {
    return {{"Name", "string", 0, "name"}, {"Holder", "string", 0}, {"Age", "string", 0}};
  }
  std::vector<TableCell> table_cells(const JsonValue& o, int64_t now) const override {
    return {get_string(o, {"metadata", "name"}), or_none(get_string(o, {"spec", "holderIdentity"})), table_age(o, now)};
  }
};

}  // namespace

const Strategy& lease_strategy() { return the_strategy<LeaseStrategy>(); }

}  // namespace draplane::server
