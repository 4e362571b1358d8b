// The trace loader on the shipped openb files (skipped when ../shared/data is
// absent) and on small hand-written files.
#include "sim/trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace draplane::sim {
namespace {

namespace fs = std::filesystem;

std::string openb_dir() { return (fs::path(DRAPLANE_SHARED_DIR) / "data" / "openb").string(); }

#define REQUIRE_OPENB()                                                              \
  if (!fs::exists(default_node_file(openb_dir()))) GTEST_SKIP() << "no trace in " << openb_dir()

std::string write_temp(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / ("draplane_sim_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p) << text;
  return p.string();
}

TEST(Trace, GpuNodesPerModel) {
  REQUIRE_OPENB();
  auto nodes = load_nodes(default_node_file(openb_dir()));
  ASSERT_TRUE(nodes) << nodes.error().message();
  EXPECT_EQ(nodes->size(), 1213u);
  std::map<std::string, int> gpus;
  int64_t cpu = 0, total = 0;
  for (const auto& n : *nodes) {
    gpus[n.model] += n.gpus;
    cpu += n.cpu_milli;
    total += n.gpus;
  }
  EXPECT_EQ(total, 6212);
  EXPECT_EQ(cpu, 107018000);
  std::map<std::string, int> want{{"A10", 2},     {"G2", 4392},   {"G3", 312},      {"P100", 265},
                                  {"T4", 842},    {"V100M16", 195}, {"V100M32", 204}};
  EXPECT_EQ(gpus, want);
}

TEST(Trace, AllNodesIncludeCpuOnlyNodes) {
  REQUIRE_OPENB();
  auto nodes = load_nodes((fs::path(openb_dir()) / "openb_node_list_all_node.csv").string());
  ASSERT_TRUE(nodes) << nodes.error().message();
  EXPECT_EQ(nodes->size(), 1523u);
  size_t cpu_only = 0;
  for (const auto& n : *nodes) cpu_only += n.gpus == 0 && n.model.empty();
  EXPECT_EQ(cpu_only, 310u);
}

struct TaskTotals {
  size_t rows = 0, shares = 0, with_models = 0, cpu_only = 0;
  int64_t gpu_milli = 0;
};

TaskTotals totals(const std::string& name) {
  auto tasks = load_tasks(resolve_task_file(name, openb_dir()));
  EXPECT_TRUE(tasks) << tasks.error().message();
  TaskTotals t;
  if (!tasks) return t;
  for (const auto& task : *tasks) {
    ++t.rows;
    t.shares += task.shares_gpu();
    t.with_models += !task.models.empty();
    t.cpu_only += task.num_gpu == 0;
    t.gpu_milli += task.total_gpu_milli();
  }
  return t;
}

TEST(Trace, DefaultTasks) {
  REQUIRE_OPENB();
  TaskTotals t = totals("default");
  EXPECT_EQ(t.rows, 8152u);
  EXPECT_EQ(t.shares, 3078u);
  EXPECT_EQ(t.with_models, 0u);
  EXPECT_EQ(t.gpu_milli, 6086800);
}

TEST(Trace, Variants) {
  REQUIRE_OPENB();
  TaskTotals share = totals("gpushare100");
  EXPECT_EQ(share.rows, 8152u);
  EXPECT_EQ(share.shares, 7064u);
  EXPECT_EQ(share.gpu_milli, 3952670);
  TaskTotals spec = totals("gpuspec33");
  EXPECT_EQ(spec.with_models, 2388u);
  // Five columns only (no gpu_spec, no times).
  TaskTotals multi = totals("multigpu50");
  EXPECT_EQ(multi.rows, 9061u);
  EXPECT_EQ(multi.gpu_milli, 11358800);
}

TEST(Trace, ModelsAndTimes) {
  REQUIRE_OPENB();
  auto tasks = load_tasks(resolve_task_file("gpuspec33", openb_dir()));
  ASSERT_TRUE(tasks);
  bool found_pair = false;
  for (const auto& t : *tasks) found_pair |= t.models.size() >= 2;
  EXPECT_TRUE(found_pair);
  EXPECT_EQ(tasks->front().creation_time, 0);
  EXPECT_EQ(tasks->front().deletion_time, 12537496);
}

TEST(Trace, ErrorsNameFileLineAndColumn) {
  std::string p = write_temp("bad_tasks.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nt0,1000,10,1,500\nt1,x,10,0,0\n");
  auto tasks = load_tasks(p);
  ASSERT_FALSE(tasks);
  EXPECT_EQ(tasks.error().message(), p + ":3: column cpu_milli: \"x\" is not an integer");

  p = write_temp("bad_share.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nt0,1000,10,2,500\n");
  tasks = load_tasks(p);
  ASSERT_FALSE(tasks);
  EXPECT_EQ(tasks.error().message(),
            p + ":2: column gpu_milli: must be 1000 when num_gpu > 1 (only one GPU can be shared)");

  p = write_temp("bad_nodes.csv", "sn,cpu_milli,memory_mib,gpu\nn0,1000,10,9\n");
  auto nodes = load_nodes(p);
  ASSERT_FALSE(nodes);
  EXPECT_EQ(nodes.error().message(), p + ":2: column gpu: 9 is out of range [0, 8]");

  EXPECT_FALSE(load_nodes("/nonexistent/nodes.csv"));
}

TEST(Trace, ResolvesNamesAndPaths) {
  EXPECT_EQ(resolve_task_file("gpushare40", "/d"), "/d/openb_pod_list_gpushare40.csv");
  EXPECT_EQ(resolve_task_file("my.csv", "/d"), "my.csv");
  EXPECT_EQ(resolve_task_file("x/y", "/d"), "x/y");
  EXPECT_EQ(default_node_file("/d"), "/d/openb_node_list_gpu_node.csv");
}

}  // namespace
}  // namespace draplane::sim
