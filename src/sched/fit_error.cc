#include "sched/fit_error.h"

#include <algorithm>
#include <vector>

namespace draplane::sched {

void FitError::add(const std::string& reason, const std::string& detail) {
  ++reasons_[reason];
  if (!detail.empty()) ++details_[detail];
}

std::string FitError::message(int max_details) const {
  if (num_nodes_ == 0 && pre_filter_.empty()) return "no nodes available to schedule pods";
  std::string out = "0/" + std::to_string(num_nodes_) + " nodes are available:";
  if (!pre_filter_.empty()) return out + " " + pre_filter_ + ".";
  // kube-scheduler sorts the "<count> <reason>" strings themselves.
  std::vector<std::string> parts;
  for (const auto& [reason, n] : reasons_) parts.push_back(std::to_string(n) + " " + reason);
  std::sort(parts.begin(), parts.end());
  std::string joined;
  for (const auto& p : parts) joined += (joined.empty() ? "" : ", ") + p;
  if (!joined.empty()) out += " " + joined + ".";
  std::vector<std::pair<int, std::string>> details;
  for (const auto& [d, n] : details_) details.emplace_back(-n, d);
  std::sort(details.begin(), details.end());
  int shown = 0;
  for (const auto& [neg, d] : details) {
    if (shown++ == max_details) {
      out += " (" + std::to_string(details.size() - max_details) + " more explanations)";
      break;
    }
    out += " " + std::to_string(-neg) + " node(s): " + d + ".";
  }
  return out;
}

}  // namespace draplane::sched
