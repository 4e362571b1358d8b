// End-to-end throughput of the whole system (issue 7's speed goal): a
// cluster::LocalCluster (HTTPS API server on the SQLite store, scheduler,
// resource-claim controller, simulated node agents with their kubelets), then
// pods with one single-GPU claim template each, created by 8 client threads;
// measured from the first create to the last pod seen Running through a watch.
// Every pod really runs (`sleep 1` with the CDI environment), so this covers
// template -> claim, allocation, binding, prepare and container start; as 2,000
// pods do not fit on 800 GPUs at once, the finished pods' claims must also be
// released (generated claims deleted, devices freed) for the later pods to run.
//
// Counters: pods_per_s (the goal: >= 500 on 100 nodes x 8 GPUs, 2,000 pods;
// kube-scheduler's own DRA throughput is 40-290 pods/s), p50_ms / p99_ms (pod
// creation to Running), cpu_ms_per_pod (CPU of the whole system per pod during
// the measured phase). One iteration per run: setup dominates otherwise.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include <rapidjson/document.h>
#include <sys/resource.h>

#include "client/rest_client.h"
#include "cluster/local_cluster.h"
#include "common/malloc_tuning.h"

namespace draplane::cluster {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kTemplate = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate",
  "metadata":{"name":"one-gpu","namespace":"bench"},
  "spec":{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}}})";

std::string pod_json(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"bench"},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox",
    "command":["sleep","1"],"resources":{"claims":[{"name":"gpu"}]}}],
    "resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"one-gpu"}]}})";
}

// DRAPLANE_PERF_CTL=<fifo> (perf record --control fifo:<fifo> -D -1) profiles
// the measured phase only, not the cluster's start-up.
void perf_control(const char* command) {
  const char* path = std::getenv("DRAPLANE_PERF_CTL");
  if (path == nullptr || *path == '\0') return;
  if (FILE* f = std::fopen(path, "w")) {
    std::fprintf(f, "%s\n", command);
    std::fclose(f);
  }
}

double cpu_seconds() {
  auto secs = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  rusage self{}, children{};
  ::getrusage(RUSAGE_SELF, &self);
  ::getrusage(RUSAGE_CHILDREN, &children);
  return secs(self.ru_utime) + secs(self.ru_stime) + secs(children.ru_utime) + secs(children.ru_stime);
}

void BM_PodsToRunning(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int pods = static_cast<int>(state.range(1));
  for (auto _ : state) {
    state.PauseTiming();
    std::string dir = (std::filesystem::temp_directory_path() / ("draplane-cluster-bench-" + std::to_string(::getpid())))
                          .string();
    std::filesystem::remove_all(dir);
    LocalClusterOptions o;
    o.data_dir = dir;
    o.listen = "127.0.0.1:0";
    o.policy = "first-fit";
    o.store = state.range(2) ? "memory" : "sqlite";
    for (int i = 1; i <= nodes; ++i) o.nodes.push_back({"node-" + std::to_string(i), "sim:8xH100"});
    auto c = LocalCluster::start(o);
    if (!c.has_value()) {
      state.SkipWithError(c.error().to_string().c_str());
      return;
    }
    if (auto r = (*c)->wait_nodes_ready(300000); !r.has_value()) {
      state.SkipWithError(r.error().to_string().c_str());
      return;
    }
    auto admin = client::RestClient::create((*c)->admin_config());
    (void)(*admin)->post("/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}})");
    (void)(*admin)->post("/apis/resource.k8s.io/v1/namespaces/bench/resourceclaimtemplates", kTemplate);

    std::mutex mu;
    std::map<std::string, Clock::time_point> created, claimed, bound, running, done, released;
    std::atomic<bool> stop_watch{false};
    std::thread watcher([&] {
      auto w = client::RestClient::create((*c)->admin_config());
      (void)(*w)->watch("/api/v1/namespaces/bench/pods?watch=1", [&](std::string_view line) {
        rapidjson::Document ev;
        ev.Parse(line.data(), line.size());
        if (ev.HasParseError() || !ev.HasMember("object")) return true;
        const auto& obj = ev["object"];
        {
          // Stage times: claim made by the controller, pod bound by the scheduler.
          std::lock_guard<std::mutex> l(mu);
          std::string n = obj["metadata"]["name"].GetString();
          if (obj.HasMember("status") && obj["status"].HasMember("resourceClaimStatuses")) claimed.emplace(n, Clock::now());
          if (obj.HasMember("spec") && obj["spec"].HasMember("nodeName")) bound.emplace(n, Clock::now());
        }
        if (!obj.HasMember("status") || !obj["status"].HasMember("phase")) return true;
        std::string phase = obj["status"]["phase"].GetString();
        if (phase == "Succeeded" || phase == "Failed") {
          std::lock_guard<std::mutex> l(mu);
          done.emplace(obj["metadata"]["name"].GetString(), Clock::now());
        }
        // A pod that ran its second before the agent reported it may go straight to Succeeded.
        if (phase != "Running" && phase != "Succeeded") return true;
        std::lock_guard<std::mutex> l(mu);
        running.emplace(obj["metadata"]["name"].GetString(), Clock::now());
        return static_cast<int>(running.size()) < pods;
      }, &stop_watch, 100);
    });
    // Claims deleted (released): "p-<n>-gpu-<suffix>" belongs to pod "p-<n>".
    std::thread claim_watcher([&] {
      auto w = client::RestClient::create((*c)->admin_config());
      (void)(*w)->watch("/apis/resource.k8s.io/v1/namespaces/bench/resourceclaims?watch=1", [&](std::string_view line) {
        rapidjson::Document ev;
        ev.Parse(line.data(), line.size());
        if (ev.HasParseError() || !ev.HasMember("type") || std::string(ev["type"].GetString()) != "DELETED") return true;
        std::string n = ev["object"]["metadata"]["name"].GetString();
        auto cut = n.find("-gpu-");
        if (cut == std::string::npos) return true;
        std::lock_guard<std::mutex> l(mu);
        released.emplace(n.substr(0, cut), Clock::now());
        return true;
      }, &stop_watch, 100);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the watch is open
    perf_control("enable");
    const double cpu_start = cpu_seconds();
    state.ResumeTiming();

    auto start = Clock::now();
    std::vector<std::thread> creators;
    std::atomic<int> failed{0};
    const int threads = 8;
    for (int t = 0; t < threads; ++t) {
      creators.emplace_back([&, t] {
        auto rest = client::RestClient::create((*c)->admin_config());
        for (int i = t; i < pods; i += threads) {
          std::string name = "p-" + std::to_string(i);
          {
            std::lock_guard<std::mutex> l(mu);
            created[name] = Clock::now();
          }
          if (!(*rest)->post("/api/v1/namespaces/bench/pods", pod_json(name)).has_value()) ++failed;
        }
      });
    }
    for (auto& t : creators) t.join();
    auto all_created = Clock::now();
    auto deadline = Clock::now() + std::chrono::seconds(300);
    while (Clock::now() < deadline) {
      {
        std::lock_guard<std::mutex> l(mu);
        if (static_cast<int>(running.size()) >= pods) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    auto end = Clock::now();
    state.PauseTiming();
    perf_control("disable");
    const double cpu_used = cpu_seconds() - cpu_start;
    stop_watch = true;
    watcher.join();
    claim_watcher.join();
    std::vector<double> lat;
    Clock::time_point last = start;
    for (const auto& [name, t] : running) {
      lat.push_back(std::chrono::duration<double, std::milli>(t - created[name]).count());
      last = std::max(last, t);
    }
    std::sort(lat.begin(), lat.end());
    // Median time of each stage after the previous one.
    auto stage = [&](std::map<std::string, Clock::time_point>& from, std::map<std::string, Clock::time_point>& to) {
      std::vector<double> d;
      for (const auto& [name, t] : to) {
        auto f = from.find(name);
        if (f != from.end()) d.push_back(std::chrono::duration<double, std::milli>(t - f->second).count());
      }
      std::sort(d.begin(), d.end());
      return d.empty() ? 0.0 : d[d.size() / 2];
    };
    state.counters["create_s"] = std::chrono::duration<double>(all_created - start).count();
    state.counters["claim_p50_ms"] = stage(created, claimed);
    state.counters["bind_p50_ms"] = stage(claimed, bound);
    state.counters["start_p50_ms"] = stage(bound, running);
    state.counters["run_p50_ms"] = stage(running, done);
    state.counters["release_p50_ms"] = stage(done, released);
    double secs = std::chrono::duration<double>(last - start).count();
    // CPU (user + system, this process and its reaped children) per pod: on a
    // machine the run saturates, a steadier figure than pods_per_s.
    state.counters["cpu_ms_per_pod"] = running.empty() ? 0 : 1000 * cpu_used / running.size();
    state.counters["pods_running"] = static_cast<double>(running.size());
    state.counters["create_errors"] = failed.load();
    state.counters["pods_per_s"] = secs > 0 ? running.size() / secs : 0;
    state.counters["p50_ms"] = lat.empty() ? 0 : lat[lat.size() / 2];
    state.counters["p99_ms"] = lat.empty() ? 0 : lat[lat.size() * 99 / 100];
    if (static_cast<int>(running.size()) < pods) {
      state.SkipWithError(("only " + std::to_string(running.size()) + " of " + std::to_string(pods) +
                           " pods Running after 300 s")
                              .c_str());
    }
    (void)end;
    // DRAPLANE_BENCH_METRICS=1 prints the API server's request counts (which
    // calls a pod costs) before stopping.
    if (const char* m = std::getenv("DRAPLANE_BENCH_METRICS"); m != nullptr && std::string(m) == "1") {
      if (auto text = (*admin)->get("/metrics"); text.has_value()) {
        std::string_view rest = *text;
        while (!rest.empty()) {
          auto nl = rest.find('\n');
          std::string_view line = rest.substr(0, nl);
          if (line.starts_with("apiserver_request_total{")) std::fprintf(stderr, "%.*s\n", int(line.size()), line.data());
          rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
        }
      }
    }
    (*c)->stop();
    // DRAPLANE_BENCH_KEEP=1 keeps the data dir (component logs under logs/).
    if (const char* keep = std::getenv("DRAPLANE_BENCH_KEEP"); keep != nullptr && std::string(keep) == "1") {
      std::fprintf(stderr, "kept %s\n", dir.c_str());
    } else {
      std::filesystem::remove_all(dir);
    }
    state.ResumeTiming();
  }
}

// Third argument: 0 = SQLite store (durable commits), 1 = in-memory store.
BENCHMARK(BM_PodsToRunning)->Args({20, 400, 0})->Args({20, 400, 1})->Args({100, 2000, 0})->Args({100, 2000, 1})->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace draplane::cluster

int main(int argc, char** argv) {
  draplane::tune_malloc_for_server();  // as the draplane binary runs `up`
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
