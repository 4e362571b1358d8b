// Output of `draplane simulate`: one JSON object per run, the curve as CSV, a
// terminal table. Ratios are fractions of 1 in JSON and CSV, percents in the table.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "sim/simulator.h"

namespace draplane::sim {

// {"policy", "seed", "tasks", "scheduled_tasks", "failed_tasks",
//  "gpu_allocation_ratio", "allocation_ratio_at_100", "fragmented_gpu_ratio", ...}
std::string to_json(const FillResult& r, const std::string& trace);
// policy,seed,arrived_pct,allocated,fragmented,frag_rate -- one line per curve
// point (arrived_pct is the percent of the trace's time span in replay mode).
void write_curve_csv(std::ostream& out, const std::vector<FillResult>& runs);
// Human summary: one row per run.
void write_table(std::ostream& out, const std::vector<FillResult>& runs, const std::string& trace);

// Mean and standard deviation over seeds, one row per policy (in first-run order).
void write_summary(std::ostream& out, const std::vector<FillResult>& runs, const std::string& trace);

}  // namespace draplane::sim
