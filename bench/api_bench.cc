// API server benchmarks through the real stack (issue 6's speed goals): the
// server as `draplane server` runs it (cluster::LocalCluster without scheduler,
// controllers or nodes: HTTPS with the generated PKI and admin token, the SQLite
// store with synchronous=FULL in a temporary data dir, or the etcd named by
// $DRAPLANE_BENCH_STORE=etcd://HOST:PORT), driven by
// client::RestClient over keep-alive TLS connections, one client per thread (a
// client serializes its requests).
//
//   BM_CreateClaims/threads:N   ResourceClaim creates; items_per_second = objects/s,
//                               cpu_us_per_create = process CPU (server + clients)
//                               (goal: >= 5,000/s)
//   BM_UpdatePodStatus/threads:N  PUT pods/<name>/status, one pod per client;
//                               cpu_us_per_update as above (no goal: the
//                               update path that dominates the end-to-end run)
//   BM_ListSlices10k            GET /apis/resource.k8s.io/v1/resourceslices returning
//                               10,000 slices of 4 devices each, time until the whole
//                               body is read (goal: < 200 ms)
//   BM_ListSlices10kPaged       the same list in pages of limit=500 with continue
//                               tokens, as informers list
//   BM_WatchFanout1000          1,000 watches open (a thread and a TLS connection
//                               each), one ResourceClaim create, time until every
//                               watcher has read the event; counters all_p50_ms /
//                               all_max_ms (until the last watcher, per write) and
//                               each_p50_ms (per watcher and write)
//
// The client runs on the same machine and competes with the server for the CPUs,
// so these figures include the client side (TLS, HTTP parsing) as a real workload
// on one machine would. The server is started once for the whole program.
#include <benchmark/benchmark.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cstdlib>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <rapidjson/document.h>

#include "client/rest_client.h"
#include "cluster/local_cluster.h"
#include "common/malloc_tuning.h"

namespace draplane::cluster {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kSlices = 10000;
constexpr int kDevicesPerSlice = 4;
constexpr int kWatchers = 1000;
constexpr const char* kClaims = "/apis/resource.k8s.io/v1/namespaces/bench/resourceclaims";
constexpr const char* kFanoutClaims = "/apis/resource.k8s.io/v1/namespaces/fanout/resourceclaims";
constexpr const char* kSlicesPath = "/apis/resource.k8s.io/v1/resourceslices";

std::string claim_json(const std::string& ns, const std::string& name) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":")" + name +
         R"(","namespace":")" + ns +
         R"("},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com",)"
         R"x("selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')"}}]}}]}}})x";
}

// A node-local slice of kDevicesPerSlice GPUs, about 1.3 KB of JSON.
std::string slice_json(int i) {
  std::string node = "node-" + std::to_string(i);
  std::string s = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":")" + node +
                  R"(-gpu.nvidia.com"},"spec":{"driver":"gpu.nvidia.com","nodeName":")" + node +
                  R"(","pool":{"name":")" + node + R"(","generation":1,"resourceSliceCount":1},"devices":[)";
  for (int d = 0; d < kDevicesPerSlice; ++d) {
    if (d) s += ',';
    s += R"({"name":"gpu-)" + std::to_string(d) + R"(","attributes":{"type":{"string":"gpu"},)"
         R"("productName":{"string":"NVIDIA H100 80GB HBM3"},"index":{"int":)" +
         std::to_string(d) + R"(},"uuid":{"string":"GPU-)" + std::to_string(i) + "-" + std::to_string(d) +
         R"("},"driverVersion":{"version":"550.54.15"}},"capacity":{"memory":{"value":"80Gi"}}})";
  }
  return s + "]}}";
}

// Position of the integer after `"name":"<prefix>` in a watch event line, -1 if absent.
int64_t name_number(std::string_view line, std::string_view prefix) {
  std::string key = "\"name\":\"" + std::string(prefix);
  auto p = line.find(key);
  if (p == std::string_view::npos) return -1;
  p += key.size();
  int64_t n = 0;
  bool any = false;
  while (p < line.size() && line[p] >= '0' && line[p] <= '9') {
    n = n * 10 + (line[p++] - '0');
    any = true;
  }
  return any ? n : -1;
}

// Percent-encodes a query value (continue tokens are base64 with '+', '/', '=').
std::string query_escape(const std::string& v) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : v) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// 1,000 open watches on the `fanout` namespace's claims.
struct Fanout {
  std::vector<std::thread> threads;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> target{-1};  // the claim number the current write creates
  std::atomic<int> seen{0};         // watchers that read `target`
  std::atomic<int> ended{0};        // watches that returned before `stop`
  std::vector<Clock::time_point> seen_at;
  std::mutex mu;
  std::condition_variable cv;
  std::string first_error;

  explicit Fanout(int n) : seen_at(n) {}

  // Waits until every watcher read `target` (or the watches died); false on timeout.
  bool wait_all(int n, std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, timeout, [&] { return seen.load() >= n || ended.load() > 0; }) && seen.load() >= n;
  }
};

struct Env {
  std::string dir;
  std::unique_ptr<LocalCluster> cluster;
  client::KubeConfig admin;
  std::string error;  // set when the server could not be started
  std::atomic<int64_t> seq{0};
  std::once_flag slices_once;
  std::string slices_error;
  std::once_flag fanout_once;
  std::unique_ptr<Fanout> fanout;
  std::string fanout_error;
  std::atomic<int64_t> fanout_seq{0};

  ~Env() {
    if (fanout) {
      fanout->stop = true;
      for (auto& t : fanout->threads) t.join();
    }
    if (cluster) cluster->stop();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

std::unique_ptr<Env>& env_slot() {
  static std::unique_ptr<Env> env;
  return env;
}

Env& env() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto e = std::make_unique<Env>();
    e->dir = (std::filesystem::temp_directory_path() / ("draplane-api-bench-" + std::to_string(::getpid()))).string();
    std::error_code ec;
    std::filesystem::remove_all(e->dir, ec);
    LocalClusterOptions o;
    o.data_dir = e->dir;
    o.listen = "127.0.0.1:0";
    // DRAPLANE_BENCH_STORE=etcd://HOST:PORT measures the same through etcd.
    const char* store = std::getenv("DRAPLANE_BENCH_STORE");
    o.store = store && *store ? store : "sqlite";
    o.scheduler = false;
    o.controllers = false;
    o.compact_interval_s = 3600;  // no compaction while measuring
    auto c = LocalCluster::start(o);
    if (!c.has_value()) {
      e->error = "starting the API server: " + c.error().to_string();
    } else {
      e->cluster = std::move(c).value();
      e->admin = e->cluster->admin_config();
      auto rest = client::RestClient::create(e->admin);
      if (!rest.has_value()) {
        e->error = rest.error().to_string();
      } else {
        for (const char* ns : {"bench", "fanout"}) {
          auto r = (*rest)->post("/api/v1/namespaces", std::string(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")") +
                                                             ns + R"("}})");
          if (!r.has_value() && r.error().code() != Code::kAlreadyExists) e->error = "namespace: " + r.error().to_string();
        }
      }
    }
    env_slot() = std::move(e);
  });
  return *env_slot();
}

std::unique_ptr<client::RestClient> connect(Env& e, std::string* error) {
  auto rest = client::RestClient::create(e.admin);
  if (!rest.has_value()) {
    *error = rest.error().to_string();
    return nullptr;
  }
  // Opens the keep-alive connection (TCP + TLS handshake) outside the timed loop.
  if (auto r = (*rest)->get("/api/v1/namespaces/bench"); !r.has_value()) {
    *error = r.error().to_string();
    return nullptr;
  }
  return std::move(rest).value();
}

// ---- (a) create throughput ---------------------------------------------------

// User plus system CPU of the whole process so far, in microseconds.
double process_cpu_us() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto us = [](const timeval& t) { return double(t.tv_sec) * 1e6 + double(t.tv_usec); };
  return us(ru.ru_utime) + us(ru.ru_stime);
}

void BM_CreateClaims(benchmark::State& state) {
  Env& e = env();
  if (!e.error.empty()) {
    state.SkipWithError(e.error.c_str());
    return;
  }
  std::string error;
  auto rest = connect(e, &error);
  if (!rest) {
    state.SkipWithError(error.c_str());
    return;
  }
  double cpu_start = 0;
  bool first = true;
  for (auto _ : state) {
    if (first && state.thread_index() == 0) cpu_start = process_cpu_us();
    first = false;
    auto r = rest->post(kClaims, claim_json("bench", "claim-" + std::to_string(e.seq++)));
    if (!r.has_value()) {
      error = r.error().to_string();
      state.SkipWithError(error.c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    // Every thread has left the loop (its end is a barrier): the process's CPU
    // since the first create, server and clients together, per create. Unlike
    // objects/s it does not move with how well the fsync latency is overlapped.
    double creates = double(state.iterations()) * state.threads();
    if (creates > 0) state.counters["cpu_us_per_create"] = (process_cpu_us() - cpu_start) / creates;
    const char* store = std::getenv("DRAPLANE_BENCH_STORE");
    state.SetLabel(store && *store ? std::string("HTTPS, ") + store : "HTTPS, sqlite synchronous=FULL");
  }
}
BENCHMARK(BM_CreateClaims)->Threads(1)->Threads(8)->Threads(32)->UseRealTime()->MinTime(1.0);

// ---- (a2) pod status updates ---------------------------------------------------

// A bound pod as the cluster benchmark makes them (one container, one claim from a
// template), about 1 KB of JSON.
std::string bench_pod_json(const std::string& name, const std::string& status) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"bench"},"spec":{"restartPolicy":"Never","nodeName":"node-1","containers":[{"name":"c",)"
         R"("image":"busybox","command":["sleep","1"],"resources":{"claims":[{"name":"gpu"}]}}],)"
         R"("resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"one-gpu"}]}, "status":)" + status + "}";
}

// What a kubelet writes: phase, conditions, one container's state.
std::string pod_status_json(int i) {
  const bool running = i % 2 == 0;
  std::string t = "2026-12-04T00:00:" + std::string(i % 60 < 10 ? "0" : "") + std::to_string(i % 60) + "Z";
  return std::string(R"({"phase":")") + (running ? "Running" : "Pending") +
         R"(","conditions":[{"type":"Ready","status":")" + (running ? "True" : "False") +
         R"(","lastTransitionTime":")" + t + R"("},{"type":"PodScheduled","status":"True","lastTransitionTime":")" + t +
         R"("}],"hostIP":"10.0.0.1","podIP":"10.1.0.)" + std::to_string(i % 250) + R"(","startTime":")" + t +
         R"(","containerStatuses":[{"name":"c","ready":)" + (running ? "true" : "false") +
         R"(,"restartCount":0,"image":"busybox","imageID":"","started":)" + (running ? "true" : "false") +
         R"(,"state":{"running":{"startedAt":")" + t + R"("}}}]})";
}

// PUT /status of one pod per client, full object without resourceVersion (an
// unconditional update), each write a real change: the update path (load the
// stored object, status-only merge, validation, managed fields, store, reply).
void BM_UpdatePodStatus(benchmark::State& state) {
  Env& e = env();
  if (!e.error.empty()) {
    state.SkipWithError(e.error.c_str());
    return;
  }
  std::string error;
  auto rest = connect(e, &error);
  if (!rest) {
    state.SkipWithError(error.c_str());
    return;
  }
  const std::string name = "pod-" + std::to_string(e.seq++);
  const std::string path = "/api/v1/namespaces/bench/pods/" + name + "/status";
  if (auto r = rest->post("/api/v1/namespaces/bench/pods", bench_pod_json(name, "{}")); !r.has_value()) {
    error = r.error().to_string();
    state.SkipWithError(error.c_str());
    return;
  }
  double cpu_start = 0;
  bool first = true;
  int i = 0;
  for (auto _ : state) {
    if (first && state.thread_index() == 0) cpu_start = process_cpu_us();
    first = false;
    auto r = rest->put(path, bench_pod_json(name, pod_status_json(++i)));
    if (!r.has_value()) {
      error = r.error().to_string();
      state.SkipWithError(error.c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    double updates = double(state.iterations()) * state.threads();
    if (updates > 0) state.counters["cpu_us_per_update"] = (process_cpu_us() - cpu_start) / updates;
  }
}
BENCHMARK(BM_UpdatePodStatus)->Threads(1)->Threads(8)->UseRealTime()->MinTime(1.0);

// ---- (b) list latency ----------------------------------------------------------

// Creates the 10,000 slices once, with 8 clients in parallel.
const std::string& ensure_slices(Env& e) {
  std::call_once(e.slices_once, [&e] {
    const int threads = 8;
    std::vector<std::thread> workers;
    std::mutex mu;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        std::string error;
        auto rest = connect(e, &error);
        for (int i = t; rest && i < kSlices; i += threads) {
          auto r = rest->post(kSlicesPath, slice_json(i));
          if (!r.has_value() && r.error().code() != Code::kAlreadyExists) error = r.error().to_string();
          if (!error.empty()) break;
        }
        if (!error.empty()) {
          std::lock_guard<std::mutex> l(mu);
          e.slices_error = "creating slices: " + error;
        }
      });
    }
    for (auto& w : workers) w.join();
  });
  return e.slices_error;
}

size_t count_items(const std::string& body, std::string* cont) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("items") || !doc["items"].IsArray()) return 0;
  if (cont) {
    cont->clear();
    if (doc.HasMember("metadata") && doc["metadata"].HasMember("continue") && doc["metadata"]["continue"].IsString()) {
      *cont = doc["metadata"]["continue"].GetString();
    }
  }
  return doc["items"].Size();
}

void BM_ListSlices10k(benchmark::State& state) {
  Env& e = env();
  std::string error = e.error.empty() ? ensure_slices(e) : e.error;
  auto rest = error.empty() ? connect(e, &error) : nullptr;
  if (!rest) {
    state.SkipWithError(error.c_str());
    return;
  }
  size_t bytes = 0;
  bool checked = false;
  for (auto _ : state) {
    auto t0 = Clock::now();
    auto r = rest->get(kSlicesPath);
    auto t1 = Clock::now();
    if (!r.has_value()) {
      error = r.error().to_string();
      state.SkipWithError(error.c_str());
      break;
    }
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    bytes = r->size();
    if (!checked) {  // the full parse is the client's business, not timed
      size_t n = count_items(*r, nullptr);
      if (n != kSlices) {
        error = "listed " + std::to_string(n) + " slices, want " + std::to_string(kSlices);
        state.SkipWithError(error.c_str());
        break;
      }
      checked = true;
    }
  }
  state.counters["slices"] = kSlices;
  state.counters["body_MB"] = static_cast<double>(bytes) / 1e6;
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_ListSlices10k)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_ListSlices10kPaged(benchmark::State& state) {
  Env& e = env();
  std::string error = e.error.empty() ? ensure_slices(e) : e.error;
  auto rest = error.empty() ? connect(e, &error) : nullptr;
  if (!rest) {
    state.SkipWithError(error.c_str());
    return;
  }
  int64_t pages = 0;
  for (auto _ : state) {
    double secs = 0;
    size_t total = 0;
    std::string cont;
    pages = 0;
    do {
      std::string target = std::string(kSlicesPath) + "?limit=500";
      if (!cont.empty()) target += "&continue=" + query_escape(cont);
      auto t0 = Clock::now();
      auto r = rest->get(target);
      secs += std::chrono::duration<double>(Clock::now() - t0).count();
      if (!r.has_value()) {
        error = r.error().to_string();
        break;
      }
      ++pages;
      total += count_items(*r, &cont);  // untimed: the token is in the body
    } while (!cont.empty() && pages < 1000);
    if (!error.empty() || total != kSlices) {
      if (error.empty()) error = "paged list returned " + std::to_string(total) + " slices";
      state.SkipWithError(error.c_str());
      break;
    }
    state.SetIterationTime(secs);
  }
  state.counters["pages"] = static_cast<double>(pages);
}
BENCHMARK(BM_ListSlices10kPaged)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);

// ---- (c) watch fan-out ---------------------------------------------------------

// Starts the watchers once and waits until all of them are streaming: they
// watch from the revision before a warm-up write, so each one reads that write
// however late its connection opened.
const std::string& ensure_fanout(Env& e) {
  std::call_once(e.fanout_once, [&e] {
    std::string error;
    auto rest = connect(e, &error);
    std::string rv;
    if (rest) {
      auto l = rest->get(std::string(kFanoutClaims) + "?limit=1");
      rapidjson::Document doc;
      if (l.has_value()) doc.Parse(l->data(), l->size());
      if (!l.has_value() || doc.HasParseError() || !doc.HasMember("metadata") ||
          !doc["metadata"].HasMember("resourceVersion")) {
        e.fanout_error = "listing fanout claims: " + (l.has_value() ? std::string("bad body") : l.error().to_string());
        return;
      }
      rv = doc["metadata"]["resourceVersion"].GetString();
    } else {
      e.fanout_error = error;
      return;
    }
    e.fanout = std::make_unique<Fanout>(kWatchers);
    Fanout& f = *e.fanout;
    f.target = e.fanout_seq.load();  // the warm-up write's number
    std::string target = std::string(kFanoutClaims) + "?watch=1&timeoutSeconds=7200&resourceVersion=" + rv;
    for (int w = 0; w < kWatchers; ++w) {
      f.threads.emplace_back([&e, &f, w, target] {
        auto client = client::RestClient::create(e.admin);
        Result<void> r = client.has_value() ? Result<void>() : Result<void>(client.error());
        if (client.has_value()) {
          r = (*client)->watch(
              target,
              [&f, w](std::string_view line) {
                int64_t n = name_number(line, "fanout-");
                if (n >= 0 && n == f.target.load()) {
                  f.seen_at[w] = Clock::now();
                  if (f.seen.fetch_add(1) + 1 == kWatchers) {
                    std::lock_guard<std::mutex> l(f.mu);
                    f.cv.notify_all();
                  }
                }
                return true;
              },
              &f.stop, 200);
        }
        if (!f.stop.load()) {
          std::lock_guard<std::mutex> l(f.mu);
          if (f.first_error.empty()) f.first_error = r.has_value() ? "watch ended" : r.error().to_string();
          f.ended++;
          f.cv.notify_all();
        }
      });
    }
    auto r = rest->post(kFanoutClaims, claim_json("fanout", "fanout-" + std::to_string(e.fanout_seq++)));
    if (!r.has_value()) {
      e.fanout_error = "warm-up write: " + r.error().to_string();
      return;
    }
    if (!f.wait_all(kWatchers, std::chrono::seconds(180))) {
      std::lock_guard<std::mutex> l(f.mu);
      e.fanout_error = std::to_string(f.seen.load()) + " of " + std::to_string(kWatchers) +
                       " watchers streaming after 180 s" + (f.first_error.empty() ? "" : ": " + f.first_error);
    }
  });
  return e.fanout_error;
}

void BM_WatchFanout1000(benchmark::State& state) {
  Env& e = env();
  std::string error = e.error.empty() ? ensure_fanout(e) : e.error;
  auto rest = error.empty() ? connect(e, &error) : nullptr;
  if (!rest) {
    state.SkipWithError(error.c_str());
    return;
  }
  Fanout& f = *e.fanout;
  std::vector<double> all_ms, each_ms;
  for (auto _ : state) {
    int64_t n = e.fanout_seq++;
    f.seen = 0;
    f.target = n;
    auto t0 = Clock::now();
    auto r = rest->post(kFanoutClaims, claim_json("fanout", "fanout-" + std::to_string(n)));
    if (!r.has_value()) {
      error = r.error().to_string();
      state.SkipWithError(error.c_str());
      break;
    }
    if (!f.wait_all(kWatchers, std::chrono::seconds(60))) {
      std::lock_guard<std::mutex> l(f.mu);
      error = std::to_string(f.seen.load()) + " of " + std::to_string(kWatchers) + " watchers saw the write in 60 s" +
              (f.first_error.empty() ? "" : ": " + f.first_error);
      state.SkipWithError(error.c_str());
      break;
    }
    Clock::time_point last = t0;
    for (const auto& t : f.seen_at) {
      each_ms.push_back(ms(t - t0));
      last = std::max(last, t);
    }
    all_ms.push_back(ms(last - t0));
    state.SetIterationTime(std::chrono::duration<double>(last - t0).count());
  }
  state.counters["watchers"] = kWatchers;
  state.counters["all_p50_ms"] = percentile(all_ms, 0.5);
  state.counters["all_max_ms"] = percentile(all_ms, 1.0);
  state.counters["each_p50_ms"] = percentile(each_ms, 0.5);
  state.SetLabel("create -> read by all 1000 watchers");
}
BENCHMARK(BM_WatchFanout1000)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(50);

}  // namespace
}  // namespace draplane::cluster

int main(int argc, char** argv) {
  draplane::tune_malloc_for_server();  // as the draplane binary runs the server
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  draplane::cluster::env_slot().reset();  // watchers, then the server, then the data dir
  return 0;
}
