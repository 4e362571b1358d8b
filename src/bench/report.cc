// Measurement helpers and the report's two forms (table, JSON).
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "bench/bench.h"
#include "bench/workloads.h"

namespace draplane::bench {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  // scheduler_perf's index: ceil(len * p / 100) - 1.
  auto i = static_cast<size_t>(std::ceil(static_cast<double>(sorted.size()) * p / 100.0));
  return sorted[std::min(sorted.size(), std::max<size_t>(i, 1)) - 1];
}

// As scheduler_perf's throughputCollector (util.go): a tick every interval
// from the start of the measured phase; ticks before the first bound pod are
// ignored, the first tick that sees one only starts the count, a tick with no
// new pod is merged into the next (that rate recorded once per merged tick);
// the collector stops with the last pod, so a partial last interval is dropped.
Throughput sample_throughput(std::vector<double> bound_at_s, double interval_s) {
  Throughput t;
  if (bound_at_s.empty() || interval_s <= 0) return t;
  std::sort(bound_at_s.begin(), bound_at_s.end());
  const double end = bound_at_s.back();
  std::vector<double> rates;
  bool started = false;
  size_t last_count = 0, seen = 0;
  double last_tick = 0;
  int skipped = 0;
  for (double tick = interval_s; tick <= end + 1e-9; tick += interval_s) {
    while (seen < bound_at_s.size() && bound_at_s[seen] <= tick) ++seen;
    if (seen == 0) continue;
    if (!started) {
      started = true;
      last_count = seen;
      last_tick = tick;
      continue;
    }
    if (seen == last_count) {
      ++skipped;
      continue;
    }
    const double rate = static_cast<double>(seen - last_count) / (tick - last_tick);
    for (int i = 0; i <= skipped; ++i) rates.push_back(rate);
    skipped = 0;
    last_count = seen;
    last_tick = tick;
  }
  if (rates.empty()) return t;
  std::sort(rates.begin(), rates.end());
  double sum = 0;
  for (double r : rates) sum += r;
  t.samples = static_cast<int>(rates.size());
  t.average = sum / rates.size();
  t.p50 = percentile(rates, 50);
  t.p90 = percentile(rates, 90);
  t.p99 = percentile(rates, 99);
  return t;
}

double peak_rss_mb() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // KiB on Linux
}

double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return secs(u.ru_utime) + secs(u.ru_stime);
}

std::string list_text() {
  std::ostringstream o;
  for (const auto& w : workloads()) {
    o << w.name << "\n    " << w.summary << "\n    default --nodes " << w.default_nodes << "; after " << w.upstream
      << "\n";
  }
  return o.str();
}

namespace {

std::string num(double v, int decimals = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string table_text(const Report& r) {
  std::ostringstream o;
  o << "workload       " << r.workload << "\n"
    << "mode           " << r.mode << (r.mode == "inprocess" ? "" : " (store " + r.store + ")") << "\n"
    << "nodes          " << r.nodes << " (" << r.devices << " devices)\n"
    << "measured pods  " << r.pods << " (" << r.bound << " bound, " << r.unschedulable << " unschedulable) in "
    << num(r.seconds, 2) << " s\n"
    << "pods/s         " << num(r.pods_per_second)
    << (r.throughput.samples > 0 ? "" : " (overall rate: the run was shorter than one 1 s sample)") << "\n"
    << "throughput     avg " << num(r.throughput.average) << "  p50 " << num(r.throughput.p50) << "  p90 "
    << num(r.throughput.p90) << "  p99 " << num(r.throughput.p99) << "  (" << r.throughput.samples
    << " samples of 1 s)\n"
    << "latency        p50 " << num(r.p50_ms, 2) << " ms  p99 " << num(r.p99_ms, 2) << " ms (created -> bound)\n"
    << "allocator      "
    << (r.allocator_calls < 0 ? std::string("n/a in this mode") : std::to_string(r.allocator_calls) + " calls") << "\n"
    << "CPU            " << num(r.cpu_ms_per_pod, 3) << " ms per measured pod (whole process)\n"
    << (r.api_requests_per_pod < 0 ? std::string()
                                   : "API requests   " + num(r.api_requests_per_pod, 2) +
                                         " per measured pod (not watches or lists)\n")
    << "peak RSS       " << num(r.peak_rss_mb) << " MiB\n";
  if (!r.scheduler.empty()) o << "scheduler      " << r.scheduler.substr(r.scheduler.find(':') + 2) << "\n";
  if (!r.note.empty()) o << "note           " << r.note << "\n";
  o << "check          ok\n";
  return o.str();
}

std::string json_text(const Report& r) {
  std::ostringstream o;
  o << "{\"workload\":\"" << json_escape(r.workload) << "\",\"mode\":\"" << r.mode << "\",\"store\":\""
    << (r.mode == "inprocess" ? "memory" : r.store) << "\",\"nodes\":" << r.nodes << ",\"devices\":" << r.devices
    << ",\"pods\":" << r.pods << ",\"bound\":" << r.bound << ",\"unschedulable\":" << r.unschedulable
    << ",\"seconds\":" << num(r.seconds, 3) << ",\"pods_per_second\":" << num(r.pods_per_second, 1)
    << ",\"throughput\":{\"average\":" << num(r.throughput.average, 1) << ",\"p50\":" << num(r.throughput.p50, 1)
    << ",\"p90\":" << num(r.throughput.p90, 1) << ",\"p99\":" << num(r.throughput.p99, 1)
    << ",\"samples\":" << r.throughput.samples << "},\"p50_ms\":" << num(r.p50_ms, 3)
    << ",\"p99_ms\":" << num(r.p99_ms, 3) << ",\"allocator_calls\":"
    << (r.allocator_calls < 0 ? std::string("null") : std::to_string(r.allocator_calls))
    << ",\"cpu_ms_per_pod\":" << num(r.cpu_ms_per_pod, 3) << ",\"api_requests_per_pod\":"
    << (r.api_requests_per_pod < 0 ? std::string("null") : num(r.api_requests_per_pod, 2))
    << ",\"peak_rss_mb\":" << num(r.peak_rss_mb, 1)
    << ",\"check\":\"ok\"}";
  return o.str();
}

}  // namespace draplane::bench
