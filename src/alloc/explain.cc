// Explanations for a claim that does not fit: one line per request, counting
// how the node's devices drop out (class, selectors, in use, taints, capacity,
// shared counters), so that a person knows what to change.
#include <string>

#include "alloc/internal/search.h"

namespace draplane::alloc::internal {
namespace {

std::string plural(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::vector<std::string> Search::explain() {
  std::vector<std::string> lines;
  std::string incomplete;
  for (const auto& p : view_.pools()) {
    if (p.incomplete) incomplete += (incomplete.empty() ? "" : ", ") + p.id();
  }
  const auto& cands = view_.candidates();
  for (size_t ci = 0; ci < slots_.size(); ++ci) {
    for (const Slot& slot : slots_[ci]) {
      for (int s = 0; s < slot.count; ++s) {
        ReqData& r = reqs_[slot.first + s];
        int cls = 0, sel = 0, errors = 0, used = 0, taint = 0, cap = 0, counters = 0, usable = 0;
        std::string first_taint;
        for (uint32_t c = 0; c < cands.size(); ++c) {
          const auto& d = snap_.device(cands[c].device);
          uint8_t m = r.cls->match[cands[c].device];
          if (m == Snapshot::kError) {
            ++errors;
            continue;
          }
          if (m == Snapshot::kNo || !cands[c].node_ok) continue;
          ++cls;
          bool ok = false;
          if (selectable(r, c, ok) == Outcome::kError) {
            error_ = Status();
            ++errors;
            continue;
          }
          if (!ok) continue;
          ++sel;
          if (!r.admin && in_use(c)) {
            ++used;
            continue;
          }
          if (tainted(r, d)) {
            if (first_taint.empty()) {
              for (const auto& t : d.taints) {
                if (t.effect == "NoSchedule" || t.effect == "NoExecute") {
                  first_taint = t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect;
                  break;
                }
              }
            }
            ++taint;
            continue;
          }
          if (!capacity_ok(r, c)) {
            ++cap;
            continue;
          }
          if (cands[c].counters_begin != cands[c].counters_end) {
            const auto& pool = view_.pools()[cands[c].pool];
            bool fits = !pool.overdrawn;
            for (uint32_t k = cands[c].counters_begin; k < cands[c].counters_end; ++k) {
              const auto& u = view_.counter_uses()[k];
              fits = fits && u.amount <= pool.available[u.counter];
            }
            if (!fits) {
              ++counters;
              continue;
            }
          }
          ++usable;
        }
        std::string line = "claim " + kobj(static_cast<int>(ci)) + ": request " + r.full + ": ";
        line += r.all ? std::string("all matching devices needed") : plural(r.num, "device needed", "devices needed");
        line += "; " + std::to_string(cls) + " match class " + r.class_name;
        if (!r.selectors->empty()) line += ", " + std::to_string(sel) + " of them match the selectors";
        if (errors > 0) line += ", " + plural(errors, "fails", "fail") + " with a CEL error";
        if (used > 0) line += ", " + std::to_string(used) + (used == 1 ? " is" : " are") + " in use";
        if (taint > 0) line += ", " + std::to_string(taint) + (taint == 1 ? " is" : " are") + " tainted " + first_taint;
        if (cap > 0) line += ", " + plural(cap, "lacks", "lack") + " free capacity";
        if (counters > 0) line += ", " + plural(counters, "lacks", "lack") + " shared counters";
        if (r.all) {
          if (r.all_devices.empty()) line += "; no device matches";
          else line += "; some of them are in use, tainted or break a constraint";
        } else if (usable >= r.num) {
          line += "; " + std::to_string(usable) +
                  " usable on their own, but not together with the other requests, constraints and shared counters";
        } else {
          line += "; only " + std::to_string(usable) + " usable";
        }
        if (!incomplete.empty()) line += " (pools being updated, not used: " + incomplete + ")";
        lines.push_back(std::move(line));
      }
    }
  }
  return lines;
}

}  // namespace draplane::alloc::internal
