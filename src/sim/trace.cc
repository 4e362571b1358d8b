#include "sim/trace.h"

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "common/split.h"

#ifndef DRAPLANE_DEFAULT_DATA_DIR
#define DRAPLANE_DEFAULT_DATA_DIR "../shared/data"
#endif

namespace draplane::sim {
namespace {

// One CSV file without quoting (the trace has none): header -> column index.
struct Csv {
  std::string path;
  std::map<std::string, size_t, std::less<>> columns;
  std::vector<std::string> lines;  // data lines
  size_t first_line = 2;           // file line number of lines[0]
};

Result<Csv> read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return invalid_error(path + ": cannot open file");
  Csv csv;
  csv.path = path;
  std::string line;
  if (!std::getline(in, line)) return invalid_error(path + ": empty file, expected a header line");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  auto header = common::split(line, ',');
  for (size_t i = 0; i < header.size(); ++i) csv.columns.emplace(std::string(header[i]), i);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    csv.lines.push_back(line);
  }
  return csv;
}

struct Row {
  const Csv& csv;
  size_t line_no;
  std::vector<std::string_view> cells;

  std::string where(std::string_view column) const {
    return csv.path + ":" + std::to_string(line_no) + ": column " + std::string(column);
  }
  // Empty when the file has no such column (optional columns).
  std::optional<std::string_view> cell(std::string_view column) const {
    auto it = csv.columns.find(column);
    if (it == csv.columns.end() || it->second >= cells.size()) return std::nullopt;
    return cells[it->second];
  }
  Result<std::string_view> required(std::string_view column) const {
    auto c = cell(column);
    if (!c) return invalid_error(where(column) + ": missing");
    return *c;
  }
  Result<int64_t> integer(std::string_view column, int64_t min, int64_t max) const {
    auto c = required(column);
    if (!c) return c.error();
    int64_t v = 0;
    auto [p, ec] = std::from_chars(c->data(), c->data() + c->size(), v);
    if (ec != std::errc() || p != c->data() + c->size()) {
      return invalid_error(where(column) + ": \"" + std::string(*c) + "\" is not an integer");
    }
    if (v < min || v > max) {
      return invalid_error(where(column) + ": " + std::to_string(v) + " is out of range [" + std::to_string(min) +
                           ", " + std::to_string(max) + "]");
    }
    return v;
  }
  // Optional integer column; "" counts as absent.
  Result<std::optional<int64_t>> optional_integer(std::string_view column) const {
    auto c = cell(column);
    if (!c || c->empty()) return std::optional<int64_t>();
    auto v = integer(column, INT64_MIN, INT64_MAX);
    if (!v) return v.error();
    return std::optional<int64_t>(*v);
  }
};

// Every row of the file at `path` through parse_one.
template <typename T, typename F>
Result<std::vector<T>> parse_rows(const std::string& path, F parse_one) {
  ASSIGN_OR_RETURN(Csv csv, read_csv(path));
  std::vector<T> out;
  out.reserve(csv.lines.size());
  for (size_t i = 0; i < csv.lines.size(); ++i) {
    if (csv.lines[i].empty()) continue;
    Row row{csv, csv.first_line + i, common::split(csv.lines[i], ',')};
    auto item = parse_one(row);
    if (!item) return item.error();
    out.push_back(std::move(*item));
  }
  return out;
}

constexpr int64_t kMaxMilli = int64_t{1} << 40;

// The columns nodes and tasks share: a name, CPU and memory.
struct Sized {
  std::string name;
  int64_t cpu_milli = 0, memory_mib = 0;
};

Result<Sized> sized(const Row& row, std::string_view name_column) {
  Sized s;
  ASSIGN_OR_RETURN(auto name, row.required(name_column));
  ASSIGN_OR_RETURN(s.cpu_milli, row.integer("cpu_milli", 0, kMaxMilli));
  ASSIGN_OR_RETURN(s.memory_mib, row.integer("memory_mib", 0, kMaxMilli));
  s.name = std::string(name);
  return s;
}

}  // namespace

Result<std::vector<NodeSpec>> load_nodes(const std::string& path) {
  return parse_rows<NodeSpec>(path, [](const Row& row) -> Result<NodeSpec> {
    NodeSpec n;
    ASSIGN_OR_RETURN(Sized s, sized(row, "sn"));
    ASSIGN_OR_RETURN(int64_t gpus, row.integer("gpu", 0, 8));
    n.name = std::move(s.name);
    n.cpu_milli = s.cpu_milli;
    n.memory_mib = s.memory_mib;
    n.gpus = static_cast<int>(gpus);
    n.model = std::string(row.cell("model").value_or(""));
    if (n.gpus > 0 && n.model.empty()) return invalid_error(row.where("model") + ": required when gpu > 0");
    return n;
  });
}

Result<std::vector<TaskSpec>> load_tasks(const std::string& path) {
  return parse_rows<TaskSpec>(path, [](const Row& row) -> Result<TaskSpec> {
    TaskSpec t;
    ASSIGN_OR_RETURN(Sized s, sized(row, "name"));
    ASSIGN_OR_RETURN(int64_t num, row.integer("num_gpu", 0, 8));
    ASSIGN_OR_RETURN(int64_t milli, row.integer("gpu_milli", 0, 1000));
    ASSIGN_OR_RETURN(t.creation_time, row.optional_integer("creation_time"));
    ASSIGN_OR_RETURN(t.deletion_time, row.optional_integer("deletion_time"));
    t.name = std::move(s.name);
    t.cpu_milli = s.cpu_milli;
    t.memory_mib = s.memory_mib;
    t.num_gpu = static_cast<int>(num);
    t.gpu_milli = t.num_gpu == 0 ? 0 : milli;
    if (t.num_gpu > 0 && t.gpu_milli == 0) return invalid_error(row.where("gpu_milli") + ": must be > 0 when num_gpu > 0");
    if (t.num_gpu > 1 && t.gpu_milli != 1000) {
      return invalid_error(row.where("gpu_milli") + ": must be 1000 when num_gpu > 1 (only one GPU can be shared)");
    }
    for (auto m : common::split(row.cell("gpu_spec").value_or(""), '|')) {
      if (!m.empty()) t.models.emplace_back(m);
    }
    return t;
  });
}

std::string default_trace_dir() {
  if (const char* env = std::getenv("DRAPLANE_DATA_DIR"); env != nullptr && *env != '\0') {
    return (std::filesystem::path(env) / "openb").string();
  }
  auto built = (std::filesystem::path(DRAPLANE_DEFAULT_DATA_DIR) / "openb").lexically_normal();
  // A binary run away from its source tree (copied, installed) looks beside
  // the repository it is run from.
  auto here = std::filesystem::path("..") / "shared" / "data" / "openb";
  if (!std::filesystem::exists(built) && std::filesystem::exists(here)) return here.string();
  return built.string();
}

std::string resolve_task_file(const std::string& trace, const std::string& dir) {
  if (trace.find('/') != std::string::npos || trace.ends_with(".csv")) return trace;
  return (std::filesystem::path(dir) / ("openb_pod_list_" + trace + ".csv")).string();
}

std::string default_node_file(const std::string& dir) {
  return (std::filesystem::path(dir) / "openb_node_list_gpu_node.csv").string();
}

}  // namespace draplane::sim
